/**
 * Property text that reads as no number or date-time (server/storage/text-values.ts), through the
 * real HTTP stack on the store of the pass: the events list's numeric (`gt` …) and date
 * (`is_date_…`) filters and HogQL's `toFloat` / `toDateTime` answer 200 and read such text as
 * NULL (`1e400`, `2024-02-30`, year 0000, hour 24, a year past 9999 once in UTC), read `1e-400`
 * as 0 and an offset without a colon (`+0200`) as an offset. On PostgreSQL, its casts once failed
 * the whole request for such a value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import type { EventInput } from '../../server/storage/events/write.js';
import { insertEvents } from '../helpers/events-store.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let pid: number;

/** `n` and `d` of event i; the comments say what each reads as. */
const VALUES: { n: unknown; d: unknown }[] = [
  { n: '1e400', d: '2024-02-30' }, // NULL, NULL
  { n: '-1e400', d: '2024-02-29T10:00:00Z' }, // NULL, 2024-02-29 10:00
  { n: '1e-400', d: '0000-03-01' }, // 0, NULL
  { n: 5, d: '2024-03-01T10:00:00+0200' }, // 5, 2024-03-01 08:00
  { n: '  12 ', d: '2024-03-01T24:00:00' }, // 12, NULL
  { n: '1e1000', d: '9999-12-31T23:30:00-01:00' }, // NULL, NULL
  { n: 'abc', d: '12345' }, // NULL, NULL
  { n: '2.5e2', d: '2024-03-01 09:00' }, // 250, 2024-03-01 09:00
];
const uuidOf = (i: number) => `0190b000-0000-7000-8000-${String(i).padStart(12, '0')}`;

beforeAll(async () => {
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Odd property text' })).id;
  const now = Date.now();
  const events: EventInput[] = VALUES.map((v, i) => ({
    uuid: uuidOf(i),
    event: 'odd',
    distinct_id: `d${i}`,
    properties: v,
    timestamp: formatTimestamp(new Date(now - (i + 1) * 60_000)),
    elements_chain: '',
  }));
  await insertEvents(t.store, pid, events);
});

afterAll(async () => {
  await t?.close();
});

/** The indexes of the events the list answers for one filter (asserting 200). */
async function matching(filter: Record<string, unknown>): Promise<number[]> {
  const res = await t.fetch(
    `/api/environments/${pid}/events/?limit=100&properties=${encodeURIComponent(JSON.stringify([{ type: 'event', ...filter }]))}`,
  );
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const ids = (JSON.parse(text) as { results: { id: string }[] }).results.map((r) => r.id);
  return ids.map((id) => VALUES.findIndex((_v, i) => uuidOf(i) === id)).sort((a, b) => a - b);
}

describe('property text that reads as no number or date', () => {
  it('numeric filters read 1e400, 1e1000 and abc as no number, 1e-400 as 0', async () => {
    expect(await matching({ key: 'n', operator: 'gt', value: 0 })).toEqual([3, 4, 7]);
    expect(await matching({ key: 'n', operator: 'gte', value: 0 })).toEqual([2, 3, 4, 7]);
    expect(await matching({ key: 'n', operator: 'lt', value: 100 })).toEqual([2, 3, 4]);
    expect(await matching({ key: 'n', operator: 'lte', value: -1 })).toEqual([]);
  });

  it('date filters read a day the month lacks, year 0000, hour 24 and a year past 9999 as no date', async () => {
    expect(await matching({ key: 'd', operator: 'is_date_after', value: '2024-02-01' })).toEqual([1, 3, 7]);
    expect(await matching({ key: 'd', operator: 'is_date_before', value: '2024-03-01T08:30:00Z' })).toEqual([1, 3]);
    expect(await matching({ key: 'd', operator: 'is_date_exact', value: '2024-03-01' })).toEqual([3, 7]);
  });

  it('HogQL reads them alike', async () => {
    const res = await t.fetch(`/api/environments/${pid}/query/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query: { kind: 'HogQLQuery', query: 'select toFloat(properties.n), toDateTime(properties.d) from events order by uuid' },
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect((JSON.parse(text) as { results: unknown[][] }).results).toEqual([
      [null, null],
      [null, '2024-02-29T10:00:00Z'],
      [0, null],
      [5, '2024-03-01T08:00:00Z'],
      [12, null],
      [null, null],
      [null, null],
      [250, '2024-03-01T09:00:00Z'],
    ]);
  });
});
