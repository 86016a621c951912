/**
 * FunnelsQuery on `POST …/query/`, through the real HTTP stack with response validation on, over
 * the hand-counted events of ./funnels-dataset.ts (its doc lists what each person did). Runs on
 * SQLite, and again on PostgreSQL and ClickHouse in their passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedFunnelsDataset } from './funnels-dataset.js';

let t: TestServer;
let F: number;

interface Step {
  action_id: string | null;
  name: string;
  order: number;
  count: number;
  people: unknown[];
  type: string;
  average_conversion_time: number | null;
  median_conversion_time: number | null;
}
interface Answer {
  results: unknown;
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`/api/environments/${F}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const NOVEMBER = { date_from: '2024-11-01', date_to: '2024-11-30' };
const STEPS = [
  { kind: 'EventsNode', event: 'signup' },
  { kind: 'EventsNode', event: '$pageview' },
  { kind: 'EventsNode', event: 'purchase' },
];
const funnel = async (extra: Record<string, unknown> = {}, funnelsFilter: Record<string, unknown> = {}) => {
  const res = await query({ kind: 'FunnelsQuery', series: STEPS, dateRange: NOVEMBER, funnelsFilter, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const counts = (a: Answer) => (a.results as Step[]).map((s) => s.count);

beforeAll(async () => {
  t = await startTestServer();
  F = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Funnels' })).id;
  await seedFunnelsDataset(t.store, F);
});

afterAll(async () => {
  await t.close();
});

describe('FunnelsQuery', () => {
  it('counts each step’s persons (this step or later) in PostHog’s shape, with conversion times', async () => {
    const a = await funnel();
    const steps = a.results as Step[];
    // step 0: f1–f6; step 1: f1, f4, f5, f6 (f2 outside the window, f3 out of order); step 2: f1, f6
    expect(counts(a)).toEqual([6, 4, 2]);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.count).toBeLessThanOrEqual(steps[i - 1]!.count);
    expect(steps[0]).toEqual({
      action_id: 'signup',
      name: 'signup',
      custom_name: null,
      order: 0,
      people: [],
      count: 6,
      type: 'events',
      average_conversion_time: null,
      median_conversion_time: null,
    });
    // step 1: 3,600 (f1), 1,800 (f4), 1,200 (f5), 600 (f6) seconds
    expect(steps[1]).toMatchObject({ name: '$pageview', order: 1, average_conversion_time: 1800, median_conversion_time: 1500 });
    // step 2: 82,800 (f1), 600 (f6)
    expect(steps[2]).toMatchObject({ average_conversion_time: 41700, median_conversion_time: 41700 });
    expect(a).toMatchObject({ isUdf: false, is_cached: false, timezone: 'UTC' });
    expect(a.resolved_date_range).toEqual({ date_from: '2024-11-01T00:00:00Z', date_to: '2024-11-30T23:59:59.999999Z' });
    // step 0's count is HogQL's count of the persons who signed up in the range
    const rows = await t.hogql(
      F,
      "select count(distinct person_id) from events where event = 'signup' and timestamp >= '2024-11-01' and timestamp < '2024-12-01'",
    );
    expect(rows[0]![0]).toBe(steps[0]!.count);
  });

  it('a longer window takes in f2’s late pageview; the range limits the events read', async () => {
    expect(counts(await funnel({}, { funnelWindowInterval: 30, funnelWindowIntervalUnit: 'day' }))).toEqual([6, 5, 2]);
    // an hour: f1 (1 h exactly, inclusive), f4, f5, f6 convert to step 1; f1's purchase is 23 h after
    expect(counts(await funnel({}, { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'hour' }))).toEqual([6, 4, 1]);
    // 1–4 November: f1, f2, f3 start; f1 converts fully
    expect(counts(await funnel({ dateRange: { date_from: '2024-11-01', date_to: '2024-11-04' } }))).toEqual([3, 1, 1]);
  });

  it('strict and unordered orders', async () => {
    // strict: f3 and f6 stop after signup (the next step event is a purchase); f5's noise is no step event
    expect(counts(await funnel({}, { funnelOrderType: 'strict' }))).toEqual([6, 3, 1]);
    // unordered: f3 did all three within the window (≥ 2: f1, f3, f4, f5, f6; 3: f1, f3, f6)
    const u = await funnel({}, { funnelOrderType: 'unordered' });
    expect(counts(u)).toEqual([6, 5, 3]);
    expect((u.results as Step[]).map((s) => [s.name, s.action_id])).toEqual([
      ['Completed 1 step', null],
      ['Completed 2 steps', null],
      ['Completed 3 steps', null],
    ]);
  });

  it('exclusions drop the attempts with the event between their steps', async () => {
    // f5's noise comes between its signup and pageview: its only attempt goes
    const exclude = (from: number, to: number) => ({
      exclusions: [{ kind: 'EventsNode', event: 'noise', funnelFromStep: from, funnelToStep: to }],
    });
    expect(counts(await funnel({}, exclude(0, 1)))).toEqual([5, 3, 2]);
    // between steps 1 and 2 f5's attempt stops before step 2: it stays
    expect(counts(await funnel({}, exclude(1, 2)))).toEqual([6, 4, 2]);
    const bad = await query({ kind: 'FunnelsQuery', series: STEPS, funnelsFilter: exclude(1, 1) });
    expect(bad.body).toMatchObject({
      detail: 'Exclusion event range is invalid. End of range should be greater than start.',
      attr: 'query__funnelsFilter__exclusions__0',
    });
    const step = await query({
      kind: 'FunnelsQuery',
      series: STEPS,
      funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: '$pageview', funnelFromStep: 0, funnelToStep: 1 }] },
    });
    expect(step.status).toBe(400);
    expect(step.body).toMatchObject({ type: 'validation_error', attr: 'query__funnelsFilter__exclusions__0' });
  });

  it('breaks the steps down by an event or person property', async () => {
    const byValue = (a: Answer) =>
      (a.results as (Step & { breakdown_value: string; breakdown: string })[][]).map((steps) => [
        steps[0]!.breakdown_value,
        steps.map((s) => s.count),
      ]);
    const browser = { breakdownFilter: { breakdown: '$browser' } };
    // first touch: Chrome f1 (3 steps), f4 (2), f5 (2); Firefox f2 (1), f6 (3); Safari f3 (1)
    const first = await funnel(browser);
    expect(byValue(first)).toEqual([
      ['Chrome', [3, 3, 1]],
      ['Firefox', [2, 1, 1]],
      ['Safari', [1, 0, 0]],
    ]);
    expect((first.results as Record<string, unknown>[][])[0]![0]).toMatchObject({ breakdown: 'Chrome', name: 'signup', order: 0 });
    // last touch: f6's last value is Chrome
    expect(byValue(await funnel(browser, { breakdownAttributionType: 'last_touch' }))).toEqual([
      ['Chrome', [4, 4, 2]],
      ['Firefox', [1, 0, 0]],
      ['Safari', [1, 0, 0]],
    ]);
    // the value on a purchase event: f1 and f6 Chrome, the others none ("")
    expect(byValue(await funnel(browser, { breakdownAttributionType: 'step', breakdownAttributionValue: 2 }))).toEqual([
      ['', [4, 2, 0]],
      ['Chrome', [2, 2, 2]],
    ]);
    expect(byValue(await funnel({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } }))).toEqual([
      ['Chrome', [3, 3, 1]],
      ['Other', [3, 1, 1]],
    ]);
    expect(byValue(await funnel({ breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }))).toEqual([
      ['', [4, 2, 0]],
      ['pro', [2, 2, 2]],
    ]);
    const bins = await query({ kind: 'FunnelsQuery', series: STEPS, ...browser, funnelsFilter: { funnelVizType: 'time_to_convert' } });
    expect(bins.body).toMatchObject({ type: 'validation_error', attr: 'query__breakdownFilter__breakdown' });
  });

  it('trends: the conversion rate per entrance day', async () => {
    const week = { date_from: '2024-11-01', date_to: '2024-11-07' };
    const a = await funnel({ dateRange: week }, { funnelVizType: 'trends' });
    // 1 Nov: f1 converts, f2 does not (50%); 3 Nov: f3 0%; 5 Nov: f4 stops at step 1 (0%)
    expect(a.results).toEqual([
      {
        count: 7,
        data: [50, 0, 0, 0, 0, 0, 0],
        days: ['2024-11-01', '2024-11-02', '2024-11-03', '2024-11-04', '2024-11-05', '2024-11-06', '2024-11-07'],
        labels: ['1-Nov-2024', '2-Nov-2024', '3-Nov-2024', '4-Nov-2024', '5-Nov-2024', '6-Nov-2024', '7-Nov-2024'],
      },
    ]);
    // by browser: Chrome f1 (1 Nov, converts) and f4 (5 Nov, does not); Firefox f2; Safari f3
    const byBrowser = await funnel({ dateRange: week, breakdownFilter: { breakdown: '$browser' } }, { funnelVizType: 'trends' });
    expect((byBrowser.results as { breakdown_value: string; data: number[] }[]).map((r) => [r.breakdown_value, r.data])).toEqual([
      ['Chrome', [100, 0, 0, 0, 0, 0, 0]],
      ['Firefox', [0, 0, 0, 0, 0, 0, 0]],
      ['Safari', [0, 0, 0, 0, 0, 0, 0]],
    ]);
    const toStep1 = await funnel({ dateRange: week }, { funnelVizType: 'trends', funnelToStep: 1 });
    expect((toStep1.results as { data: number[] }[])[0]!.data).toEqual([50, 0, 0, 0, 100, 0, 0]);
  });

  it('time to convert: the seconds from the first to the last step', async () => {
    const a = await funnel({}, { funnelVizType: 'time_to_convert' });
    const r = a.results as { average_conversion_time: number; bins: [number, number][] };
    // f1: 86,400 s, f6: 1,200 s
    expect(r.average_conversion_time).toBe(43800);
    expect(r.bins.reduce((n, [, c]) => n + c, 0)).toBe(2);
    expect(r.bins[0]![0]).toBe(1200);
  });

  it('runs inside an InsightVizNode', async () => {
    const res = await query({ kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: STEPS, dateRange: NOVEMBER } });
    expect(res.status).toBe(200);
    expect(counts(res.body)).toEqual([6, 4, 2]);
  });

  it('answers PostHog’s 400 for bad input', async () => {
    const one = await query({ kind: 'FunnelsQuery', series: STEPS.slice(0, 1) });
    expect(one.status).toBe(400);
    expect(one.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Funnels require at least two steps before calculating.',
      attr: 'query__series',
    });
    const window = await query({ kind: 'FunnelsQuery', series: STEPS, funnelsFilter: { funnelWindowInterval: 0 } });
    expect(window.status).toBe(400);
    expect(window.body).toMatchObject({ type: 'validation_error', attr: 'query__funnelsFilter__funnelWindowInterval' });
    const to = await query({ kind: 'FunnelsQuery', series: STEPS, funnelsFilter: { funnelVizType: 'trends', funnelToStep: 5 } });
    expect(to.body).toMatchObject({
      detail: 'funnelToStep is out of bounds. It must be between 1 and 2.',
      attr: 'query__funnelsFilter__funnelToStep',
    });
    const attribution = await query({
      kind: 'FunnelsQuery',
      series: STEPS,
      breakdownFilter: { breakdown: '$browser' },
      funnelsFilter: { breakdownAttributionType: 'all_events' },
    });
    expect(attribution.body).toMatchObject({ type: 'validation_error', attr: 'query__funnelsFilter__breakdownAttributionType' });
    const order = await query({ kind: 'FunnelsQuery', series: STEPS, funnelsFilter: { funnelOrderType: 'sideways' } });
    expect(order.status).toBe(400);
    expect(order.body).toMatchObject({ type: 'validation_error' });
  });
});
