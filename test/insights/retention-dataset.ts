/**
 * The retention tests' events (project R, UTC): pageviews of five persons, 30 October – 5 November
 * 2024, and what the tests count from them (Day cohorts 1–5 November, 4 values each):
 *
 * - r1: 1, 2, 4 Nov. r2: 1, 3 Nov. r3: 2 Nov, 3 Nov (twice), 5 Nov. r4: 30 Oct, 3 Nov. r5: 5 Nov.
 * - Recurring cohorts: 1 Nov {r1, r2} → [2, 1 (r1 on 2 Nov), 1 (r2 on 3 Nov), 1 (r1 on 4 Nov)];
 *   2 Nov {r1, r3} → [2, 1, 1, 1]; 3 Nov {r2, r3, r4} → [3, 0, 1 (r3 on 5 Nov), 0 (6 Nov: to come)];
 *   4 Nov {r1} → [1, 0, 0, 0]; 5 Nov {r3, r5} → [2, 0, 0, 0].
 * - First time: 1 Nov {r1, r2} → [2, 1, 1, 1]; 2 Nov {r3} → [1, 1, 0, 1]; 3 and 4 Nov empty (r4's
 *   first pageview is 30 Oct, before the range); 5 Nov {r5} → [1, 0, 0, 0].
 * - `$browser` (breakdown): r1 Chrome on 1 Nov, Firefox on 2 Nov; r2 Chrome on 1 Nov; r3 Safari on
 *   2 Nov; every other pageview none. So the recurring cohorts per value: Chrome 1 Nov {r1, r2}
 *   [2, 1, 1, 1]; Firefox 2 Nov {r1} [1, 0, 1, 0]; Safari 2 Nov {r3} [1, 1, 0, 1]; "" 3 Nov
 *   {r2, r3, r4} [3, 0, 1, 0], 4 Nov {r1} [1, 0, 0, 0], 5 Nov {r3, r5} [2, 0, 0, 0]; every other
 *   cohort of a value empty. Ranked by persons: "" (6), Chrome (2), then Firefox and Safari (1).
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

const pv = (distinct_id: string, timestamp: string, $browser?: string) => ({
  event: '$pageview',
  distinct_id,
  timestamp,
  properties: $browser ? { $browser } : {},
});

export const RETENTION_ROWS = [
  pv('r1', '2024-11-01T10:00:00Z', 'Chrome'),
  pv('r1', '2024-11-02T10:00:00Z', 'Firefox'),
  pv('r1', '2024-11-04T10:00:00Z'),
  pv('r2', '2024-11-01T23:59:59Z', 'Chrome'),
  pv('r2', '2024-11-03T00:00:00Z'),
  pv('r3', '2024-11-02T09:00:00Z', 'Safari'),
  pv('r3', '2024-11-03T09:00:00Z'),
  pv('r3', '2024-11-03T18:00:00Z'),
  pv('r3', '2024-11-05T09:00:00Z'),
  pv('r4', '2024-10-30T09:00:00Z'),
  pv('r4', '2024-11-03T09:00:00Z'),
  pv('r5', '2024-11-05T12:00:00Z'),
];

/** Imports the retention events into project `r`. */
export async function seedRetentionDataset(store: Store, r: number): Promise<void> {
  await importEvents(store, r, RETENTION_ROWS);
}
