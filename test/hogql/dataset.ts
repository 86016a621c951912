/**
 * The fixed dataset the HogQL tests query: 12 events of project P (five distinct ids, each with a
 * person; alice, bob and carol have person properties) and 2 events of another project Q that no
 * query of P may see. Event uuids are fixed (`ev(n)`); timestamps are in November–December 2024.
 * Event 12 holds an object and an array property, and numbers JSON writes as `1.5e-7` and
 * `0.3333333333333333`.
 */
import { importEvents } from '../../server/ingest/import.js';
import type { Store } from '../../server/storage/db.js';

/** The uuid of the dataset's event `n` (1–14). */
export function ev(n: number): string {
  return `01934e70-0000-7000-8000-${String(n).padStart(12, '0')}`;
}

/** The events of project P, in uuid order. */
export const P_EVENTS = [
  {
    uuid: ev(1),
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: '2024-11-01T10:00:00Z',
    properties: { $browser: 'Chrome', $current_url: 'https://hedgebox.net/', price: 1440, plan: 'pro' },
    $set: { email: 'alice@hedgebox.net', name: 'Alice', plan: 'pro' },
  },
  {
    uuid: ev(2),
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: '2024-11-01T11:30:00.250000Z',
    properties: { $browser: 'Chrome', $current_url: 'https://hedgebox.net/files/', price: 9.5 },
  },
  {
    uuid: ev(3),
    event: '$pageview',
    distinct_id: 'bob',
    timestamp: '2024-11-02T09:00:00Z',
    properties: { $browser: 'Firefox', $current_url: 'https://hedgebox.net/pricing', price: '12' },
    $set: { email: 'bob@example.com', name: 'Bob', plan: 'free' },
  },
  {
    uuid: ev(4),
    event: '$autocapture',
    distinct_id: 'bob',
    timestamp: '2024-11-02T09:05:00Z',
    properties: { $browser: 'Firefox', $event_type: 'click', flag: true },
    elements_chain: 'button.btn:text="Sign up"',
  },
  { uuid: ev(5), event: 'signup', distinct_id: 'bob', timestamp: '2024-11-02T09:06:00Z', properties: { plan: 'free', flag: false } },
  {
    uuid: ev(6),
    event: '$pageview',
    distinct_id: 'carol',
    timestamp: '2024-11-03T23:59:59.999999Z',
    properties: { $browser: 'Safari', $current_url: 'https://hedgebox.net/Zürich', price: null, city: 'Zürich', 'a b': 'spaced' },
    $set: { email: 'carol@hedgebox.net', plan: 'pro' },
  },
  {
    uuid: ev(7),
    event: '$pageview',
    distinct_id: 'dave',
    timestamp: '2024-11-04T00:00:00Z',
    properties: { $current_url: 'https://other.org/', price: -3 },
  },
  {
    uuid: ev(8),
    event: 'purchase',
    distinct_id: 'alice',
    timestamp: '2024-11-05T12:00:00Z',
    properties: { price: 100, plan: 'pro', revenue: '99.99' },
  },
  { uuid: ev(9), event: 'purchase', distinct_id: 'carol', timestamp: '2024-11-10T08:00:00Z', properties: { price: 250, revenue: '250' } },
  { uuid: ev(10), event: '$pageleave', distinct_id: 'alice', timestamp: '2024-11-10T08:30:00Z', properties: { $browser: 'Chrome' } },
  {
    uuid: ev(11),
    event: '$pageview',
    distinct_id: 'erin',
    timestamp: '2024-12-01T00:00:00Z',
    properties: { $browser: 'chrome', $current_url: 'https://hedgebox.net/?q=50%25' },
  },
  {
    uuid: ev(12),
    event: 'signup',
    distinct_id: 'erin',
    timestamp: '2024-12-01T00:01:00Z',
    // an object and an array property (read as compact JSON text, keys in jsonb's order), and numbers
    // that JSON writes with an exponent or with 16 digits
    properties: {
      plan: 'pro',
      nested: { list: [1, 2.5, 'a, b: c', { ok: true, no: null }], a: 1, tiny: 1e-7, 'quote"d': 'é\\' },
      tags: ['beta', 'new-nav'],
      tiny: 1.5e-7,
      ratio: 1 / 3,
    },
  },
];

/** The events of project Q. */
export const Q_EVENTS = [
  {
    uuid: ev(13),
    event: '$pageview',
    distinct_id: 'zed',
    timestamp: '2024-11-01T10:00:00Z',
    properties: { $browser: 'Chrome', secret: 'q-only' },
  },
  { uuid: ev(14), event: 'purchase', distinct_id: 'zed', timestamp: '2024-11-02T10:00:00Z', properties: { price: 1000000 } },
];

/** Imports the dataset into projects `p` and `q`. */
export async function seedDataset(store: Store, p: number, q: number): Promise<void> {
  await importEvents(store, p, P_EVENTS);
  await importEvents(store, q, Q_EVENTS);
}
