/**
 * The stickiness tests' events (project S, UTC), 25 October – 7 November 2024, and what the tests
 * count for the range 1–7 November (7 days):
 *
 * - s1: pageviews 1, 2 Nov and twice 3 Nov (3 days); a signup 4 Nov.
 * - s2: a pageview 1 Nov (1 day). s3: 5 and 7 Nov (2 days). s4: 2 Nov (1 day).
 * - s5: 31 Oct (before the range; the previous period's only pageview) and 6 Nov (1 day).
 *
 * Pageviews: exactly 1 day 3 persons (s2, s4, s5), 2 days 1 (s3), 3 days 1 (s1) → [3, 1, 1, 0, 0,
 * 0, 0]; cumulative [5, 2, 1, 0, 0, 0, 0]; days with 2 or more pageviews: s1 on 3 Nov only →
 * [1, 0, …]. The previous 7 days (25–31 Oct): s5 → [1, 0, …]. Signups: s1 → [1, 0, …].
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

const ev = (event: string, distinct_id: string, timestamp: string) => ({ event, distinct_id, timestamp, properties: {} });

export const STICKINESS_ROWS = [
  ev('$pageview', 's1', '2024-11-01T10:00:00Z'),
  ev('$pageview', 's1', '2024-11-02T10:00:00Z'),
  ev('$pageview', 's1', '2024-11-03T10:00:00Z'),
  ev('$pageview', 's1', '2024-11-03T11:00:00Z'),
  ev('signup', 's1', '2024-11-04T10:00:00Z'),
  ev('$pageview', 's2', '2024-11-01T23:00:00Z'),
  ev('$pageview', 's3', '2024-11-05T10:00:00Z'),
  ev('$pageview', 's3', '2024-11-07T10:00:00Z'),
  ev('$pageview', 's4', '2024-11-02T00:00:00Z'),
  ev('$pageview', 's5', '2024-10-31T10:00:00Z'),
  ev('$pageview', 's5', '2024-11-06T10:00:00Z'),
];

/** Imports the stickiness events into project `s`. */
export async function seedStickinessDataset(store: Store, s: number): Promise<void> {
  await importEvents(store, s, STICKINESS_ROWS);
}
