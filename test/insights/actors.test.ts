/**
 * ActorsQuery on `POST …/query/` (the persons behind a point), through the real HTTP stack with
 * response validation on, over the insight tests' datasets. The main check is the one a persons
 * modal relies on: for every point of each insight kind, the persons listed are exactly as many as
 * the point counts (trends: their event counts add up to the point's total). Runs on SQLite, and
 * again on PostgreSQL and ClickHouse in their passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedInsightsDataset } from './dataset.js';
import { seedFunnelsDataset } from './funnels-dataset.js';
import { seedLifecycleDataset, today } from './lifecycle-dataset.js';
import { seedPathsDataset } from './paths-dataset.js';
import { seedRetentionDataset } from './retention-dataset.js';
import { seedStickinessDataset } from './stickiness-dataset.js';

let t: TestServer;
const team: Record<string, number> = {};

type Body = Record<string, unknown> & { results: unknown[]; columns?: string[]; hasMore?: boolean; missing_actors_count?: number };

async function query(project: number, q: Record<string, unknown>): Promise<{ status: number; body: Body }> {
  const res = await t.fetch(`/api/environments/${project}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

/** The rows of an ActorsQuery over `source`, all of them (one large page), asserting a 200. */
async function actors(project: number, source: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<unknown[][]> {
  const res = await query(project, { kind: 'ActorsQuery', source, limit: 10_000, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results as unknown[][];
}

const WEEK = { date_from: '2024-11-01', date_to: '2024-11-07' };
const TRENDS = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: WEEK, interval: 'day' };

beforeAll(async () => {
  t = await startTestServer();
  const make = async (name: string) => (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name })).id;
  for (const name of ['P', 'Q', 'K', 'F', 'L', 'R', 'S', 'A']) team[name] = await make(name);
  await seedInsightsDataset(t.store, team.P!, team.Q!, team.K!);
  await seedFunnelsDataset(t.store, team.F!);
  await seedLifecycleDataset(t.store, team.L!, today());
  await seedRetentionDataset(t.store, team.R!);
  await seedStickinessDataset(t.store, team.S!);
  await seedPathsDataset(t.store, team.A!);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('ActorsQuery over a TrendsQuery', () => {
  it('lists each day’s persons with their event counts, adding up to the day’s total; persons in PostHog’s shape', async () => {
    const trend = await query(team.P!, TRENDS);
    const series = (trend.body.results as { data: number[]; days: string[] }[])[0]!;
    for (let k = 0; k < series.days.length; k++) {
      const rows = await actors(
        team.P!,
        { kind: 'InsightActorsQuery', day: series.days[k], source: TRENDS },
        { select: ['actor', 'event_count'], orderBy: ['event_count DESC', 'actor_id DESC'] },
      );
      expect(
        rows.reduce((sum, r) => sum + (r[1] as number), 0),
        series.days[k],
      ).toBe(series.data[k]);
    }
    // 1 November: alice twice, bob once; most events first
    const rows = await actors(
      team.P!,
      { kind: 'InsightActorsQuery', day: '2024-11-01', source: TRENDS },
      { select: ['actor', 'event_count', 'matched_recordings'], orderBy: ['event_count DESC', 'actor_id DESC'] },
    );
    expect(rows.map((r) => [(r[0] as { distinct_ids: string[] }).distinct_ids, r[1], r[2]])).toEqual([
      [['alice'], 2, []],
      [['bob'], 1, []],
    ]);
    const alice = rows[0]![0] as Record<string, unknown>;
    expect(Object.keys(alice).sort()).toEqual(['created_at', 'distinct_ids', 'id', 'is_identified', 'properties']);
    expect(alice['properties']).toMatchObject({ email: 'alice@hedgebox.net', plan: 'pro' });
    expect(alice['id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('dau and a breakdown value pick the persons each point counts; the null and other labels too', async () => {
    const dau = { ...TRENDS, series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] };
    const trend = await query(team.P!, dau);
    const series = (trend.body.results as { data: number[]; days: string[] }[])[0]!;
    for (let k = 0; k < series.days.length; k++)
      expect((await actors(team.P!, { kind: 'InsightActorsQuery', day: series.days[k], source: dau })).length).toBe(series.data[k]);

    const broken = { ...TRENDS, breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } };
    const answer = await query(team.P!, broken);
    const values = answer.body.results as { data: number[]; days: string[]; breakdown_value: string }[];
    expect(values.map((v) => v.breakdown_value)).toEqual(['Chrome', '$$_posthog_breakdown_other_$$']);
    for (const v of values)
      for (let k = 0; k < v.days.length; k++) {
        const rows = await actors(
          team.P!,
          { kind: 'InsightActorsQuery', day: v.days[k], breakdown: v.breakdown_value, source: broken },
          { select: ['actor', 'event_count'] },
        );
        expect(
          rows.reduce((sum, r) => sum + (r[1] as number), 0),
          `${v.breakdown_value} ${v.days[k]}`,
        ).toBe(v.data[k]);
      }
  });

  it('pages with limit and offset, hasMore, and a stable order', async () => {
    const source = { kind: 'InsightActorsQuery', source: { ...TRENDS, trendsFilter: { display: 'ActionsTable' } } };
    const all = await actors(team.P!, source, { select: ['id'] });
    expect(all.length).toBe(4);
    const first = await query(team.P!, { kind: 'ActorsQuery', source, select: ['id'], limit: 3 });
    expect(first.body).toMatchObject({ hasMore: true, limit: 3, offset: 0, missing_actors_count: 0, columns: ['id'] });
    const second = await query(team.P!, { kind: 'ActorsQuery', source, select: ['id'], limit: 3, offset: 3 });
    expect(second.body.hasMore).toBe(false);
    expect([...first.body.results, ...second.body.results]).toEqual(all);
    expect(all.map((r) => r[0])).toEqual([...all.map((r) => r[0])].sort());
  });

  it('answers PostHog’s 400s: a day required or forbidden, a column the source lacks, an unknown kind', async () => {
    const noDay = await query(team.P!, { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source: TRENDS } });
    expect(noDay.status).toBe(400);
    expect(noDay.body).toMatchObject({
      detail: 'A `day` is required for trends actors queries without total value aggregation',
      attr: 'query__source__day',
    });
    const table = { ...TRENDS, trendsFilter: { display: 'BoldNumber' } };
    const forbidden = await query(team.P!, {
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', day: '2024-11-01', source: table },
    });
    expect(forbidden.body).toMatchObject({ attr: 'query__source__day' });
    const column = await query(team.L!, {
      kind: 'ActorsQuery',
      select: ['actor', 'event_count'],
      source: { kind: 'InsightActorsQuery', status: 'new', source: { kind: 'LifecycleQuery', series: TRENDS.series } },
    });
    expect(column.status).toBe(400);
    expect(column.body).toMatchObject({ attr: 'query__select__1' });
    const range = await query(team.P!, {
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', day: '2024-11-01', source: { ...TRENDS, dateRange: { date_from: 'someday' } } },
    });
    expect(range.body).toMatchObject({ attr: 'query__source__source__dateRange__date_from' });
    const kind = await query(team.P!, { kind: 'ActorsQuery', source: { kind: 'FunnelCorrelationActorsQuery', source: {} } });
    expect(kind.status).toBe(400);
    expect(kind.body.detail).toContain('FunnelCorrelationActorsQuery');
  });
});

describe('ActorsQuery over the other kinds', () => {
  it('lifecycle: each status and day lists as many persons as the chart counts', async () => {
    const lifecycle = { kind: 'LifecycleQuery', series: TRENDS.series, dateRange: { date_from: '-6d' } };
    const answer = await query(team.L!, lifecycle);
    const statuses = answer.body.results as { status: string; data: number[]; days: string[] }[];
    let checked = 0;
    for (const s of statuses)
      for (let k = 0; k < s.days.length; k++) {
        const rows = await actors(
          team.L!,
          { kind: 'InsightActorsQuery', day: s.days[k], status: s.status, source: lifecycle },
          { select: ['actor'] },
        );
        expect(rows.length, `${s.status} ${s.days[k]}`).toBe(Math.abs(s.data[k]!));
        checked += rows.length;
      }
    expect(checked).toBeGreaterThan(5);
  });

  it('stickiness: the persons active in exactly N days', async () => {
    const stickiness = { kind: 'StickinessQuery', series: TRENDS.series, dateRange: WEEK };
    const answer = await query(team.S!, stickiness);
    const data = (answer.body.results as { data: number[] }[])[0]!.data;
    expect(data.some((n) => n > 0)).toBe(true);
    for (let n = 1; n <= data.length; n++)
      expect((await actors(team.S!, { kind: 'InsightActorsQuery', day: n, series: 0, source: stickiness })).length, `${n} days`).toBe(
        data[n - 1],
      );
  });

  it('retention: a cohort’s persons are its size, and each <period>_k column counts its returns', async () => {
    const retention = {
      kind: 'RetentionQuery',
      dateRange: { date_from: '2024-11-01', date_to: '2024-11-05' },
      retentionFilter: { totalIntervals: 4 },
    };
    const answer = await query(team.R!, retention);
    const cohorts = answer.body.results as { values: { count: number }[] }[];
    for (let i = 0; i < cohorts.length; i++) {
      const rows = await actors(
        team.R!,
        { kind: 'InsightActorsQuery', interval: i, source: retention },
        { select: ['person', 'day_0', 'day_1', 'day_2', 'day_3'], orderBy: ['length(appearances) DESC', 'actor_id'] },
      );
      const values = cohorts[i]!.values.map((v) => v.count);
      expect(
        [0, 1, 2, 3].map((k) => rows.filter((r) => r[k + 1] === 1).length),
        `cohort ${i}`,
      ).toEqual(values);
    }
  });

  it('funnels: step N lists those who completed it, -N those who dropped off before it', async () => {
    const funnel = {
      kind: 'FunnelsQuery',
      series: ['signup', '$pageview', 'purchase'].map((event) => ({ kind: 'EventsNode', event })),
      dateRange: { date_from: '2024-11-01', date_to: '2024-11-30' },
    };
    const answer = await query(team.F!, funnel);
    const steps = (answer.body.results as { count: number }[]).map((s) => s.count);
    expect(steps[0]).toBeGreaterThan(steps[2]!);
    for (let n = 1; n <= 3; n++) {
      expect((await actors(team.F!, { kind: 'FunnelsActorsQuery', funnelStep: n, source: funnel })).length, `step ${n}`).toBe(steps[n - 1]);
      if (n > 1)
        expect((await actors(team.F!, { kind: 'FunnelsActorsQuery', funnelStep: -n, source: funnel })).length, `drop-off ${n}`).toBe(
          steps[n - 2]! - steps[n - 1]!,
        );
    }
    const missing = await query(team.F!, { kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', source: funnel } });
    expect(missing.body).toMatchObject({ detail: 'Missing funnelStep in actors query', attr: 'query__source__funnelStep' });
  });

  it('paths: a node’s drop-offs and an edge’s persons', async () => {
    const paths = { kind: 'PathsQuery', dateRange: WEEK, pathsFilter: {} };
    const answer = await query(team.A!, paths);
    const edges = answer.body.results as { source: string; target: string; value: number }[];
    expect(edges.length).toBeGreaterThan(0);
    const everyone = await actors(team.A!, { kind: 'InsightActorsQuery', source: paths }, { select: ['id', 'event_count'] });
    for (const e of edges) {
      const rows = await actors(
        team.A!,
        { kind: 'InsightActorsQuery', source: { ...paths, pathsFilter: { pathStartKey: e.source, pathEndKey: e.target } } },
        { select: ['id', 'event_count'] },
      );
      // each person's sessions through the edge add up to its value
      expect(
        rows.reduce((sum, r) => sum + (r[1] as number), 0),
        `${e.source} → ${e.target}`,
      ).toBe(e.value);
      for (const r of rows) expect(everyone.map((x) => x[0])).toContain(r[0]);
    }
  });

  it('SavedInsightNode runs the saved insight’s query; an unknown short_id is a 400', async () => {
    const key = await t.key(['*']);
    const created = await t.fetch(`/api/projects/${team.P!}/insights/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ name: 'Pageviews', query: { kind: 'InsightVizNode', source: TRENDS } }),
    });
    expect(created.status).toBe(201);
    const shortId = ((await created.json()) as { short_id: string }).short_id;
    const saved = await query(team.P!, { kind: 'SavedInsightNode', shortId });
    const direct = await query(team.P!, TRENDS);
    expect(saved.status).toBe(200);
    expect((saved.body.results as { data: number[] }[])[0]!.data).toEqual((direct.body.results as { data: number[] }[])[0]!.data);
    const unknown = await query(team.P!, { kind: 'SavedInsightNode', shortId: 'nope1234' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ attr: 'query__shortId' });
  });
});
