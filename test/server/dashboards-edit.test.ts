/**
 * The dashboards operations beyond the seed's, through the real HTTP stack with response
 * validation on: create (empty, a copy), update and soft delete (with its insights) and restore,
 * the tile actions (create/update/delete text tiles, reorder, copy), and results: a PostHog-style
 * dashboard end to end, template → insights → tiles with results → run_insights, each result equal
 * to `/query/`'s answer. Runs on SQLite, PostgreSQL and with ClickHouse events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let P: number;

type Body = Record<string, unknown>;
interface Tile {
  id: number;
  layouts: { sm?: { x: number; y: number; w: number; h: number } };
  insight: { id: number; result?: unknown; query: unknown } | null;
  text: { body: string } | null;
  error?: { type: string; message: string };
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

const D = () => `/api/projects/${P}/dashboards/`;
const TRENDS = (event: string) => ({
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event }], dateRange: { date_from: '2024-11-01', date_to: '2024-11-02' } },
});
const tilesOf = (b: Body) => b.tiles as Tile[];

async function newDashboard(name: string): Promise<number> {
  const res = await call('POST', D(), { name });
  expect(res.status).toBe(201);
  return res.body.id as number;
}

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  await importEvents(t.store, P, [
    { event: '$pageview', distinct_id: 'a', timestamp: '2024-11-01T10:00:00Z' },
    { event: '$pageview', distinct_id: 'b', timestamp: '2024-11-02T10:00:00Z' },
    { event: '$pageview', distinct_id: 'b', timestamp: '2024-11-02T11:00:00Z' },
    { event: 'signup', distinct_id: 'b', timestamp: '2024-11-02T11:05:00Z' },
  ]);
});

afterAll(async () => {
  await t.close();
});

describe('dashboards: create, update, delete', () => {
  it('creates an empty dashboard (201) with the fields given', async () => {
    const res = await call('POST', D(), { name: 'Growth', description: 'Weekly', pinned: true, tags: ['g', 'g'], delete_insights: false });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Growth',
      description: 'Weekly',
      pinned: true,
      tags: ['g'],
      creation_mode: 'default',
      tiles: [],
    });
    expect((await call('GET', `${D()}${res.body.id}/`)).body.name).toBe('Growth');
  });

  it('copies a dashboard with use_dashboard; refuses use_template with PostHog’s message', async () => {
    const src = await newDashboard('Source');
    await call('POST', `${D()}${src}/create_text_tile/`, { body: 'note' });
    const copy = await call('POST', D(), { name: 'Copy', use_dashboard: src });
    expect(copy.body).toMatchObject({ creation_mode: 'duplicate', name: 'Copy' });
    expect(tilesOf(copy.body).map((x) => x.text?.body)).toEqual(['note']);
    const tpl = await call('POST', D(), { use_template: 'DEFAULT_APP' });
    expect(tpl.status).toBe(400);
    expect(tpl.body).toMatchObject({ detail: 'Invalid template provided: DEFAULT_APP', attr: 'use_template' });
    expect((await call('POST', D(), { use_dashboard: 999999 })).status).toBe(400);
  });

  it('updates fields and tiles; deleted: true hides it (and, with delete_insights, its own insights); deleted: false restores', async () => {
    const id = await newDashboard('To change');
    const ins = await call('POST', `/api/projects/${P}/insights/`, { name: 'Only here', query: TRENDS('$pageview'), dashboards: [id] });
    const shared = await call('POST', `/api/projects/${P}/insights/`, {
      name: 'Also elsewhere',
      query: TRENDS('signup'),
      dashboards: [id],
    });
    const other = await newDashboard('Other');
    await call('PATCH', `/api/projects/${P}/insights/${shared.body.id}/`, { dashboards: [id, other] });
    const tile = tilesOf((await call('GET', `${D()}${id}/?refresh=force_cache`)).body)[0]!;
    const patched = await call('PATCH', `${D()}${id}/`, {
      name: 'Changed',
      pinned: true,
      tags: ['x'],
      tiles: [{ id: tile.id, color: 'blue', layouts: { sm: { x: 0, y: 3, w: 12, h: 4 } } }],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Changed', pinned: true, tags: ['x'] });
    expect(tilesOf(patched.body).find((x) => x.id === tile.id)).toMatchObject({ color: 'blue', layouts: { sm: { y: 3, w: 12 } } });
    expect((await call('PATCH', `${D()}${id}/`, { tiles: [{ id: 999999, color: 'red' }] })).status).toBe(400);

    expect((await call('PATCH', `${D()}${id}/`, { deleted: true, delete_insights: true })).status).toBe(200);
    expect((await call('GET', `${D()}${id}/`)).status).toBe(404);
    expect((await call('GET', `/api/projects/${P}/insights/${ins.body.id}/`)).status).toBe(404);
    expect((await call('GET', `/api/projects/${P}/insights/${shared.body.id}/`)).status).toBe(200);
    const restored = await call('PATCH', `${D()}${id}/`, { deleted: false });
    expect(restored.body).toMatchObject({ deleted: false });
    expect(tilesOf(restored.body).length).toBe(2);
  });

  it('needs dashboard:write to write', async () => {
    const read = await t.key(['dashboard:read']);
    expect((await call('POST', D(), { name: 'x' }, read)).status).toBe(403);
  });
});

describe('dashboards: tile actions', () => {
  it('create_text_tile adds below the others; update_text_tile changes it; delete_tile removes it (204)', async () => {
    const id = await newDashboard('Texts');
    const a = await call('POST', `${D()}${id}/create_text_tile/`, { type: 'text', body: 'first' });
    expect(a.body).toMatchObject({ text: { body: 'first' }, layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } });
    const b = await call('POST', `${D()}${id}/create_text_tile/`, { body: 'second', color: 'green' });
    expect(b.body).toMatchObject({ color: 'green', layouts: { sm: { y: 5 } } });
    const u = await call('POST', `${D()}${id}/update_text_tile/`, { tile_id: b.body.id, body: 'second!', color: null });
    expect(u.body).toMatchObject({ text: { body: 'second!' }, color: null });
    expect((await call('POST', `${D()}${id}/update_text_tile/`, { tile_id: 999999, body: 'x' })).body).toMatchObject({ attr: 'tile_id' });
    const del = await call('POST', `${D()}${id}/delete_tile/`, { tile_id: a.body.id });
    expect(del.status).toBe(204);
    expect(tilesOf((await call('GET', `${D()}${id}/`)).body).map((x) => x.id)).toEqual([b.body.id]);
    expect((await call('POST', `${D()}${id}/delete_tile/`, { tile_id: a.body.id })).status).toBe(400);
  });

  it('reorder_tiles lays tiles out in the order given, per layout; unknown ids 404, duplicates 400', async () => {
    const id = await newDashboard('Order');
    const ids: number[] = [];
    for (const body of ['a', 'b', 'c']) ids.push((await call('POST', `${D()}${id}/create_text_tile/`, { body })).body.id as number);
    const two = await call('POST', `${D()}${id}/reorder_tiles/`, { tile_order: [ids[2], ids[0], ids[1]], layout: 'two_column' });
    expect(tilesOf(two.body).map((x) => [x.text?.body, x.layouts.sm])).toEqual([
      ['c', { x: 0, y: 0, w: 6, h: 5 }],
      ['a', { x: 6, y: 0, w: 6, h: 5 }],
      ['b', { x: 0, y: 5, w: 6, h: 5 }],
    ]);
    const full = await call('POST', `${D()}${id}/reorder_tiles/`, { tile_order: [ids[1]], layout: 'full_width' });
    expect(tilesOf(full.body).map((x) => x.text?.body)).toEqual(['b', 'c', 'a']);
    const kept = await call('POST', `${D()}${id}/reorder_tiles/`, { tile_order: [ids[0], ids[1], ids[2]] });
    expect(tilesOf(kept.body).map((x) => [x.text?.body, x.layouts.sm?.y])).toEqual([
      ['a', 0],
      ['b', 5],
      ['c', 10],
    ]);
    const missing = await call('POST', `${D()}${id}/reorder_tiles/`, { tile_order: [999999] });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toBe('Tile IDs not found on this dashboard: [999999]');
    expect((await call('POST', `${D()}${id}/reorder_tiles/`, { tile_order: [ids[0], ids[0]] })).status).toBe(400);
  });

  it('copy_tile copies a tile from another dashboard, with PostHog’s refusals', async () => {
    const from = await newDashboard('From');
    const to = await newDashboard('To');
    const tile = await call('POST', `${D()}${from}/create_text_tile/`, { body: 'shared note' });
    const copied = await call('POST', `${D()}${to}/copy_tile/`, { fromDashboardId: from, tileId: tile.body.id });
    expect(copied.body.id).toBe(to);
    expect(tilesOf(copied.body).map((x) => x.text?.body)).toEqual(['shared note']);
    expect((await call('POST', `${D()}${to}/copy_tile/`, { fromDashboardId: from, tileId: tile.body.id })).status).toBe(400);
    expect((await call('POST', `${D()}${from}/copy_tile/`, { fromDashboardId: from, tileId: tile.body.id })).status).toBe(400);
    expect((await call('POST', `${D()}${to}/copy_tile/`, { fromDashboardId: from, tileId: 999999 })).status).toBe(400);
  });
});

describe('a PostHog-style dashboard, end to end', () => {
  it('template → insights → tiles with results → run_insights, each result equal to /query/’s', async () => {
    const made = await call('POST', `/api/environments/${P}/dashboards/create_from_template_json/`, {
      template: {
        template_name: 'Product analytics',
        dashboard_description: 'Pageviews and signups',
        dashboard_filters: {},
        tiles: [
          { type: 'INSIGHT', name: 'Pageviews', query: TRENDS('$pageview'), layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } },
          { type: 'INSIGHT', name: 'Signups', query: TRENDS('signup'), layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } },
          {
            type: 'INSIGHT',
            name: 'Not runnable here',
            query: { kind: 'InsightVizNode', source: { kind: 'PathsQueryX' } },
            layouts: { sm: { x: 0, y: 5, w: 6, h: 5 } },
          },
          { type: 'TEXT', body: 'Notes', layouts: { sm: { x: 6, y: 5, w: 6, h: 5 } } },
        ],
      },
    });
    expect(made.status).toBe(200);
    const id = made.body.id as number;
    const expected = async (event: string) => (await call('POST', `/api/environments/${P}/query/`, { query: TRENDS(event) })).body.results;

    const got = await call('GET', `${D()}${id}/`);
    const tiles = tilesOf(got.body);
    expect(tiles.map((x) => (x.insight ? 'insight' : 'text'))).toEqual(['insight', 'insight', 'insight', 'text']);
    expect(tiles[0]!.insight!.result).toEqual(await expected('$pageview'));
    expect((tiles[0]!.insight!.result as { data: number[] }[])[0]!.data).toEqual([1, 2]);
    expect(tiles[1]!.insight!.result).toEqual(await expected('signup'));
    expect(tiles[2]!.insight!.result).toBeNull();
    expect(tiles[2]!.error).toEqual({ type: 'validation_error', message: 'Unsupported query kind: PathsQueryX' });
    const cached = await call('GET', `${D()}${id}/?refresh=force_cache`);
    expect(tilesOf(cached.body)[0]!.insight!.result).toBeUndefined();

    const run = await call('GET', `${D()}${id}/run_insights/?refresh=blocking&output_format=json`);
    expect(run.status).toBe(200);
    const results = run.body.results as { id: number; insight: { name: string; result: unknown }; error?: unknown }[];
    expect(results.map((r) => r.insight.name)).toEqual(['Pageviews', 'Signups', 'Not runnable here']);
    expect(results[0]!.insight.result).toEqual(await expected('$pageview'));
    expect(results[1]!.insight.result).toEqual(await expected('signup'));
    expect(results[2]).toMatchObject({ insight: { result: null }, error: { message: 'Unsupported query kind: PathsQueryX' } });
    expect(
      ((await call('GET', `${D()}${id}/run_insights/?refresh=force_cache`)).body.results as { insight: { result: unknown } }[])[0]!.insight
        .result,
    ).toBeNull();
  });
});
