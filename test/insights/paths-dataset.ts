/**
 * The paths tests' events (project A, UTC, November 2024), and the edges the tests expect:
 *
 * - p1: pageviews 1 Nov 10:00 `/home/` (read `/home`), 10:01 `/pricing`, 10:03 `/signup`; then,
 *   two hours later (a new session), 12:00 `/home`, 12:05 `/blog`.
 * - p2: 2 Nov 09:00 `/home`, 09:00:30 `/home` again (collapsed), 09:02 `/pricing`, 09:10 the custom
 *   event `clicked`, 09:12 `/signup`.
 * - p3: 3 Nov 08:00 `/pricing`, 08:10 `/home`.
 * - p4: `$screen` 4 Nov 10:00 `Main`, 10:01 `Settings`.
 *
 * All events: 1_/home→2_/pricing 2 (60 s and 120 s: 90,000 ms), then once each (by source, then
 * target): 1_/home→2_/blog (300 s), 1_/pricing→2_/home (600 s), 1_Main→2_Settings (60 s),
 * 2_/pricing→3_/signup (120 s), 2_/pricing→3_clicked (480 s), 3_clicked→4_/signup (120 s).
 * Pageviews only: p2's path is /home, /pricing, /signup, so 2_/pricing→3_/signup is 2 (120 s and
 * 600 s: 360,000 ms).
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

const pv = (distinct_id: string, timestamp: string, url: string) => ({
  event: '$pageview',
  distinct_id,
  timestamp,
  properties: { $current_url: url },
});
const screen = (distinct_id: string, timestamp: string, name: string) => ({
  event: '$screen',
  distinct_id,
  timestamp,
  properties: { $screen_name: name },
});

export const PATHS_ROWS = [
  pv('p1', '2024-11-01T10:00:00Z', '/home/'),
  pv('p1', '2024-11-01T10:01:00Z', '/pricing'),
  pv('p1', '2024-11-01T10:03:00Z', '/signup'),
  pv('p1', '2024-11-01T12:00:00Z', '/home'),
  pv('p1', '2024-11-01T12:05:00Z', '/blog'),
  pv('p2', '2024-11-02T09:00:00Z', '/home'),
  pv('p2', '2024-11-02T09:00:30Z', '/home'),
  pv('p2', '2024-11-02T09:02:00Z', '/pricing'),
  { event: 'clicked', distinct_id: 'p2', timestamp: '2024-11-02T09:10:00Z', properties: {} },
  pv('p2', '2024-11-02T09:12:00Z', '/signup'),
  pv('p3', '2024-11-03T08:00:00Z', '/pricing'),
  pv('p3', '2024-11-03T08:10:00Z', '/home'),
  screen('p4', '2024-11-04T10:00:00Z', 'Main'),
  screen('p4', '2024-11-04T10:01:00Z', 'Settings'),
];

/** Imports the paths events into project `a`. */
export async function seedPathsDataset(store: Store, a: number): Promise<void> {
  await importEvents(store, a, PATHS_ROWS);
}
