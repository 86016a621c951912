/**
 * PathsQuery on `POST …/query/`, through the real HTTP stack with response validation on, over the
 * hand-counted events of ./paths-dataset.ts (its doc derives every edge). Runs on SQLite, and
 * again on PostgreSQL and ClickHouse in their passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedPathsDataset } from './paths-dataset.js';

let t: TestServer;
let A: number;

interface Edge {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}
interface Answer {
  results: Edge[];
  [key: string]: unknown;
}

async function query(q: Record<string, unknown>): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`/api/environments/${A}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const WEEK = { date_from: '2024-11-01', date_to: '2024-11-07' };
const paths = async (pathsFilter: Record<string, unknown> = {}) => {
  const res = await query({ kind: 'PathsQuery', dateRange: WEEK, pathsFilter });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const moves = (a: Answer) => a.results.map((e) => `${e.source} → ${e.target}: ${e.value}`);

beforeAll(async () => {
  t = await startTestServer();
  A = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Paths' })).id;
  await seedPathsDataset(t.store, A);
});

afterAll(async () => {
  await t.close();
});

describe('PathsQuery', () => {
  it('counts the moves between positioned items over every event, in PostHog’s shape and order', async () => {
    const a = await paths();
    expect(moves(a)).toEqual([
      '1_/home → 2_/pricing: 2',
      '1_/home → 2_/blog: 1',
      '1_/pricing → 2_/home: 1',
      '1_Main → 2_Settings: 1',
      '2_/pricing → 3_/signup: 1',
      '2_/pricing → 3_clicked: 1',
      '3_clicked → 4_/signup: 1',
    ]);
    expect(a.results[0]).toEqual({ source: '1_/home', target: '2_/pricing', value: 2, average_conversion_time: 90000 });
    expect(a.results[1]!.average_conversion_time).toBe(300000);
    expect(a).toMatchObject({ is_cached: false, timezone: 'UTC', query_status: null });
    expect(a).not.toHaveProperty('resolved_date_range');
  });

  it('pageviews only, a start point, the step and edge limits', async () => {
    const pageviews = await paths({ includeEventTypes: ['$pageview'] });
    expect(moves(pageviews)).toEqual([
      '1_/home → 2_/pricing: 2',
      '2_/pricing → 3_/signup: 2',
      '1_/home → 2_/blog: 1',
      '1_/pricing → 2_/home: 1',
    ]);
    expect(pageviews.results[1]!.average_conversion_time).toBe(360000);
    // custom events only: no session of them holds two items
    expect((await paths({ includeEventTypes: ['custom_event'] })).results).toEqual([]);
    expect(moves(await paths({ includeEventTypes: ['$pageview'], startPoint: '/pricing' }))).toEqual([
      '1_/pricing → 2_/signup: 2',
      '1_/pricing → 2_/home: 1',
    ]);
    expect(moves(await paths({ stepLimit: 2 }))).toEqual([
      '1_/home → 2_/pricing: 2',
      '1_/home → 2_/blog: 1',
      '1_/pricing → 2_/home: 1',
      '1_Main → 2_Settings: 1',
    ]);
    expect(moves(await paths({ edgeLimit: 1 }))).toEqual(['1_/home → 2_/pricing: 2']);
  });

  it('keeps only edges reachable from a first step', async () => {
    // without the edge into 2_/pricing (value 2), the edges from it are unreachable
    expect(moves(await paths({ maxEdgeWeight: 1 }))).toEqual(['1_/home → 2_/blog: 1', '1_/pricing → 2_/home: 1', '1_Main → 2_Settings: 1']);
  });

  it('cleans and groups items, and excludes some', async () => {
    const grouped = await paths({ includeEventTypes: ['$pageview'], pathGroupings: ['/pri*'], excludeEvents: ['/blog'] });
    expect(moves(grouped)).toEqual(['1_/home → 2_/pri*: 2', '2_/pri* → 3_/signup: 2', '1_/pri* → 2_/home: 1']);
    const cleaned = await paths({
      includeEventTypes: ['$pageview'],
      localPathCleaningFilters: [{ regex: '^/(home|blog)$', alias: '/start' }],
    });
    expect(moves(cleaned)[0]).toBe('1_/start → 2_/pricing: 2');
    // the alias is literal text
    const literal = await paths({ includeEventTypes: ['$pageview'], localPathCleaningFilters: [{ regex: '^/(home)$', alias: '/$1' }] });
    expect(moves(literal)[0]).toBe('1_/$1 → 2_/pricing: 2');
  });

  it('runs inside an InsightVizNode', async () => {
    const res = await query({ kind: 'InsightVizNode', source: { kind: 'PathsQuery', dateRange: WEEK, pathsFilter: { edgeLimit: 1 } } });
    expect(res.status).toBe(200);
    expect(moves(res.body)).toEqual(['1_/home → 2_/pricing: 2']);
  });

  it('answers a 400 in PostHog’s shape for bad input', async () => {
    const hogql = await query({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'event' } });
    expect(hogql.status).toBe(400);
    expect(hogql.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'query__pathsFilter__includeEventTypes' });
    const regex = await query({ kind: 'PathsQuery', pathsFilter: { localPathCleaningFilters: [{ regex: '(', alias: 'x' }] } });
    expect(regex.body).toMatchObject({ attr: 'query__pathsFilter__localPathCleaningFilters__0__regex' });
    // a backreference: JavaScript reads it, RE2 (PostHog's engine) does not
    const backreference = await query({ kind: 'PathsQuery', pathsFilter: { localPathCleaningFilters: [{ regex: '(a)\\1', alias: 'x' }] } });
    expect(backreference.status).toBe(400);
    expect(backreference.body).toMatchObject({ attr: 'query__pathsFilter__localPathCleaningFilters__0__regex' });
    const funnel = await query({ kind: 'PathsQuery', funnelPathsFilter: { funnelStep: 1 } });
    expect(funnel.body).toMatchObject({ attr: 'query__funnelPathsFilter' });
    const steps = await query({ kind: 'PathsQuery', pathsFilter: { stepLimit: 1 } });
    expect(steps.status).toBe(400);
    expect(steps.body).toMatchObject({ type: 'validation_error' });
  });
});
