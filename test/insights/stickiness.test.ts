/**
 * StickinessQuery on `POST …/query/`, through the real HTTP stack with response validation on,
 * over the hand-counted events of ./stickiness-dataset.ts (its doc derives the numbers). Runs on
 * SQLite, and again on PostgreSQL and ClickHouse in their passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedStickinessDataset } from './stickiness-dataset.js';

let t: TestServer;
let S: number;

interface Series {
  data: number[];
  count: number;
  label: string;
  labels: string[];
  days: number[];
  action: Record<string, unknown>;
  compare?: boolean;
  compare_label?: string;
}
interface Answer {
  results: Series[];
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`/api/environments/${S}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const WEEK = { date_from: '2024-11-01', date_to: '2024-11-07' };
const PAGEVIEWS = [{ kind: 'EventsNode', event: '$pageview' }];
const stickiness = async (extra: Record<string, unknown> = {}) => {
  const res = await query({ kind: 'StickinessQuery', series: PAGEVIEWS, dateRange: WEEK, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

beforeAll(async () => {
  t = await startTestServer();
  S = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Stickiness' })).id;
  await seedStickinessDataset(t.store, S);
});

afterAll(async () => {
  await t.close();
});

describe('StickinessQuery', () => {
  it('counts the persons active in exactly n days, in PostHog’s shape', async () => {
    const a = await stickiness();
    expect(a.results).toHaveLength(1);
    expect(a.results[0]).toEqual({
      count: 5,
      data: [3, 1, 1, 0, 0, 0, 0],
      days: [1, 2, 3, 4, 5, 6, 7],
      label: '$pageview',
      labels: ['1 day', '2 days', '3 days', '4 days', '5 days', '6 days', '7 days'],
      action: { order: 0, type: 'events', name: '$pageview', id: '$pageview', custom_name: null },
    });
    expect(a).toMatchObject({ is_cached: false, timezone: 'UTC', query_status: null });
    expect(a).not.toHaveProperty('resolved_date_range');
    // count: every person with a pageview in the range, as HogQL counts them
    const rows = await t.hogql(
      S,
      "select count(distinct person_id) from events where event = '$pageview' and timestamp >= '2024-11-01' and timestamp < '2024-11-08'",
    );
    expect(rows[0]![0]).toBe(a.results[0]!.count);
  });

  it('cumulative, stickinessCriteria, several series', async () => {
    const cumulative = await stickiness({ stickinessFilter: { computedAs: 'cumulative' } });
    expect(cumulative.results[0]!.data).toEqual([5, 2, 1, 0, 0, 0, 0]);
    expect(cumulative.results[0]!.labels.slice(0, 2)).toEqual(['1 day or more', '2 days or more']);
    const twice = await stickiness({ stickinessFilter: { stickinessCriteria: { operator: 'gte', value: 2 } } });
    expect(twice.results[0]!.data).toEqual([1, 0, 0, 0, 0, 0, 0]);
    const exact = await stickiness({ stickinessFilter: { stickinessCriteria: { operator: 'exact', value: 1 } } });
    // days with exactly one pageview: s1 on 1 and 2 Nov (2 days), the others as before
    expect(exact.results[0]!.data).toEqual([3, 2, 0, 0, 0, 0, 0]);
    const two = await stickiness({ series: [...PAGEVIEWS, { kind: 'EventsNode', event: 'signup' }] });
    expect(two.results.map((r) => [r.label, r.data[0], r.action.order])).toEqual([
      ['$pageview', 3, 0],
      ['signup', 1, 1],
    ]);
  });

  it('compares with the previous period', async () => {
    const a = await stickiness({ compareFilter: { compare: true } });
    expect(a.results.map((r) => [r.compare_label, r.compare, r.data])).toEqual([
      ['current', true, [3, 1, 1, 0, 0, 0, 0]],
      ['previous', true, [1, 0, 0, 0, 0, 0, 0]],
    ]);
  });

  it('counts periods in the project’s timezone', async () => {
    // 23:30 on 1 November and 01:30 on 2 November in Kolkata (+05:30): one UTC day, two local days
    const K = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Kolkata', timezone: 'Asia/Kolkata' })).id;
    await importEvents(t.store, K, [
      { event: '$pageview', distinct_id: 'kim', timestamp: '2024-11-01T18:00:00Z', properties: {} },
      { event: '$pageview', distinct_id: 'kim', timestamp: '2024-11-01T20:00:00Z', properties: {} },
    ]);
    const res = await t.fetch(`/api/environments/${K}/query/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query: { kind: 'StickinessQuery', series: PAGEVIEWS, dateRange: { date_from: '2024-11-01', date_to: '2024-11-02' } },
      }),
    });
    const body = (await res.json()) as Answer;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.results[0]!.data).toEqual([0, 1]);
    expect(body.timezone).toBe('Asia/Kolkata');
  });

  it('runs inside an InsightVizNode', async () => {
    const res = await query({ kind: 'InsightVizNode', source: { kind: 'StickinessQuery', series: PAGEVIEWS, dateRange: WEEK } });
    expect(res.status).toBe(200);
    expect(res.body.results[0]!.data).toEqual([3, 1, 1, 0, 0, 0, 0]);
  });

  it('answers a 400 in PostHog’s shape for bad input', async () => {
    const count = await query({ kind: 'StickinessQuery', series: PAGEVIEWS, intervalCount: 2 });
    expect(count.status).toBe(400);
    expect(count.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'query__intervalCount' });
    const compareTo = await query({ kind: 'StickinessQuery', series: PAGEVIEWS, compareFilter: { compare_to: '-1w' } });
    expect(compareTo.body).toMatchObject({ attr: 'query__compareFilter__compare_to' });
    const criteria = await query({
      kind: 'StickinessQuery',
      series: PAGEVIEWS,
      stickinessFilter: { stickinessCriteria: { operator: 'most' } },
    });
    expect(criteria.status).toBe(400);
    expect(criteria.body).toMatchObject({ type: 'validation_error' });
  });
});
