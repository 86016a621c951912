/**
 * The fixed dataset the insight tests count by hand: `$pageview`, `signup` and `purchase` events of
 * four persons in project P from 25 October to 7 November 2024 (UTC), five pageviews of project Q
 * on 1 November that no query of P may count, and two events of a project in Asia/Kolkata (+05:30)
 * on either side of its midnight. The tests' expected numbers are written from the list below.
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

type Row = { event: string; distinct_id: string; timestamp: string; properties?: Record<string, unknown>; $set?: Record<string, unknown> };

const pv = (distinct_id: string, timestamp: string, browser?: string): Row => ({
  event: '$pageview',
  distinct_id,
  timestamp,
  properties: browser ? { $browser: browser } : {},
});

/** Project P's events. Pageviews per day, 1–7 November: 3, 1, 3, 0, 2, 1, 1 (11); 25 Oct, 28 Oct, 31 Oct: 1 each. */
export const P_ROWS: Row[] = [
  { ...pv('alice', '2024-10-25T12:00:00Z', 'Chrome'), $set: { plan: 'pro', email: 'alice@hedgebox.net' } },
  { ...pv('bob', '2024-10-28T12:00:00Z', 'Firefox'), $set: { plan: 'free' } },
  { ...pv('carol', '2024-10-31T12:00:00Z'), $set: { plan: 'pro' } },
  pv('alice', '2024-11-01T10:00:00Z', 'Chrome'),
  pv('alice', '2024-11-01T11:30:00Z', 'Chrome'),
  pv('bob', '2024-11-01T09:00:00Z', 'Firefox'),
  { event: 'signup', distinct_id: 'bob', timestamp: '2024-11-01T09:05:00Z' },
  pv('alice', '2024-11-02T08:00:00Z', 'Chrome'),
  { event: 'purchase', distinct_id: 'alice', timestamp: '2024-11-02T08:10:00Z', properties: { price: 10 } },
  pv('carol', '2024-11-03T07:00:00Z'),
  { event: 'signup', distinct_id: 'carol', timestamp: '2024-11-03T07:01:00Z' },
  pv('bob', '2024-11-03T13:00:00Z', 'Firefox'),
  pv('bob', '2024-11-03T14:00:00Z', 'Firefox'),
  pv('dave', '2024-11-05T06:00:00Z', 'Safari'),
  pv('alice', '2024-11-05T23:59:59.999999Z', 'Chrome'),
  { event: 'purchase', distinct_id: 'alice', timestamp: '2024-11-05T10:00:00Z', properties: { price: '2.5' } },
  { event: 'purchase', distinct_id: 'bob', timestamp: '2024-11-05T11:00:00Z', properties: { price: 7 } },
  pv('alice', '2024-11-06T00:00:00Z', 'Chrome'),
  { event: 'signup', distinct_id: 'dave', timestamp: '2024-11-06T01:00:00Z' },
  pv('bob', '2024-11-07T20:00:00Z', 'Firefox'),
];

/** Project Q's events: pageviews P must never count. */
export const Q_ROWS: Row[] = Array.from({ length: 5 }, (_, i) => pv('zed', `2024-11-01T1${i}:00:00Z`, 'Chrome'));

/** The Asia/Kolkata project's events: 23:30 on 1 November and 01:30 on 2 November, local time. */
export const K_ROWS: Row[] = [pv('kim', '2024-11-01T18:00:00Z'), pv('kim', '2024-11-01T20:00:00Z')];

/** Imports the dataset into projects `p`, `q` and `k`. */
export async function seedInsightsDataset(store: Store, p: number, q: number, k: number): Promise<void> {
  await importEvents(store, p, P_ROWS);
  await importEvents(store, q, Q_ROWS);
  await importEvents(store, k, K_ROWS);
}
