/**
 * TrendsQuery buckets across daylight-saving changes, through `POST …/query/` with the real HTTP
 * stack and response validation on: in a project in Europe/Berlin or America/New_York, every day,
 * week and month bucket is [its local midnight, the next local midnight) and every hour bucket one
 * real hour (the repeated 02:00 of a fall-back night is two buckets), as PostHog's are. Events sit
 * one second either side of the local midnights before and after each change; the counts are
 * written by hand from the lists below. Runs on SQLite, and in the PostgreSQL and ClickHouse passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let berlin: number;
let newYork: number;
let kolkata: number;

interface Series {
  data: number[];
  labels: string[];
  days: string[];
  count: number;
  compare_label?: string;
}

const pv = (timestamp: string) => ({ event: '$pageview', distinct_id: 'dana', timestamp });

/**
 * Europe/Berlin: CET (+01:00) until 2024-03-31 01:00Z, CEST (+02:00) until 2024-10-27 01:00Z.
 * Local times in the comments.
 */
const BERLIN_EVENTS = [
  pv('2024-01-31T22:59:59Z'), // Wed 31 Jan 23:59:59 CET
  pv('2024-01-31T23:00:00Z'), // Thu 1 Feb 00:00:00 CET
  pv('2024-03-24T23:30:00Z'), // Mon 25 Mar 00:30
  pv('2024-03-29T22:59:59Z'), // Fri 29 Mar 23:59:59
  pv('2024-03-29T23:00:00Z'), // Sat 30 Mar 00:00:00
  pv('2024-03-30T22:59:59Z'), // Sat 30 Mar 23:59:59 (last second of a week)
  pv('2024-03-30T23:00:00Z'), // Sun 31 Mar 00:00:00 (first of the next week)
  pv('2024-03-31T00:59:59Z'), // Sun 31 Mar 01:59:59 CET, just before the change
  pv('2024-03-31T01:00:00Z'), // Sun 31 Mar 03:00:00 CEST, just after it
  pv('2024-03-31T21:59:59Z'), // Sun 31 Mar 23:59:59
  pv('2024-03-31T22:00:00Z'), // Mon 1 Apr 00:00:00
  pv('2024-04-01T21:59:59Z'), // Mon 1 Apr 23:59:59
  pv('2024-04-01T22:00:00Z'), // Tue 2 Apr 00:00:00
  pv('2024-04-30T21:59:59Z'), // Tue 30 Apr 23:59:59 CEST
  pv('2024-04-30T22:00:00Z'), // Wed 1 May 00:00:00 CEST
  pv('2024-10-27T00:30:00Z'), // Sun 27 Oct 02:30 CEST
  pv('2024-10-27T01:30:00Z'), // Sun 27 Oct 02:30 CET (the same wall-clock time, an hour later)
];

/** America/New_York: EDT (-04:00) until 2024-11-03 06:00Z, then EST (-05:00). */
const NEW_YORK_EVENTS = [
  pv('2024-11-01T03:59:59Z'), // Thu 31 Oct 23:59:59 EDT
  pv('2024-11-01T04:00:00Z'), // Fri 1 Nov 00:00:00 EDT (first of the month)
  pv('2024-11-02T03:59:59Z'), // Fri 1 Nov 23:59:59
  pv('2024-11-02T04:00:00Z'), // Sat 2 Nov 00:00:00
  pv('2024-11-03T03:59:59Z'), // Sat 2 Nov 23:59:59 EDT
  pv('2024-11-03T04:00:00Z'), // Sun 3 Nov 00:00:00 EDT (a 25-hour day)
  pv('2024-11-04T04:59:59Z'), // Sun 3 Nov 23:59:59 EST
  pv('2024-11-04T05:00:00Z'), // Mon 4 Nov 00:00:00 EST
];

/** Asia/Kolkata, +05:30 all year: hours start at :30 past a UTC hour. */
const KOLKATA_EVENTS = [
  pv('2024-11-01T18:00:00Z'), // Fri 1 Nov 23:30:00
  pv('2024-11-01T18:29:59Z'), // Fri 1 Nov 23:59:59
  pv('2024-11-01T18:30:00Z'), // Sat 2 Nov 00:00:00
];

async function trends(team: number, extra: Record<string, unknown>): Promise<Series[]> {
  const res = await t.fetch(`/api/environments/${team}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra } }),
  });
  const body = (await res.json()) as { results: Series[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.results;
}

beforeAll(async () => {
  t = await startTestServer();
  const org = t.boot.organization.id;
  berlin = (await t.accounts.createTeam({ organization_id: org, name: 'Berlin', timezone: 'Europe/Berlin' })).id;
  newYork = (await t.accounts.createTeam({ organization_id: org, name: 'New York', timezone: 'America/New_York' })).id;
  await importEvents(t.store, berlin, BERLIN_EVENTS);
  await importEvents(t.store, newYork, NEW_YORK_EVENTS);
  kolkata = (await t.accounts.createTeam({ organization_id: org, name: 'Kolkata', timezone: 'Asia/Kolkata' })).id;
  await importEvents(t.store, kolkata, KOLKATA_EVENTS);
});

afterAll(async () => {
  await t.close();
});

describe('POST /api/environments/{project_id}/query/ TrendsQuery across a daylight-saving change', () => {
  it('counts each day from its own local midnight, before and after spring forward (Europe/Berlin)', async () => {
    const [s] = await trends(berlin, { dateRange: { date_from: '2024-03-29', date_to: '2024-04-02' } });
    expect(s!.days).toEqual(['2024-03-29', '2024-03-30', '2024-03-31', '2024-04-01', '2024-04-02']);
    expect(s!.labels).toEqual(['29-Mar-2024', '30-Mar-2024', '31-Mar-2024', '1-Apr-2024', '2-Apr-2024']);
    expect(s!.data).toEqual([1, 2, 4, 2, 1]);
  });

  it('counts each day from its own local midnight, before and after fall back (America/New_York)', async () => {
    const [s] = await trends(newYork, { dateRange: { date_from: '2024-11-01', date_to: '2024-11-04' } });
    expect(s!.days).toEqual(['2024-11-01', '2024-11-02', '2024-11-03', '2024-11-04']);
    expect(s!.data).toEqual([2, 2, 2, 1]);
  });

  it('starts weeks and months at their local midnight on either side of the change', async () => {
    const [week] = await trends(berlin, { interval: 'week', dateRange: { date_from: '2024-03-24', date_to: '2024-04-06' } });
    expect(week!.days).toEqual(['2024-03-24', '2024-03-31']);
    expect(week!.data).toEqual([4, 7]);
    const [month] = await trends(newYork, { interval: 'month', dateRange: { date_from: '2024-10-01', date_to: '2024-11-30' } });
    expect(month!.days).toEqual(['2024-10-01', '2024-11-01']);
    expect(month!.labels).toEqual(['Oct 2024', 'Nov 2024']);
    expect(month!.data).toEqual([1, 7]);
  });

  it('over 25 years of months (50 changes), starts each month at its local midnight', async () => {
    const [s] = await trends(berlin, { interval: 'month', dateRange: { date_from: '2000-01-01', date_to: '2024-12-31' } });
    expect(s!.days).toHaveLength(300);
    expect(s!.days.slice(-12, -7)).toEqual(['2024-01-01', '2024-02-01', '2024-03-01', '2024-04-01', '2024-05-01']);
    expect(s!.data.slice(-12)).toEqual([1, 1, 8, 4, 1, 0, 0, 0, 0, 2, 0, 0]);
    expect(s!.count).toBe(17);
  });

  it('skips the hour spring forward removes, and keeps the repeated fall-back hour as two buckets', async () => {
    const [spring] = await trends(berlin, {
      interval: 'hour',
      dateRange: { date_from: '2024-03-31T00:00:00', date_to: '2024-03-31T04:00:00' },
    });
    expect(spring!.days).toEqual(['2024-03-31 00:00:00', '2024-03-31 01:00:00', '2024-03-31 03:00:00', '2024-03-31 04:00:00']);
    expect(spring!.data).toEqual([1, 1, 1, 0]);
    const [fall] = await trends(berlin, {
      interval: 'hour',
      dateRange: { date_from: '2024-10-27T01:00:00', date_to: '2024-10-27T03:00:00' },
    });
    expect(fall!.days).toEqual(['2024-10-27 01:00:00', '2024-10-27 02:00:00', '2024-10-27 02:00:00', '2024-10-27 03:00:00']);
    expect(fall!.labels).toEqual(['27-Oct 01:00', '27-Oct 02:00', '27-Oct 02:00', '27-Oct 03:00']);
    expect(fall!.data).toEqual([0, 1, 1, 0]);
  });

  it('starts each hour at its local hour in a zone whose offset is not whole hours (Asia/Kolkata)', async () => {
    const [s] = await trends(kolkata, {
      interval: 'hour',
      dateRange: { date_from: '2024-11-01T23:00:00', date_to: '2024-11-02T00:00:00' },
    });
    expect(s!.days).toEqual(['2024-11-01 23:00:00', '2024-11-02 00:00:00']);
    expect(s!.data).toEqual([2, 1]);
  });

  it('with compare, starts the previous period at a local midnight when it holds the change', async () => {
    const results = await trends(berlin, {
      dateRange: { date_from: '2024-04-01', date_to: '2024-04-07' },
      compareFilter: { compare: true },
    });
    const previous = results.find((r) => r.compare_label === 'previous')!;
    expect(previous.days).toEqual(['2024-03-25', '2024-03-26', '2024-03-27', '2024-03-28', '2024-03-29', '2024-03-30', '2024-03-31']);
    expect(previous.data).toEqual([1, 0, 0, 0, 1, 2, 4]);
    const current = results.find((r) => r.compare_label === 'current')!;
    expect(current.data).toEqual([2, 1, 0, 0, 0, 0, 0]);
  });
});
