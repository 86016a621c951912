/**
 * The `dashboards` operations through the real HTTP stack: a server on port 0 with response
 * validation on, driven by the project's typed client and, for bodies outside the schema, by raw
 * fetch (`t.fetch`).
 *
 * - `create_from_template_json` creates exactly the rows the template describes (one dashboard, one
 *   tile per template tile, an `is_sample` insight per INSIGHT tile, a text per TEXT tile) and
 *   answers 200 with the dashboard and its tiles; every kind of invalid template answers 400 naming
 *   the first problem and leaves no row behind (rows are counted in `dashboards`,
 *   `dashboard_tiles`, `insights` and `texts` before and after).
 * - `move_tile` moves a tile between two dashboards of a project and back; the cross-project,
 *   deleted and unknown cases answer 400 / 404 and move nothing; a dashboard restricted to its
 *   collaborators (restriction_level 37) can only be edited by its creator and project admins.
 * - `GET /dashboards/` (paginated, deleted hidden, no tiles) and `GET /dashboards/{id}/` (with tiles).
 * - Isolation between projects and organizations, and the scopes of each operation.
 *
 * The behaviour asserted is the one the operation descriptions in openapi.yaml state (PostHog's,
 * minus its 500s); PostHog's own behaviour is in ../shared/reference/posthog-behavior.md part B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components, EnvApiClient } from '../../client/index.js';
import { OrganizationLevel, type Organization, type User } from '../../server/storage/repositories/accounts.js';
import { ExplicitMembersRepository } from '../../server/storage/repositories/explicit-members.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  answer,
  type Answer,
  type ErrorBody,
  forbidden,
  missingScope,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  PROJECT_NOT_FOUND,
  required,
} from '../helpers/errors.js';
import { refuseInserts } from '../helpers/store.js';
import type { DashboardTemplate } from '../../server/domain/template-schema.js';

type Dashboard = components['schemas']['Dashboard'];
type DashboardTile = components['schemas']['DashboardTile'];
type TemplateRequest = components['schemas']['DashboardCreateFromTemplateJSONRequest'];
type Template = DashboardTemplate;
type TemplateTile = components['schemas']['DashboardTemplateTile'];

type DashboardPage = components['schemas']['PaginatedDashboardBasicList'];

const FROM_TEMPLATE = '/api/environments/{project_id}/dashboards/create_from_template_json/';
/** PostHog's 2026 tile fields, as a tile this server makes holds them (nothing cached, no button, no overrides). */
const TILE_2026 = {
  button_tile: null,
  filters_overrides: {},
  is_cached: false,
  last_refresh: null,
  show_description: null,
  transparent_background: null,
};
const MOVE_TILE = '/api/environments/{project_id}/dashboards/{id}/move_tile/';
const DASHBOARDS = '/api/environments/{project_id}/dashboards/';
const DASHBOARD = '/api/environments/{project_id}/dashboards/{id}/';

const { MEMBER: ORG_MEMBER, ADMIN: ORG_ADMIN } = OrganizationLevel;

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const UNKNOWN_ID = 2_000_000_000;

const NO_EDIT = forbidden("You don't have edit permissions for this dashboard.");
const NO_PROJECT_ACCESS = forbidden("You don't have access to the project.");

let t: TestServer;
/** project 1 of the bootstrap organization */
let P: number;
/** a second project of the bootstrap organization */
let Q: number;

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Dashboards second project' })).id;
});

afterAll(async () => {
  await t.close();
});

// ------------------------------------------------------------------------------------------ helpers

async function rawAnswer<T>(res: Response): Promise<Answer<T>> {
  const text = await res.text();
  const json: unknown = text ? JSON.parse(text) : undefined;
  return res.ok
    ? { status: res.status, data: json as T, error: undefined }
    : { status: res.status, data: undefined, error: json as ErrorBody };
}

/** Expects a success status and returns the data. */
function ok<T>(a: Answer<T>, status = 200): T {
  if (a.status !== status) throw new Error(`expected ${status}, got ${a.status}: ${JSON.stringify(a.error ?? a.data)}`);
  expect(a.data).toBeDefined();
  return a.data as T;
}

/** Expects an error answer with exactly this body. */
function expectError(a: Answer<unknown>, status: number, body: ErrorBody): void {
  expect({ status: a.status, body: a.error }).toEqual({ status, body });
}

/** Expects a 400 validation_error naming `attr` (any code / detail), and returns the body. */
function expectInvalid(a: Answer<unknown>, attr: string | null): ErrorBody {
  expect({ status: a.status, type: a.error?.type, attr: a.error?.attr }).toEqual({ status: 400, type: 'validation_error', attr });
  expect(typeof a.error?.code).toBe('string');
  expect(a.error?.detail).toEqual(expect.any(String));
  expect(Object.keys(a.error ?? {}).sort()).toEqual(['attr', 'code', 'detail', 'type']);
  return a.error as ErrorBody;
}

/**
 * Expects PostHog's answer for a template that fails its schema: 400 `invalid_input`, attr null,
 * `detail` python-jsonschema's text: `message` (any when undefined), the keyword and the schema's
 * place, then the instance's place. Returns the detail.
 */
function expectSchemaError(a: Answer<unknown>, message: string | undefined, keyword: string, schemaAt: string, instanceAt: string): string {
  expect({ status: a.status, type: a.error?.type, code: a.error?.code, attr: a.error?.attr }).toEqual({
    status: 400,
    type: 'validation_error',
    code: 'invalid_input',
    attr: null,
  });
  const detail = a.error!.detail;
  const [first, blank, failed] = detail.split('\n');
  if (message !== undefined) expect(first).toBe(message);
  expect([blank, failed]).toEqual(['', `Failed validating '${keyword}' in ${schemaAt}:`]);
  expect(detail).toContain(`\n\nOn ${instanceAt}:\n    `);
  return detail;
}

const api = (key?: string): EnvApiClient => (key ? t.clientFor(key) : t.client);
const pid = (p: number | string) => String(p);

/** `POST create_from_template_json` with the typed client. */
function fromTemplate(body: TemplateRequest, opts: { key?: string; project?: number | string } = {}) {
  return answer<Dashboard>(api(opts.key).POST(FROM_TEMPLATE, { params: { path: { project_id: pid(opts.project ?? P) } }, body }));
}

/** `POST create_from_template_json` with any body (raw fetch). */
async function fromTemplateRaw(body: unknown, opts: { key?: string; project?: number | string } = {}) {
  const res = await t.fetch(`/api/environments/${opts.project ?? P}/dashboards/create_from_template_json/`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(opts.key ? { key: opts.key } : {}),
  });
  return rawAnswer<Dashboard>(res);
}

/** `PATCH move_tile` with the typed client. */
function moveTile(id: number, tileId: number, toDashboard: number, opts: { key?: string; project?: number | string } = {}) {
  return answer<Dashboard>(
    api(opts.key).PATCH(MOVE_TILE, {
      params: { path: { project_id: pid(opts.project ?? P), id } },
      body: { tile: { id: tileId }, toDashboard },
    }),
  );
}

/** `PATCH move_tile` with any body and any id (raw fetch). */
async function moveTileRaw(id: number | string, body: unknown, opts: { key?: string; project?: number | string } = {}) {
  const res = await t.fetch(`/api/environments/${opts.project ?? P}/dashboards/${id}/move_tile/`, {
    method: 'PATCH',
    headers: JSON_HEADERS,
    body: JSON.stringify(body),
    ...(opts.key ? { key: opts.key } : {}),
  });
  return rawAnswer<Dashboard>(res);
}

/** `GET /dashboards/` (environments_dashboards_list) with the typed client. */
function listDashboards(project: number | string, query: { limit?: number; offset?: number } = {}, key?: string) {
  return answer<DashboardPage>(api(key).GET(DASHBOARDS, { params: { path: { project_id: pid(project) }, query } }));
}

/** `GET /dashboards/?<qs>` with any query string and key (raw fetch; `key: null` sends none). */
async function listRaw(project: number | string, qs: string, key?: string | null) {
  const res = await t.fetch(`/api/environments/${project}/dashboards/${qs ? `?${qs}` : ''}`, key === undefined ? {} : { key });
  return rawAnswer<DashboardPage>(res);
}

/**
 * `GET /dashboards/{id}/` (environments_dashboards_retrieve) with the typed client, with
 * `refresh=force_cache`: the tiles as stored, without their insights' results (which
 * test/server/dashboards-edit.test.ts checks), so that they compare with what the writes answer.
 */
function retrieve(project: number | string, id: number, key?: string) {
  return answer<Dashboard>(
    api(key).GET(DASHBOARD, { params: { path: { project_id: pid(project), id }, query: { refresh: 'force_cache' } } }),
  );
}

/** `GET /dashboards/{id}/?refresh=force_cache` with any id and key (raw fetch; `key: null` sends none). */
async function retrieveRaw(project: number | string, id: number | string, key?: string | null) {
  const res = await t.fetch(`/api/environments/${project}/dashboards/${id}/?refresh=force_cache`, key === undefined ? {} : { key });
  return rawAnswer<Dashboard>(res);
}

/** Retrieves a dashboard that must exist (with the bootstrap key). */
async function dashboard(id: number, project: number = P): Promise<Dashboard> {
  return ok(await retrieve(project, id));
}

// ---- templates

const PAGEVIEWS_QUERY = {
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
    interval: 'day',
    dateRange: { date_from: '-30d' },
  },
};
const DAU_QUERY = {
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: null, name: 'All events', math: 'dau' }],
    interval: 'week',
    properties: [{ key: '$current_url', value: 'https://hedgebox.net/files/', operator: 'icontains', type: 'event' }],
  },
};

/** A small-screen layout at row `y`, column `x`. */
const layoutAt = (y: number, x = 0) => ({ sm: { x, y, w: 6, h: 5, minW: 3, minH: 5 }, xs: { x: 0, y: y * 2 + x, w: 1, h: 5 } });

let tileSeq = 0;

function insightTile(extra: Partial<TemplateTile> = {}): TemplateTile {
  tileSeq += 1;
  return {
    type: 'INSIGHT',
    name: `Pageviews ${tileSeq}`,
    description: `Pageviews of tile ${tileSeq}`,
    query: PAGEVIEWS_QUERY,
    layouts: layoutAt(tileSeq * 10),
    color: 'blue',
    ...extra,
  };
}

function textTile(extra: Partial<TemplateTile> = {}): TemplateTile {
  tileSeq += 1;
  return { type: 'TEXT', body: `## Notes ${tileSeq}`, layouts: layoutAt(tileSeq * 10), color: null, ...extra };
}

function template(extra: Partial<Template> = {}): Template {
  return {
    template_name: 'Hedgebox KPIs',
    dashboard_description: 'Weekly numbers for the Monday meeting.',
    dashboard_filters: { date_from: '-7d' },
    tags: ['kpi'],
    tiles: [insightTile(), textTile()],
    ...extra,
  };
}

/** Creates a dashboard from a template (must succeed). */
async function create(
  tpl: Template = template(),
  opts: { key?: string; project?: number; extra?: Omit<TemplateRequest, 'template'> } = {},
): Promise<Dashboard> {
  // create_from_template_json ignores restriction_level, as PostHog's: a restricted dashboard is
  // made, then restricted by its creator with a PATCH
  const { restriction_level: restriction, ...extra } = opts.extra ?? {};
  const d = ok(await fromTemplate({ template: tpl, ...extra }, opts));
  if (restriction === undefined || restriction === 21) return d;
  return ok(
    await answer<Dashboard>(
      api(opts.key).PATCH(DASHBOARD, {
        params: { path: { project_id: pid(opts.project ?? P), id: d.id } },
        body: { restriction_level: restriction },
      }),
    ),
  );
}

/** Two dashboards A (insight tile, text tile) and B (one insight tile) of a project, all tiles at distinct layouts. */
async function twoDashboards(project: number = P, key?: string): Promise<{ a: Dashboard; b: Dashboard }> {
  const o = { project, ...(key ? { key } : {}) };
  const a = await create(
    template({ template_name: 'Source A', tiles: [insightTile({ layouts: layoutAt(0) }), textTile({ layouts: layoutAt(5) })] }),
    o,
  );
  const b = await create(
    template({ template_name: 'Target B', tiles: [insightTile({ layouts: layoutAt(0, 6), color: 'green', query: DAU_QUERY })] }),
    o,
  );
  expect(a.tiles).toHaveLength(2);
  expect(b.tiles).toHaveLength(1);
  return { a, b };
}

const insightTileOf = (d: Dashboard): DashboardTile => {
  const tile = d.tiles.find((x) => x.insight !== null);
  if (!tile) throw new Error(`dashboard ${d.id} has no insight tile`);
  return tile;
};
const textTileOf = (d: Dashboard): DashboardTile => {
  const tile = d.tiles.find((x) => x.text !== null);
  if (!tile) throw new Error(`dashboard ${d.id} has no text tile`);
  return tile;
};
const tileIds = (d: Dashboard) => d.tiles.map((x) => x.id).sort((m, n) => m - n);

// ---- the store

interface Counts {
  dashboards: number;
  dashboard_tiles: number;
  insights: number;
  texts: number;
}

/** Rows in the four tables (all projects). */
async function counts(): Promise<Counts> {
  const db = t.store.db;
  const n = (r: { n: string | number | bigint } | undefined) => Number(r?.n ?? 0);
  return {
    dashboards: n(
      await db
        .selectFrom('dashboards')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    dashboard_tiles: n(
      await db
        .selectFrom('dashboard_tiles')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    insights: n(
      await db
        .selectFrom('insights')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
    texts: n(
      await db
        .selectFrom('texts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst(),
    ),
  };
}

/** Runs `fn` and expects it to leave the four tables as they were. */
async function createsNothing<T>(fn: () => Promise<T>): Promise<T> {
  const before = await counts();
  const result = await fn();
  expect(await counts()).toEqual(before);
  return result;
}

const fromJson = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const truthy = (v: unknown): boolean => v === true || v === 1 || v === '1';

async function markDashboardDeleted(id: number): Promise<void> {
  await t.store.db.updateTable('dashboards').set({ deleted: 1 }).where('id', '=', id).execute();
}

async function markTileDeleted(id: number): Promise<void> {
  await t.store.db.updateTable('dashboard_tiles').set({ deleted: 1 }).where('id', '=', id).execute();
}

async function tileRow(id: number) {
  return t.store.db.selectFrom('dashboard_tiles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A user of the bootstrap organization at `level` with a key (default scope dashboard:write). */
async function caller(
  level: number,
  scopes: string[] = ['dashboard:write'],
  organization?: Organization,
): Promise<{ user: User; key: string }> {
  const user = await t.user({ level, ...(organization ? { organization } : {}) });
  return { user, key: await t.key(scopes, { user }) };
}

// =================================================================================================
// create_from_template_json
// =================================================================================================

describe('POST /api/environments/{project_id}/dashboards/create_from_template_json/', () => {
  it('a template with 2 INSIGHT tiles and 1 TEXT tile creates exactly 1 dashboard, 3 tiles, 2 insights and 1 text, and answers 200 (not 201)', async () => {
    const before = await counts();
    const tiles: TemplateTile[] = [
      {
        type: 'INSIGHT',
        name: 'Weekly pageviews',
        description: 'All $pageview events per week',
        query: PAGEVIEWS_QUERY,
        layouts: layoutAt(0),
        color: 'blue',
      },
      {
        type: 'INSIGHT',
        name: 'Daily active users',
        description: 'Unique users per day',
        query: DAU_QUERY,
        layouts: layoutAt(0, 6),
        color: 'green',
      },
      { type: 'TEXT', body: '**Goal:** 50k weekly pageviews by December.', layouts: layoutAt(5), color: 'purple' },
    ];
    const a = await fromTemplate({
      template: template({
        template_name: 'Product analytics',
        dashboard_description: 'Track the usage of your product.',
        dashboard_filters: { date_from: '-14d', properties: [] },
        tags: ['product', 'weekly'],
        tiles,
      }),
    });
    expect(a.status).toBe(200);
    const d = a.data as Dashboard;
    expect(await counts()).toEqual({
      dashboards: before.dashboards + 1,
      dashboard_tiles: before.dashboard_tiles + 3,
      insights: before.insights + 2,
      texts: before.texts + 1,
    });

    expect(d).toMatchObject({
      id: expect.any(Number),
      name: 'Product analytics',
      description: 'Track the usage of your product.',
      pinned: false,
      deleted: false,
      creation_mode: 'default',
      restriction_level: 21,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      filters: { date_from: '-14d', properties: [] },
      tags: ['product', 'weekly'],
    });
    expect(d.created_at).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(d.created_at) - Date.now())).toBeLessThan(60_000);
    expect(d.created_by).toMatchObject({ id: t.boot.user.id, uuid: t.boot.user.uuid, email: t.boot.user.email });

    expect(d.tiles.map((x) => x.order)).toEqual([0, 1, 2]);
    const [pageviews, dau, text] = d.tiles as [DashboardTile, DashboardTile, DashboardTile];
    expect(pageviews).toEqual({
      id: expect.any(Number),
      layouts: layoutAt(0),
      color: 'blue',
      insight: {
        id: expect.any(Number),
        short_id: expect.any(String),
        name: 'Weekly pageviews',
        derived_name: null,
        description: 'All $pageview events per week',
        query: PAGEVIEWS_QUERY,
        is_sample: true,
      },
      text: null,
      order: 0,
      ...TILE_2026,
    });
    expect(dau).toEqual({
      id: expect.any(Number),
      layouts: layoutAt(0, 6),
      color: 'green',
      insight: {
        id: expect.any(Number),
        short_id: expect.any(String),
        name: 'Daily active users',
        derived_name: null,
        description: 'Unique users per day',
        query: DAU_QUERY,
        is_sample: true,
      },
      text: null,
      order: 1,
      ...TILE_2026,
    });
    expect(text).toEqual({
      id: expect.any(Number),
      layouts: layoutAt(5),
      color: 'purple',
      insight: null,
      text: { id: expect.any(Number), body: '**Goal:** 50k weekly pageviews by December.' },
      order: 2,
      ...TILE_2026,
    });
    expect(pageviews.insight?.id).not.toBe(dau.insight?.id);
    expect(pageviews.insight?.short_id).not.toBe(dau.insight?.short_id);
    expect(new Set(d.tiles.map((x) => x.id)).size).toBe(3);
  });

  it('stores the rows the answer shows: tiles on the new dashboard, insights marked is_sample with the template query, the text body', async () => {
    const d = await create(
      template({
        tiles: [
          { type: 'INSIGHT', name: 'Stored insight', description: 'Described', query: DAU_QUERY, layouts: layoutAt(0) },
          { type: 'TEXT', body: 'Stored text', layouts: layoutAt(1) },
        ],
      }),
    );
    const row = await t.store.db.selectFrom('dashboards').selectAll().where('id', '=', d.id).executeTakeFirstOrThrow();
    expect(row.team_id).toBe(P);
    expect(truthy(row.deleted)).toBe(false);
    expect(row.created_by_id).toBe(t.boot.user.id);
    expect(row.creation_mode).toBe('default');

    const tiles = await t.store.db.selectFrom('dashboard_tiles').selectAll().where('dashboard_id', '=', d.id).orderBy('id').execute();
    expect(tiles.map((x) => x.id).sort((m, n) => m - n)).toEqual(tileIds(d));
    const [insightTileRow, textTileRow] = tiles;
    expect(insightTileRow?.insight_id).toBe(insightTileOf(d).insight?.id);
    expect(insightTileRow?.text_id).toBeNull();
    expect(textTileRow?.text_id).toBe(textTileOf(d).text?.id);
    expect(textTileRow?.insight_id).toBeNull();

    const insight = await t.store.db
      .selectFrom('insights')
      .selectAll()
      .where('id', '=', insightTileOf(d).insight?.id ?? -1)
      .executeTakeFirstOrThrow();
    expect(insight.team_id).toBe(P);
    expect(truthy(insight.is_sample)).toBe(true);
    expect(insight.name).toBe('Stored insight');
    expect(insight.description).toBe('Described');
    expect(fromJson(insight.query)).toEqual(DAU_QUERY);

    const text = await t.store.db
      .selectFrom('texts')
      .selectAll()
      .where('id', '=', textTileOf(d).text?.id ?? -1)
      .executeTakeFirstOrThrow();
    expect(text.body).toBe('Stored text');
    expect(text.team_id).toBe(P);
  });

  it('answers the same dashboard as GET /dashboards/{id}/ does afterwards', async () => {
    const d = await create();
    expect(await dashboard(d.id)).toEqual(d);
  });

  it('created_by is the owner of the key, not the bootstrap user', async () => {
    const { user, key } = await caller(ORG_MEMBER);
    const d = await create(template(), { key });
    expect(d.created_by).toMatchObject({ id: user.id, uuid: user.uuid, email: user.email, first_name: user.first_name });
    expect(d.effective_privilege_level).toBe(37);
  });

  it('without tags in the template answers tags []', async () => {
    const tpl = template();
    delete tpl.tags;
    const d = await create(tpl);
    expect(d.tags).toEqual([]);
  });

  it('an INSIGHT tile with only its type gets layouts {}, colour null and query null', async () => {
    const d = await create(template({ tiles: [{ type: 'INSIGHT' }] }));
    expect(d.tiles).toHaveLength(1);
    const tile = d.tiles[0] as DashboardTile;
    expect(tile.layouts).toEqual({});
    expect(tile.color).toBeNull();
    expect(tile.text).toBeNull();
    expect(tile.insight).toMatchObject({ query: null, is_sample: true });
  });

  it('a TEXT tile with only its type creates a text card', async () => {
    const before = await counts();
    const d = await create(template({ tiles: [{ type: 'TEXT' }] }));
    expect(d.tiles).toHaveLength(1);
    expect((d.tiles[0] as DashboardTile).insight).toBeNull();
    const text = (d.tiles[0] as DashboardTile).text;
    expect(Object.keys(text ?? {}).sort()).toEqual(['body', 'id']);
    expect(text?.id).toEqual(expect.any(Number));
    expect([null, '']).toContain(text?.body);
    expect(await counts()).toEqual({
      ...before,
      dashboards: before.dashboards + 1,
      dashboard_tiles: before.dashboard_tiles + 1,
      texts: before.texts + 1,
    });
  });

  it('sorts tiles by their small-screen layout (y, then x) and numbers them with order', async () => {
    const d = await create(
      template({
        tiles: [
          insightTile({ name: 'bottom', layouts: layoutAt(10, 0) }),
          textTile({ body: 'top right', layouts: layoutAt(0, 6) }),
          insightTile({ name: 'top left', layouts: layoutAt(0, 0) }),
        ],
      }),
    );
    expect(d.tiles.map((x) => x.insight?.name ?? x.text?.body)).toEqual(['top left', 'top right', 'bottom']);
    expect(d.tiles.map((x) => x.order)).toEqual([0, 1, 2]);
  });

  it('the siblings name, description, tags and pinned override or set the template values; restriction_level is ignored, as PostHog', async () => {
    const d = ok(
      await fromTemplate({
        template: template(),
        name: 'My own name',
        description: 'My own description',
        tags: ['mine'],
        pinned: true,
        restriction_level: 37,
      }),
    );
    expect(d).toMatchObject({
      name: 'My own name',
      description: 'My own description',
      tags: ['mine'],
      pinned: true,
      restriction_level: 21,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      filters: { date_from: '-7d' },
    });
    expect(await dashboard(d.id)).toEqual(d);
  });

  it('an empty tags sibling replaces the template tags', async () => {
    const d = await create(template({ tags: ['from-template'] }), { extra: { tags: [] } });
    expect(d.tags).toEqual([]);
  });

  it('restriction_level 21 and pinned false can be sent explicitly', async () => {
    const d = await create(template(), { extra: { restriction_level: 21, pinned: false } });
    expect(d).toMatchObject({ restriction_level: 21, pinned: false });
  });

  it('ignores unknown fields: PostHog siblings, template fields it does not use, legacy tile fields', async () => {
    const before = await counts();
    const a = await fromTemplateRaw({
      template: {
        id: 'c0ffee00-0000-4000-8000-000000000000',
        team_id: null,
        created_at: '2024-01-01T00:00:00Z',
        image_url: 'https://posthog.com/images/templates/product-analytics.png',
        variables: [
          { id: 'VAR_1', name: 'Signed up', type: 'event', default: { id: '$identify' }, description: 'The sign-up event', required: true },
        ],
        template_name: 'With extras',
        dashboard_description: '',
        dashboard_filters: {},
        deleted: true,
        scope: 'global',
        tiles: [{ type: 'INSIGHT', name: 'Legacy', filters: { insight: 'TRENDS' }, mystery: 42, query: PAGEVIEWS_QUERY }],
      },
      creation_context: 'onboarding',
      _create_in_folder: 'Unfiled/Dashboards',
      created_by: 12345,
      deleted: true,
      id: 1,
      whatever: { nested: [1, 2, 3] },
    });
    expect(a.status).toBe(200);
    const d = a.data as Dashboard;
    expect(d).toMatchObject({ name: 'With extras', description: '', deleted: false, creation_mode: 'default' });
    expect(d.created_by?.id).toBe(t.boot.user.id);
    expect(d.id).not.toBe(1);
    expect(d.tiles).toHaveLength(1);
    expect(d.tiles[0]?.insight).toMatchObject({ name: 'Legacy', query: PAGEVIEWS_QUERY, is_sample: true });
    expect(Object.keys(d.tiles[0]?.insight ?? {}).sort()).toEqual([
      'derived_name',
      'description',
      'id',
      'is_sample',
      'name',
      'query',
      'short_id',
    ]);
    expect(await counts()).toEqual({
      dashboards: before.dashboards + 1,
      dashboard_tiles: before.dashboard_tiles + 1,
      insights: before.insights + 1,
      texts: before.texts,
    });
  });

  it('accepts the template id as an integer (e.g. a dashboard id) or a uuid string, and ignores it', async () => {
    for (const id of [12345, 1, 'c0ffee00-0000-4000-8000-000000000000']) {
      const before = await counts();
      const a = await fromTemplate({ template: template({ id, template_name: `Template id ${id}` }) });
      const d = ok(a);
      expect(d.name).toBe(`Template id ${id}`);
      expect(d.id).not.toBe(id);
      expect(await counts()).toEqual({
        ...before,
        dashboards: before.dashboards + 1,
        dashboard_tiles: before.dashboard_tiles + 2,
        insights: before.insights + 1,
        texts: before.texts + 1,
      });
    }
  });

  it('a template id that is neither a string nor an integer (1.5, an object, true) answers 400: not of type', async () => {
    for (const [id, text] of [
      [1.5, '1.5'],
      [{ uuid: 'x' }, "{'uuid': 'x'}"],
      [true, 'True'],
    ] as const) {
      expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: { ...template(), id } })),
        `${text} is not of type 'string', 'integer'`,
        'type',
        "schema['properties']['id']",
        "instance['id']",
      );
    }
  });

  it('creates the dashboard in the project of the path', async () => {
    const d = await create(template({ template_name: 'In Q' }), { project: Q });
    const row = await t.store.db.selectFrom('dashboards').select(['team_id']).where('id', '=', d.id).executeTakeFirstOrThrow();
    expect(row.team_id).toBe(Q);
    const insights = await t.store.db
      .selectFrom('insights')
      .select(['team_id'])
      .where('id', '=', insightTileOf(d).insight?.id ?? -1)
      .execute();
    expect(insights.map((x) => x.team_id)).toEqual([Q]);
    expect((await retrieve(P, d.id)).status).toBe(404);
    expect(await dashboard(d.id, Q)).toEqual(d);
  });

  it('two dashboards from the same template get their own insights and texts', async () => {
    const tpl = template();
    const one = await create(tpl);
    const two = await create(tpl);
    expect(insightTileOf(one).insight?.id).not.toBe(insightTileOf(two).insight?.id);
    expect(textTileOf(one).text?.id).not.toBe(textTileOf(two).text?.id);
  });

  it('a large template (150 tiles) is created whole', async () => {
    const before = await counts();
    const tiles = Array.from({ length: 150 }, (_, i) =>
      i % 3 === 2 ? textTile({ layouts: layoutAt(i) }) : insightTile({ layouts: layoutAt(i) }),
    );
    const d = await create(template({ tiles }));
    expect(d.tiles).toHaveLength(150);
    expect(d.tiles.map((x) => x.order)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(await counts()).toEqual({
      dashboards: before.dashboards + 1,
      dashboard_tiles: before.dashboard_tiles + 150,
      insights: before.insights + 100,
      texts: before.texts + 50,
    });
  });

  describe('an invalid template creates nothing and answers 400 as PostHog’s template parser (python-jsonschema’s text)', () => {
    it('without template: required, attr template', async () => {
      const a = await createsNothing(() => fromTemplateRaw({ name: 'No template' }));
      expectError(a, 400, required('template'));
    });

    it('an empty body {}: required, attr template', async () => {
      expectError(await createsNothing(() => fromTemplateRaw({})), 400, required('template'));
    });

    it('PostHog’s own case: {"not a": "template"} answers its message, keyword, schema and instance', async () => {
      const a = await createsNothing(() => fromTemplateRaw({ template: { 'not a': 'template' } }));
      const detail = expectSchemaError(a, "'template_name' is a required property", 'required', 'schema', 'instance');
      // PostHog's test_dashboard.py test_invalid_template_receives_400_response, and the schema printed in its key order
      expect(detail).toContain("Failed validating 'required' in schema");
      expect(
        detail.startsWith(
          "'template_name' is a required property\n\nFailed validating 'required' in schema:\n    {'type': 'object',\n     'required': ['template_name',\n",
        ),
      ).toBe(true);
      expect(detail.endsWith("\n\nOn instance:\n    {'not a': 'template'}")).toBe(true);
    });

    for (const [name, value, message] of [
      ['null', null, "None is not of type 'object'"],
      ['a string', 'Product analytics', "'Product analytics' is not of type 'object'"],
      ['a number', 7, "7 is not of type 'object'"],
    ] as const) {
      it(`template ${name}: not of type 'object'`, async () => {
        expectSchemaError(await createsNothing(() => fromTemplateRaw({ template: value })), message, 'type', 'schema', 'instance');
      });
    }

    it('template an array: not of type object, the array written as Python writes it', async () => {
      const detail = expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: [template()] })),
        undefined,
        'type',
        'schema',
        'instance',
      );
      expect(detail).toMatch(/^\[\{'template_name': 'Hedgebox KPIs', .* is not of type 'object'\n/);
    });

    for (const field of ['template_name', 'dashboard_description', 'dashboard_filters', 'tiles'] as const) {
      it(`without template.${field}: '${field}' is a required property`, async () => {
        const tpl: Record<string, unknown> = { ...template() };
        delete tpl[field];
        expectSchemaError(
          await createsNothing(() => fromTemplateRaw({ template: tpl })),
          `'${field}' is a required property`,
          'required',
          'schema',
          'instance',
        );
      });
    }

    it('several problems: the shallowest wins, then among siblings the greatest path (python-jsonschema’s best_match)', async () => {
      const noDescription: Record<string, unknown> = { ...template(), tiles: [] };
      delete noDescription.dashboard_description;
      expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: noDescription })),
        "'dashboard_description' is a required property",
        'required',
        'schema',
        'instance',
      );
      expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: { ...template(), tags: 'a', template_name: 1 } })),
        "1 is not of type 'string'",
        'type',
        "schema['properties']['template_name']",
        "instance['template_name']",
      );
    });

    const cases: [string, () => unknown, string, string, string, string][] = [
      [
        'tiles []',
        () => template({ tiles: [] }),
        '[] should be non-empty',
        'minItems',
        "schema['properties']['tiles']",
        "instance['tiles']",
      ],
      [
        'a tile without type',
        () => template({ tiles: [{ name: 'No type', query: PAGEVIEWS_QUERY } as unknown as TemplateTile, textTile()] }),
        "'type' is a required property",
        'required',
        "schema['properties']['tiles']['items']",
        "instance['tiles'][0]",
      ],
      [
        'a later tile without type (nothing of the earlier valid tiles is kept)',
        () => template({ tiles: [insightTile(), textTile(), { body: 'no type' } as unknown as TemplateTile] }),
        "'type' is a required property",
        'required',
        "schema['properties']['tiles']['items']",
        "instance['tiles'][2]",
      ],
      ...(['BUTTON', 'insight', 1] as const).map((type): [string, () => unknown, string, string, string, string] => [
        `a tile of type ${JSON.stringify(type)}`,
        () => template({ tiles: [insightTile(), { type } as unknown as TemplateTile] }),
        `${typeof type === 'string' ? `'${type}'` : type} is not one of ['INSIGHT', 'TEXT']`,
        'enum',
        "schema['properties']['tiles']['items']['properties']['type']",
        "instance['tiles'][1]['type']",
      ]),
      [
        'dashboard_filters an array',
        () => ({ ...template(), dashboard_filters: [] }),
        "[] is not of type 'object'",
        'type',
        "schema['properties']['dashboard_filters']",
        "instance['dashboard_filters']",
      ],
      [
        'dashboard_filters a string',
        () => ({ ...template(), dashboard_filters: 'date_from=-7d' }),
        "'date_from=-7d' is not of type 'object'",
        'type',
        "schema['properties']['dashboard_filters']",
        "instance['dashboard_filters']",
      ],
      [
        'template_name longer than 400 characters',
        () => template({ template_name: 'x'.repeat(401) }),
        `'${'x'.repeat(401)}' is too long`,
        'maxLength',
        "schema['properties']['template_name']",
        "instance['template_name']",
      ],
      [
        'dashboard_description null',
        () => ({ ...template(), dashboard_description: null }),
        "None is not of type 'string'",
        'type',
        "schema['properties']['dashboard_description']",
        "instance['dashboard_description']",
      ],
      [
        'tiles an object',
        () => ({ ...template(), tiles: { 0: { type: 'TEXT', body: 'Hi' } } }),
        "{'0': {'type': 'TEXT', 'body': 'Hi'}} is not of type 'array'",
        'type',
        "schema['properties']['tiles']",
        "instance['tiles']",
      ],
      [
        'a tile that is not an object',
        () => ({ ...template(), tiles: [insightTile(), 'TEXT'] }),
        "'TEXT' is not of type 'object'",
        'type',
        "schema['properties']['tiles']['items']",
        "instance['tiles'][1]",
      ],
      [
        'a tile query that is not an object',
        () =>
          template({ tiles: [{ type: 'INSIGHT', name: 'HogQL as text', query: 'SELECT count() FROM events' } as unknown as TemplateTile] }),
        "'SELECT count() FROM events' is not of type 'object', 'null'",
        'type',
        "schema['properties']['tiles']['items']['properties']['query']",
        "instance['tiles'][0]['query']",
      ],
      [
        'tile layouts that are not an object',
        () => template({ tiles: [insightTile(), { type: 'TEXT', body: 'x', layouts: [1, 2] } as unknown as TemplateTile] }),
        "[1, 2] is not of type 'object'",
        'type',
        "schema['properties']['tiles']['items']['properties']['layouts']",
        "instance['tiles'][1]['layouts']",
      ],
      [
        'a text body over 4000 characters',
        () => template({ tiles: [textTile({ body: 'x'.repeat(4001) })] }),
        `'${'x'.repeat(4001)}' is too long`,
        'maxLength',
        "schema['properties']['tiles']['items']['properties']['body']",
        "instance['tiles'][0]['body']",
      ],
      [
        'an insight name over 400 characters',
        () => template({ tiles: [insightTile({ name: 'n'.repeat(401) })] }),
        `'${'n'.repeat(401)}' is too long`,
        'maxLength',
        "schema['properties']['tiles']['items']['properties']['name']",
        "instance['tiles'][0]['name']",
      ],
      [
        'tags that are not strings',
        () => ({ ...template(), tags: ['ok', 7] }),
        "7 is not of type 'string'",
        'type',
        "schema['properties']['tags']['items']",
        "instance['tags'][1]",
      ],
      [
        // anyOf: best_match descends into the array branch's one error (its path relative to the anyOf)
        'a variable of an unknown type',
        () => ({
          ...template(),
          variables: [{ id: 'VAR_1', name: 'Signed up', type: 'person', default: {}, description: 'x', required: true }],
        }),
        "'person' is not one of ['event', 'element']",
        'enum',
        "schema[0]['items']['properties']['type']",
        "instance[0]['type']",
      ],
      [
        // several equally relevant errors under the anyOf: the anyOf's own
        'a variable without its required fields',
        () => ({ ...template(), variables: [{ id: 'VAR_1', type: 'event' }] }),
        "[{'id': 'VAR_1', 'type': 'event'}] is not valid under any of the given schemas",
        'anyOf',
        "schema['properties']['variables']",
        "instance['variables']",
      ],
      [
        'a huge template whose last tile (of 400) is invalid',
        () => ({
          ...template(),
          tiles: [...Array.from({ length: 399 }, (_, i) => (i % 2 ? textTile() : insightTile())), { type: 'CHART' }],
        }),
        "'CHART' is not one of ['INSIGHT', 'TEXT']",
        'enum',
        "schema['properties']['tiles']['items']['properties']['type']",
        "instance['tiles'][399]['type']",
      ],
    ];
    for (const [name, tpl, message, keyword, schemaAt, instanceAt] of cases) {
      it(`${name}: ${message.length > 80 ? `${message.slice(0, 60)}…` : message}`, async () => {
        expectSchemaError(await createsNothing(() => fromTemplateRaw({ template: tpl() })), message, keyword, schemaAt, instanceAt);
      });
    }

    it('deeply nested garbage as template or as a tile: not of type object, written out whole', async () => {
      let garbage: unknown = 'bottom';
      for (let i = 0; i < 200; i += 1) garbage = [garbage, { deeper: i }];
      const detail = expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: garbage })),
        undefined,
        'type',
        'schema',
        'instance',
      );
      expect(detail).toContain("'bottom'");
      let nested: unknown = null;
      for (let i = 0; i < 200; i += 1) nested = [nested];
      expectSchemaError(
        await createsNothing(() => fromTemplateRaw({ template: { ...template(), tiles: [nested] } })),
        `${'['.repeat(200)}None${']'.repeat(200)} is not of type 'object'`,
        'type',
        "schema['properties']['tiles']['items']",
        "instance['tiles'][0]",
      );
    });

    it('a template nested 50,000 levels deep: 400, written out to 1,000 levels (CPython’s repr fails there: PostHog answers 500)', async () => {
      const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
      const detail = expectSchemaError(
        await createsNothing(() => fromTemplateRaw(`{"template": ${deep}}`)),
        undefined,
        'type',
        'schema',
        'instance',
      );
      expect(detail.split('\n')[0]).toBe(`${'['.repeat(1_001)}...${']'.repeat(1_001)} is not of type 'object'`);
    });

    it('a JSON array as body: 400, nothing created', async () => {
      const a = await createsNothing(() => fromTemplateRaw([{ template: template() }]));
      expect(a.status).toBe(400);
      expect(a.error?.type).toBe('validation_error');
    });

    it('a body that is not JSON: 400 parse_error, nothing created', async () => {
      const a = await createsNothing(() => fromTemplateRaw('{"template": {"template_name": '));
      expect(a.status).toBe(400);
      expect(a.error).toMatchObject({ type: 'invalid_request', code: 'parse_error', attr: null });
    });

    it('restriction_level sibling other than 21/37: invalid_choice, attr restriction_level', async () => {
      const e = expectInvalid(
        await createsNothing(() => fromTemplateRaw({ template: template(), restriction_level: 30 })),
        'restriction_level',
      );
      expect(e.code).toBe('invalid_choice');
    });

    it('pinned sibling not a boolean: attr pinned', async () => {
      expectInvalid(await createsNothing(() => fromTemplateRaw({ template: template(), pinned: 'yes please' })), 'pinned');
    });

    it('name sibling over 400 characters: attr name', async () => {
      expectInvalid(await createsNothing(() => fromTemplateRaw({ template: template(), name: 'n'.repeat(401) })), 'name');
    });

    it('tags sibling not an array: attr tags', async () => {
      expectInvalid(await createsNothing(() => fromTemplateRaw({ template: template(), tags: 'kpi' })), 'tags');
    });
  });

  it('a failure while writing (the store refuses the last text) rolls everything back: no dashboard, tile, insight or text is left', async () => {
    // A separate server, since its failure is an (expected) 500 that the harness reports on close.
    const t2 = await startTestServer();
    try {
      // a SQLite trigger, or on PostgreSQL a PL/pgSQL trigger function in the test server's schema
      await refuseInserts(t2.store, 'texts', 'body', 'refuse me', 'refused by the test');
      const count = async (table: 'dashboards' | 'dashboard_tiles' | 'insights' | 'texts') =>
        Number(
          (
            await t2.store.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirst()
          )?.n ?? 0,
        );
      const res = await t2.fetch(`/api/environments/${t2.boot.team.id}/dashboards/create_from_template_json/`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({
          template: template({ tiles: [insightTile(), insightTile(), textTile({ body: 'fine' }), textTile({ body: 'refuse me' })] }),
        }),
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null });
      expect({
        dashboards: await count('dashboards'),
        dashboard_tiles: await count('dashboard_tiles'),
        insights: await count('insights'),
        texts: await count('texts'),
      }).toEqual({ dashboards: 0, dashboard_tiles: 0, insights: 0, texts: 0 });
    } finally {
      // the error the server logged is the store's refusal
      await expect(t2.close()).rejects.toThrow(/unexpected error.*refused by the test/);
    }
  });

  it('on an unknown project answers 404 "Project not found." and creates nothing', async () => {
    const a = await createsNothing(() => fromTemplateRaw({ template: template() }, { project: 99999 }));
    expectError(a, 404, PROJECT_NOT_FOUND);
  });

  it('on a project of another organization answers 403 and creates nothing', async () => {
    const other = await t.otherOrganization();
    expectError(await createsNothing(() => fromTemplateRaw({ template: template() }, { project: other.team.id })), 403, NO_PROJECT_ACCESS);
  });
});

// =================================================================================================
// move_tile
// =================================================================================================

describe('PATCH /api/environments/{project_id}/dashboards/{id}/move_tile/', () => {
  it('moves a tile from A to B: answers 200 with A without the tile; B has it; the same insight, layouts and colour', async () => {
    const { a, b } = await twoDashboards();
    const moving = insightTileOf(a);
    const before = await counts();

    const moved = ok(await moveTile(a.id, moving.id, b.id));
    expect(moved.id).toBe(a.id);
    expect(moved.name).toBe('Source A');
    expect(moved.tiles.map((x) => x.id)).toEqual([textTileOf(a).id]);
    expect(moved.tiles[0]?.order).toBe(0);
    expect(await dashboard(a.id)).toEqual(moved);

    const target = await dashboard(b.id);
    expect(tileIds(target)).toEqual([...tileIds(b), moving.id].sort((m, n) => m - n));
    const arrived = target.tiles.find((x) => x.id === moving.id);
    expect(arrived).toEqual({ ...moving, order: expect.any(Number) });
    expect(arrived?.insight?.id).toBe(moving.insight?.id);

    // nothing copied, nothing lost
    expect(await counts()).toEqual(before);
    expect((await tileRow(moving.id)).dashboard_id).toBe(b.id);
  });

  describe("to_dashboard, the name of PostHog's current serializer and frontend, as well as toDashboard", () => {
    it("moves the tile with to_dashboard alone, under /api/projects/ as PostHog's frontend sends it", async () => {
      const { a, b } = await twoDashboards();
      const moving = insightTileOf(a);
      const res = await t.fetch(`/api/projects/${P}/dashboards/${a.id}/move_tile/`, {
        method: 'PATCH',
        headers: JSON_HEADERS,
        body: JSON.stringify({ tile: moving, to_dashboard: b.id }),
      });
      expect(res.status).toBe(200);
      expect(tileIds((await res.json()) as Dashboard)).toEqual([textTileOf(a).id]);
      expect((await tileRow(moving.id)).dashboard_id).toBe(b.id);
    });

    it('accepts both names when they name the same dashboard', async () => {
      const { a, b } = await twoDashboards();
      const moving = insightTileOf(a);
      ok(await moveTileRaw(a.id, { tile: { id: moving.id }, to_dashboard: b.id, toDashboard: b.id }));
      expect((await tileRow(moving.id)).dashboard_id).toBe(b.id);
    });

    it('refuses two different dashboards: 400 on to_dashboard, nothing moved', async () => {
      const { a, b } = await twoDashboards();
      const moving = insightTileOf(a);
      const e = expectInvalid(await moveTileRaw(a.id, { tile: { id: moving.id }, to_dashboard: b.id, toDashboard: a.id }), 'to_dashboard');
      expect(e.code).toBe('invalid');
      expect((await tileRow(moving.id)).dashboard_id).toBe(a.id);
    });

    it('answers 404 for a target of another organization (PostHog’s test_dashboard.py), nothing moved', async () => {
      const { a } = await twoDashboards();
      const other = await t.otherOrganization();
      const theirs = await create(template(), { project: other.team.id, key: other.key });
      const res = await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, to_dashboard: theirs.id });
      expect(res.status).toBe(404);
      expect(res.error).toMatchObject({ code: 'not_found', detail: `Dashboard ${theirs.id} does not exist in this project.` });
      expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
    });

    it('to_dashboard that is not an integer: attr to_dashboard', async () => {
      const { a } = await twoDashboards();
      expectInvalid(await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, to_dashboard: 'B' }), 'to_dashboard');
    });
  });

  it('moves a tile to B and back: both dashboards are as at the start', async () => {
    const { a, b } = await twoDashboards();
    const moving = insightTileOf(a);
    ok(await moveTile(a.id, moving.id, b.id));
    const back = ok(await moveTile(b.id, moving.id, a.id));
    expect(back).toEqual(b);
    expect(await dashboard(a.id)).toEqual(a);
    expect(await dashboard(b.id)).toEqual(b);
  });

  it('moves a text tile: the same text card (same id and body) is on B', async () => {
    const { a, b } = await twoDashboards();
    const moving = textTileOf(a);
    const moved = ok(await moveTile(a.id, moving.id, b.id));
    expect(moved.tiles.map((x) => x.id)).toEqual([insightTileOf(a).id]);
    const arrived = (await dashboard(b.id)).tiles.find((x) => x.id === moving.id);
    expect(arrived?.text).toEqual(moving.text);
    expect(arrived?.insight).toBeNull();
  });

  it('moves every tile away: A answers tiles []', async () => {
    const { a, b } = await twoDashboards();
    ok(await moveTile(a.id, insightTileOf(a).id, b.id));
    const emptied = ok(await moveTile(a.id, textTileOf(a).id, b.id));
    expect(emptied.tiles).toEqual([]);
    expect((await dashboard(b.id)).tiles).toHaveLength(3);
  });

  it('accepts a whole tile object taken from a dashboard answer as tile (only its id is read)', async () => {
    const { a, b } = await twoDashboards();
    const moving = insightTileOf(a);
    const moved = ok(
      await moveTileRaw(a.id, { tile: { ...moving, id: moving.id, dashboard: 999, color: 'red' }, toDashboard: b.id, extra: 'ignored' }),
    );
    expect(tileIds(moved)).toEqual([textTileOf(a).id]);
    const arrived = (await dashboard(b.id)).tiles.find((x) => x.id === moving.id);
    expect(arrived?.color).toBe(moving.color);
  });

  it('moving a tile onto the dashboard it is on changes nothing', async () => {
    const { a } = await twoDashboards();
    const before = await counts();
    const same = ok(await moveTile(a.id, insightTileOf(a).id, a.id));
    expect(same).toEqual(a);
    expect(await dashboard(a.id)).toEqual(a);
    expect(await counts()).toEqual(before);
  });

  it('without a path slash (…/move_tile) works too', async () => {
    const { a, b } = await twoDashboards();
    const res = await t.fetch(`/api/environments/${P}/dashboards/${a.id}/move_tile`, {
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: JSON.stringify({ tile: { id: insightTileOf(a).id }, toDashboard: b.id }),
    });
    expect(res.status).toBe(200);
  });

  describe('a tile that is not on the source dashboard answers 400 does_not_exist (attr tile__id) and moves nothing', () => {
    it('a tile of another dashboard', async () => {
      const { a, b } = await twoDashboards();
      const other = insightTileOf(b);
      const e = expectInvalid(await moveTile(a.id, other.id, b.id), 'tile__id');
      expect(e.code).toBe('does_not_exist');
      expect(e.detail).toBe(`Tile ${other.id} is not on dashboard ${a.id}.`);
      expect((await tileRow(other.id)).dashboard_id).toBe(b.id);
      expect(await dashboard(a.id)).toEqual(a);
      expect(await dashboard(b.id)).toEqual(b);
    });

    it('a tile id that does not exist', async () => {
      const { a, b } = await twoDashboards();
      const e = expectInvalid(await moveTile(a.id, UNKNOWN_ID, b.id), 'tile__id');
      expect(e.code).toBe('does_not_exist');
    });

    it('a tile already moved away', async () => {
      const { a, b } = await twoDashboards();
      const moving = insightTileOf(a);
      ok(await moveTile(a.id, moving.id, b.id));
      const e = expectInvalid(await moveTile(a.id, moving.id, b.id), 'tile__id');
      expect(e.code).toBe('does_not_exist');
      expect((await tileRow(moving.id)).dashboard_id).toBe(b.id);
    });

    it('a deleted tile of the source dashboard', async () => {
      const { a, b } = await twoDashboards();
      const gone = insightTileOf(a);
      await markTileDeleted(gone.id);
      const e = expectInvalid(await moveTile(a.id, gone.id, b.id), 'tile__id');
      expect(e.code).toBe('does_not_exist');
      expect((await tileRow(gone.id)).dashboard_id).toBe(a.id);
      expect(tileIds(await dashboard(b.id))).toEqual(tileIds(b));
    });

    it('a tile of a dashboard in another project', async () => {
      const { a, b } = await twoDashboards();
      const elsewhere = await create(template(), { project: Q });
      const foreign = insightTileOf(elsewhere);
      const e = expectInvalid(await moveTile(a.id, foreign.id, b.id), 'tile__id');
      expect(e.code).toBe('does_not_exist');
      expect((await tileRow(foreign.id)).dashboard_id).toBe(elsewhere.id);
    });
  });

  describe('a missing field answers 400 required with its attr', () => {
    it('without tile: attr tile', async () => {
      const { a, b } = await twoDashboards();
      expectError(await moveTileRaw(a.id, { toDashboard: b.id }), 400, required('tile'));
    });

    it('tile without id: attr tile__id', async () => {
      const { a, b } = await twoDashboards();
      expectError(await moveTileRaw(a.id, { tile: {}, toDashboard: b.id }), 400, required('tile__id'));
    });

    it('tile without id but with other tile fields: attr tile__id', async () => {
      const { a, b } = await twoDashboards();
      const { id: _id, ...rest } = insightTileOf(a);
      expectError(await moveTileRaw(a.id, { tile: rest, toDashboard: b.id }), 400, required('tile__id'));
    });

    it('without toDashboard: attr toDashboard', async () => {
      const { a } = await twoDashboards();
      expectError(await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id } }), 400, required('toDashboard'));
      expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
    });

    it('an empty body: required', async () => {
      const { a } = await twoDashboards();
      const e = expectInvalid(await moveTileRaw(a.id, {}), expect.stringMatching(/^(tile|toDashboard)$/) as unknown as string);
      expect(e.code).toBe('required');
    });
  });

  describe('a field of the wrong type answers 400 with its attr', () => {
    it('tile.id a string: attr tile__id', async () => {
      const { a, b } = await twoDashboards();
      expectInvalid(await moveTileRaw(a.id, { tile: { id: 'first' }, toDashboard: b.id }), 'tile__id');
    });

    it('tile a number: attr tile', async () => {
      const { a, b } = await twoDashboards();
      expectInvalid(await moveTileRaw(a.id, { tile: insightTileOf(a).id, toDashboard: b.id }), 'tile');
    });

    it('toDashboard a string that is not a number: attr toDashboard', async () => {
      const { a } = await twoDashboards();
      expectInvalid(await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, toDashboard: 'B' }), 'toDashboard');
    });

    it('toDashboard null: attr toDashboard', async () => {
      const { a } = await twoDashboards();
      expectInvalid(await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, toDashboard: null }), 'toDashboard');
      expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
    });
  });

  describe('a target dashboard outside this project answers 404 (as PostHog’s tests expect) and moves nothing', () => {
    async function expectTargetRefused(a: Dashboard, toDashboard: number): Promise<void> {
      const moving = insightTileOf(a);
      const res = await moveTile(a.id, moving.id, toDashboard);
      expect(res.status).toBe(404);
      expect(res.error).toEqual({
        type: 'invalid_request',
        code: 'not_found',
        detail: `Dashboard ${toDashboard} does not exist in this project.`,
        attr: null,
      });
      expect((await tileRow(moving.id)).dashboard_id).toBe(a.id);
      expect(await dashboard(a.id)).toEqual(a);
    }

    it('an unknown dashboard', async () => {
      const { a } = await twoDashboards();
      await expectTargetRefused(a, UNKNOWN_ID);
    });

    it('a deleted dashboard', async () => {
      const { a, b } = await twoDashboards();
      await markDashboardDeleted(b.id);
      await expectTargetRefused(a, b.id);
      const tiles = await t.store.db.selectFrom('dashboard_tiles').select(['id']).where('dashboard_id', '=', b.id).execute();
      expect(tiles.map((x) => x.id)).toEqual(tileIds(b));
    });

    it('a dashboard of another project of the same organization (the caller can access both)', async () => {
      const { a } = await twoDashboards();
      const inQ = await create(template(), { project: Q });
      await expectTargetRefused(a, inQ.id);
      expect(await dashboard(inQ.id, Q)).toEqual(inQ);
    });

    it('a dashboard of another organization', async () => {
      const { a } = await twoDashboards();
      const other = await t.otherOrganization();
      const theirs = await create(template(), { project: other.team.id, key: other.key });
      await expectTargetRefused(a, theirs.id);
      expect(ok(await retrieve(other.team.id, theirs.id, other.key))).toEqual(theirs);
    });

    it('toDashboard 0 or negative', async () => {
      const { a } = await twoDashboards();
      const zero = await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, toDashboard: 0 });
      expectInvalid(zero, 'toDashboard');
      const negative = await moveTileRaw(a.id, { tile: { id: insightTileOf(a).id }, toDashboard: -3 });
      expectInvalid(negative, 'toDashboard');
      expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
    });
  });

  describe('a source dashboard outside this project answers 404 and moves nothing', () => {
    it('an unknown dashboard', async () => {
      const { b } = await twoDashboards();
      expectError(await moveTile(UNKNOWN_ID, insightTileOf(b).id, b.id), 404, NOT_FOUND);
    });

    it('a deleted dashboard', async () => {
      const { a, b } = await twoDashboards();
      await markDashboardDeleted(a.id);
      expectError(await moveTile(a.id, insightTileOf(a).id, b.id), 404, NOT_FOUND);
      expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
      expect(tileIds(await dashboard(b.id))).toEqual(tileIds(b));
    });

    it('a dashboard of another project of the same organization, even towards a dashboard of that project', async () => {
      const inQ = await twoDashboards(Q);
      expectError(await moveTile(inQ.a.id, insightTileOf(inQ.a).id, inQ.b.id, { project: P }), 404, NOT_FOUND);
      expect(await dashboard(inQ.a.id, Q)).toEqual(inQ.a);
      // through its own project it works
      ok(await moveTile(inQ.a.id, insightTileOf(inQ.a).id, inQ.b.id, { project: Q }));
    });

    it('a dashboard of another organization through this project', async () => {
      const other = await t.otherOrganization();
      const theirs = await twoDashboards(other.team.id, other.key);
      expectError(await moveTile(theirs.a.id, insightTileOf(theirs.a).id, theirs.b.id), 404, NOT_FOUND);
      expect((await tileRow(insightTileOf(theirs.a).id)).dashboard_id).toBe(theirs.a.id);
    });

    it('a dashboard id that is not an integer', async () => {
      const { b } = await twoDashboards();
      expectError(await moveTileRaw('first', { tile: { id: insightTileOf(b).id }, toDashboard: b.id }), 404, NOT_FOUND);
      expectError(await moveTileRaw('1.5', { tile: { id: insightTileOf(b).id }, toDashboard: b.id }), 404, NOT_FOUND);
    });

    it('a dashboard id 0', async () => {
      const { b } = await twoDashboards();
      expectError(await moveTileRaw(0, { tile: { id: insightTileOf(b).id }, toDashboard: b.id }), 404, NOT_FOUND);
    });
  });

  describe('a dashboard restricted to its collaborators (restriction_level 37)', () => {
    /** A restricted dashboard R created by the bootstrap owner, and an open dashboard O. */
    async function restricted(): Promise<{ r: Dashboard; o: Dashboard }> {
      const r = await create(
        template({ template_name: 'Restricted', tiles: [insightTile({ layouts: layoutAt(0) }), textTile({ layouts: layoutAt(5) })] }),
        {
          extra: { restriction_level: 37 },
        },
      );
      const o = await create(template({ template_name: 'Open', tiles: [insightTile({ layouts: layoutAt(0, 6) })] }));
      expect(r.restriction_level).toBe(37);
      return { r, o };
    }

    it('an organization member who did not create it cannot move a tile from it: 403, nothing moved', async () => {
      const { r, o } = await restricted();
      const member = await caller(ORG_MEMBER);
      expectError(await moveTile(r.id, insightTileOf(r).id, o.id, { key: member.key }), 403, NO_EDIT);
      expect((await tileRow(insightTileOf(r).id)).dashboard_id).toBe(r.id);
      expect(await dashboard(o.id)).toEqual(o);
    });

    it('an organization member who did not create it cannot move a tile onto it: 403, nothing moved', async () => {
      const { r, o } = await restricted();
      const member = await caller(ORG_MEMBER);
      expectError(await moveTile(o.id, insightTileOf(o).id, r.id, { key: member.key }), 403, NO_EDIT);
      expect((await tileRow(insightTileOf(o).id)).dashboard_id).toBe(o.id);
      expect(await dashboard(r.id)).toEqual(r);
    });

    it('an organization member can still read it, with effective_privilege_level 21', async () => {
      const { r } = await restricted();
      const member = await caller(ORG_MEMBER, ['dashboard:read']);
      const seen = ok(await retrieve(P, r.id, member.key));
      expect(seen).toMatchObject({ id: r.id, restriction_level: 37, effective_restriction_level: 37, effective_privilege_level: 21 });
      expect(seen.tiles).toEqual(r.tiles);
    });

    it('an organization admin can move a tile from it and back', async () => {
      const { r, o } = await restricted();
      const admin = await caller(ORG_ADMIN);
      expect(ok(await retrieve(P, r.id, admin.key)).effective_privilege_level).toBe(37);
      const moved = ok(await moveTile(r.id, insightTileOf(r).id, o.id, { key: admin.key }));
      expect(tileIds(moved)).toEqual([textTileOf(r).id]);
      expect(moved.effective_privilege_level).toBe(37);
      ok(await moveTile(o.id, insightTileOf(r).id, r.id, { key: admin.key }));
      expect(tileIds(await dashboard(r.id))).toEqual(tileIds(r));
    });

    it('the organization owner (its creator here) can move a tile from it', async () => {
      const { r, o } = await restricted();
      ok(await moveTile(r.id, insightTileOf(r).id, o.id));
      expect((await tileRow(insightTileOf(r).id)).dashboard_id).toBe(o.id);
    });

    it('a member who created it can move its tiles; another member cannot', async () => {
      const creator = await caller(ORG_MEMBER);
      const r = await create(template({ template_name: 'Mine only' }), { key: creator.key, extra: { restriction_level: 37 } });
      const o = await create(template({ template_name: 'Open' }), { key: creator.key });
      const someoneElse = await caller(ORG_MEMBER);
      expectError(await moveTile(r.id, insightTileOf(r).id, o.id, { key: someoneElse.key }), 403, NO_EDIT);
      expect(ok(await retrieve(P, r.id, someoneElse.key)).effective_privilege_level).toBe(21);
      const moved = ok(await moveTile(r.id, insightTileOf(r).id, o.id, { key: creator.key }));
      expect(moved.effective_privilege_level).toBe(37);
      expect((await tileRow(insightTileOf(r).id)).dashboard_id).toBe(o.id);
    });

    it('in a private project, a member who is an explicit project admin can move its tiles; an explicit project member cannot', async () => {
      const project = (
        await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Private dashboards', access_control: true })
      ).id;
      const r = await create(template({ template_name: 'Restricted, private' }), { project, extra: { restriction_level: 37 } });
      const o = await create(template({ template_name: 'Open, private' }), { project });
      const explicit = new ExplicitMembersRepository(t.store.db);
      const plant = async (user: User, level: number) => {
        const membership = await t.accounts.findMembership(t.boot.organization.id, user.id);
        if (!membership) throw new Error('not a member');
        await explicit.create({ team_id: project, parent_membership_id: membership.id, level });
      };
      const projectMember = await caller(ORG_MEMBER);
      await plant(projectMember.user, 1);
      const projectAdmin = await caller(ORG_MEMBER);
      await plant(projectAdmin.user, 8);
      expectError(await moveTile(r.id, insightTileOf(r).id, o.id, { key: projectMember.key, project }), 403, NO_EDIT);
      expect((await tileRow(insightTileOf(r).id)).dashboard_id).toBe(r.id);
      const moved = ok(await moveTile(r.id, insightTileOf(r).id, o.id, { key: projectAdmin.key, project }));
      expect(tileIds(moved)).toEqual([textTileOf(r).id]);
      expect((await tileRow(insightTileOf(r).id)).dashboard_id).toBe(o.id);
    });

    it('a 403 for the permission comes after the 404 of an unknown source dashboard', async () => {
      const member = await caller(ORG_MEMBER);
      const { r } = await restricted();
      expectError(await moveTile(UNKNOWN_ID, insightTileOf(r).id, r.id, { key: member.key }), 404, NOT_FOUND);
    });
  });
});

// =================================================================================================
// list and retrieve
// =================================================================================================

describe('GET /api/environments/{project_id}/dashboards/', () => {
  /** A fresh project with `n` dashboards (ids ascending). */
  async function projectWith(n: number): Promise<{ project: number; ids: number[] }> {
    const project = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: `List ${n}` })).id;
    const ids: number[] = [];
    for (let i = 0; i < n; i += 1) ids.push((await create(template({ template_name: `Dashboard ${i}` }), { project })).id);
    return { project, ids };
  }

  it('answers {count, next, previous, results} with every dashboard of the project, without tiles', async () => {
    const { project, ids } = await projectWith(3);
    const page = ok(await listDashboards(project));
    expect(Object.keys(page).sort()).toEqual(['count', 'next', 'previous', 'results']);
    expect(page.count).toBe(3);
    expect(page.next).toBeNull();
    expect(page.previous).toBeNull();
    // oldest first
    expect(page.results.map((d) => d.id)).toEqual(ids);
    for (const item of page.results) {
      expect(item).not.toHaveProperty('tiles');
      const full = await dashboard(item.id, project);
      const { tiles: _tiles, ...withoutTiles } = full;
      expect(item).toEqual(withoutTiles);
    }
  });

  it('an empty project answers count 0 and results []', async () => {
    const { project } = await projectWith(0);
    expect(ok(await listDashboards(project))).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('hides deleted dashboards (count and results)', async () => {
    const { project, ids } = await projectWith(4);
    await markDashboardDeleted(ids[1] as number);
    const page = ok(await listDashboards(project));
    expect(page.count).toBe(3);
    expect(page.results.map((d) => d.id).sort((m, n) => m - n)).toEqual(ids.filter((id) => id !== ids[1]));
    expect(page.results.every((d) => d.deleted === false)).toBe(true);
  });

  it('pages with limit/offset: absolute next/previous links that keep the other parameters; the pages cover every dashboard once', async () => {
    const { project, ids } = await projectWith(5);
    await markDashboardDeleted(ids[4] as number);
    const base = `${t.url}/api/environments/${project}/dashboards/`;

    const first = ok(await listRaw(project, 'limit=2&foo=bar'));
    expect(first.count).toBe(4);
    expect(first.results).toHaveLength(2);
    expect(first.previous).toBeNull();
    const next = new URL(first.next ?? '');
    expect(`${next.origin}${next.pathname}`).toBe(base);
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('offset')).toBe('2');
    expect(next.searchParams.get('foo')).toBe('bar');

    const second = ok(await rawAnswer<DashboardPage>(await t.fetch(next.pathname + next.search)));
    expect(second.count).toBe(4);
    expect(second.results).toHaveLength(2);
    expect(second.next).toBeNull();
    const previous = new URL(second.previous ?? '');
    expect(`${previous.origin}${previous.pathname}`).toBe(base);
    expect(previous.searchParams.get('limit')).toBe('2');
    expect(['0', null]).toContain(previous.searchParams.get('offset'));
    expect(previous.searchParams.get('foo')).toBe('bar');

    const seen = [...first.results, ...second.results].map((d) => d.id).sort((m, n) => m - n);
    expect(seen).toEqual(ids.slice(0, 4));

    const middle = ok(await listDashboards(project, { limit: 1, offset: 2 }));
    expect(middle.results).toHaveLength(1);
    expect(new URL(middle.next ?? '').searchParams.get('offset')).toBe('3');
    expect(new URL(middle.previous ?? '').searchParams.get('offset')).toBe('1');

    const beyond = ok(await listDashboards(project, { offset: 10 }));
    expect(beyond.count).toBe(4);
    expect(beyond.results).toEqual([]);
    expect(beyond.next).toBeNull();
  });

  it('the same order on every request, so pages do not overlap', async () => {
    const { project } = await projectWith(6);
    const all = ok(await listDashboards(project)).results.map((d) => d.id);
    const paged: number[] = [];
    for (let offset = 0; offset < 6; offset += 2)
      paged.push(...ok(await listDashboards(project, { limit: 2, offset })).results.map((d) => d.id));
    expect(paged).toEqual(all);
  });

  it('a limit or offset that is not a valid integer answers 400', async () => {
    const { project } = await projectWith(1);
    expectInvalid(await listRaw(project, 'limit=abc'), 'limit');
    expectInvalid(await listRaw(project, 'limit=0'), 'limit');
    expectInvalid(await listRaw(project, 'offset=-1'), 'offset');
    expectInvalid(await listRaw(project, 'offset=two'), 'offset');
  });

  it('shows dashboards of this project only', async () => {
    const inP = await create(template({ template_name: 'Only in P' }));
    const inQ = await create(template({ template_name: 'Only in Q' }), { project: Q });
    const listedP = ok(await listDashboards(P, { limit: 10000 })).results.map((d) => d.id);
    const listedQ = ok(await listDashboards(Q, { limit: 10000 })).results.map((d) => d.id);
    expect(listedP).toContain(inP.id);
    expect(listedP).not.toContain(inQ.id);
    expect(listedQ).toContain(inQ.id);
    expect(listedQ).not.toContain(inP.id);
  });

  it('another organization sees none of ours, and we cannot list theirs (403)', async () => {
    const ours = await create(template());
    const other = await t.otherOrganization();
    const theirs = await create(template({ template_name: 'Theirs' }), { project: other.team.id, key: other.key });
    const page = ok(await listDashboards(other.team.id, {}, other.key));
    expect(page.results.map((d) => d.id)).toEqual([theirs.id]);
    expect(page.results.map((d) => d.id)).not.toContain(ours.id);
    expectError(await listDashboards(other.team.id), 403, NO_PROJECT_ACCESS);
    expectError(await listDashboards(P, {}, other.key), 403, NO_PROJECT_ACCESS);
  });

  it('an unknown project answers 404 "Project not found."', async () => {
    expectError(await listDashboards(99999), 404, PROJECT_NOT_FOUND);
  });
});

describe('GET /api/environments/{project_id}/dashboards/{id}/', () => {
  it('answers the dashboard with its tiles', async () => {
    const d = await create();
    const got = await dashboard(d.id);
    expect(got).toEqual(d);
    expect(got.tiles).toHaveLength(2);
  });

  it('does not show a deleted tile', async () => {
    const d = await create();
    await markTileDeleted(insightTileOf(d).id);
    const got = await dashboard(d.id);
    expect(got.tiles.map((x) => x.id)).toEqual([textTileOf(d).id]);
    expect(got.tiles[0]?.order).toBe(0);
  });

  it('an unknown dashboard answers 404', async () => {
    expectError(await retrieve(P, UNKNOWN_ID), 404, NOT_FOUND);
  });

  it('a deleted dashboard answers 404', async () => {
    const d = await create();
    await markDashboardDeleted(d.id);
    expectError(await retrieve(P, d.id), 404, NOT_FOUND);
  });

  it('a dashboard of another project of the same organization answers 404 through this project', async () => {
    const inQ = await create(template(), { project: Q });
    expectError(await retrieve(P, inQ.id), 404, NOT_FOUND);
    expect(await dashboard(inQ.id, Q)).toEqual(inQ);
  });

  it('a dashboard of another organization answers 404 through this project, 403 through theirs', async () => {
    const other = await t.otherOrganization();
    const theirs = await create(template(), { project: other.team.id, key: other.key });
    expectError(await retrieve(P, theirs.id), 404, NOT_FOUND);
    expectError(await retrieve(other.team.id, theirs.id), 403, NO_PROJECT_ACCESS);
    expect(ok(await retrieve(other.team.id, theirs.id, other.key))).toEqual(theirs);
  });

  it('an id that is not an integer answers 404', async () => {
    expectError(await retrieveRaw(P, 'abc'), 404, NOT_FOUND);
    expectError(await retrieveRaw(P, '12abc'), 404, NOT_FOUND);
    expectError(await retrieveRaw(P, '1.5'), 404, NOT_FOUND);
    expectError(await retrieveRaw(P, 0), 404, NOT_FOUND);
  });

  it('works without the trailing slash', async () => {
    const d = await create();
    const res = await t.fetch(`/api/environments/${P}/dashboards/${d.id}?refresh=force_cache`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(d);
  });
});

// =================================================================================================
// scopes and keys
// =================================================================================================

describe('scopes and keys on the dashboards operations', () => {
  it('a dashboard:read key lists and retrieves', async () => {
    const d = await create();
    const key = await t.key(['dashboard:read']);
    expect(ok(await listDashboards(P, { limit: 1000 }, key)).results.map((x) => x.id)).toContain(d.id);
    expect(ok(await retrieve(P, d.id, key))).toEqual(d);
  });

  it('a dashboard:read key cannot create from a template: 403 missing dashboard:write, nothing created', async () => {
    const key = await t.key(['dashboard:read']);
    expectError(await createsNothing(() => fromTemplate({ template: template() }, { key })), 403, missingScope('dashboard:write'));
  });

  it('a dashboard:read key cannot move a tile: 403 missing dashboard:write, nothing moved', async () => {
    const { a, b } = await twoDashboards();
    const key = await t.key(['dashboard:read']);
    expectError(await moveTile(a.id, insightTileOf(a).id, b.id, { key }), 403, missingScope('dashboard:write'));
    expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
  });

  it('the scope check comes before the body check (an invalid template with a read key answers 403)', async () => {
    const key = await t.key(['dashboard:read']);
    expectError(await fromTemplateRaw({}, { key }), 403, missingScope('dashboard:write'));
  });

  it('a dashboard:write key does everything (write includes read)', async () => {
    const key = await t.key(['dashboard:write']);
    const { a, b } = await twoDashboards(P, key);
    ok(await moveTile(a.id, insightTileOf(a).id, b.id, { key }));
    expect(ok(await retrieve(P, b.id, key)).tiles).toHaveLength(2);
    expect(ok(await listDashboards(P, {}, key)).count).toBeGreaterThan(0);
  });

  it('a * key does everything', async () => {
    const key = await t.key(['*']);
    const { a, b } = await twoDashboards(P, key);
    ok(await moveTile(a.id, insightTileOf(a).id, b.id, { key }));
    ok(await retrieve(P, a.id, key));
    ok(await listDashboards(P, {}, key));
  });

  it('a key without dashboard scopes gets 403 on each operation, naming the scope', async () => {
    const { a, b } = await twoDashboards();
    const key = await t.key(['plugin:write', 'insight:write']);
    expectError(await listDashboards(P, {}, key), 403, missingScope('dashboard:read'));
    expectError(await retrieve(P, a.id, key), 403, missingScope('dashboard:read'));
    expectError(await fromTemplate({ template: template() }, { key }), 403, missingScope('dashboard:write'));
    expectError(await moveTile(a.id, insightTileOf(a).id, b.id, { key }), 403, missingScope('dashboard:write'));
  });

  it('a key limited to another project gets 403 naming this project', async () => {
    const { a, b } = await twoDashboards();
    const key = await t.key(['*'], { projects: [Q] });
    const refused = forbidden(`API key does not have access to the requested project: ID ${P}.`);
    expectError(await listDashboards(P, {}, key), 403, refused);
    expectError(await retrieve(P, a.id, key), 403, refused);
    expectError(await createsNothing(() => fromTemplate({ template: template() }, { key })), 403, refused);
    expectError(await moveTile(a.id, insightTileOf(a).id, b.id, { key }), 403, refused);
    // and works on its own project
    ok(await fromTemplate({ template: template() }, { key, project: Q }));
  });

  it('without a key every operation answers 401', async () => {
    const { a, b } = await twoDashboards();
    const notAuthenticated: ErrorBody = NOT_AUTHENTICATED;
    expectError(await listRaw(P, '', null), 401, notAuthenticated);
    expectError(await retrieveRaw(P, a.id, null), 401, notAuthenticated);
    const post = await t.fetch(`/api/environments/${P}/dashboards/create_from_template_json/`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ template: template() }),
      key: null,
    });
    expectError(await rawAnswer(post), 401, notAuthenticated);
    const patch = await t.fetch(`/api/environments/${P}/dashboards/${a.id}/move_tile/`, {
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: JSON.stringify({ tile: { id: insightTileOf(a).id }, toDashboard: b.id }),
      key: null,
    });
    expectError(await rawAnswer(patch), 401, notAuthenticated);
  });

  it('a member of another organization (key with *) cannot create or move in this project: 403', async () => {
    const { a, b } = await twoDashboards();
    const other = await t.otherOrganization();
    expectError(await createsNothing(() => fromTemplate({ template: template() }, { key: other.key })), 403, NO_PROJECT_ACCESS);
    expectError(await moveTile(a.id, insightTileOf(a).id, b.id, { key: other.key }), 403, NO_PROJECT_ACCESS);
    expect((await tileRow(insightTileOf(a).id)).dashboard_id).toBe(a.id);
  });
});
