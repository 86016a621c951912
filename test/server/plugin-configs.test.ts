/**
 * The `plugin_configs` operations (1–10) through the real HTTP stack: a server on port 0 with
 * response validation on, driven by the project's typed client (`t.client`) and, for non-JSON
 * answers, missing slashes and malformed bodies, by raw fetch (`t.fetch`). Each assertion follows
 * the operation's description in openapi.yaml (and PostHog's behaviour where it is silent).
 *
 * Projects other than 1 are created where a test needs a known set of configs (lists, rearrange),
 * so the tests do not depend on each other's leftovers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  type ErrorBody,
  invalid,
  INVALID_KEY,
  missingScope,
  NO_PROJECT_ACCESS,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  PROJECT_NOT_FOUND,
  projectNotAllowed,
  required,
} from '../helpers/errors.js';
import { paginate, unwrap, type components } from '../../client/index.js';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import { ANSWER_READS } from '../../server/domain/plugin-configs.js';
import { installCatalogPlugin } from '../../server/bootstrap.js';
import { OrganizationLevel, type User } from '../../server/storage/repositories/accounts.js';

type PluginConfig = components['schemas']['PluginConfig'];
type PluginConfigRequest = components['schemas']['PluginConfigRequest'];
type PatchedPluginConfig = components['schemas']['PatchedPluginConfig'];
type ActivityLogPage = components['schemas']['ActivityLogPage'];
type PaginatedPluginConfigList = components['schemas']['PaginatedPluginConfigList'];

const SECRET = '**************** POSTHOG SECRET FIELD ****************';
const NO_FRONTEND = 'export function getFrontendApp () { return {"no_frontend": true} }';
/** 400 invalid_input on no field: the job's answer for a plugin or payload it refuses. */
const jobError = (detail: string): ErrorBody => invalid(detail);

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const FRONTEND_APPS = '/api/environments/{project_id}/pipeline_frontend_apps_configs/';
const FRONTEND_APP = '/api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/';
const DESTINATION = '/api/environments/{project_id}/pipeline_destination_configs/{id}/';
const REARRANGE = '/api/environments/{project_id}/pipeline_destination_configs/rearrange/';
const ACTIVITY = '/api/environments/{project_id}/pipeline_destination_configs/{id}/activity/';
const JOB = '/api/environments/{project_id}/pipeline_destination_configs/{id}/job/';
const MIGRATE = '/api/environments/{project_id}/pipeline_destination_configs/{id}/migrate/';

const EXPORT_JOB = 'Export historical events V2';

type CatalogKey =
  'customerio' | 'hubspot' | 'webhook' | 'geoip' | 'property-filter' | 'notification-bar' | 'pineapple-mode' | 'github-star-sync';

let t: TestServer;
/** plugin id by catalog key, looked up by url in what bootstrap installed */
const plugin = {} as Record<CatalogKey, number>;
/** a project of the bootstrap organization besides project 1 */
let projectB: number;

beforeAll(async () => {
  t = await startTestServer();
  for (const entry of PLUGIN_CATALOG) {
    const installed = t.boot.plugins.find((p) => p.url === entry.url);
    if (!installed) throw new Error(`catalog plugin ${entry.url} not installed by bootstrap`);
    plugin[entry.key as CatalogKey] = installed.id;
  }
  projectB = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'B' })).id;
});

afterAll(async () => {
  await t.close();
});

// ------------------------------------------------------------------------------------------ helpers

async function newProject(name: string): Promise<number> {
  return (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name })).id;
}

/** Creates a config through POST pipeline_frontend_apps_configs (any kind, as PostHog allows). */
async function create(body: PluginConfigRequest, project: number = 1): Promise<PluginConfig> {
  return unwrap(t.client.POST(FRONTEND_APPS, { params: { path: { project_id: String(project) } }, body }));
}

async function patch(id: number, body: PatchedPluginConfig, project: number = 1): Promise<PluginConfig> {
  return unwrap(t.client.PATCH(DESTINATION, { params: { path: { project_id: String(project), id } }, body }));
}

async function remove(id: number, project: number = 1): Promise<void> {
  await unwrap(t.client.DELETE(DESTINATION, { params: { path: { project_id: String(project), id } } }));
}

async function activity(id: number, query: { page?: number; limit?: number } = {}, project: number = 1): Promise<ActivityLogPage> {
  return unwrap(t.client.GET(ACTIVITY, { params: { path: { project_id: String(project), id }, query } }));
}

async function list(project: number, query: { limit?: number; offset?: number } = {}): Promise<PaginatedPluginConfigList> {
  return unwrap(t.client.GET(FRONTEND_APPS, { params: { path: { project_id: String(project) }, query } }));
}

/** A raw JSON request: status, parsed body (or null), headers. */
async function raw(
  method: string,
  path: string,
  opts: { body?: unknown; rawBody?: string; key?: string | null } = {},
): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
  const init: RequestInit & { key?: string | null } = { method };
  if (opts.key !== undefined) init.key = opts.key;
  if (opts.rawBody !== undefined || opts.body !== undefined) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = opts.rawBody ?? JSON.stringify(opts.body);
  }
  const res = await t.fetch(path, init);
  const text = await res.text();
  let body: unknown = null;
  if (text && (res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: res.status, body, text, headers: res.headers };
}

interface StoredConfig {
  id: number;
  team_id: number;
  plugin_id: number;
  enabled: boolean;
  deleted: boolean;
  order: number;
  config: Record<string, unknown>;
  name: string | null;
}

/** The config row as stored (secrets in clear), read directly through Kysely. */
async function stored(id: number): Promise<StoredConfig> {
  const r = await t.store.db.selectFrom('plugin_configs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    id: r.id,
    team_id: r.team_id,
    plugin_id: r.plugin_id,
    enabled: r.enabled === true || r.enabled === 1,
    deleted: r.deleted === true || r.deleted === 1,
    order: r.order,
    config: (typeof r.config === 'string' ? JSON.parse(r.config) : r.config) as Record<string, unknown>,
    name: r.name,
  };
}

async function jobCount(): Promise<number> {
  const r = await t.store.db
    .selectFrom('plugin_config_jobs')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function activityRows(scope: string, itemId: string) {
  return t.store.db.selectFrom('activity_log').selectAll().where('scope', '=', scope).where('item_id', '=', itemId).orderBy('id').execute();
}

/** A new member of the bootstrap organization with a key of these scopes. */
async function memberWithKey(scopes: string[], opts: { staff?: boolean; level?: number } = {}): Promise<{ user: User; key: string }> {
  const user = await t.accounts.createUser({
    email: `member-${Math.random().toString(36).slice(2)}@hedgebox.net`,
    first_name: opts.staff ? 'Staffer' : 'Member',
    is_staff: opts.staff ?? false,
  });
  await t.accounts.upsertMembership(t.boot.organization.id, user.id, opts.level ?? OrganizationLevel.MEMBER);
  return { user, key: await t.key(scopes, { user }) };
}

function customerioConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerioSiteId: 'site-7d2f0a9c',
    customerioToken: 'tok-s3cr3t',
    host: 'track.customer.io',
    identifyByEmail: 'No',
    ...overrides,
  };
}

// ------------------------------------------------------------------------------------------ list

describe('GET /api/environments/{project_id}/pipeline_frontend_apps_configs/', () => {
  let project: number;
  /** expected non-deleted frontend app configs, in list order */
  let expected: number[];

  beforeAll(async () => {
    project = await newProject('List project');
    const nb = plugin['notification-bar'];
    const pm = plugin['pineapple-mode'];
    const f1 = await create({ plugin: nb, order: 3, enabled: true, config: { position: 'sticky' } }, project);
    const f2 = await create({ plugin: pm, order: 1, enabled: true }, project);
    const f3 = await create({ plugin: nb, order: 1 }, project);
    const f4 = await create({ plugin: pm, order: 0, enabled: true }, project);
    const f5 = await create({ plugin: nb, order: 2, enabled: true }, project);
    await remove(f5.id, project);
    await create({ plugin: nb, order: 5, deleted: true }, project);
    const f7 = await create({ plugin: pm, order: 1 }, project);
    // configs of every other kind, with orders that would sort them first
    for (const key of ['customerio', 'hubspot', 'webhook', 'geoip', 'property-filter', 'github-star-sync'] as const) {
      await create({ plugin: plugin[key], order: -1, enabled: true }, project);
    }
    // a frontend app config of another project
    await create({ plugin: nb, order: 0 }, projectB);
    expect(nb).toBeLessThan(pm);
    expected = [f4.id, f3.id, f2.id, f7.id, f1.id];
  });

  it('when the project has configs of every kind, answers only its non-deleted frontend app configs ordered by order, plugin id, then id', async () => {
    const page = await list(project);
    expect(page.count).toBe(5);
    expect(page.next).toBeNull();
    expect(page.previous).toBeNull();
    expect(page.results.map((c) => c.id)).toEqual(expected);
    for (const c of page.results) {
      expect([plugin['notification-bar'], plugin['pineapple-mode']]).toContain(c.plugin);
      expect(c.team_id).toBe(project);
      expect(c.deleted).toBe(false);
    }
  });

  it('when listing, answers plugin_info, delivery_rate_24h and error as null and falls back to the plugin name and description', async () => {
    const page = await list(project);
    for (const c of page.results) {
      expect(c.plugin_info).toBeNull();
      expect(c.delivery_rate_24h).toBeNull();
      expect(c.error).toBeNull();
      expect(c.created_at).toMatch(ISO_UTC);
      expect(c.updated_at).toMatch(ISO_UTC);
      const entry = PLUGIN_CATALOG.find((p) => plugin[p.key as CatalogKey] === c.plugin);
      expect(c.name).toBe(entry?.name);
      expect(c.description).toBe(entry?.description);
    }
  });

  it('when limit=2, answers the first page with an absolute next URL keeping the other query parameters', async () => {
    const res = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs/?limit=2&foo=bar`);
    expect(res.status).toBe(200);
    const page = res.body as PaginatedPluginConfigList;
    expect(page.count).toBe(5);
    expect(page.results.map((c) => c.id)).toEqual(expected.slice(0, 2));
    expect(page.previous).toBeNull();
    expect(page.next).not.toBeNull();
    const next = new URL(page.next ?? '');
    expect(`${next.origin}${next.pathname}`).toBe(`${t.url}/api/environments/${project}/pipeline_frontend_apps_configs/`);
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('offset')).toBe('2');
    expect(next.searchParams.get('foo')).toBe('bar');
  });

  it('when on a middle page, answers next and previous links with offset moved by limit (no offset on the way back to the start)', async () => {
    const res = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs/?limit=2&offset=2&foo=bar`);
    const page = res.body as PaginatedPluginConfigList;
    expect(page.results.map((c) => c.id)).toEqual(expected.slice(2, 4));
    const next = new URL(page.next ?? '');
    expect(next.searchParams.get('offset')).toBe('4');
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('foo')).toBe('bar');
    const previous = new URL(page.previous ?? '');
    expect(`${previous.origin}${previous.pathname}`).toBe(`${t.url}/api/environments/${project}/pipeline_frontend_apps_configs/`);
    expect(previous.searchParams.get('limit')).toBe('2');
    expect(['0', null]).toContain(previous.searchParams.get('offset'));
    expect(previous.searchParams.get('foo')).toBe('bar');
  });

  it('when on the last page, answers next null and a previous link', async () => {
    const page = await list(project, { limit: 2, offset: 4 });
    expect(page.count).toBe(5);
    expect(page.results.map((c) => c.id)).toEqual(expected.slice(4));
    expect(page.next).toBeNull();
    expect(new URL(page.previous ?? '').searchParams.get('offset')).toBe('2');
  });

  it('when offset is past the end, answers empty results with the full count', async () => {
    const page = await list(project, { limit: 2, offset: 50 });
    expect(page.count).toBe(5);
    expect(page.results).toEqual([]);
    expect(page.next).toBeNull();
  });

  it('when following next links with paginate, answers every config exactly once for any page size', async () => {
    for (const limit of [1, 2, 3, 4, 5, 6]) {
      const first = await list(project, { limit });
      const seen: number[] = [];
      for await (const c of paginate(t.client, first)) seen.push(c.id);
      expect(seen, `limit=${limit}`).toEqual(expected);
    }
  });

  it('when limit is larger than 100, answers every config (no upper cap)', async () => {
    const page = await list(project, { limit: 1000 });
    expect(page.results.map((c) => c.id)).toEqual(expected);
  });

  it('when limit=0, answers 400 min_value with attr limit', async () => {
    const { response, error } = await t.client.GET(FRONTEND_APPS, {
      params: { path: { project_id: String(project) }, query: { limit: 0 } },
    });
    expect(response.status).toBe(400);
    expect(error).toEqual({
      type: 'validation_error',
      code: 'min_value',
      detail: 'Ensure this value is greater than or equal to 1.',
      attr: 'limit',
    });
  });

  it('when limit or offset is not a valid integer, answers 400 with attr naming the parameter', async () => {
    const bad = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs/?limit=abc`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'validation_error', attr: 'limit' });
    const huge = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs/?limit=2147483648`);
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ type: 'validation_error', code: 'max_value', attr: 'limit' });
    const negative = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs/?offset=-1`);
    expect(negative.status).toBe(400);
    expect(negative.body).toMatchObject({ type: 'validation_error', code: 'min_value', attr: 'offset' });
  });

  it('when the path has no trailing slash, answers the same list', async () => {
    const res = await raw('GET', `/api/environments/${project}/pipeline_frontend_apps_configs`);
    expect(res.status).toBe(200);
    expect((res.body as PaginatedPluginConfigList).results.map((c) => c.id)).toEqual(expected);
  });

  it('when the project has no frontend app configs, answers an empty page', async () => {
    const empty = await newProject('Empty project');
    expect(await list(empty)).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('when the key has plugin:read only, answers 200 (and plugin:write also satisfies plugin:read)', async () => {
    for (const scopes of [['plugin:read'], ['plugin:write']]) {
      const client = t.clientFor(await t.key(scopes));
      const page = await unwrap(client.GET(FRONTEND_APPS, { params: { path: { project_id: String(project) } } }));
      expect(page.count).toBe(5);
    }
  });

  it('when the project does not exist or its id is malformed, answers 404 Project not found.', async () => {
    for (const projectId of ['999999', 'abc', '1.5']) {
      const res = await raw('GET', `/api/environments/${projectId}/pipeline_frontend_apps_configs/`);
      expect(res.status, projectId).toBe(404);
      expect(res.body).toEqual(PROJECT_NOT_FOUND);
    }
  });

  it("when project_id is @current, answers the configs of the key owner's current project", async () => {
    const current = await unwrap(t.client.GET(FRONTEND_APPS, { params: { path: { project_id: '@current' } } }));
    const one = await list(1);
    expect(current.count).toBe(one.count);
    for (const c of current.results) expect(c.team_id).toBe(1);
  });
});

// ------------------------------------------------------------------------------------------ create

describe('POST /api/environments/{project_id}/pipeline_frontend_apps_configs/', () => {
  it('when the plugin exists, answers 201 with the config and its plugin_info', async () => {
    const { data, response } = await t.client.POST(FRONTEND_APPS, {
      params: { path: { project_id: '1' } },
      body: { plugin: plugin['pineapple-mode'], order: 1, enabled: true, config: { domains: 'hedgebox.net', emoji: '🍍' } },
    });
    expect(response.status).toBe(201);
    const c = data as PluginConfig;
    const entry = PLUGIN_CATALOG.find((p) => p.key === 'pineapple-mode');
    expect(c).toMatchObject({
      plugin: plugin['pineapple-mode'],
      enabled: true,
      order: 1,
      config: { domains: 'hedgebox.net', emoji: '🍍' },
      error: null,
      team_id: 1,
      delivery_rate_24h: null,
      name: 'Pineapple Mode',
      description: entry?.description,
      deleted: false,
    });
    expect(typeof c.id).toBe('number');
    expect(c.created_at).toMatch(ISO_UTC);
    expect(c.updated_at).toMatch(ISO_UTC);
    expect(c.plugin_info).toMatchObject({
      id: plugin['pineapple-mode'],
      plugin_type: 'repository',
      name: 'Pineapple Mode',
      description: entry?.description,
      url: 'https://github.com/PostHog/pineapple-mode-app',
      icon: entry?.icon,
      config_schema: entry?.config_schema,
      tag: entry?.tag,
      latest_tag: entry?.latest_tag,
      organization_id: t.boot.organization.id,
      organization_name: t.boot.organization.name,
      capabilities: {},
      public_jobs: {},
      hog_function_migration_available: false,
    });
    // it is there afterwards
    const got = await unwrap(t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: c.id } } }));
    expect(got).toEqual(c);
  });

  it('when enabled, deleted and config are omitted, answers them as false, false and {}', async () => {
    const c = await create({ plugin: plugin['notification-bar'], order: 4 });
    expect(c.enabled).toBe(false);
    expect(c.deleted).toBe(false);
    expect(c.config).toEqual({});
    expect((await stored(c.id)).config).toEqual({});
  });

  it("when name and description are given, answers them; when empty or null, falls back to the plugin's", async () => {
    const named = await create({
      plugin: plugin['notification-bar'],
      order: 0,
      name: 'Launch banner',
      description: 'Shown on the 2.0 launch',
    });
    expect(named.name).toBe('Launch banner');
    expect(named.description).toBe('Shown on the 2.0 launch');
    const empty = await create({ plugin: plugin['notification-bar'], order: 0, name: '', description: null });
    expect(empty.name).toBe('Notification Bar');
    expect(empty.description).toBe(PLUGIN_CATALOG.find((p) => p.key === 'notification-bar')?.description);
  });

  it('when the config holds secret fields, answers them masked and stores them in clear', async () => {
    const c = await create({ plugin: plugin.customerio, order: 2, enabled: false, config: customerioConfig() });
    expect(c.config).toEqual({ customerioSiteId: SECRET, customerioToken: SECRET, host: 'track.customer.io', identifyByEmail: 'No' });
    expect(c.plugin_info?.hog_function_migration_available).toBe(true);
    expect((await stored(c.id)).config).toEqual(customerioConfig());
  });

  it('when the config omits some keys, stores it as sent (no keys added)', async () => {
    const config = { customerioToken: 'tok-only', host: 'track-eu.customer.io' };
    const c = await create({ plugin: plugin.customerio, order: 2, config });
    expect(c.config).toEqual({ customerioToken: SECRET, host: 'track-eu.customer.io' });
    expect((await stored(c.id)).config).toEqual(config);
  });

  it('when order is at the ends of the 32-bit range, accepts it', async () => {
    for (const order of [-2147483648, 2147483647]) {
      const c = await create({ plugin: plugin['notification-bar'], order });
      expect(c.order).toBe(order);
    }
  });

  it('when called twice for the same plugin, answers two distinct configs', async () => {
    const a = await create({ plugin: plugin['notification-bar'], order: 0 });
    const b = await create({ plugin: plugin['notification-bar'], order: 0 });
    expect(b.id).not.toBe(a.id);
  });

  it('when the plugin is a destination, creates it and it is reached through pipeline_destination_configs', async () => {
    const c = await create({ plugin: plugin.hubspot, order: 0, config: { triggeringEvents: '$identify' } });
    const updated = await patch(c.id, { order: 7 });
    expect(updated.order).toBe(7);
    const res = await t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: c.id } } });
    expect(res.response.status).toBe(404);
  });

  it('when the plugin id is unknown, answers 400 does_not_exist with attr plugin', async () => {
    const { response, error } = await t.client.POST(FRONTEND_APPS, {
      params: { path: { project_id: '1' } },
      body: { plugin: 999, order: 0 },
    });
    expect(response.status).toBe(400);
    expect(error).toEqual({
      type: 'validation_error',
      code: 'does_not_exist',
      detail: 'Invalid pk "999" - object does not exist.',
      attr: 'plugin',
    });
  });

  it('when the plugin belongs to another organization, answers 400 does_not_exist with attr plugin', async () => {
    const other = await t.otherOrganization();
    const entry = PLUGIN_CATALOG.find((p) => p.key === 'notification-bar');
    if (!entry) throw new Error('no notification-bar in catalog');
    const { plugin: foreign } = await installCatalogPlugin(t.store, other.organization.id, entry);
    const before = await t.store.db
      .selectFrom('plugin_configs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const { response, error } = await t.client.POST(FRONTEND_APPS, {
      params: { path: { project_id: '1' } },
      body: { plugin: foreign.id, order: 0 },
    });
    expect(response.status).toBe(400);
    expect(error).toEqual({
      type: 'validation_error',
      code: 'does_not_exist',
      detail: `Invalid pk "${foreign.id}" - object does not exist.`,
      attr: 'plugin',
    });
    const after = await t.store.db
      .selectFrom('plugin_configs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('when plugin or order is missing, answers 400 required with attr naming it (order: with a detail saying what to send)', async () => {
    const noPlugin = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', { body: { order: 0 } });
    expect(noPlugin.status).toBe(400);
    expect(noPlugin.body).toEqual(required('plugin'));
    // PostHog's 400 (its model's order has no default), with the x-required-detail of openapi.yaml
    for (const prefix of ['/api/environments/1/', '/api/projects/1/']) {
      const noOrder = await raw('POST', `${prefix}pipeline_frontend_apps_configs/`, { body: { plugin: plugin['notification-bar'] } });
      expect(noOrder.status).toBe(400);
      expect(noOrder.body).toEqual({
        ...required('order'),
        detail:
          'This field is required: send "order", an integer giving the config\'s position among the project\'s plugin configs (lowest first), e.g. {"plugin": 7, "order": 0}.',
      });
    }
  });

  it('when a field has the wrong type, answers 400 with attr naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ plugin: 'abc', order: 0 }, 'plugin'],
      [{ plugin: plugin['notification-bar'], order: 'first' }, 'order'],
      [{ plugin: plugin['notification-bar'], order: 1.5 }, 'order'],
      [{ plugin: plugin['notification-bar'], order: 0, enabled: 'yes' }, 'enabled'],
      [{ plugin: plugin['notification-bar'], order: 0, config: 'domains=hedgebox.net' }, 'config'],
      [{ plugin: plugin['notification-bar'], order: 0, name: 42 }, 'name'],
      [{ plugin: plugin['notification-bar'], order: 2147483648 }, 'order'],
      [{ plugin: plugin['notification-bar'], order: -2147483649 }, 'order'],
      [{ plugin: 0, order: 0 }, 'plugin'],
      [{ plugin: 2147483648, order: 0 }, 'plugin'],
      [{ plugin: null, order: 0 }, 'plugin'],
    ];
    for (const [body, attr] of cases) {
      const res = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ type: 'validation_error', attr });
    }
  });

  it('when name is longer than 400 characters, answers 400 max_length with attr name', async () => {
    const res = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', {
      body: { plugin: plugin['notification-bar'], order: 0, name: 'x'.repeat(401) },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      type: 'validation_error',
      code: 'max_length',
      detail: 'Ensure this field has no more than 400 characters.',
      attr: 'name',
    });
  });

  it('when the body holds unknown and read-only fields, ignores them', async () => {
    const res = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', {
      body: {
        plugin: plugin['notification-bar'],
        order: 0,
        id: 987654,
        team_id: projectB,
        plugin_info: { id: 1 },
        error: { message: 'boom' },
        delivery_rate_24h: 0.5,
        created_at: '2020-01-01T00:00:00.000Z',
        web_token: 'leak',
        favourite_colour: 'orange',
      },
    });
    expect(res.status).toBe(201);
    const c = res.body as PluginConfig;
    expect(c.id).not.toBe(987654);
    expect(c.team_id).toBe(1);
    expect(c.error).toBeNull();
    expect(c.delivery_rate_24h).toBeNull();
    expect(c.created_at).not.toBe('2020-01-01T00:00:00.000Z');
    expect(c).not.toHaveProperty('favourite_colour');
    expect((await stored(c.id)).team_id).toBe(1);
  });

  it('when deleted is true, answers the config disabled even if enabled is true, and hides it from the list', async () => {
    const c = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true, deleted: true });
    expect(c.enabled).toBe(false);
    expect(c.deleted).toBe(true);
    const s = await stored(c.id);
    expect(s.enabled).toBe(false);
    expect(s.deleted).toBe(true);
    const all = await list(1, { limit: 1000 });
    expect(all.results.map((r) => r.id)).not.toContain(c.id);
  });

  it('when created enabled or disabled, records an enabled or disabled activity by the caller', async () => {
    const on = await create({ plugin: plugin.webhook, order: 0, enabled: true, config: { url: 'https://hooks.hedgebox.net/1' } });
    const off = await create({ plugin: plugin.webhook, order: 0, enabled: false, config: { url: 'https://hooks.hedgebox.net/2' } });
    const a = await activity(on.id);
    expect(a.results.map((e) => e.activity)).toEqual(['enabled']);
    expect(a.results[0]?.user.email).toBe(t.boot.user.email);
    expect(a.results[0]?.item_id).toBe(String(on.id));
    expect(a.results[0]?.scope).toBe('PluginConfig');
    expect((await activity(off.id)).results.map((e) => e.activity)).toEqual(['disabled']);
  });

  it('when the body is not valid JSON, answers 400 and creates nothing', async () => {
    const before = await t.store.db
      .selectFrom('plugin_configs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const res = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', { rawBody: '{"plugin": 6, "order": ' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'parse_error', attr: null });
    const notObject = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs/', { rawBody: '[1, 2]' });
    expect(notObject.status).toBe(400);
    const after = await t.store.db
      .selectFrom('plugin_configs')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('when the path has no trailing slash, creates the config', async () => {
    const res = await raw('POST', '/api/environments/1/pipeline_frontend_apps_configs', {
      body: { plugin: plugin['notification-bar'], order: 0 },
    });
    expect(res.status).toBe(201);
  });

  it('when the organization may not configure plugins, answers 400 and creates nothing', async () => {
    const organization = await t.accounts.createOrganization({ name: 'No plugins Inc.', plugins_access_level: 0 });
    const team = await t.accounts.createTeam({ organization_id: organization.id, name: 'Locked' });
    const owner = await t.accounts.createUser({ email: `locked-${Date.now()}@nopluginsinc.com` });
    await t.accounts.upsertMembership(organization.id, owner.id, OrganizationLevel.OWNER);
    const key = await t.key(['*'], { user: owner });
    const res = await raw('POST', `/api/environments/${team.id}/pipeline_frontend_apps_configs/`, {
      key,
      body: { plugin: plugin['notification-bar'], order: 0 },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Plugin configuration is not available for the current organization!',
      attr: null,
    });
    const listed = await raw('GET', `/api/environments/${team.id}/pipeline_frontend_apps_configs/`, { key });
    expect(listed.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('when the key has plugin:read only, answers 403 missing scope plugin:write', async () => {
    const client = t.clientFor(await t.key(['plugin:read']));
    const { response, error } = await client.POST(FRONTEND_APPS, {
      params: { path: { project_id: '1' } },
      body: { plugin: plugin['notification-bar'], order: 0 },
    });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:write'));
  });
});

// ------------------------------------------------------------------------------------------ retrieve

describe('GET /api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/', () => {
  let app: PluginConfig;
  let destination: PluginConfig;

  beforeAll(async () => {
    app = await create({
      plugin: plugin['notification-bar'],
      order: 0,
      enabled: true,
      config: { notification: 'Hedgebox 2.0 is out', position: 'sticky' },
    });
    destination = await create({ plugin: plugin.customerio, order: 0, config: customerioConfig() });
  });

  it('when the id is a frontend app config of the project, answers 200 with plugin_info', async () => {
    const c = await unwrap(t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: app.id } } }));
    expect(c).toMatchObject({ id: app.id, plugin: plugin['notification-bar'], enabled: true, order: 0, team_id: 1, deleted: false });
    expect(c.config).toEqual({ notification: 'Hedgebox 2.0 is out', position: 'sticky' });
    expect(c.plugin_info).toMatchObject({
      id: plugin['notification-bar'],
      name: 'Notification Bar',
      url: 'https://github.com/PostHog/notification-bar-app',
      capabilities: {},
    });
  });

  it('when the id is a destination config, answers 404 Not found.', async () => {
    const { response, error } = await t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: destination.id } } });
    expect(response.status).toBe(404);
    expect(error).toEqual(NOT_FOUND);
  });

  it('when the id is a transformation or import app config, answers 404', async () => {
    for (const key of ['geoip', 'property-filter', 'github-star-sync'] as const) {
      const c = await create({ plugin: plugin[key], order: 0 });
      const { response } = await t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: c.id } } });
      expect(response.status, key).toBe(404);
    }
  });

  it('when the config is deleted, still answers it by id', async () => {
    const c = await create({ plugin: plugin['pineapple-mode'], order: 0, enabled: true });
    await remove(c.id);
    const got = await unwrap(t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: c.id } } }));
    expect(got.deleted).toBe(true);
    expect(got.enabled).toBe(false);
  });

  it('when the id is not an integer or names no config, answers 404 Not found.', async () => {
    for (const id of ['abc', '1.5', '-', '999999', '0', '-3', '2147483648', '99999999999999999999']) {
      const res = await raw('GET', `/api/environments/1/pipeline_frontend_apps_configs/${id}/`);
      expect(res.status, id).toBe(404);
      expect(res.body, id).toEqual(NOT_FOUND);
    }
  });

  it('when the path has no trailing slash, answers the config', async () => {
    const res = await raw('GET', `/api/environments/1/pipeline_frontend_apps_configs/${app.id}`);
    expect(res.status).toBe(200);
    expect((res.body as PluginConfig).id).toBe(app.id);
  });

  it('when the config belongs to another project of the organization, answers 404 through this project and 200 through its own', async () => {
    const other = await create({ plugin: plugin['notification-bar'], order: 0 }, projectB);
    const viaOne = await t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: other.id } } });
    expect(viaOne.response.status).toBe(404);
    expect(viaOne.error).toEqual(NOT_FOUND);
    const viaB = await t.client.GET(FRONTEND_APP, { params: { path: { project_id: String(projectB), id: app.id } } });
    expect(viaB.response.status).toBe(404);
    const own = await unwrap(t.client.GET(FRONTEND_APP, { params: { path: { project_id: String(projectB), id: other.id } } }));
    expect(own.team_id).toBe(projectB);
  });

  it('when the project belongs to an organization the user is not a member of, answers 403', async () => {
    const other = await t.otherOrganization();
    const res = await raw('GET', `/api/environments/${other.team.id}/pipeline_frontend_apps_configs/${app.id}/`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(NO_PROJECT_ACCESS);
    // and the other organization's owner cannot read project 1's config either
    const theirs = await raw('GET', `/api/environments/1/pipeline_frontend_apps_configs/${app.id}/`, { key: other.key });
    expect(theirs.status).toBe(403);
    expect(theirs.body).toEqual(NO_PROJECT_ACCESS);
  });

  it('when the key is limited to another project, answers 403 naming the project', async () => {
    const client = t.clientFor(await t.key(['plugin:read'], { projects: [projectB] }));
    const { response, error } = await client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: app.id } } });
    expect(response.status).toBe(403);
    expect(error).toEqual(projectNotAllowed(1));
  });

  it('when the key lacks plugin:read, answers 403 missing scope', async () => {
    const client = t.clientFor(await t.key(['dashboard:write', 'query:read']));
    const { response, error } = await client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: app.id } } });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:read'));
  });

  it('after a write to a table the answer comes from (organization, plugin, config), the next retrieve and list show it', async () => {
    const get = () => unwrap(t.client.GET(FRONTEND_APP, { params: { path: { project_id: '1', id: app.id } } }));
    const listed = async () => (await list(1, { limit: 100 })).results.find((c) => c.id === app.id);
    const org = t.boot.organization;
    const originalDescription = (await get()).plugin_info?.description ?? '';
    expect((await get()).plugin_info?.organization_name).toBe(org.name);
    await listed();
    try {
      await t.store.db.updateTable('organizations').set({ name: 'Renamed Org' }).where('id', '=', org.id).execute();
      expect((await get()).plugin_info?.organization_name).toBe('Renamed Org');
      // as `PluginsRepository.install` does, a change of a plugin moves its updated_at
      await t.store.db
        .updateTable('plugins')
        .set({ description: 'A new description', updated_at: new Date().toISOString() })
        .where('id', '=', plugin['notification-bar'])
        .execute();
      expect((await get()).plugin_info?.description).toBe('A new description');
      expect((await listed())?.description).toBe('A new description');
      if (t.store.changeCounter) {
        // on SQLite a write that leaves updated_at alone (hand-written SQL) is seen too: the plugins
        // table's counter moves, which empties the decoded plugins as well as the answers
        await t.store.db
          .updateTable('plugins')
          .set({ description: 'Without updated_at' })
          .where('id', '=', plugin['notification-bar'])
          .execute();
        expect((await get()).plugin_info?.description).toBe('Without updated_at');
      }
      await t.store.db.updateTable('plugin_configs').set({ order: 42 }).where('id', '=', app.id).execute();
      expect((await get()).order).toBe(42);
      expect((await listed())?.order).toBe(42);
      // a write to a table answers do not read (the activity log) keeps them (SQLite: the
      // counter they follow does not move) and they stay right
      const answerCounter = () => t.store.changeCounter?.(ANSWER_READS);
      const counterBefore = answerCounter();
      await t.store.db
        .insertInto('activity_log')
        .values({
          id: randomUUID(),
          team_id: 1,
          organization_id: org.id,
          user_id: null,
          is_system: 1,
          scope: 'Plugin',
          item_id: String(app.id),
          activity: 'updated',
          detail: '{}',
          created_at: new Date().toISOString(),
        })
        .execute();
      expect(answerCounter()).toBe(counterBefore);
      expect((await get()).order).toBe(42);
    } finally {
      await t.store.db.updateTable('organizations').set({ name: org.name }).where('id', '=', org.id).execute();
      await t.store.db
        .updateTable('plugins')
        .set({ description: originalDescription, updated_at: new Date().toISOString() })
        .where('id', '=', plugin['notification-bar'])
        .execute();
    }
  });
});

// ------------------------------------------------------------------------------------------ PATCH

describe('PATCH /api/environments/{project_id}/pipeline_destination_configs/{id}/', () => {
  it('when disabling a destination, answers 200 with plugin_info and records a disabled activity', async () => {
    const c = await create({ plugin: plugin.customerio, order: 2, enabled: true, name: 'Customer.io (EU)', config: customerioConfig() });
    const { data, response } = await t.client.PATCH(DESTINATION, {
      params: { path: { project_id: '1', id: c.id } },
      body: { enabled: false },
    });
    expect(response.status).toBe(200);
    const u = data as PluginConfig;
    expect(u).toMatchObject({
      id: c.id,
      plugin: plugin.customerio,
      enabled: false,
      order: 2,
      name: 'Customer.io (EU)',
      deleted: false,
      delivery_rate_24h: null,
      error: null,
      team_id: 1,
    });
    expect(u.config).toEqual(c.config);
    expect(u.plugin_info).toMatchObject({ id: plugin.customerio, name: 'Customer.io', hog_function_migration_available: true });
    expect(u.created_at).toBe(c.created_at);
    expect(Date.parse(u.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    const a = await activity(c.id);
    expect(a.results.map((e) => e.activity)).toEqual(['disabled', 'enabled']);
    expect((await stored(c.id)).enabled).toBe(false);
  });

  it('when enabling, records an enabled activity; when the flag does not change, records none', async () => {
    const c = await create({
      plugin: plugin.hubspot,
      order: 0,
      enabled: false,
      config: { hubspotAccessToken: 'pat-na1-1', triggeringEvents: '$identify' },
    });
    await patch(c.id, { enabled: true });
    await patch(c.id, { enabled: true });
    expect((await activity(c.id)).results.map((e) => e.activity)).toEqual(['enabled', 'disabled']);
  });

  it('when fields are not sent, keeps their values', async () => {
    const c = await create({
      plugin: plugin.hubspot,
      order: 3,
      enabled: true,
      name: 'HubSpot CRM',
      description: 'Contacts sync',
      config: { hubspotAccessToken: 'pat-na1-2', triggeringEvents: '$identify,$set' },
    });
    const u = await patch(c.id, { order: 9 });
    expect(u).toMatchObject({ order: 9, enabled: true, name: 'HubSpot CRM', description: 'Contacts sync', deleted: false });
    expect(u.config).toEqual({ hubspotAccessToken: SECRET, triggeringEvents: '$identify,$set' });
    expect((await stored(c.id)).config).toEqual({ hubspotAccessToken: 'pat-na1-2', triggeringEvents: '$identify,$set' });
    const empty = await patch(c.id, {});
    expect(empty).toMatchObject({ order: 9, enabled: true, name: 'HubSpot CRM' });
  });

  it('when the body sends plugin, ignores it', async () => {
    const c = await create({ plugin: plugin.customerio, order: 0, config: customerioConfig() });
    const u = await patch(c.id, { plugin: plugin.hubspot, order: 5 });
    expect(u.plugin).toBe(plugin.customerio);
    expect(u.order).toBe(5);
    expect((await stored(c.id)).plugin_id).toBe(plugin.customerio);
    const unknownPlugin = await patch(c.id, { plugin: 999 });
    expect(unknownPlugin.plugin).toBe(plugin.customerio);
  });

  it('when deleted is true, forces enabled to false whatever enabled the body holds', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, enabled: true, config: { url: 'https://hooks.hedgebox.net/del' } });
    const u = await patch(c.id, { deleted: true, enabled: true });
    expect(u.deleted).toBe(true);
    expect(u.enabled).toBe(false);
    const s = await stored(c.id);
    expect(s.deleted).toBe(true);
    expect(s.enabled).toBe(false);
    expect((await activity(c.id)).results.map((e) => e.activity)).toContain('disabled');
  });

  it('when the config is deleted, can still be updated by id', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/x' } });
    await patch(c.id, { deleted: true });
    const u = await patch(c.id, { name: 'Old webhook' });
    expect(u.name).toBe('Old webhook');
    expect(u.deleted).toBe(true);
    const undeleted = await patch(c.id, { deleted: false });
    expect(undeleted.deleted).toBe(false);
    expect(undeleted.enabled).toBe(false);
  });

  it('when deleted is null, keeps the stored value', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/n' } });
    const u = await patch(c.id, { deleted: null, order: 2 });
    expect(u.deleted).toBe(false);
    expect(u.order).toBe(2);
  });

  it("when name or description is null or empty, answers the plugin's instead", async () => {
    const c = await create({
      plugin: plugin.webhook,
      order: 0,
      name: 'Slack hook',
      description: 'Posts to #growth',
      config: { url: 'https://hooks.slack.com/x' },
    });
    const u = await patch(c.id, { name: null, description: '' });
    expect(u.name).toBe('Webhook');
    expect(u.description).toBe('Send a webhook');
  });

  describe('secret fields of config', () => {
    let id: number;

    beforeAll(async () => {
      id = (await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() })).id;
    });

    it('when a secret field is omitted, keeps its stored value and drops omitted non-secret keys', async () => {
      const u = await patch(id, { config: { host: 'track-eu.customer.io' } });
      expect(u.config).toEqual({ customerioSiteId: SECRET, customerioToken: SECRET, host: 'track-eu.customer.io' });
      expect((await stored(id)).config).toEqual({
        customerioSiteId: 'site-7d2f0a9c',
        customerioToken: 'tok-s3cr3t',
        host: 'track-eu.customer.io',
      });
    });

    it('when a secret field is null, keeps its stored value', async () => {
      await patch(id, { config: { customerioSiteId: null, customerioToken: null, host: 'track-eu.customer.io', identifyByEmail: 'Yes' } });
      expect((await stored(id)).config).toEqual({
        customerioSiteId: 'site-7d2f0a9c',
        customerioToken: 'tok-s3cr3t',
        host: 'track-eu.customer.io',
        identifyByEmail: 'Yes',
      });
    });

    it('when a retrieved config is sent back with masked secrets, keeps the stored secrets', async () => {
      const current = await patch(id, {});
      expect(current.config.customerioToken).toBe(SECRET);
      const u = await patch(id, { config: { ...current.config, eventsToSend: '$pageview,signed_up' } });
      expect(u.config).toEqual({
        customerioSiteId: SECRET,
        customerioToken: SECRET,
        host: 'track-eu.customer.io',
        identifyByEmail: 'Yes',
        eventsToSend: '$pageview,signed_up',
      });
      expect((await stored(id)).config).toEqual({
        customerioSiteId: 'site-7d2f0a9c',
        customerioToken: 'tok-s3cr3t',
        host: 'track-eu.customer.io',
        identifyByEmail: 'Yes',
        eventsToSend: '$pageview,signed_up',
      });
    });

    it('when a secret field gets a new value, stores it and answers it masked', async () => {
      const u = await patch(id, { config: { customerioToken: 'tok-rotated', host: 'track-eu.customer.io' } });
      expect(u.config.customerioToken).toBe(SECRET);
      expect((await stored(id)).config).toEqual({
        customerioSiteId: 'site-7d2f0a9c',
        customerioToken: 'tok-rotated',
        host: 'track-eu.customer.io',
      });
    });

    it('when a secret field is an empty string, clears it', async () => {
      const u = await patch(id, { config: { customerioToken: '', host: 'track-eu.customer.io' } });
      expect(u.config.customerioToken).toBe('');
      expect((await stored(id)).config.customerioToken).toBe('');
      await patch(id, { config: { customerioToken: 'tok-s3cr3t', host: 'track-eu.customer.io' } });
    });
  });

  it('when config keys change, records config_updated listing the changed keys with secret values masked', async () => {
    const c = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    await patch(c.id, {
      config: { customerioToken: 'tok-new', host: 'track-eu.customer.io', identifyByEmail: 'No', eventsToSend: '$pageview' },
    });
    const a = await activity(c.id);
    expect(a.results.map((e) => e.activity)).toEqual(['config_updated', 'enabled']);
    const entry = a.results[0];
    expect(entry?.detail.name).toBe('Customer.io');
    expect(entry?.user.email).toBe(t.boot.user.email);
    const changes = entry?.detail.changes ?? [];
    const byField = new Map(changes.map((ch) => [ch.field, ch]));
    expect([...byField.keys()].sort()).toEqual(['customerioToken', 'eventsToSend', 'host']);
    expect(byField.get('host')).toMatchObject({ action: 'changed', before: 'track.customer.io', after: 'track-eu.customer.io' });
    expect(byField.get('customerioToken')).toMatchObject({ action: 'changed', before: SECRET, after: SECRET });
    expect(byField.get('eventsToSend')).toMatchObject({ action: 'created', after: '$pageview' });
    expect(JSON.stringify(a)).not.toContain('tok-new');
    expect(JSON.stringify(a)).not.toContain('tok-s3cr3t');
  });

  it('when only non-config fields change, records an updated activity with those fields and no config_updated', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, enabled: true, config: { url: 'https://hooks.hedgebox.net/cfg' } });
    await patch(c.id, { name: 'Renamed hook', order: 4 });
    const a = await activity(c.id);
    expect(a.results.map((e) => e.activity)).toEqual(['updated', 'enabled']);
    const changes = a.results[0]?.detail.changes ?? [];
    expect(changes.map((ch) => [ch.field, ch.before, ch.after])).toEqual([
      ['order', 0, 4],
      ['name', null, 'Renamed hook'],
    ]);
  });

  it('when the id is a frontend app, transformation or import app config, answers 404 Not found.', async () => {
    for (const key of ['notification-bar', 'pineapple-mode', 'geoip', 'property-filter', 'github-star-sync'] as const) {
      const c = await create({ plugin: plugin[key], order: 0 });
      const { response, error } = await t.client.PATCH(DESTINATION, {
        params: { path: { project_id: '1', id: c.id } },
        body: { order: 1 },
      });
      expect(response.status, key).toBe(404);
      expect(error).toEqual(NOT_FOUND);
      expect((await stored(c.id)).order).toBe(0);
    }
  });

  it('when the id is not an integer or names no config, answers 404 Not found.', async () => {
    for (const id of ['abc', '1.5', '999999', '0', '2147483648']) {
      const res = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${id}/`, { body: { enabled: false } });
      expect(res.status, id).toBe(404);
      expect(res.body, id).toEqual(NOT_FOUND);
    }
  });

  it('when the config belongs to another project, answers 404 and leaves it unchanged', async () => {
    const other = await create(
      { plugin: plugin.hubspot, order: 0, enabled: true, config: { hubspotAccessToken: 'b', triggeringEvents: '$identify' } },
      projectB,
    );
    const { response } = await t.client.PATCH(DESTINATION, {
      params: { path: { project_id: '1', id: other.id } },
      body: { enabled: false },
    });
    expect(response.status).toBe(404);
    expect((await stored(other.id)).enabled).toBe(true);
  });

  it('when a field has the wrong type or is too long, answers 400 with attr naming it', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/t' } });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ enabled: 'nope' }, 'enabled'],
      [{ order: 1.5 }, 'order'],
      [{ order: '2' }, 'order'],
      [{ config: ['url'] }, 'config'],
      [{ deleted: 'yes' }, 'deleted'],
      [{ order: 2147483648 }, 'order'],
    ];
    for (const [body, attr] of cases) {
      const res = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${c.id}/`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ type: 'validation_error', attr });
    }
    const long = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${c.id}/`, {
      body: { description: 'd'.repeat(1001) },
    });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({
      type: 'validation_error',
      code: 'max_length',
      detail: 'Ensure this field has no more than 1000 characters.',
      attr: 'description',
    });
    expect((await stored(c.id)).order).toBe(0);
  });

  it('when the body is malformed JSON, answers 400', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/m' } });
    const res = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${c.id}/`, { rawBody: '{"enabled": fals' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'parse_error' });
  });

  it('when unknown and read-only fields are sent back, ignores them', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/ro' } });
    const res = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${c.id}/`, {
      body: { ...c, id: 424242, team_id: projectB, plugin_info: null, created_at: '2020-01-01T00:00:00.000Z', order: 6, colour: 'red' },
    });
    expect(res.status).toBe(200);
    const u = res.body as PluginConfig;
    expect(u.id).toBe(c.id);
    expect(u.team_id).toBe(1);
    expect(u.order).toBe(6);
    expect(u.created_at).toBe(c.created_at);
  });

  it('when the path has no trailing slash, updates the config', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/s' } });
    const res = await raw('PATCH', `/api/environments/1/pipeline_destination_configs/${c.id}`, { body: { order: 3 } });
    expect(res.status).toBe(200);
    expect((res.body as PluginConfig).order).toBe(3);
  });

  it('when another member updates, the activity names that member', async () => {
    const { user, key } = await memberWithKey(['plugin:write']);
    const c = await create({
      plugin: plugin.hubspot,
      order: 0,
      enabled: false,
      config: { hubspotAccessToken: 'x', triggeringEvents: '$identify' },
    });
    const client = t.clientFor(key);
    await unwrap(client.PATCH(DESTINATION, { params: { path: { project_id: '1', id: c.id } }, body: { enabled: true } }));
    const a = await activity(c.id);
    expect(a.results[0]).toMatchObject({ activity: 'enabled', user: { email: user.email, first_name: 'Member' } });
    expect(a.results[1]).toMatchObject({ activity: 'disabled', user: { email: t.boot.user.email } });
  });

  it('when the key has plugin:read only, answers 403 and changes nothing', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, enabled: true, config: { url: 'https://hooks.hedgebox.net/ro2' } });
    const client = t.clientFor(await t.key(['plugin:read']));
    const { response, error } = await client.PATCH(DESTINATION, {
      params: { path: { project_id: '1', id: c.id } },
      body: { enabled: false },
    });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:write'));
    expect((await stored(c.id)).enabled).toBe(true);
  });
});

// ------------------------------------------------------------------------------------------ DELETE

describe('DELETE /api/environments/{project_id}/pipeline_destination_configs/{id}/', () => {
  it('when the config exists, answers 204 with no body, then it is deleted, disabled and hidden from lists', async () => {
    const c = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true });
    expect((await list(1, { limit: 1000 })).results.map((r) => r.id)).toContain(c.id);
    const res = await raw('DELETE', `/api/environments/1/pipeline_destination_configs/${c.id}/`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const s = await stored(c.id);
    expect(s.deleted).toBe(true);
    expect(s.enabled).toBe(false);
    expect((await list(1, { limit: 1000 })).results.map((r) => r.id)).not.toContain(c.id);
  });

  it('when deleting through the typed client, answers 204 and no data', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/d' } });
    const { response, data } = await t.client.DELETE(DESTINATION, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
  });

  it('when the destination was enabled, records a disabled activity', async () => {
    const c = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    await remove(c.id);
    const a = await activity(c.id);
    expect(a.results[0]?.activity).toBe('disabled');
    expect(a.results.map((e) => e.activity)).toContain('enabled');
  });

  it('when the config is already deleted, answers 204 again', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/dd' } });
    await remove(c.id);
    const { response } = await t.client.DELETE(DESTINATION, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(204);
  });

  it('when the config is a transformation or import app, deletes it too', async () => {
    for (const key of ['geoip', 'github-star-sync'] as const) {
      const c = await create({ plugin: plugin[key], order: 0, enabled: true });
      await remove(c.id);
      expect(await stored(c.id)).toMatchObject({ deleted: true, enabled: false });
    }
  });

  it('when the id names no config, answers 404 Not found.', async () => {
    const { response, error } = await t.client.DELETE(DESTINATION, { params: { path: { project_id: '1', id: 999999 } } });
    expect(response.status).toBe(404);
    expect(error).toEqual(NOT_FOUND);
    const res = await raw('DELETE', '/api/environments/1/pipeline_destination_configs/abc/');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it('when the config belongs to another project, answers 404 and leaves it as it was', async () => {
    const other = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true }, projectB);
    const { response } = await t.client.DELETE(DESTINATION, { params: { path: { project_id: '1', id: other.id } } });
    expect(response.status).toBe(404);
    expect(await stored(other.id)).toMatchObject({ deleted: false, enabled: true });
  });

  it('when the path has no trailing slash, deletes the config', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/ns' } });
    const res = await raw('DELETE', `/api/environments/1/pipeline_destination_configs/${c.id}`);
    expect(res.status).toBe(204);
    expect((await stored(c.id)).deleted).toBe(true);
  });

  it('when the key has plugin:read only, answers 403 and deletes nothing', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, config: { url: 'https://hooks.hedgebox.net/k' } });
    const client = t.clientFor(await t.key(['plugin:read']));
    const { response, error } = await client.DELETE(DESTINATION, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:write'));
    expect((await stored(c.id)).deleted).toBe(false);
  });
});

// ------------------------------------------------------------------------------------------ rearrange

describe('PATCH /api/environments/{project_id}/pipeline_destination_configs/rearrange/', () => {
  let project: number;
  let cio: PluginConfig;
  let hub: PluginConfig;
  let bar: PluginConfig;
  let disabled: PluginConfig;
  let deleted: PluginConfig;

  beforeAll(async () => {
    project = await newProject('Rearrange project');
    cio = await create({ plugin: plugin.customerio, order: 1, enabled: true, config: customerioConfig() }, project);
    hub = await create(
      { plugin: plugin.hubspot, order: 2, enabled: true, config: { hubspotAccessToken: 'pat', triggeringEvents: '$identify' } },
      project,
    );
    bar = await create({ plugin: plugin['notification-bar'], order: 3, enabled: true }, project);
    disabled = await create({ plugin: plugin.webhook, order: 4, enabled: false, config: { url: 'https://hooks.hedgebox.net/r' } }, project);
    deleted = await create({ plugin: plugin['pineapple-mode'], order: 5, enabled: true }, project);
    await remove(deleted.id, project);
  });

  async function rearrange(orders: Record<string, number> | undefined) {
    return t.client.PATCH(REARRANGE, { params: { path: { project_id: String(project) } }, body: orders === undefined ? {} : { orders } });
  }

  it('when orders is omitted, changes nothing and answers the enabled configs ordered by order', async () => {
    const { response, data } = await rearrange(undefined);
    expect(response.status).toBe(200);
    expect(data?.map((c) => [c.id, c.order])).toEqual([
      [cio.id, 1],
      [hub.id, 2],
      [bar.id, 3],
    ]);
  });

  it('when orders maps config ids to new orders, applies them and answers all enabled configs ordered by (order, plugin id) without plugin_info', async () => {
    const other = await create(
      { plugin: plugin.hubspot, order: 1, enabled: true, config: { hubspotAccessToken: 'p', triggeringEvents: '$identify' } },
      projectB,
    );
    const { response, data } = await rearrange({
      [String(bar.id)]: 0,
      [String(hub.id)]: 7,
      [String(cio.id)]: 7,
      [String(disabled.id)]: -5,
      [String(other.id)]: 9,
      '99999999': 1,
    });
    expect(response.status).toBe(200);
    const rows = data ?? [];
    // hubspot and customer.io tie at 7: the plugin id decides
    expect(plugin.customerio).toBeLessThan(plugin.hubspot);
    expect(rows.map((c) => [c.id, c.order])).toEqual([
      [bar.id, 0],
      [cio.id, 7],
      [hub.id, 7],
    ]);
    for (const c of rows) {
      expect(c.plugin_info).toBeNull();
      expect(c.delivery_rate_24h).toBeNull();
      expect(c.enabled).toBe(true);
      expect(c.team_id).toBe(project);
    }
    // secrets are still masked in the answer
    expect(rows.find((c) => c.id === cio.id)?.config.customerioToken).toBe(SECRET);
    // disabled, deleted and other projects' configs are not touched
    expect((await stored(disabled.id)).order).toBe(4);
    expect((await stored(deleted.id)).order).toBe(5);
    expect((await stored(other.id)).order).toBe(1);
    expect((await stored(bar.id)).order).toBe(0);
  });

  it("when an order changes, records order_changed under the plugin, not in the config's activity", async () => {
    const before = (await activityRows('Plugin', String(plugin.webhook))).length;
    const hook = await create(
      { plugin: plugin.webhook, order: 1, enabled: true, config: { url: 'https://hooks.hedgebox.net/o' } },
      project,
    );
    const { response } = await rearrange({ [String(hook.id)]: 11 });
    expect(response.status).toBe(200);
    const rows = await activityRows('Plugin', String(plugin.webhook));
    expect(rows.length).toBe(before + 1);
    const last = rows[rows.length - 1];
    expect(last?.activity).toBe('order_changed');
    const detail = (typeof last?.detail === 'string' ? JSON.parse(last.detail) : last?.detail) as { changes: unknown[] };
    expect(detail.changes).toEqual([{ type: 'Plugin', action: 'changed', field: 'order', before: 1, after: 11 }]);
    const a = await activity(hook.id, {}, project);
    expect(a.results.map((e) => e.activity)).toEqual(['enabled']);
  });

  it('when a key of orders is not a plugin config id, answers 400 with attr orders and changes nothing', async () => {
    const { response, error } = await rearrange({ customerio: 2, [String(bar.id)]: 42 });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ type: 'validation_error', attr: 'orders' });
    expect((await stored(bar.id)).order).toBe(0);
  });

  it('when a value of orders is not a 32-bit integer, answers 400 with attr orders__<id> and changes nothing', async () => {
    for (const value of ['2', 1.5, null, 2147483648]) {
      const res = await raw('PATCH', `/api/environments/${project}/pipeline_destination_configs/rearrange/`, {
        body: { orders: { [String(bar.id)]: value } },
      });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.body, JSON.stringify(value)).toMatchObject({ type: 'validation_error', attr: `orders__${bar.id}` });
    }
    expect((await stored(bar.id)).order).toBe(0);
  });

  it('when orders is not an object, answers 400 with attr orders', async () => {
    const res = await raw('PATCH', `/api/environments/${project}/pipeline_destination_configs/rearrange/`, { body: { orders: [1, 2] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'orders' });
  });

  it('when the path has no trailing slash, answers the same list', async () => {
    const res = await raw('PATCH', `/api/environments/${project}/pipeline_destination_configs/rearrange`, { body: {} });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
  });

  it('when the key has plugin:read only, answers 403', async () => {
    const client = t.clientFor(await t.key(['plugin:read']));
    const { response, error } = await client.PATCH(REARRANGE, {
      params: { path: { project_id: String(project) } },
      body: { orders: { [String(bar.id)]: 3 } },
    });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:write'));
    expect((await stored(bar.id)).order).toBe(0);
  });

  it('when the project does not exist, answers 404 Project not found.', async () => {
    const { response, error } = await t.client.PATCH(REARRANGE, { params: { path: { project_id: '999999' } }, body: {} });
    expect(response.status).toBe(404);
    expect(error).toEqual(PROJECT_NOT_FOUND);
  });
});

// ------------------------------------------------------------------------------------------ job

describe('POST /api/environments/{project_id}/pipeline_destination_configs/{id}/job/', () => {
  let cio: PluginConfig;
  let hub: PluginConfig;

  beforeAll(async () => {
    cio = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    hub = await create({
      plugin: plugin.hubspot,
      order: 0,
      enabled: true,
      config: { hubspotAccessToken: 'pat', triggeringEvents: '$identify' },
    });
  });

  async function job(id: number, body: Record<string, unknown>, key?: string) {
    return raw('POST', `/api/environments/1/pipeline_destination_configs/${id}/job/`, { body, ...(key ? { key } : {}) });
  }

  it('when the job is one the plugin publishes, answers 200 with the job record, stores it and logs job_triggered', async () => {
    const before = await jobCount();
    const payload = { dateRange: ['2024-10-01', '2024-10-31'] };
    const { response, data } = await t.client.POST(JOB, {
      params: { path: { project_id: '1', id: cio.id } },
      body: { job: { type: EXPORT_JOB, payload, operation: 'start' } },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ type: EXPORT_JOB, payload, operation: 'start', plugin_config_id: cio.id });
    expect(data?.job_id).toMatch(UUID);
    expect(data?.created_at).toMatch(ISO_UTC);
    expect(await jobCount()).toBe(before + 1);

    const row = await t.store.db
      .selectFrom('plugin_config_jobs')
      .selectAll()
      .where('id', '=', data?.job_id ?? '')
      .executeTakeFirstOrThrow();
    expect(row.plugin_config_id).toBe(cio.id);
    expect(row.team_id).toBe(1);
    expect(row.type).toBe(EXPORT_JOB);
    expect(row.operation).toBe('start');
    expect(typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).toEqual(payload);
    expect(row.created_by_id).toBe(t.boot.user.id);

    const a = await activity(cio.id);
    const entry = a.results[0];
    expect(entry?.activity).toBe('job_triggered');
    expect(entry?.user.email).toBe(t.boot.user.email);
    expect(entry?.detail.name).toBe('Customer.io');
    expect(entry?.detail.trigger).toEqual({ job_type: EXPORT_JOB, job_id: data?.job_id, payload });
  });

  it('when payload and operation are omitted, defaults them to {} and "start"', async () => {
    // payload defaults to {}: the job's required field is then reported missing…
    const missing = await job(cio.id, { job: { type: EXPORT_JOB } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(jobError('Missing required job field: dateRange'));
    // …and operation defaults to "start" when a valid payload is sent without it
    const ok = await job(cio.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-11-01', '2024-11-02'] } } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ operation: 'start' });
  });

  it('when an operation is given, records it', async () => {
    const res = await job(cio.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-11-01', '2024-11-02'] }, operation: 'stop' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation: 'stop' });
  });

  it("when each rule of the job is broken, answers 400 with PostHog's message, attr null, and stores nothing", async () => {
    const cases: Array<[number, Record<string, unknown>, string]> = [
      [cio.id, { job: {} }, 'The job type must be specified!'],
      [cio.id, { job: { type: '' } }, 'The job type must be specified!'],
      [cio.id, { job: { payload: { dateRange: ['2024-10-01', '2024-10-31'] } } }, 'The job type must be specified!'],
      [cio.id, { job: { type: 'x' } }, "Unknown plugin job: 'x'"],
      [cio.id, { job: { type: "it's" } }, `Unknown plugin job: "it's"`],
      [cio.id, { job: { type: EXPORT_JOB, payload: {} } }, 'Missing required job field: dateRange'],
      [cio.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'], x: 1 } } }, 'Unknown field for job: x'],
      [
        cio.id,
        { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'], parallelism: 4 } } },
        'Field is only settable for admins: parallelism',
      ],
      [hub.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } }, 'Plugin has no public jobs'],
    ];
    const jobsBefore = await jobCount();
    const activityBefore = (await activity(cio.id, { limit: 100 })).total_count;
    for (const [id, body, detail] of cases) {
      const res = await job(id, body);
      expect(res.status, detail).toBe(400);
      expect(res.body, JSON.stringify(body)).toEqual(jobError(detail));
    }
    expect(await jobCount()).toBe(jobsBefore);
    expect((await activity(cio.id, { limit: 100 })).total_count).toBe(activityBefore);
    expect((await activity(hub.id)).results.map((e) => e.activity)).toEqual(['enabled']);
  });

  it('when the job name is 400 KB long, answers 400 quoting only its first characters (under 300 in all) and stores nothing', async () => {
    const jobsBefore = await jobCount();
    const res = await job(cio.id, { job: { type: 'x'.repeat(400_000) } });
    expect(res.status).toBe(400);
    const body = res.body as ErrorBody;
    expect(body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: null });
    expect(body.detail.length).toBeLessThan(300);
    expect(body.detail).toMatch(/^Unknown plugin job: 'x+…'$/);
    expect(await jobCount()).toBe(jobsBefore);
  });

  it('when a 400 KB job name is all characters Python escapes, the quoted name still stays within the cap', async () => {
    const res = await job(cio.id, { job: { type: '\\\n\t'.repeat(130_000) } });
    expect(res.status).toBe(400);
    const detail = (res.body as ErrorBody).detail;
    expect(detail.length).toBeLessThan(300);
    expect(detail.startsWith("Unknown plugin job: '\\\\\\n\\t")).toBe(true);
    expect(detail.endsWith("…'")).toBe(true);
  });

  it('when a payload key is 400 KB long, answers 400 "Unknown field for job:" with the key cut (under 300 characters)', async () => {
    const res = await job(cio.id, {
      job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'], ['k'.repeat(400_000)]: 1 } },
    });
    expect(res.status).toBe(400);
    const detail = (res.body as ErrorBody).detail;
    expect(detail.length).toBeLessThan(300);
    expect(detail).toMatch(/^Unknown field for job: k+…$/);
  });

  it('when a non-staff user sends a staff-only field at its default value, accepts it', async () => {
    const res = await job(cio.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'], parallelism: 1 } } });
    expect(res.status).toBe(200);
  });

  it('when a staff user sets a staff-only field, accepts it', async () => {
    const { key } = await memberWithKey(['plugin:write'], { staff: true });
    const res = await job(cio.id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'], parallelism: 4 } } }, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ payload: { parallelism: 4 } });
  });

  it('when the body has no job, answers 400 required with attr job', async () => {
    const res = await job(cio.id, {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual(required('job'));
  });

  it('when the id is not a destination config of the project, answers 404 and stores nothing', async () => {
    const app = await create({ plugin: plugin['notification-bar'], order: 0 });
    const other = await create({ plugin: plugin.customerio, order: 0, config: customerioConfig() }, projectB);
    const before = await jobCount();
    for (const id of [app.id, other.id, 999999]) {
      const res = await job(id, { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } });
      expect(res.status, String(id)).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    const bad = await raw('POST', '/api/environments/1/pipeline_destination_configs/abc/job/', { body: { job: { type: EXPORT_JOB } } });
    expect(bad.status).toBe(404);
    expect(await jobCount()).toBe(before);
  });

  it('when the key has plugin:read only, answers 403 and stores nothing', async () => {
    const before = await jobCount();
    const res = await job(
      cio.id,
      { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } },
      await t.key(['plugin:read']),
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual(missingScope('plugin:write'));
    expect(await jobCount()).toBe(before);
  });
});

// ------------------------------------------------------------------------------------------ migrate

describe('POST /api/environments/{project_id}/pipeline_destination_configs/{id}/migrate/', () => {
  it('when the plugin has a migrator, answers 200 with the destination function and disables the config', async () => {
    const c = await create({
      plugin: plugin.customerio,
      order: 0,
      enabled: true,
      name: 'Customer.io (EU)',
      config: customerioConfig({ host: 'track-eu.customer.io' }),
    });
    const { response, data } = await t.client.POST(MIGRATE, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      type: 'destination',
      template_id: 'template-customerio',
      enabled: true,
      plugin_config_id: c.id,
      inputs: { site_id: { secret: true }, token: { secret: true }, host: { value: 'track-eu.customer.io' } },
    });
    expect(data?.id).toMatch(UUID);
    expect(data?.created_at).toMatch(ISO_UTC);
    expect(typeof data?.name).toBe('string');
    expect(JSON.stringify(data)).not.toContain('tok-s3cr3t');
    expect(JSON.stringify(data)).not.toContain('site-7d2f0a9c');

    expect((await stored(c.id)).enabled).toBe(false);
    const a = await activity(c.id);
    expect(a.results[0]?.activity).toBe('disabled');
    const fn = await t.store.db
      .selectFrom('hog_functions')
      .selectAll()
      .where('id', '=', data?.id ?? '')
      .executeTakeFirstOrThrow();
    expect(fn.plugin_config_id).toBe(c.id);
    expect(fn.team_id).toBe(1);
  });

  it('when called again, creates a new function, disabled like the config now is', async () => {
    const c = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    const first = await unwrap(t.client.POST(MIGRATE, { params: { path: { project_id: '1', id: c.id } } }));
    const second = await unwrap(t.client.POST(MIGRATE, { params: { path: { project_id: '1', id: c.id } } }));
    expect(second.id).not.toBe(first.id);
    expect(first.enabled).toBe(true);
    expect(second.enabled).toBe(false);
    const disabledEntries = (await activity(c.id)).results.filter((e) => e.activity === 'disabled');
    expect(disabledEntries).toHaveLength(1);
  });

  it('when a body is sent, ignores it', async () => {
    const c = await create({
      plugin: plugin.hubspot,
      order: 0,
      enabled: false,
      config: { hubspotAccessToken: 'pat-x', triggeringEvents: '$identify' },
    });
    const res = await raw('POST', `/api/environments/1/pipeline_destination_configs/${c.id}/migrate/`, {
      body: { template_id: 'template-evil', enabled: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ template_id: 'template-hubspot', enabled: false, inputs: { access_token: { secret: true } } });
  });

  it('when the plugin has no migrator, answers 400 No migration available for this plugin and leaves the config enabled', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0, enabled: true, config: { url: 'https://hooks.hedgebox.net/mig' } });
    const fnsBefore = await t.store.db
      .selectFrom('hog_functions')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const { response, error } = await t.client.POST(MIGRATE, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(400);
    expect(error).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'No migration available for this plugin',
      attr: null,
    });
    expect((await stored(c.id)).enabled).toBe(true);
    const fnsAfter = await t.store.db
      .selectFrom('hog_functions')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(fnsAfter.n)).toBe(Number(fnsBefore.n));
  });

  it('when the id is not a destination config of the project, answers 404', async () => {
    const geo = await create({ plugin: plugin.geoip, order: 0 });
    const other = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() }, projectB);
    for (const id of [geo.id, other.id, 999999]) {
      const { response, error } = await t.client.POST(MIGRATE, { params: { path: { project_id: '1', id } } });
      expect(response.status, String(id)).toBe(404);
      expect(error).toEqual(NOT_FOUND);
    }
    expect((await stored(other.id)).enabled).toBe(true);
    const bad = await raw('POST', '/api/environments/1/pipeline_destination_configs/abc/migrate/');
    expect(bad.status).toBe(404);
  });

  it('when the key has plugin:read only, answers 403 and migrates nothing', async () => {
    const c = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    const client = t.clientFor(await t.key(['plugin:read']));
    const { response, error } = await client.POST(MIGRATE, { params: { path: { project_id: '1', id: c.id } } });
    expect(response.status).toBe(403);
    expect(error).toEqual(missingScope('plugin:write'));
    expect((await stored(c.id)).enabled).toBe(true);
  });
});

// ------------------------------------------------------------------------------------------ frontend

describe('GET /api/environments/{project_id}/pipeline_destination_configs/{id}/frontend/', () => {
  it("when the destination's plugin has no frontend, answers 200 application/javascript with the no_frontend stub", async () => {
    for (const key of ['customerio', 'hubspot', 'webhook'] as const) {
      const c = await create({ plugin: plugin[key], order: 0 });
      const res = await t.fetch(`/api/environments/1/pipeline_destination_configs/${c.id}/frontend/`);
      expect(res.status, key).toBe(200);
      expect(res.headers.get('content-type') ?? '').toMatch(/^application\/javascript(;\s*charset=utf-8)?$/i);
      expect(await res.text()).toBe(NO_FRONTEND);
    }
  });

  it('when the path has no trailing slash, answers the same', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0 });
    const res = await t.fetch(`/api/environments/1/pipeline_destination_configs/${c.id}/frontend`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(NO_FRONTEND);
  });

  it('when the id is unknown, not an integer, or not a destination config of the project, answers 404 as JSON', async () => {
    const app = await create({ plugin: plugin['notification-bar'], order: 0 });
    const other = await create({ plugin: plugin.webhook, order: 0 }, projectB);
    for (const id of ['999999', 'abc', String(app.id), String(other.id)]) {
      const res = await raw('GET', `/api/environments/1/pipeline_destination_configs/${id}/frontend/`);
      expect(res.status, id).toBe(404);
      expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it('when the key lacks plugin:read, answers 403', async () => {
    const c = await create({ plugin: plugin.webhook, order: 0 });
    const res = await raw('GET', `/api/environments/1/pipeline_destination_configs/${c.id}/frontend/`, {
      key: await t.key(['query:read']),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(missingScope('plugin:read'));
  });
});

// ------------------------------------------------------------------------------------------ activity

describe('GET /api/environments/{project_id}/pipeline_destination_configs/{id}/activity/', () => {
  let c: PluginConfig;
  let jobId: string;

  beforeAll(async () => {
    // disabled (create) → enabled → config_updated → job_triggered → disabled
    c = await create({ plugin: plugin.customerio, order: 0, enabled: false, config: customerioConfig() });
    await patch(c.id, { enabled: true });
    await patch(c.id, { config: customerioConfig({ host: 'track-eu.customer.io' }) });
    const job = await unwrap(
      t.client.POST(JOB, {
        params: { path: { project_id: '1', id: c.id } },
        body: { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } },
      }),
    );
    jobId = job.job_id;
    await patch(c.id, { enabled: false });
  });

  it('when the config has a history, answers its entries newest first with the total count', async () => {
    const a = await activity(c.id);
    expect(a.total_count).toBe(5);
    expect(a.next).toBeNull();
    expect(a.previous).toBeNull();
    expect(a.results.map((e) => e.activity)).toEqual(['disabled', 'job_triggered', 'config_updated', 'enabled', 'disabled']);
    for (const e of a.results) {
      expect(e.scope).toBe('PluginConfig');
      expect(e.item_id).toBe(String(c.id));
      expect(e.id).toMatch(UUID);
      expect(e.created_at).toMatch(ISO_UTC);
      expect(e.user).toMatchObject({ email: t.boot.user.email, first_name: t.boot.user.first_name });
      expect(e.detail.name).toBe('Customer.io');
      expect(e.detail.merge).toBeNull();
    }
    const times = a.results.map((e) => Date.parse(e.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    const [, triggered, updated] = a.results;
    expect(triggered?.detail.trigger).toMatchObject({ job_type: EXPORT_JOB, job_id: jobId });
    expect(updated?.detail.changes).toEqual([
      { type: expect.any(String), action: 'changed', field: 'host', before: 'track.customer.io', after: 'track-eu.customer.io' },
    ]);
    expect(a.results[0]?.detail.changes ?? null).toBeNull();
  });

  it('when limit=2, pages through with absolute next/previous links keeping the other query parameters', async () => {
    const first = await raw('GET', `/api/environments/1/pipeline_destination_configs/${c.id}/activity/?limit=2&foo=bar`);
    expect(first.status).toBe(200);
    const p1 = first.body as ActivityLogPage;
    expect(p1.total_count).toBe(5);
    expect(p1.results.map((e) => e.activity)).toEqual(['disabled', 'job_triggered']);
    expect(p1.previous).toBeNull();
    const next = new URL(p1.next ?? '');
    expect(`${next.origin}${next.pathname}`).toBe(`${t.url}/api/environments/1/pipeline_destination_configs/${c.id}/activity/`);
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('foo')).toBe('bar');

    const p2 = await activity(c.id, { limit: 2, page: 2 });
    expect(p2.results.map((e) => e.activity)).toEqual(['config_updated', 'enabled']);
    expect(new URL(p2.previous ?? '').searchParams.get('page')).toBe('1');
    expect(new URL(p2.next ?? '').searchParams.get('page')).toBe('3');

    const p3 = await activity(c.id, { limit: 2, page: 3 });
    expect(p3.results.map((e) => e.activity)).toEqual(['disabled']);
    expect(p3.next).toBeNull();
    expect(new URL(p3.previous ?? '').searchParams.get('page')).toBe('2');

    const seen: string[] = [];
    for await (const e of paginate(t.client, p1)) seen.push(e.id);
    const all = await activity(c.id, { limit: 100 });
    expect(seen).toEqual(all.results.map((e) => e.id));
  });

  it('when the page is past the end, answers 200 with empty results', async () => {
    const a = await activity(c.id, { page: 9 });
    expect(a.results).toEqual([]);
    expect(a.total_count).toBe(5);
    expect(a.next).toBeNull();
  });

  it('when page is 0, answers 400 min_value with attr page', async () => {
    const { response, error } = await t.client.GET(ACTIVITY, { params: { path: { project_id: '1', id: c.id }, query: { page: 0 } } });
    expect(response.status).toBe(400);
    expect(error).toEqual({
      type: 'validation_error',
      code: 'min_value',
      detail: 'Ensure this value is greater than or equal to 1.',
      attr: 'page',
    });
  });

  it('when limit is above 100, 0, or not an integer, answers 400 with attr limit', async () => {
    const above = await raw('GET', `/api/environments/1/pipeline_destination_configs/${c.id}/activity/?limit=101`);
    expect(above.status).toBe(400);
    expect(above.body).toEqual({
      type: 'validation_error',
      code: 'max_value',
      detail: 'Ensure this value is less than or equal to 100.',
      attr: 'limit',
    });
    for (const q of ['limit=0', 'limit=abc', 'page=abc', 'page=-1']) {
      const res = await raw('GET', `/api/environments/1/pipeline_destination_configs/${c.id}/activity/?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body, q).toMatchObject({ type: 'validation_error', attr: q.split('=')[0] });
    }
  });

  it('when the id is not a destination config of the project, answers 404', async () => {
    const app = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true });
    const other = await create({ plugin: plugin.webhook, order: 0, enabled: true }, projectB);
    for (const id of [String(app.id), String(other.id), '999999', 'abc']) {
      const res = await raw('GET', `/api/environments/1/pipeline_destination_configs/${id}/activity/`);
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it("when the config is looked up through its own project, answers that project's log only", async () => {
    const other = await create({ plugin: plugin.webhook, order: 0, enabled: true }, projectB);
    const a = await activity(other.id, {}, projectB);
    expect(a.results.map((e) => e.activity)).toEqual(['enabled']);
  });

  it('when the key has plugin:write only, answers 200 (write satisfies read)', async () => {
    const client = t.clientFor(await t.key(['plugin:write']));
    const a = await unwrap(client.GET(ACTIVITY, { params: { path: { project_id: '1', id: c.id } } }));
    expect(a.total_count).toBe(5);
  });
});

// ------------------------------------------------------------------------------------------ auth, every operation

describe('every plugin_configs operation', () => {
  interface Op {
    name: string;
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
    path: (project: string | number) => string;
    body?: unknown;
    scope: 'plugin:read' | 'plugin:write';
  }
  let ops: Op[];
  let destination: PluginConfig;

  beforeAll(async () => {
    destination = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() });
    const app = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true });
    const d = destination.id;
    ops = [
      {
        name: 'frontend apps list',
        method: 'GET',
        path: (p) => `/api/environments/${p}/pipeline_frontend_apps_configs/`,
        scope: 'plugin:read',
      },
      {
        name: 'frontend apps create',
        method: 'POST',
        path: (p) => `/api/environments/${p}/pipeline_frontend_apps_configs/`,
        body: { plugin: plugin['notification-bar'], order: 0 },
        scope: 'plugin:write',
      },
      {
        name: 'frontend apps retrieve',
        method: 'GET',
        path: (p) => `/api/environments/${p}/pipeline_frontend_apps_configs/${app.id}/`,
        scope: 'plugin:read',
      },
      {
        name: 'destination update',
        method: 'PATCH',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/`,
        body: { enabled: false },
        scope: 'plugin:write',
      },
      {
        name: 'destination delete',
        method: 'DELETE',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/`,
        scope: 'plugin:write',
      },
      {
        name: 'rearrange',
        method: 'PATCH',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/rearrange/`,
        body: { orders: { [String(d)]: 3 } },
        scope: 'plugin:write',
      },
      {
        name: 'activity',
        method: 'GET',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/activity/`,
        scope: 'plugin:read',
      },
      {
        name: 'frontend',
        method: 'GET',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/frontend/`,
        scope: 'plugin:read',
      },
      {
        name: 'job',
        method: 'POST',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/job/`,
        body: { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } },
        scope: 'plugin:write',
      },
      {
        name: 'migrate',
        method: 'POST',
        path: (p) => `/api/environments/${p}/pipeline_destination_configs/${d}/migrate/`,
        scope: 'plugin:write',
      },
    ];
  });

  async function call(op: Op, project: string | number, key: string | null) {
    return raw(op.method, op.path(project), { key, ...(op.body !== undefined ? { body: op.body } : {}) });
  }

  it('when no Authorization header is sent, answers 401 not_authenticated', async () => {
    for (const op of ops) {
      const res = await call(op, 1, null);
      expect(res.status, op.name).toBe(401);
      expect(res.body, op.name).toEqual(NOT_AUTHENTICATED);
    }
  });

  it('when the key is unknown, answers 401 authentication_failed', async () => {
    for (const op of ops) {
      const res = await call(op, 1, 'phx_thisKeyDoesNotExist0000000000000000000000000');
      expect(res.status, op.name).toBe(401);
      expect(res.body, op.name).toEqual(INVALID_KEY);
    }
  });

  it("when the key lacks the operation's scope, answers 403 naming the scope", async () => {
    const key = await t.key(['dashboard:write', 'project:read']);
    for (const op of ops) {
      const res = await call(op, 1, key);
      expect(res.status, op.name).toBe(403);
      expect(res.body, op.name).toEqual(missingScope(op.scope));
    }
  });

  it('when the key has plugin:read, answers 403 for write operations only', async () => {
    const key = await t.key(['plugin:read']);
    for (const op of ops.filter((o) => o.scope === 'plugin:write')) {
      const res = await call(op, 1, key);
      expect(res.status, op.name).toBe(403);
      expect(res.body, op.name).toEqual(missingScope('plugin:write'));
    }
    for (const op of ops.filter((o) => o.scope === 'plugin:read')) {
      const res = await call(op, 1, key);
      expect(res.status, op.name).toBe(200);
    }
  });

  it('when the key is limited to another project, answers 403 naming the requested project', async () => {
    const key = await t.key(['*'], { projects: [projectB] });
    for (const op of ops) {
      const res = await call(op, 1, key);
      expect(res.status, op.name).toBe(403);
      expect(res.body, op.name).toEqual(projectNotAllowed(1));
    }
  });

  it("when the user is not a member of the project's organization, answers 403", async () => {
    const other = await t.otherOrganization();
    for (const op of ops) {
      const res = await call(op, 1, other.key);
      expect(res.status, op.name).toBe(403);
      expect(res.body, op.name).toEqual(NO_PROJECT_ACCESS);
    }
  });

  it('when the project does not exist, answers 404 Project not found.', async () => {
    for (const op of ops) {
      for (const project of ['999999', 'not-a-project']) {
        const res = await call(op, project, t.boot.key);
        expect(res.status, `${op.name} ${project}`).toBe(404);
        expect(res.body, op.name).toEqual(PROJECT_NOT_FOUND);
      }
    }
  });

  it('when every call above was refused, the config is left untouched', async () => {
    const s = await stored(destination.id);
    expect(s).toMatchObject({ enabled: true, deleted: false, order: 0 });
  });
});

// ------------------------------------------------------------------------------------------ projects

describe('plugin configs across projects of one organization', () => {
  it('when a config belongs to project A, no operation of project B reaches it', async () => {
    const a = await newProject('A');
    const b = await newProject('B2');
    const dest = await create({ plugin: plugin.customerio, order: 0, enabled: true, config: customerioConfig() }, a);
    const app = await create({ plugin: plugin['notification-bar'], order: 0, enabled: true }, a);
    const viaB = String(b);
    expect((await list(b)).results).toEqual([]);
    expect((await t.client.GET(FRONTEND_APP, { params: { path: { project_id: viaB, id: app.id } } })).response.status).toBe(404);
    expect(
      (await t.client.PATCH(DESTINATION, { params: { path: { project_id: viaB, id: dest.id } }, body: { enabled: false } })).response
        .status,
    ).toBe(404);
    expect((await t.client.DELETE(DESTINATION, { params: { path: { project_id: viaB, id: app.id } } })).response.status).toBe(404);
    expect((await t.client.GET(ACTIVITY, { params: { path: { project_id: viaB, id: dest.id } } })).response.status).toBe(404);
    expect((await t.client.POST(MIGRATE, { params: { path: { project_id: viaB, id: dest.id } } })).response.status).toBe(404);
    expect(
      (
        await t.client.POST(JOB, {
          params: { path: { project_id: viaB, id: dest.id } },
          body: { job: { type: EXPORT_JOB, payload: { dateRange: ['2024-10-01', '2024-10-31'] } } },
        })
      ).response.status,
    ).toBe(404);
    expect((await raw('GET', `/api/environments/${b}/pipeline_destination_configs/${dest.id}/frontend/`)).status).toBe(404);
    const rearranged = await unwrap(
      t.client.PATCH(REARRANGE, {
        params: { path: { project_id: viaB } },
        body: { orders: { [String(dest.id)]: 9, [String(app.id)]: 9 } },
      }),
    );
    expect(rearranged).toEqual([]);
    expect(await stored(dest.id)).toMatchObject({ enabled: true, deleted: false, order: 0 });
    expect(await stored(app.id)).toMatchObject({ enabled: true, deleted: false, order: 0 });
    expect((await list(a)).results.map((c) => c.id)).toEqual([app.id]);
  });
});
