/**
 * The lifecycle tests' events (project L, UTC), dated relative to today because a person's
 * `created_at` is the moment the import first sees them (today): D0 is today, D-n n days before;
 * the range is D-6 … D0 and the period before it D-7. Pageviews, and each day's status:
 *
 * - l1: D-7, D-6, D-5, D-3 → D-6, D-5 returning; D-4 dormant; D-3 resurrecting; D-2 dormant.
 * - l2: D-4, D0 → D-4 resurrecting (its first active day is not the one of created_at, D0);
 *   D-3 dormant; D0 resurrecting.
 * - l3: D0 → new (first active day = created_at's day).
 * - l4: D-1, D0 → D-1 resurrecting; D0 returning.
 * - l5: D-2 with `$process_person_profile: false` → left out (a person-less event).
 *
 * So (D-6 … D0): new [0,0,0,0,0,0,1], returning [1,1,0,0,0,0,1], resurrecting [0,0,1,1,0,1,1],
 * dormant [0,0,-1,-1,-1,0,0].
 */
import { DateTime } from 'luxon';
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

/** Today's start (UTC), the D0 of the module doc. */
export function today(): DateTime {
  return DateTime.utc().startOf('day');
}

/** The pageviews of the module doc, D0 = `d0`. */
export function lifecycleRows(d0: DateTime) {
  // past days at noon; today's at one second past midnight, so that they are never after now by a day
  const at = (n: number) => (n === 0 ? d0.plus({ seconds: 1 }) : d0.minus({ days: n }).plus({ hours: 12 })).toISO()!;
  const pv = (distinct_id: string, n: number, properties: Record<string, unknown> = {}) => ({
    event: '$pageview',
    distinct_id,
    timestamp: at(n),
    properties,
  });
  return [
    pv('l1', 7),
    pv('l1', 6),
    pv('l1', 5),
    pv('l1', 3),
    pv('l2', 4),
    pv('l2', 0),
    pv('l3', 0),
    pv('l4', 1),
    pv('l4', 0),
    pv('l5', 2, { $process_person_profile: false }),
  ];
}

/** Imports the lifecycle events into project `l`, D0 = `d0`. */
export async function seedLifecycleDataset(store: Store, l: number, d0: DateTime): Promise<void> {
  await importEvents(store, l, lifecycleRows(d0));
}
