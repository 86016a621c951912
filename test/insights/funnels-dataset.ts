/**
 * The funnel tests' events (project F, UTC, November 2024): six persons and the steps
 * `signup` → `$pageview` → `purchase`. What each did, and so what the tests count:
 *
 * - f1: signup 1 Nov 10:00, pageview 11:00 (+3,600 s), purchase 2 Nov 10:00 (+82,800 s): 3 steps.
 * - f2: signup 1 Nov 12:00, pageview 20 Nov 12:00, 19 days later: outside the 14-day window, so
 *   1 step (2 steps with a 30-day window, +1,641,600 s).
 * - f3: pageview 3 Nov 09:00 *before* signup 10:00, purchase 4 Nov: out of order, 1 step
 *   (3 steps unordered).
 * - f4: signup 5 Nov 08:00, pageview 08:30 (+1,800 s): 2 steps.
 * - f5: signup 10 Nov 09:00, `noise` 09:10, pageview 09:20 (+1,200 s): 2 steps, strict too (noise
 *   is no step's event).
 * - f6: signup 12 Nov 09:00, purchase 09:05, pageview 09:10 (+600 s), purchase 09:20 (+600 s):
 *   3 steps ordered; strict 1 (the event after signup is a purchase).
 *
 * `$browser` (breakdowns): f1 Chrome on all three; f2's signup Firefox; f3's first event (the
 * pageview) Safari; f4's pageview Chrome (its signup has none); f5's signup Chrome; f6's signup
 * Firefox and its last purchase Chrome. Person property `plan`: f1 and f6 `pro`, the others none.
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

const ev = (event: string, distinct_id: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
});

export const FUNNEL_ROWS = [
  { ...ev('signup', 'f1', '2024-11-01T10:00:00Z', { $browser: 'Chrome' }), $set: { plan: 'pro' } },
  ev('$pageview', 'f1', '2024-11-01T11:00:00Z', { $browser: 'Chrome' }),
  ev('purchase', 'f1', '2024-11-02T10:00:00Z', { $browser: 'Chrome' }),
  ev('signup', 'f2', '2024-11-01T12:00:00Z', { $browser: 'Firefox' }),
  ev('$pageview', 'f2', '2024-11-20T12:00:00Z'),
  ev('$pageview', 'f3', '2024-11-03T09:00:00Z', { $browser: 'Safari' }),
  ev('signup', 'f3', '2024-11-03T10:00:00Z'),
  ev('purchase', 'f3', '2024-11-04T10:00:00Z'),
  ev('signup', 'f4', '2024-11-05T08:00:00Z'),
  ev('$pageview', 'f4', '2024-11-05T08:30:00Z', { $browser: 'Chrome' }),
  ev('signup', 'f5', '2024-11-10T09:00:00Z', { $browser: 'Chrome' }),
  ev('noise', 'f5', '2024-11-10T09:10:00Z'),
  ev('$pageview', 'f5', '2024-11-10T09:20:00Z'),
  { ...ev('signup', 'f6', '2024-11-12T09:00:00Z', { $browser: 'Firefox' }), $set: { plan: 'pro' } },
  ev('purchase', 'f6', '2024-11-12T09:05:00Z'),
  ev('$pageview', 'f6', '2024-11-12T09:10:00Z'),
  ev('purchase', 'f6', '2024-11-12T09:20:00Z', { $browser: 'Chrome' }),
];

/** Imports the funnel events into project `f`. */
export async function seedFunnelsDataset(store: Store, f: number): Promise<void> {
  await importEvents(store, f, FUNNEL_ROWS);
}
