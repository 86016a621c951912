/**
 * LifecycleQuery on `POST …/query/`, through the real HTTP stack with response validation on, over
 * the hand-built case of ./lifecycle-dataset.ts (its doc derives every status). Runs on SQLite,
 * and again on PostgreSQL and ClickHouse in their passes.
 */
import type { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedLifecycleDataset, today } from './lifecycle-dataset.js';

let t: TestServer;
let L: number;
let d0: DateTime;

interface Status {
  data: number[];
  count: number;
  label: string;
  status: string;
  days: string[];
  labels: string[];
  action: Record<string, unknown>;
}
interface Answer {
  results: Status[];
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`/api/environments/${L}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const LIFECYCLE = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: { date_from: '-6d' } };

beforeAll(async () => {
  t = await startTestServer();
  L = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Lifecycle' })).id;
  d0 = today();
  await seedLifecycleDataset(t.store, L, d0);
});

afterAll(async () => {
  await t.close();
});

describe('LifecycleQuery', () => {
  it('new, returning, resurrecting and dormant per day, in PostHog’s shape and order', async () => {
    const res = await query(LIFECYCLE);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const a = res.body;
    expect(a.results.map((r) => [r.status, r.data])).toEqual([
      ['new', [0, 0, 0, 0, 0, 0, 1]],
      ['returning', [1, 1, 0, 0, 0, 0, 1]],
      ['resurrecting', [0, 0, 1, 1, 0, 1, 1]],
      ['dormant', [0, 0, -1, -1, -1, 0, 0]],
    ]);
    expect(a.results.map((r) => [r.label, r.count])).toEqual([
      ['$pageview - new', 1],
      ['$pageview - returning', 3],
      ['$pageview - resurrecting', 4],
      ['$pageview - dormant', -3],
    ]);
    const days = Array.from({ length: 7 }, (_, i) => d0.minus({ days: 6 - i }).toFormat('yyyy-MM-dd'));
    for (const r of a.results) {
      expect(r.days).toEqual(days);
      expect(r.labels[6]).toBe(d0.setLocale('en-US').toFormat('d-LLL-yyyy'));
      expect(r.action).toMatchObject({ id: '$pageview', name: '$pageview', type: 'events', order: 0, math: 'total' });
    }
    expect(a).toMatchObject({ is_cached: false, timezone: 'UTC', resolved_date_range: { date_from: `${days[0]}T00:00:00Z` } });
    // the persons active on D0 are HogQL's (new + returning + resurrecting)
    const rows = await t.hogql(
      L,
      `select count(distinct person_id) from events where event = '$pageview' and timestamp >= '${days[6]}' and timestamp < '${d0.plus({ days: 1 }).toFormat('yyyy-MM-dd')}'`,
    );
    expect(rows[0]![0]).toBe(a.results[0]!.data[6]! + a.results[1]!.data[6]! + a.results[2]!.data[6]!);
  });

  it('all events, and inside an InsightVizNode', async () => {
    const res = await query({ kind: 'InsightVizNode', source: { ...LIFECYCLE, series: [{ kind: 'EventsNode', event: null }] } });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => r.label)).toEqual([
      'All events - new',
      'All events - returning',
      'All events - resurrecting',
      'All events - dormant',
    ]);
    expect(res.body.results[3]!.data).toEqual([0, 0, -1, -1, -1, 0, 0]);
  });

  it('answers a 400 in PostHog’s shape for bad input', async () => {
    const action = await query({ ...LIFECYCLE, series: [{ kind: 'ActionsNode', id: 1 }] });
    expect(action.status).toBe(400);
    expect(action.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'query__series__0__kind' });
    const empty = await query({ ...LIFECYCLE, series: [] });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ type: 'validation_error', attr: 'query__series' });
    const interval = await query({ ...LIFECYCLE, interval: 'fortnight' });
    expect(interval.status).toBe(400);
  });
});
