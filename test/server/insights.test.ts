/**
 * The insights operations through the real HTTP stack, response validation on: create with a new
 * short id, retrieve by id and short id, list filters, update, soft delete and restore, dashboards
 * as tiles, `result` computed only when `refresh` asks (and equal to `/query/`'s answer), scopes,
 * and other projects' insights out of reach. Runs on SQLite, PostgreSQL and with ClickHouse events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let P: number;
let Q: number;

interface Body {
  [key: string]: unknown;
}

async function call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: Body }> {
  const res = await t.fetch(path, {
    method,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    ...(key ? { key } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Body) : {} };
}

const TRENDS = {
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    dateRange: { date_from: '2024-11-01', date_to: '2024-11-03' },
  },
};
const base = (team = P) => `/api/projects/${team}/insights/`;

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Insights other' })).id;
  await importEvents(t.store, P, [
    { event: '$pageview', distinct_id: 'a', timestamp: '2024-11-01T10:00:00Z' },
    { event: '$pageview', distinct_id: 'a', timestamp: '2024-11-01T11:00:00Z' },
    { event: '$pageview', distinct_id: 'b', timestamp: '2024-11-03T10:00:00Z' },
  ]);
});

afterAll(async () => {
  await t.close();
});

describe('insights', () => {
  it('creates an insight with an 8-character short id, saved false, and no result without refresh', async () => {
    const res = await call('POST', base(), { name: 'Daily views', query: TRENDS, tags: ['web', 'web'] });
    expect(res.status).toBe(201);
    expect(res.body.short_id).toMatch(/^[A-Za-z0-9]{8}$/);
    expect(res.body).toMatchObject({
      name: 'Daily views',
      saved: false,
      deleted: false,
      tags: ['web'],
      result: null,
      is_cached: false,
      filters: {},
    });
    expect(res.body.created_by).toMatchObject({ id: t.boot.user.id });
  });

  it('computes result when refresh asks, equal to /query/’s answer, by id and by short id', async () => {
    const created = await call('POST', base(), { name: 'To compute', query: TRENDS });
    const byId = await call('GET', `${base()}${created.body.id}/?refresh=blocking`);
    expect(byId.status).toBe(200);
    const direct = await call('POST', `/api/environments/${P}/query/`, { query: TRENDS });
    expect(byId.body.result).toEqual(direct.body.results);
    expect((byId.body.result as { data: number[] }[])[0]!.data).toEqual([2, 0, 1]);
    const byShort = await call('GET', `${base()}${created.body.short_id}/?refresh=true`);
    expect(byShort.body.id).toBe(created.body.id);
    expect(byShort.body.result).toEqual(direct.body.results);
    const cached = await call('GET', `${base()}${created.body.id}/?refresh=force_cache`);
    expect(cached.body.result).toBeNull();
    const sql = await call('POST', `${base()}?refresh=1`, {
      query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'select count() from events' } },
    });
    expect(sql.body).toMatchObject({ result: [[3]], columns: ['count()'] });
  });

  it('lists with PostHog’s filters: short_id, saved, search, favorited', async () => {
    const a = await call('POST', base(), { name: 'Alpha funnel', query: TRENDS, saved: true });
    const b = await call('POST', base(), { name: 'Beta', description: 'about ALPHA too', query: TRENDS, favorited: true });
    const c = await call('POST', base(), { name: 'Gamma', query: TRENDS, tags: ['alphabet'] });
    const ids = (r: { body: Body }) => (r.body.results as Body[]).map((i) => i.id);
    expect(ids(await call('GET', `${base()}?short_id=${String(b.body.short_id)}`))).toEqual([b.body.id]);
    const search = ids(await call('GET', `${base()}?search=alpha`));
    expect(search).toEqual(expect.arrayContaining([a.body.id, b.body.id, c.body.id]));
    expect(search).toHaveLength(3);
    expect(ids(await call('GET', `${base()}?saved=true`))).toEqual([a.body.id]);
    expect(ids(await call('GET', `${base()}?favorited=true`))).toEqual([b.body.id]);
    const page = await call('GET', `${base()}?limit=1`);
    expect(page.body).toMatchObject({ results: [expect.any(Object)] });
    expect(page.body.next).toContain('offset=1');
  });

  it('dashboards become tiles; saved=true lists insights on a dashboard', async () => {
    const d = await call('POST', `/api/environments/${P}/dashboards/create_from_template_json/`, {
      template: {
        template_name: 'Empty',
        dashboard_description: '',
        dashboard_filters: {},
        tags: [],
        tiles: [{ type: 'TEXT', body: 'Notes', layouts: {} }],
      },
    });
    expect(d.status).toBe(200);
    const ins = await call('POST', base(), { name: 'On a dashboard', query: TRENDS, dashboards: [d.body.id] });
    expect(ins.body).toMatchObject({ dashboards: [d.body.id], dashboard_tiles: [{ dashboard_id: d.body.id, deleted: false }] });
    const dash = await call('GET', `/api/environments/${P}/dashboards/${d.body.id}/`);
    expect((dash.body.tiles as { insight: { id: number } | null }[]).flatMap((x) => (x.insight ? [x.insight.id] : []))).toEqual([
      ins.body.id,
    ]);
    expect((await call('GET', `${base()}?saved=true&search=On a dashboard`)).body.count).toBe(1);
    const off = await call('PATCH', `${base()}${ins.body.id}/`, { dashboards: [] });
    expect(off.body).toMatchObject({ dashboards: [], dashboard_tiles: [{ deleted: true }] });
    const unknown = await call('POST', base(), { query: TRENDS, dashboards: [999999] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ type: 'validation_error', attr: 'dashboards' });
  });

  it('updates, soft deletes with deleted: true (404 after), and restores with deleted: false', async () => {
    const ins = await call('POST', base(), { name: 'Old', query: TRENDS });
    const renamed = await call('PATCH', `${base()}${ins.body.id}/`, { name: 'New', favorited: true });
    expect(renamed.body).toMatchObject({ name: 'New', favorited: true, short_id: ins.body.short_id });
    const deleted = await call('PATCH', `${base()}${ins.body.id}/`, { deleted: true });
    expect(deleted.status).toBe(200);
    expect((await call('GET', `${base()}${ins.body.id}/`)).status).toBe(404);
    expect((await call('PATCH', `${base()}${ins.body.id}/`, { name: 'x' })).status).toBe(404);
    const restored = await call('PATCH', `${base()}${ins.body.short_id}/`, { deleted: false });
    expect(restored.body).toMatchObject({ deleted: false, name: 'New' });
    expect((await call('DELETE', `${base()}${ins.body.id}/`)).status).toBe(405);
  });

  it('refuses a query kind it does not run, and keeps other projects’ insights out of reach', async () => {
    const bad = await call('POST', base(), { query: { kind: 'InsightVizNode', source: { kind: 'LifecycleQueryX', series: [] } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ detail: 'Unsupported query kind: LifecycleQueryX' });
    const mine = await call('POST', base(), { name: 'Mine', query: TRENDS });
    expect((await call('GET', `${base(Q)}${mine.body.id}/`)).status).toBe(404);
    expect((await call('GET', `${base(Q)}${mine.body.short_id}/`)).status).toBe(404);
    expect((await call('GET', `${base(Q)}`)).body.count).toBe(0);
  });

  it('needs insight:read to read and insight:write to write', async () => {
    const read = await t.key(['insight:read']);
    expect((await call('GET', base(), undefined, read)).status).toBe(200);
    expect((await call('POST', base(), { query: TRENDS }, read)).status).toBe(403);
    const write = await t.key(['insight:write']);
    expect((await call('POST', base(), { query: TRENDS }, write)).status).toBe(201);
  });
});
