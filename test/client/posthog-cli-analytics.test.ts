/**
 * PostHog's agent tool catalogue, `@posthog/cli` 0.18.3 (npm devDependency, installed with its
 * install script denied: its `lib/posthog-api-cli.mjs` is the same code as PostHog's MCP server),
 * run unchanged through its own `call --json` command against the test server with a small
 * dataset: the query tools (trends, funnel, retention, lifecycle, stickiness, paths) and their
 * `*-actors` tools, the insight tools and the dashboard tools. Each tool's own output must
 * be a success (exit 0) with the right numbers: a trends total equals the count of the same events
 * through HogQL, a dashboard's insights run to the same results as the query tool's.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const CLI = 'node_modules/@posthog/cli/lib/posthog-api-cli.mjs';

let t: TestServer;
let P: number;
let key: string;

/** Runs one tool; answers its exit code and its parsed `--json` output (or stderr when it failed). */
async function tool(
  name: string,
  input: Record<string, unknown>,
  opts: { confirm?: boolean } = {},
): Promise<{ code: number; out: Record<string, unknown>; err: string }> {
  const args = [CLI, 'call', '--json', ...(opts.confirm ? ['--confirm'] : []), name, JSON.stringify(input)];
  const env = { ...process.env, POSTHOG_HOST: t.url, POSTHOG_API_KEY: key, POSTHOG_PROJECT_ID: String(P) };
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env, timeout: 60_000 });
    return { code: 0, out: JSON.parse(stdout) as Record<string, unknown>, err: stderr };
  } catch (e) {
    const failed = e as { code?: number; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, out: {}, err: failed.stderr ?? String(e) };
  }
}

const RANGE = { date_from: '2024-11-01', date_to: '2024-11-03' };

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  key = await t.key(['*']);
  // pageviews per day, 1–3 November: 2, 0, 3; one signup
  await importEvents(t.store, P, [
    { event: '$pageview', distinct_id: 'ada', timestamp: '2024-11-01T09:00:00Z', properties: { $browser: 'Chrome' } },
    { event: '$pageview', distinct_id: 'bob', timestamp: '2024-11-01T10:00:00Z', properties: { $browser: 'Firefox' } },
    { event: '$pageview', distinct_id: 'ada', timestamp: '2024-11-03T09:00:00Z', properties: { $browser: 'Chrome' } },
    { event: '$pageview', distinct_id: 'ada', timestamp: '2024-11-03T09:30:00Z', properties: { $browser: 'Chrome' } },
    { event: '$pageview', distinct_id: 'cyd', timestamp: '2024-11-03T11:00:00Z', properties: { $browser: 'Safari' } },
    { event: 'signup', distinct_id: 'bob', timestamp: '2024-11-01T10:05:00Z' },
  ]);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('@posthog/cli query tools', () => {
  it('query-trends: daily counts, the total equal to HogQL’s count', async () => {
    const r = await tool('query-trends', { series: [{ event: '$pageview' }], dateRange: RANGE });
    expect(r.code, r.err).toBe(0);
    const results = r.out.results as { data: number[]; count: number; label: string }[];
    expect(results[0]).toMatchObject({ data: [2, 0, 3], count: 5, label: '$pageview' });
    const rows = await t.hogql(
      P,
      "select count() from events where event = '$pageview' and timestamp >= '2024-11-01' and timestamp < '2024-11-04'",
    );
    expect(rows[0]![0]).toBe(results[0]!.count);
  });

  it('query-trends with dau, a breakdown and a formula', async () => {
    const dau = await tool('query-trends', { series: [{ event: '$pageview', math: 'dau' }], dateRange: RANGE });
    expect((dau.out.results as { data: number[] }[])[0]!.data).toEqual([2, 0, 2]);
    const browsers = await tool('query-trends', {
      series: [{ event: '$pageview' }],
      dateRange: RANGE,
      breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }] },
    });
    expect(browsers.code, browsers.err).toBe(0);
    expect((browsers.out.results as { breakdown_value: string[]; count: number }[]).map((s) => [s.breakdown_value, s.count])).toEqual([
      [['Chrome'], 3],
      [['Firefox'], 1],
      [['Safari'], 1],
    ]);
    const formula = await tool('query-trends', {
      series: [{ event: '$pageview' }, { event: 'signup' }],
      dateRange: RANGE,
      trendsFilter: { formulaNodes: [{ formula: 'B / A * 100' }] },
    });
    expect(formula.code, formula.err).toBe(0);
    expect((formula.out.results as { data: number[] }[])[0]!.data).toEqual([50, 0, 0]);
  });
});

describe('@posthog/cli funnel, retention, lifecycle, stickiness and paths tools', () => {
  it('query-funnel: steps non-increasing, as counted by hand', async () => {
    // 3 persons viewed a page (ada, bob, cyd); bob signed up 5 minutes after his pageview
    const r = await tool('query-funnel', { series: [{ event: '$pageview' }, { event: 'signup' }], dateRange: RANGE });
    expect(r.code, r.err).toBe(0);
    const steps = r.out.results as { name: string; count: number; order: number }[];
    expect(steps.map((s) => [s.name, s.count])).toEqual([
      ['$pageview', 3],
      ['signup', 1],
    ]);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.count).toBeLessThanOrEqual(steps[i - 1]!.count);
  });

  it('query-retention: each cohort’s first value is its size, as HogQL counts it', async () => {
    const r = await tool('query-retention', {
      retentionFilter: {
        period: 'Day',
        totalIntervals: 3,
        targetEntity: { id: '$pageview', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
      },
      dateRange: RANGE,
    });
    expect(r.code, r.err).toBe(0);
    const cohorts = r.out.results as { date: string; values: { count: number }[] }[];
    expect(cohorts).toHaveLength(3);
    for (const c of cohorts) {
      const day = c.date.slice(0, 10);
      const rows = await t.hogql(
        P,
        `select count(distinct person_id) from events where event = '$pageview' and toDate(timestamp) = toDate('${day}')`,
      );
      expect(c.values[0]!.count, day).toBe(rows[0]![0]);
    }
    // ada came back on 3 November
    expect(cohorts[0]!.values.map((v) => v.count)).toEqual([2, 0, 1]);
  });

  it('query-lifecycle, query-stickiness and query-paths answer their shapes', async () => {
    const lifecycle = await tool('query-lifecycle', { series: [{ event: '$pageview' }], dateRange: RANGE });
    expect(lifecycle.code, lifecycle.err).toBe(0);
    expect((lifecycle.out.results as { status: string }[]).map((x) => x.status)).toEqual(['new', 'returning', 'resurrecting', 'dormant']);
    // days active of 3: ada 2 (1 and 3 November), bob 1, cyd 1
    const stickiness = await tool('query-stickiness', { series: [{ event: '$pageview' }], dateRange: RANGE });
    expect(stickiness.code, stickiness.err).toBe(0);
    expect((stickiness.out.results as { data: number[] }[])[0]!.data).toEqual([2, 1, 0]);
    const paths = await tool('query-paths', { pathsFilter: { includeEventTypes: ['custom_event', '$pageview'] }, dateRange: RANGE });
    expect(paths.code, paths.err).toBe(0);
    expect(Array.isArray(paths.out.results)).toBe(true);
  });
});

describe('@posthog/cli actors tools', () => {
  /** The tool's rows as `{distinct_id: [other columns]}`, asserting a success. */
  async function persons(name: string, input: Record<string, unknown>): Promise<{ columns: string[]; byId: Record<string, unknown[]> }> {
    const r = await tool(name, input);
    expect(r.code, r.err).toBe(0);
    const out = r.out.results as { columns: string[]; results: unknown[][] };
    expect(r.out).toMatchObject({ hasMore: false, limit: 100, offset: 0 });
    return { columns: out.columns, byId: Object.fromEntries(out.results.map((row) => [row[0] as string, row.slice(1)])) };
  }
  const trends = { series: [{ event: '$pageview' }], dateRange: RANGE };

  it('query-trends-actors: the persons of a day with their event counts, adding up to the day’s total', async () => {
    const day = await persons('query-trends-actors', { source: trends, day: '2024-11-03' });
    expect(day.columns).toEqual(['distinct_id', 'email', 'name', 'event_count', 'recordings']);
    expect(day.byId).toEqual({ ada: [null, null, 2, []], cyd: [null, null, 1, []] });
    const total = await tool('query-trends', trends);
    expect(Object.values(day.byId).reduce((sum, r) => sum + (r[2] as number), 0)).toBe(
      (total.out.results as { data: number[] }[])[0]!.data[2],
    );
    const chrome = await persons('query-trends-actors', {
      source: { ...trends, breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }] } },
      day: '2024-11-01',
      breakdown: ['Chrome'],
    });
    expect(Object.keys(chrome.byId)).toEqual(['ada']);
  });

  it('query-lifecycle-actors and query-stickiness-actors: as many persons as the point counts', async () => {
    const lifecycle = await tool('query-lifecycle', trends);
    const statuses = lifecycle.out.results as { status: string; data: number[] }[];
    const active: string[] = [];
    for (const s of statuses) {
      const first = await persons('query-lifecycle-actors', { source: trends, day: '2024-11-01', status: s.status });
      expect(Object.keys(first.byId), s.status).toHaveLength(Math.abs(s.data[0]!));
      if (s.status !== 'dormant') active.push(...Object.keys(first.byId));
    }
    expect(active.sort()).toEqual(['ada', 'bob']);
    // days active of 3: ada 2, bob and cyd 1
    expect(Object.keys((await persons('query-stickiness-actors', { source: trends, day: 1 })).byId).sort()).toEqual(['bob', 'cyd']);
    expect(Object.keys((await persons('query-stickiness-actors', { source: trends, day: 2 })).byId)).toEqual(['ada']);
  });

  it('query-retention-actors: a cohort’s persons with the days they came back', async () => {
    const cohort = await persons('query-retention-actors', {
      source: {
        retentionFilter: {
          period: 'Day',
          totalIntervals: 3,
          targetEntity: { id: '$pageview', type: 'events' },
          returningEntity: { id: '$pageview', type: 'events' },
        },
        dateRange: RANGE,
      },
      interval: 0,
    });
    expect(cohort.columns).toEqual(['distinct_id', 'email', 'name', 'day_0', 'day_1', 'day_2']);
    // ada (1 and 3 November) first: the most appearances
    expect(cohort.byId).toEqual({ ada: [null, null, 1, 0, 1], bob: [null, null, 1, 0, 0] });
  });

  it('query-funnel-actors and query-paths-actors: who converted, who dropped off, who took a path', async () => {
    const funnel = { series: [{ event: '$pageview' }, { event: 'signup' }], dateRange: RANGE };
    expect(Object.keys((await persons('query-funnel-actors', { source: funnel, funnelStep: 2 })).byId)).toEqual(['bob']);
    expect(Object.keys((await persons('query-funnel-actors', { source: funnel, funnelStep: -2 })).byId).sort()).toEqual(['ada', 'cyd']);
    const paths = await persons('query-paths-actors', {
      source: { pathsFilter: { includeEventTypes: ['custom_event', '$pageview'] }, dateRange: RANGE },
    });
    expect(paths.columns).toEqual(['distinct_id', 'email', 'name', 'event_count', 'recordings']);
    expect(Object.keys(paths.byId).sort()).toEqual(['ada', 'bob', 'cyd']);
  });
});

describe('@posthog/cli insight tools', () => {
  it('insight-create, insights-list, insight-get, insight-update, insight-query, insight-delete', async () => {
    const query = {
      kind: 'InsightVizNode',
      source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE },
    };
    const created = await tool('insight-create', { name: 'Pageviews', description: 'Daily pageviews', query });
    expect(created.code, created.err).toBe(0);
    const shortId = created.out.short_id as string;
    expect(shortId).toMatch(/^[A-Za-z0-9]{8}$/);

    const listed = await tool('insights-list', { short_id: shortId });
    expect(listed.code, listed.err).toBe(0);
    expect((listed.out.results as { short_id: string; name: string }[]).map((i) => [i.short_id, i.name])).toEqual([[shortId, 'Pageviews']]);

    const got = await tool('insight-get', { id: shortId });
    expect(got.code, got.err).toBe(0);
    expect(got.out).toMatchObject({ id: created.out.id, name: 'Pageviews' });

    const updated = await tool('insight-update', { id: created.out.id, name: 'Views', tags: ['web'], favorited: true });
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toMatchObject({ name: 'Views', tags: ['web'], favorited: true });

    const queried = await tool('insight-query', { insightId: shortId });
    expect(queried.code, queried.err).toBe(0);
    expect((queried.out.results as { data: number[] }[])[0]!.data).toEqual([2, 0, 3]);

    const deleted = await tool('insight-delete', { id: created.out.id }, { confirm: true });
    expect(deleted.code, deleted.err).toBe(0);
    const gone = await tool('insight-get', { id: created.out.id });
    expect(gone.code).toBe(1);
    expect(gone.err).toContain('404');
  });

  it('insight-query of a saved SQL insight answers its columns and rows', async () => {
    const created = await tool('insight-create', {
      name: 'Signups',
      query: {
        kind: 'DataVisualizationNode',
        source: { kind: 'HogQLQuery', query: "select count() as n from events where event = 'signup'" },
      },
    });
    expect(created.code, created.err).toBe(0);
    const queried = await tool('insight-query', { insightId: created.out.short_id });
    expect(queried.code, queried.err).toBe(0);
    expect(queried.out.results).toEqual({ columns: ['n'], results: [[1]] });
  });
});

describe('@posthog/cli dashboard tools', () => {
  it('dashboard-create, -create-tile, -update-text-tile, -reorder-tiles, -tile-copy, -delete-tile, -update, -get, -insights-run, -delete', async () => {
    const created = await tool('dashboard-create', { name: 'Weekly', description: 'Numbers', pinned: true, tags: ['w'] });
    expect(created.code, created.err).toBe(0);
    const id = created.out.id as number;
    const first = await tool('dashboard-create-tile', { id, type: 'text', body: 'First' });
    expect(first.code, first.err).toBe(0);
    const second = await tool('dashboard-create-tile', { id, type: 'text', body: 'Second' });
    expect(second.code, second.err).toBe(0);
    const changed = await tool('dashboard-update-text-tile', { id, tile_id: first.out.id, body: 'First, changed', color: null });
    expect(changed.code, changed.err).toBe(0);
    expect(changed.out).toMatchObject({ text: { body: 'First, changed' } });
    const reordered = await tool('dashboard-reorder-tiles', { id, tile_order: [second.out.id, first.out.id] });
    expect(reordered.code, reordered.err).toBe(0);

    const query = {
      kind: 'InsightVizNode',
      source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE },
    };
    const insight = await tool('insight-create', { name: 'On the dashboard', query, dashboards: [id] });
    expect(insight.code, insight.err).toBe(0);
    const run = await tool('dashboard-insights-run', { id, refresh: 'blocking' });
    expect(run.code, run.err).toBe(0);
    const trends = await tool('query-trends', { series: [{ event: '$pageview' }], dateRange: RANGE });
    const results = run.out.results as { insight: { name: string; result: unknown } }[];
    expect(results.map((r) => r.insight.name)).toEqual(['On the dashboard']);
    expect(results[0]!.insight.result).toEqual(trends.out.results);

    const other = await tool('dashboard-create', { name: 'Other' });
    const copied = await tool('dashboard-tile-copy', { id: other.out.id, fromDashboardId: id, tileId: first.out.id });
    expect(copied.code, copied.err).toBe(0);
    const removed = await tool('dashboard-delete-tile', { id, tile_id: second.out.id }, { confirm: true });
    expect(removed.code, removed.err).toBe(0);
    const updated = await tool('dashboard-update', { id, name: 'Weekly numbers', pinned: false });
    expect(updated.code, updated.err).toBe(0);
    const got = await tool('dashboard-get', { id });
    expect(got.code, got.err).toBe(0);
    expect(got.out).toMatchObject({ name: 'Weekly numbers', pinned: false });
    const texts = (got.out.tiles as { text?: { body: string } | null }[]).flatMap((x) => (x.text ? [x.text.body] : []));
    expect(texts).toEqual(['First, changed']);
    const deleted = await tool('dashboard-delete', { id }, { confirm: true });
    expect(deleted.code, deleted.err).toBe(0);
    expect((await tool('dashboard-get', { id })).code).toBe(1);
  });
});
