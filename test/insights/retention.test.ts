/**
 * RetentionQuery on `POST …/query/`, through the real HTTP stack with response validation on, over
 * the hand-counted events of ./retention-dataset.ts (its doc derives every cohort). Runs on
 * SQLite, and again on PostgreSQL and ClickHouse in their passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedRetentionDataset } from './retention-dataset.js';

let t: TestServer;
let R: number;

interface Cohort {
  values: { count: number; label: string }[];
  label: string;
  date: string;
}
interface Answer {
  results: Cohort[];
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`/api/environments/${R}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const RANGE = { date_from: '2024-11-01', date_to: '2024-11-05' };
const retention = async (retentionFilter: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const res = await query({
    kind: 'RetentionQuery',
    dateRange: RANGE,
    retentionFilter: { totalIntervals: 4, ...retentionFilter },
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const grid = (a: Answer) => a.results.map((c) => c.values.map((v) => v.count));

beforeAll(async () => {
  t = await startTestServer();
  R = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Retention' })).id;
  await seedRetentionDataset(t.store, R);
});

afterAll(async () => {
  await t.close();
});

describe('RetentionQuery', () => {
  it('recurring Day cohorts, in PostHog’s shape', async () => {
    const a = await retention({ period: 'Day' });
    expect(grid(a)).toEqual([
      [2, 1, 1, 1],
      [2, 1, 1, 1],
      [3, 0, 1, 0],
      [1, 0, 0, 0],
      [2, 0, 0, 0],
    ]);
    expect(a.results[0]).toEqual({
      values: [
        { count: 2, label: 'Day 0' },
        { count: 1, label: 'Day 1' },
        { count: 1, label: 'Day 2' },
        { count: 1, label: 'Day 3' },
      ],
      label: 'Day 0',
      date: '2024-11-01T00:00:00Z',
    });
    expect(a.results.map((c) => c.label)).toEqual(['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4']);
    expect(a).toMatchObject({ is_cached: false, timezone: 'UTC', query_status: null });
  });

  it('value 0 of each cohort is the cohort’s size as HogQL counts it', async () => {
    const a = await retention({});
    for (const [i, day] of ['01', '02', '03', '04', '05'].entries()) {
      const next = `2024-11-${String(Number(day) + 1).padStart(2, '0')}`;
      const rows = await t.hogql(
        R,
        `select count(distinct person_id) from events where event = '$pageview' and timestamp >= '2024-11-${day}' and timestamp < '${next}'`,
      );
      expect(a.results[i]!.values[0]!.count).toBe(rows[0]![0]);
    }
  });

  it('first time, cumulative, minimumOccurrences', async () => {
    expect(grid(await retention({ retentionType: 'retention_first_time' }))).toEqual([
      [2, 1, 1, 1],
      [1, 1, 0, 1],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [1, 0, 0, 0],
    ]);
    // r1 returns on days 1 and 3 (counts for 1–3), r2 on day 2 (counts for 1–2)
    expect(grid(await retention({ cumulative: true }))[0]).toEqual([2, 2, 2, 1]);
    // two pageviews in a day: only r3 on 3 Nov
    const twice = grid(await retention({ minimumOccurrences: 2 }));
    expect(twice[0]).toEqual([2, 0, 0, 0]);
    expect(twice[1]).toEqual([2, 1, 0, 0]);
  });

  it('first time with the entity’s filters, and first-ever occurrence', async () => {
    const firefox = {
      id: '$pageview',
      type: 'events',
      properties: [{ key: '$browser', value: 'Firefox', operator: 'exact', type: 'event' }],
    };
    // r1's first Firefox pageview is on 2 Nov; back on 4 Nov
    const first = grid(await retention({ retentionType: 'retention_first_time', targetEntity: firefox }));
    expect(first[1]).toEqual([1, 0, 1, 0]);
    expect(first.filter((c, i) => i !== 1 && c[0] !== 0)).toEqual([]);
    // but r1's first-ever pageview (1 Nov) is Chrome: nobody's first-ever pageview is a Firefox one
    const ever = grid(await retention({ retentionType: 'retention_first_ever_occurrence', targetEntity: firefox }));
    expect(ever.map((c) => c[0])).toEqual([0, 0, 0, 0, 0]);
  });

  it('Week periods, and the defaults: 8 values, 8 cohorts up to date_to', async () => {
    // weeks from Sunday 27 Oct: {r1, r2, r3, r4}, all back the week of 3 Nov; that week's 5 persons
    const weeks = await retention({ period: 'Week', totalIntervals: 2 }, { dateRange: { date_from: '2024-10-27', date_to: '2024-11-09' } });
    expect(grid(weeks)).toEqual([
      [4, 4],
      [5, 0],
    ]);
    expect(weeks.results.map((c) => [c.label, c.date])).toEqual([
      ['Week 0', '2024-10-27T00:00:00Z'],
      ['Week 1', '2024-11-03T00:00:00Z'],
    ]);
    const res = await query({ kind: 'RetentionQuery', dateRange: { date_to: '2024-11-05' }, retentionFilter: {} });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(8);
    expect(res.body.results[0]!.date).toBe('2024-10-29T00:00:00Z');
    expect(res.body.results[0]!.values).toHaveLength(8);
    expect(res.body.results[7]!.values[0]!.count).toBe(2);
    // all: from the project's first event (30 Oct, r4) to 5 Nov: 7 cohorts
    const all = await retention({}, { dateRange: { date_from: 'all', date_to: '2024-11-05' } });
    expect(all.results.map((c) => c.date.slice(0, 10))).toEqual([
      '2024-10-30',
      '2024-10-31',
      '2024-11-01',
      '2024-11-02',
      '2024-11-03',
      '2024-11-04',
      '2024-11-05',
    ]);
    expect(all.results[0]!.values[0]!.count).toBe(1);
  });

  it('breaks the cohorts down by an event property', async () => {
    const a = await retention({}, { breakdownFilter: { breakdown: '$browser' } });
    const byValue = (answer: Answer) => {
      const out: Record<string, number[][]> = {};
      for (const c of answer.results as (Cohort & { breakdown_value: string })[])
        (out[c.breakdown_value] ??= []).push(c.values.map((v) => v.count));
      return out;
    };
    expect([...new Set((a.results as (Cohort & { breakdown_value: string })[]).map((c) => c.breakdown_value))]).toEqual([
      '',
      'Chrome',
      'Firefox',
      'Safari',
    ]);
    const none = [0, 0, 0, 0];
    expect(byValue(a)).toEqual({
      '': [none, none, [3, 0, 1, 0], [1, 0, 0, 0], [2, 0, 0, 0]],
      Chrome: [[2, 1, 1, 1], none, none, none, none],
      Firefox: [none, [1, 0, 1, 0], none, none, none],
      Safari: [none, [1, 1, 0, 1], none, none, none],
    });
    // the cohorts' sizes add up to those without a breakdown
    const plain = grid(await retention({}));
    for (let i = 0; i < 5; i++) expect(Object.values(byValue(a)).reduce((n, g) => n + g[i]![0]!, 0)).toBe(plain[i]![0]);
    // two values kept: Firefox and Safari merge (2 Nov: {r1, r3})
    const merged = byValue(await retention({}, { breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } }));
    expect(Object.keys(merged)).toEqual(['', 'Chrome', '$$_posthog_breakdown_other_$$']);
    expect(merged['$$_posthog_breakdown_other_$$']![1]).toEqual([2, 1, 1, 1]);
  });

  it('runs inside an InsightVizNode', async () => {
    const res = await query({
      kind: 'InsightVizNode',
      source: { kind: 'RetentionQuery', dateRange: RANGE, retentionFilter: { totalIntervals: 4 } },
    });
    expect(res.status).toBe(200);
    expect(grid(res.body)[2]).toEqual([3, 0, 1, 0]);
  });

  it('answers a 400 in PostHog’s shape for bad input', async () => {
    const missing = await query({ kind: 'RetentionQuery' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ type: 'validation_error', code: 'required', attr: 'query__retentionFilter' });
    const action = await query({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: 3, type: 'actions' } } });
    expect(action.status).toBe(400);
    expect(action.body).toMatchObject({
      type: 'validation_error',
      code: 'invalid_input',
      attr: 'query__retentionFilter__targetEntity__type',
    });
    const breakdown = await query({
      kind: 'RetentionQuery',
      retentionFilter: { retentionType: 'retention_first_ever_occurrence' },
      breakdownFilter: { breakdown: '$browser' },
    });
    expect(breakdown.body).toMatchObject({ type: 'validation_error', attr: 'query__breakdownFilter__breakdown' });
    const date = await query({ kind: 'RetentionQuery', retentionFilter: {}, dateRange: { date_from: 'someday' } });
    expect(date.body).toMatchObject({ code: 'invalid_input', attr: 'query__dateRange__date_from' });
  });
});
