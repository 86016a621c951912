/**
 * TrendsQuery, the wrappers, HogQLMetadata and unsupported kinds on `POST …/query/`, through the
 * real HTTP stack with response validation on, over the hand-counted dataset of ./dataset.ts.
 * Runs on SQLite, and again on PostgreSQL and ClickHouse in their passes: the same numbers on
 * every events store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedInsightsDataset } from './dataset.js';

let t: TestServer;
let P: number;
let K: number;

interface Series {
  data: number[];
  labels: string[];
  days: string[];
  count: number;
  label: string;
  breakdown_value?: string | string[];
  compare_label?: string;
  aggregated_value?: number;
  order: number;
  action: Record<string, unknown> | null;
}
interface Answer {
  results: Series[];
  hasMore: boolean;
  detail?: string;
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>, team = P, prefix = '/api/environments'): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`${prefix}/${team}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const WEEK = { date_from: '2024-11-01', date_to: '2024-11-07' };
const trends = async (extra: Record<string, unknown>, team = P) => {
  const res = await query({ kind: 'TrendsQuery', dateRange: WEEK, series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra }, team);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const byValue = (a: Answer) => Object.fromEntries(a.results.map((r) => [r.breakdown_value, r.data]));

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Insights other project' })).id;
  K = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Kolkata', timezone: 'Asia/Kolkata' })).id;
  await seedInsightsDataset(t.store, P, Q, K);
});

afterAll(async () => {
  await t.close();
});

describe('TrendsQuery', () => {
  it('counts a series per day, in PostHog’s shape, and the total equals HogQL’s count of the same events', async () => {
    const a = await trends({});
    expect(a.results).toHaveLength(1);
    const s = a.results[0]!;
    expect(s.data).toEqual([3, 1, 3, 0, 2, 1, 1]);
    expect(s.count).toBe(11);
    expect(s.label).toBe('$pageview');
    expect(s.days).toEqual(['2024-11-01', '2024-11-02', '2024-11-03', '2024-11-04', '2024-11-05', '2024-11-06', '2024-11-07']);
    expect(s.labels[0]).toBe('1-Nov-2024');
    expect(s.action).toMatchObject({ id: '$pageview', type: 'events', order: 0, name: '$pageview' });
    expect(a).toMatchObject({
      hasMore: false,
      is_cached: false,
      timezone: 'UTC',
      resolved_date_range: { date_from: '2024-11-01T00:00:00Z', date_to: '2024-11-07T23:59:59.999999Z' },
    });
    const rows = await t.hogql(
      P,
      "select count() from events where event = '$pageview' and timestamp >= '2024-11-01' and timestamp < '2024-11-08'",
    );
    expect(rows[0]![0]).toBe(s.count);
    // the answer's `hogql` is a query that runs, and counts the same buckets
    const shown = await t.hogql(P, a.hogql as string);
    expect(Object.fromEntries(shown.map(([day, n]) => [String(day).slice(0, 10), n]))).toEqual({
      '2024-11-01': 3,
      '2024-11-02': 1,
      '2024-11-03': 3,
      '2024-11-05': 2,
      '2024-11-06': 1,
      '2024-11-07': 1,
    });
  });

  it('the same on the /api/projects/ prefix, through an InsightVizNode, and with event null for all events', async () => {
    const wrapped = await query(
      { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', dateRange: WEEK, series: [{ kind: 'EventsNode', event: '$pageview' }] } },
      P,
      '/api/projects',
    );
    expect(wrapped.status).toBe(200);
    expect(wrapped.body.results[0]!.data).toEqual([3, 1, 3, 0, 2, 1, 1]);
    const all = await trends({ series: [{ kind: 'EventsNode', event: null }] });
    expect(all.results[0]).toMatchObject({ label: 'All events', count: 17 });
  });

  it('math: dau, sum and avg of a property, weekly_active', async () => {
    const dau = await trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] });
    expect(dau.results[0]!.data).toEqual([2, 1, 2, 0, 2, 1, 1]);
    const sum = await trends({ series: [{ kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'price' }] });
    expect(sum.results[0]!.data).toEqual([0, 10, 0, 0, 9.5, 0, 0]);
    expect(sum.results[0]!.count).toBe(19.5);
    const avg = await trends({ series: [{ kind: 'EventsNode', event: 'purchase', math: 'avg', math_property: 'price' }] });
    expect(avg.results[0]!.data[4]).toBe(4.75);
    const wau = await trends({ series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }] });
    // 1 Nov: alice, bob, carol in 26 Oct – 1 Nov; 7 Nov: all four in 1–7 Nov
    expect(wau.results[0]!.data[0]).toBe(3);
    expect(wau.results[0]!.data[6]).toBe(4);
  });

  it('breaks down by an event property: values by total, the null label, then other; hasMore', async () => {
    const all = await trends({ breakdownFilter: { breakdown: '$browser' } });
    expect(all.results.map((r) => r.breakdown_value)).toEqual(['Chrome', 'Firefox', 'Safari', '$$_posthog_breakdown_null_$$']);
    expect(byValue(all)).toMatchObject({ Chrome: [2, 1, 0, 0, 1, 1, 0], Firefox: [1, 0, 2, 0, 0, 0, 1] });
    expect(all.hasMore).toBe(false);
    const two = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } });
    expect(two.results.map((r) => [r.breakdown_value, r.count])).toEqual([
      ['Chrome', 5],
      ['Firefox', 4],
      ['$$_posthog_breakdown_other_$$', 2],
    ]);
    expect(two.hasMore).toBe(true);
    const hidden = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2, breakdown_hide_other_aggregation: true } });
    expect(hidden.results).toHaveLength(2);
  });

  it('breaks down by several properties at once (breakdowns): a list per value, the label joined with ::', async () => {
    const a = await trends({
      breakdownFilter: {
        breakdowns: [
          { property: '$browser', type: 'event' },
          { property: 'plan', type: 'person' },
        ],
        breakdown_limit: 2,
      },
    });
    expect(a.results.map((r) => [r.breakdown_value, r.label, r.count])).toEqual([
      [['Chrome', 'pro'], 'Chrome::pro', 5],
      [['Firefox', 'free'], 'Firefox::free', 4],
      [
        ['$$_posthog_breakdown_other_$$', '$$_posthog_breakdown_other_$$'],
        '$$_posthog_breakdown_other_$$::$$_posthog_breakdown_other_$$',
        2,
      ],
    ]);
    const withNull = await trends({ breakdownFilter: { breakdowns: [{ property: '$browser' }] } });
    expect(withNull.results.map((r) => r.breakdown_value)).toContainEqual(['$$_posthog_breakdown_null_$$']);
  });

  it('breaks down by a person property', async () => {
    const a = await trends({ breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } });
    expect(a.results.map((r) => [r.breakdown_value, r.count])).toEqual([
      ['pro', 6],
      ['free', 4],
      ['$$_posthog_breakdown_null_$$', 1],
    ]);
  });

  it('compares with the previous period of the same length', async () => {
    const a = await trends({ compareFilter: { compare: true } });
    expect(a.results.map((r) => r.compare_label)).toEqual(['current', 'previous']);
    const prev = a.results[1]!;
    expect(prev.days[0]).toBe('2024-10-25');
    expect(prev.data).toEqual([1, 0, 0, 1, 0, 0, 1]);
  });

  it('applies a formula over the series (a division by 0 is 0), with its custom name', async () => {
    const a = await trends({
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: 'signup' },
      ],
      trendsFilter: { formulaNodes: [{ formula: 'A / B', custom_name: 'Views per signup' }] },
    });
    expect(a.results).toHaveLength(1);
    expect(a.results[0]).toMatchObject({ label: 'Views per signup', data: [3, 0, 3, 0, 0, 1, 0], action: null });
    const legacy = await trends({ series: [{ kind: 'EventsNode', event: '$pageview' }], trendsFilter: { formula: 'a * 2 + 1' } });
    expect(legacy.results[0]).toMatchObject({ label: 'Formula (a * 2 + 1)', data: [7, 3, 7, 1, 5, 3, 3] });
  });

  it('hour, week and month intervals, with PostHog’s labels', async () => {
    const hour = await trends({ interval: 'hour', dateRange: { date_from: '2024-11-01T00:00:00Z', date_to: '2024-11-01T23:00:00Z' } });
    const h = hour.results[0]!;
    expect(h.data).toHaveLength(24);
    expect([h.data[9], h.data[10], h.data[11]]).toEqual([1, 1, 1]);
    expect(h.days[9]).toBe('2024-11-01 09:00:00');
    expect(h.labels[9]).toBe('1-Nov 09:00');
    const week = await trends({ interval: 'week', dateRange: { date_from: '2024-11-01', date_to: '2024-11-14' } });
    expect(week.results[0]).toMatchObject({
      data: [4, 7, 0],
      labels: ['1–2 Nov', '3–9 Nov', '10–14 Nov'],
      days: ['2024-10-27', '2024-11-03', '2024-11-10'],
    });
    const month = await trends({ interval: 'month', dateRange: { date_from: '2024-10-01', date_to: '2024-11-30' } });
    expect(month.results[0]).toMatchObject({ data: [3, 11], labels: ['Oct 2024', 'Nov 2024'] });
  });

  it('cumulative and whole-range displays', async () => {
    const cumulative = await trends({ trendsFilter: { display: 'ActionsLineGraphCumulative' } });
    expect(cumulative.results[0]).toMatchObject({ data: [3, 4, 7, 7, 9, 10, 11], count: 11 });
    const bold = await trends({ trendsFilter: { display: 'BoldNumber' } });
    expect(bold.results[0]).toMatchObject({ aggregated_value: 11, data: [], count: 0 });
    const pie = await trends({ trendsFilter: { display: 'ActionsPie' }, breakdownFilter: { breakdown: '$browser' } });
    expect(pie.results.map((r) => [r.breakdown_value, r.aggregated_value])).toEqual([
      ['Chrome', 5],
      ['Firefox', 4],
      ['Safari', 1],
      ['$$_posthog_breakdown_null_$$', 1],
    ]);
  });

  it('filters by series and query property filters', async () => {
    const chrome = await trends({
      series: [
        { kind: 'EventsNode', event: '$pageview', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] },
      ],
    });
    expect(chrome.results[0]!.count).toBe(5);
    const free = await trends({ properties: [{ key: 'plan', value: 'free', operator: 'exact', type: 'person' }] });
    expect(free.results[0]!.count).toBe(4);
  });

  it('buckets in the project’s timezone', async () => {
    const a = await trends({ dateRange: { date_from: '2024-11-01', date_to: '2024-11-02' } }, K);
    expect(a.results[0]).toMatchObject({ data: [1, 1], days: ['2024-11-01', '2024-11-02'] });
    expect(a.timezone).toBe('Asia/Kolkata');
  });

  it('answers a clear 400 for what it does not run', async () => {
    const bad = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'x' }], trendsFilter: { formula: 'A + C' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'query__trendsFilter__formula' });
    const date = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode' }], dateRange: { date_from: 'yesterday-ish' } });
    expect(date.body).toMatchObject({ code: 'invalid_input', attr: 'query__dateRange__date_from' });
    const missing = await query({ kind: 'TrendsQuery' });
    expect(missing.body).toMatchObject({ code: 'required', attr: 'query__series' });
  });
});

describe('the other kinds on /query/', () => {
  it('runs the source of DataTableNode and DataVisualizationNode', async () => {
    for (const kind of ['DataTableNode', 'DataVisualizationNode']) {
      const res = await query({ kind, source: { kind: 'HogQLQuery', query: "select count() from events where event = 'signup'" } });
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([[3]]);
    }
  });

  it('answers "Unsupported query kind" for a kind it does not run, also inside a wrapper', async () => {
    for (const q of [
      { kind: 'FunnelCorrelationQuery', source: {} },
      { kind: 'FunnelCorrelationActorsQuery', source: {} },
      { kind: 'InsightVizNode', source: { kind: 'WebOverviewQuery' } },
    ]) {
      const res = await query(q);
      expect(res.status).toBe(400);
      const kind = (q as { source?: { kind: string } }).source?.kind ?? q.kind;
      expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_input', detail: `Unsupported query kind: ${kind}`, attr: null });
    }
    const none = await query({ query: 'select 1' });
    expect(none.body).toMatchObject({ code: 'required', attr: 'query__kind' });
  });

  it('HogQLMetadata: valid, and invalid with the error’s offset', async () => {
    const ok = await query({ kind: 'HogQLMetadata', language: 'hogQL', query: 'select event, count() from events group by event' });
    expect(ok.body).toEqual({
      query: 'select event, count() from events group by event',
      isValid: true,
      errors: [],
      warnings: [],
      notices: [],
      table_names: ['events'],
    });
    const bad = await query({ kind: 'HogQLMetadata', language: 'hogQL', query: 'select nosuchfn(event) from events' });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ isValid: false, errors: [{ start: 7 }] });
    const expr = await query({ kind: 'HogQLMetadata', language: 'hogQLExpr', query: 'properties.$browser =' });
    expect(expr.body).toMatchObject({ isValid: false, errors: [{ message: 'Unexpected end of query' }] });
    const exprOk = await query({ kind: 'HogQLMetadata', language: 'hogQLExpr', query: "lower(properties.$browser) = 'chrome'" });
    expect(exprOk.body).toMatchObject({ isValid: true });
  });
});
