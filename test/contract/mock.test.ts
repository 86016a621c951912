/**
 * Contract ↔ mock: every operation of `openapi.yaml` is called through the project's typed client
 * against the Prism mock (`npm run mock`), with valid parameters and bodies. Each answer must carry
 * the declared 2xx status, the declared shape, and the first example the spec declares for it: the
 * examples are what frontend teams build against. Also checks the mock's 401 without a key, and
 * `Prefer: code=…` / `Prefer: example=…` picking the other declared answers. The mock serves the
 * examples with their links (`next`, `previous`) pointing at itself (scripts/mock.mjs), so an
 * example is compared as the mock serves it (`asServed`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type EnvApiClient } from '../../client/index.js';
import { deref, environmentsTwin, handWrittenOperations, opObject, paramsOf, projectsCopies, spec, type Schema } from '../helpers/spec.js';
import { listCaptureOperations, type SpecOperation } from '../../server/http/spec.js';
import { startPrismMock, type PrismMock } from '../helpers/prism.js';

const called = new Set<string>();

let mock: PrismMock;
let api: EnvApiClient;

beforeAll(async () => {
  mock = await startPrismMock();
  api = createClient({ baseUrl: mock.url, apiKey: 'phx_mock' });
});

afterAll(async () => {
  await mock?.close();
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

/** The server's origin in the examples' links, which the mock serves as its own (scripts/mock.mjs). */
const SERVER_ORIGIN = 'http://127.0.0.1:8000';

/** An example as the mock serves it: its links to `http://127.0.0.1:8000/api/…` at the mock's origin. */
function asServed(value: unknown): unknown {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value).split(`${SERVER_ORIGIN}/api/`).join(`${mock.url}/api/`)) as unknown;
}

/**
 * The value of a declared example of a response, as the mock serves it (`asServed`): the first
 * one (what Prism serves by default), or the one named `name`.
 */
function exampleOf(operationId: string, status: string, mediaType = 'application/json', name?: string): unknown {
  return asServed(declaredExampleOf(operationId, status, mediaType, name));
}

/** The value of a declared example of a response, as the spec writes it. */
function declaredExampleOf(operationId: string, status: string, mediaType = 'application/json', name?: string): unknown {
  const responses = opObject(operationId).responses as Record<string, unknown>;
  const response = deref<{ content?: Record<string, { example?: unknown; examples?: Record<string, unknown> }> }>(responses[status]);
  const media = response.content?.[mediaType];
  if (!media) throw new Error(`${operationId} declares no ${mediaType} content for ${status}`);
  if (media.examples) {
    const key = name ?? Object.keys(media.examples)[0];
    if (!key || !(key in media.examples)) throw new Error(`${operationId} ${status} has no example ${name ?? ''}`);
    return deref<{ value: unknown }>(media.examples[key]).value;
  }
  if ('example' in media) return media.example;
  throw new Error(`${operationId} ${status} ${mediaType} has no example`);
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits a client call made for `operationId`, records it, asserts the status and returns the body. */
async function expectStatus<T>(operationId: string, call: Promise<Result<T>>, status: number): Promise<T> {
  const { data, error, response } = await call;
  called.add(operationId);
  expect(response.status, `${operationId}: ${JSON.stringify(error ?? data)}`).toBe(status);
  return (data ?? error) as T;
}

/** Narrows a JSON-or-CSV answer to its JSON variant (the typed client asked for JSON). */
function asJson<T>(body: T): Exclude<T, string> {
  expect(body).not.toBeTypeOf('string');
  return body as Exclude<T, string>;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function expectPluginConfig(x: unknown, opts: { pluginInfo?: 'object' | 'null' } = {}): void {
  const c = x as Json;
  expect(c).toMatchObject({ id: expect.any(Number), plugin: expect.any(Number), enabled: expect.any(Boolean), order: expect.any(Number), team_id: expect.any(Number) });
  expect(c.config).toBeTypeOf('object');
  expect(c.error).toBeNull();
  expect(c.created_at).toMatch(ISO_UTC);
  expect(c.updated_at).toMatch(ISO_UTC);
  for (const k of ['name', 'description', 'deleted', 'delivery_rate_24h', 'plugin_info']) expect(c).toHaveProperty(k);
  if (opts.pluginInfo === 'null') expect(c.plugin_info).toBeNull();
  if (opts.pluginInfo === 'object') {
    expect(c.plugin_info).toMatchObject({ id: c.plugin, name: expect.any(String), capabilities: expect.any(Object), public_jobs: expect.any(Object) });
  }
}

function expectPage(x: unknown): Json & { results: unknown[] } {
  const p = x as Json & { results: unknown[] };
  expect(p.count).toBeTypeOf('number');
  expect(Array.isArray(p.results)).toBe(true);
  expect(p).toHaveProperty('next');
  expect(p).toHaveProperty('previous');
  return p;
}

function expectErrorBody(x: unknown): Json {
  const e = x as Json;
  expect(Object.keys(e).sort()).toEqual(['attr', 'code', 'detail', 'type']);
  expect(['validation_error', 'authentication_error', 'invalid_request', 'throttled_error', 'server_error']).toContain(e.type);
  expect(e.code).toBeTypeOf('string');
  expect(e.detail).toBeTypeOf('string');
  expect(e.attr === null || typeof e.attr === 'string').toBe(true);
  return e;
}

function expectDashboard(x: unknown): Json {
  const d = x as Json;
  expect(d).toMatchObject({ id: expect.any(Number), pinned: expect.any(Boolean), deleted: expect.any(Boolean), filters: expect.any(Object), tags: expect.any(Array), tiles: expect.any(Array) });
  expect([21, 37]).toContain(d.restriction_level);
  expect(d.created_at).toMatch(ISO_UTC);
  for (const tile of d.tiles as Json[]) {
    expect(tile.id).toBeTypeOf('number');
    expect((tile.insight === null) !== (tile.text === null)).toBe(true);
  }
  return d;
}

function expectEvent(x: unknown): void {
  const e = x as Json;
  expect(e.id).toMatch(UUID);
  expect(e.distinct_id).toBeTypeOf('string');
  expect(e.event).toBeTypeOf('string');
  expect(e.properties).toBeTypeOf('object');
  expect(e.timestamp).toMatch(ISO_UTC);
  expect(Array.isArray(e.elements)).toBe(true);
  expect(e.elements_chain).toBeTypeOf('string');
  expect(e).toHaveProperty('person');
}

function expectExplicitMember(x: unknown): void {
  const m = x as Json;
  expect(m.id).toMatch(UUID);
  expect([1, 8]).toContain(m.level);
  expect([1, 8, 15]).toContain(m.parent_level);
  expect([1, 8, 15]).toContain(m.effective_level);
  expect(m.parent_membership_id).toMatch(UUID);
  expect(m.joined_at).toMatch(ISO_UTC);
  expect(m.updated_at).toMatch(ISO_UTC);
  expect(m.user).toMatchObject({ id: expect.any(Number), uuid: expect.stringMatching(UUID), email: expect.any(String) });
}

/** Raw GET against the mock (for non-JSON answers and missing keys). */
function rawGet(pathAndQuery: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mock.url + pathAndQuery, { headers });
}

const auth = { Authorization: 'Bearer phx_mock' };
const project = { project_id: '1' };

// ---------------------------------------------------------------------------------------------
// plugin_configs
// ---------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/pipeline_frontend_apps_configs/', () => {
  it('answers 200 with a PaginatedPluginConfigList, the first declared example', async () => {
    const body = await expectStatus(
      'environments_pipeline_frontend_apps_configs_list',
      api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', { params: { path: project, query: { limit: 100, offset: 0 } } }),
      200,
    );
    const page = expectPage(body);
    expect(page.results.length).toBeGreaterThan(0);
    for (const c of page.results) expectPluginConfig(c, { pluginInfo: 'null' });
    expect(body).toEqual(exampleOf('environments_pipeline_frontend_apps_configs_list', '200'));
  });

  it('with Prefer: example=first_page, answers the page with a next link', async () => {
    const body = await expectStatus(
      'environments_pipeline_frontend_apps_configs_list',
      api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project, query: { limit: 1 } },
        headers: { Prefer: 'example=first_page' },
      }),
      200,
    );
    expect(body).toEqual(exampleOf('environments_pipeline_frontend_apps_configs_list', '200', 'application/json', 'first_page'));
    expect(body.next).toMatch(/^http:\/\/.+offset=1/);
  });

  it('links its next page to the mock itself, which answers it (the spec writes the server, http://127.0.0.1:8000)', async () => {
    expect(String((declaredExampleOf('environments_pipeline_frontend_apps_configs_list', '200', 'application/json', 'first_page') as Json).next)).toMatch(/^http:\/\/127\.0\.0\.1:8000\/api\//);
    const { data } = await api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', { params: { path: project, query: { limit: 1 } }, headers: { Prefer: 'example=first_page' } });
    const next = String(data?.next);
    expect(next.startsWith(`${mock.url}/api/environments/1/pipeline_frontend_apps_configs/?`)).toBe(true);
    const res = await fetch(next, { headers: { Authorization: 'Bearer phx_mock' } });
    expect(res.status).toBe(200);
  });
});

describe('GET /api/schema/', () => {
  it('answers the YAML example without a key, and the JSON one for Accept: application/json', async () => {
    const yaml = await fetch(`${mock.url}/api/schema/`);
    called.add('schema_retrieve');
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/vnd\.oai\.openapi/);
    expect(await yaml.text()).toBe(exampleOf('schema_retrieve', '200', 'application/vnd.oai.openapi'));
    const json = await fetch(`${mock.url}/api/schema/`, { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toEqual(exampleOf('schema_retrieve', '200', 'application/json'));
  });
});

describe('GET /api/environments/{project_id}/pipeline_destination_configs/ and /{id}/', () => {
  it('lists destination configs (200, the declared example)', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_list',
      api.GET('/api/environments/{project_id}/pipeline_destination_configs/', { params: { path: project, query: { limit: 100 } } }),
      200,
    );
    for (const c of expectPage(body).results) expectPluginConfig(c, { pluginInfo: 'null' });
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_list', '200'));
  });

  it('retrieves one with plugin_info (200, the declared example)', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_retrieve',
      api.GET('/api/environments/{project_id}/pipeline_destination_configs/{id}/', { params: { path: { ...project, id: 42 } } }),
      200,
    );
    expectPluginConfig(body, { pluginInfo: 'object' });
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_retrieve', '200'));
  });
});

describe('POST /api/environments/{project_id}/pipeline_frontend_apps_configs/', () => {
  it('answers 201 with the created PluginConfig, plugin_info included', async () => {
    const body = await expectStatus(
      'environments_pipeline_frontend_apps_configs_create',
      api.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project },
        body: { plugin: 8, order: 1, enabled: true, config: { domains: 'hedgebox.net', fallingObject: '🍍' } },
      }),
      201,
    );
    expectPluginConfig(body, { pluginInfo: 'object' });
    expect(body).toEqual(exampleOf('environments_pipeline_frontend_apps_configs_create', '201'));
  });
});

describe('GET /api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/', () => {
  it('answers 200 with the example PluginConfig (Notification Bar, id 57)', async () => {
    const body = await expectStatus(
      'environments_pipeline_frontend_apps_configs_retrieve',
      api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/', { params: { path: { ...project, id: 57 } } }),
      200,
    );
    expectPluginConfig(body, { pluginInfo: 'object' });
    expect(body.id).toBe(57);
    expect(body.id).toBe((exampleOf('environments_pipeline_frontend_apps_configs_retrieve', '200') as Json).id);
    expect(body).toEqual(exampleOf('environments_pipeline_frontend_apps_configs_retrieve', '200'));
  });

  it('with Prefer: code=404, answers 404 with the Error shape', async () => {
    const { data, error, response } = await api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/', {
      params: { path: { ...project, id: 57 } },
      headers: { Prefer: 'code=404' },
    });
    expect(response.status).toBe(404);
    expect(data).toBeUndefined();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const e = expectErrorBody(error);
    expect(e).toMatchObject({ type: 'invalid_request', code: 'not_found', attr: null });
    expect(e).toEqual(exampleOf('environments_pipeline_frontend_apps_configs_retrieve', '404'));
  });

  it('without an Authorization header, answers 401 with the Error shape', async () => {
    const res = await rawGet('/api/environments/1/pipeline_frontend_apps_configs/57/');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const e = expectErrorBody(await res.json());
    expect(e).toMatchObject({ type: 'authentication_error', code: 'not_authenticated', attr: null });
  });
});

describe('PATCH /api/environments/{project_id}/pipeline_destination_configs/rearrange/', () => {
  it('answers 200 with a plain array of PluginConfig, plugin_info null', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_rearrange_partial_update',
      api.PATCH('/api/environments/{project_id}/pipeline_destination_configs/rearrange/', {
        params: { path: project },
        body: { orders: { '42': 2, '43': 1 } },
      }),
      200,
    );
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    for (const c of body) expectPluginConfig(c, { pluginInfo: 'null' });
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_rearrange_partial_update', '200'));
  });
});

describe('PATCH /api/environments/{project_id}/pipeline_destination_configs/{id}/', () => {
  it('answers 200 with the updated PluginConfig', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_partial_update',
      api.PATCH('/api/environments/{project_id}/pipeline_destination_configs/{id}/', {
        params: { path: { ...project, id: 42 } },
        body: { name: 'Customer.io (EU)', config: { host: 'track-eu.customer.io' } },
      }),
      200,
    );
    expectPluginConfig(body, { pluginInfo: 'object' });
    expect(body.id).toBe(42);
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_partial_update', '200'));
  });
});

describe('DELETE /api/environments/{project_id}/pipeline_destination_configs/{id}/', () => {
  it('answers 204 with no body', async () => {
    const { data, response } = await api.DELETE('/api/environments/{project_id}/pipeline_destination_configs/{id}/', {
      params: { path: { ...project, id: 42 } },
    });
    called.add('environments_pipeline_destination_configs_destroy');
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
  });
});

describe('GET /api/environments/{project_id}/pipeline_destination_configs/{id}/activity/', () => {
  it('answers 200 with an ActivityLogPage', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_activity_retrieve',
      api.GET('/api/environments/{project_id}/pipeline_destination_configs/{id}/activity/', {
        params: { path: { ...project, id: 42 }, query: { page: 1, limit: 10 } },
      }),
      200,
    );
    expect(body.total_count).toBeTypeOf('number');
    expect(body).toHaveProperty('next');
    expect(body).toHaveProperty('previous');
    expect(body.results.length).toBeGreaterThan(0);
    for (const entry of body.results) {
      expect(entry.id).toMatch(UUID);
      expect(entry.activity).toBeTypeOf('string');
      expect(entry.scope).toBe('PluginConfig');
      expect(entry.item_id).toBeTypeOf('string');
      expect(entry.created_at).toMatch(ISO_UTC);
      expect(entry.detail).toHaveProperty('changes');
    }
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_activity_retrieve', '200'));
  });
});

describe('GET /api/environments/{project_id}/pipeline_destination_configs/{id}/frontend/', () => {
  it('answers 200 application/javascript with getFrontendApp', async () => {
    const res = await rawGet('/api/environments/1/pipeline_destination_configs/42/frontend/', { ...auth, Accept: 'application/javascript' });
    called.add('environments_pipeline_destination_configs_frontend_retrieve');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/javascript/);
    const text = await res.text();
    expect(text).toContain('getFrontendApp');
    expect(text).toBe(exampleOf('environments_pipeline_destination_configs_frontend_retrieve', '200', 'application/javascript'));
  });
});

describe('POST /api/environments/{project_id}/pipeline_destination_configs/{id}/job/', () => {
  it('answers 200 with the recorded job (PluginConfigJobResult)', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_job_create',
      api.POST('/api/environments/{project_id}/pipeline_destination_configs/{id}/job/', {
        params: { path: { ...project, id: 45 } },
        body: { job: { type: 'Export historical events V2', payload: { dateRange: ['2024-10-01', '2024-10-31'] }, operation: 'start' } },
      }),
      200,
    );
    expect(body.job_id).toMatch(UUID);
    expect(body.type).toBeTypeOf('string');
    expect(body.payload).toBeTypeOf('object');
    expect(body.operation).toBe('start');
    expect(body.plugin_config_id).toBeTypeOf('number');
    expect(body.created_at).toMatch(ISO_UTC);
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_job_create', '200'));
  });
});

describe('POST /api/environments/{project_id}/pipeline_destination_configs/{id}/migrate/', () => {
  it('answers 200 with the created destination function (HogFunctionMigration)', async () => {
    const body = await expectStatus(
      'environments_pipeline_destination_configs_migrate_create',
      api.POST('/api/environments/{project_id}/pipeline_destination_configs/{id}/migrate/', { params: { path: { ...project, id: 42 } } }),
      200,
    );
    expect(body.id).toMatch(UUID);
    expect(body.type).toBe('destination');
    expect(body.template_id).toMatch(/^template-/);
    expect(body.enabled).toBeTypeOf('boolean');
    expect(body.inputs).toBeTypeOf('object');
    expect(body.filters).toBeTypeOf('object');
    expect(body.plugin_config_id).toBeTypeOf('number');
    expect(body.created_at).toMatch(ISO_UTC);
    expect(body).toEqual(exampleOf('environments_pipeline_destination_configs_migrate_create', '200'));
  });
});

// ---------------------------------------------------------------------------------------------
// projects
// ---------------------------------------------------------------------------------------------

describe('GET /api/projects/', () => {
  it('answers 200 with a PaginatedProjectList', async () => {
    const body = await expectStatus('projects_list', api.GET('/api/projects/', { params: { query: { limit: 100 } } }), 200);
    const page = expectPage(body);
    expect(page.results.length).toBeGreaterThan(0);
    for (const p of body.results) {
      expect(p.id).toBeTypeOf('number');
      expect(p.uuid).toMatch(UUID);
      expect(p.organization).toMatch(UUID);
      expect(p.name).toBeTypeOf('string');
      expect(p.api_token).toMatch(/^phc_/);
      expect(p.timezone).toBeTypeOf('string');
      expect(p.access_control).toBeTypeOf('boolean');
    }
    expect(body).toEqual(exampleOf('projects_list', '200'));
  });
});

// ---------------------------------------------------------------------------------------------
// dashboards
// ---------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/dashboards/', () => {
  it('answers 200 with a page of dashboards without tiles', async () => {
    const body = await expectStatus(
      'environments_dashboards_list',
      api.GET('/api/environments/{project_id}/dashboards/', { params: { path: project } }),
      200,
    );
    expect(body.count).toBe(body.results.length);
    for (const d of body.results) expect(d).not.toHaveProperty('tiles');
    expect(body).toEqual(exampleOf('environments_dashboards_list', '200'));
  });
});

describe('GET /api/environments/{project_id}/dashboards/{id}/', () => {
  it('answers 200 with the Dashboard and its tiles', async () => {
    const body = await expectStatus(
      'environments_dashboards_retrieve',
      api.GET('/api/environments/{project_id}/dashboards/{id}/', { params: { path: { ...project, id: 21 } } }),
      200,
    );
    expectDashboard(body);
    expect(body).toEqual(exampleOf('environments_dashboards_retrieve', '200'));
  });
});

describe('PATCH /api/environments/{project_id}/dashboards/{id}/move_tile/', () => {
  it('answers 200 with the source Dashboard', async () => {
    const body = await expectStatus(
      'environments_dashboards_move_tile_partial_update',
      api.PATCH('/api/environments/{project_id}/dashboards/{id}/move_tile/', {
        params: { path: { ...project, id: 14 } },
        body: { tile: { id: 87 }, toDashboard: 15 },
      }),
      200,
    );
    expectDashboard(body);
    expect(body.id).toBe(14);
    expect(body).toEqual(exampleOf('environments_dashboards_move_tile_partial_update', '200'));
  });
});

describe('POST /api/environments/{project_id}/dashboards/create_from_template_json/', () => {
  it('answers 200 with the created Dashboard', async () => {
    const body = await expectStatus(
      'environments_dashboards_create_from_template_json_create',
      api.POST('/api/environments/{project_id}/dashboards/create_from_template_json/', {
        params: { path: project },
        body: {
          template: {
            template_name: 'Product analytics',
            dashboard_description: 'Track the usage of your product.',
            dashboard_filters: {},
            tags: ['product'],
            tiles: [
              {
                type: 'INSIGHT',
                name: 'Daily active users',
                query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, math: 'dau' }] } },
                layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
              },
              { type: 'TEXT', body: '## How to read this dashboard', layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } },
            ],
          },
          pinned: true,
        },
      }),
      200,
    );
    expectDashboard(body);
    expect(body.tiles.length).toBeGreaterThan(0);
    expect(body).toEqual(exampleOf('environments_dashboards_create_from_template_json_create', '200'));
  });
});

// ---------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/', () => {
  it('answers 200 with a page of ClickhouseEvent', async () => {
    const body = asJson(
      await expectStatus(
        'environments_events_list',
        api.GET('/api/environments/{project_id}/events/', { params: { path: project, query: { event: '$pageview', limit: 2 } } }),
        200,
      ),
    );
    expect(body).toHaveProperty('next');
    expect(body.results.length).toBeGreaterThan(0);
    for (const e of body.results) expectEvent(e);
    expect(body).toEqual(exampleOf('environments_events_list', '200'));
  });

  it('with format=csv, answers 200 text/csv', async () => {
    const res = await rawGet('/api/environments/1/events/?format=csv', { ...auth, Accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await res.text();
    expect(text.split('\r\n')[0]).toContain('distinct_id');
    expect(text).toBe(exampleOf('environments_events_list', '200', 'text/csv'));
  });
});

describe('GET /api/environments/{project_id}/events/values/', () => {
  it('answers 200 with a bare array of {name}', async () => {
    const body = asJson(
      await expectStatus(
        'environments_events_values_retrieve',
        api.GET('/api/environments/{project_id}/events/values/', { params: { path: project, query: { key: '$browser' } } }),
        200,
      ),
    );
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    expect(body.length).toBeLessThanOrEqual(10);
    for (const v of body) expect(Object.keys(v)).toEqual(['name']);
    expect(body).toEqual(exampleOf('environments_events_values_retrieve', '200'));
  });

  it('with format=csv, answers 200 text/csv with a name column', async () => {
    const res = await rawGet('/api/environments/1/events/values/?key=%24browser&format=csv', { ...auth, Accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await res.text();
    expect(text.split('\r\n')[0]).toBe('name');
    expect(text).toBe(exampleOf('environments_events_values_retrieve', '200', 'text/csv'));
  });
});

describe('GET /api/environments/{project_id}/events/{id}/', () => {
  it('answers 200 with the ClickhouseEvent', async () => {
    const id = '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f';
    const body = asJson(
      await expectStatus(
        'environments_events_retrieve',
        api.GET('/api/environments/{project_id}/events/{id}/', { params: { path: { ...project, id } } }),
        200,
      ),
    );
    expectEvent(body);
    expect(body.id).toBe(id);
    expect(body).toEqual(exampleOf('environments_events_retrieve', '200'));
  });

  it('with format=csv, answers 200 text/csv', async () => {
    const res = await rawGet('/api/environments/1/events/01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f/?format=csv', { ...auth, Accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await res.text()).toBe(exampleOf('environments_events_retrieve', '200', 'text/csv'));
  });
});

// ---------------------------------------------------------------------------------------------
// explicit_members
// ---------------------------------------------------------------------------------------------

const memberUuid = '01934a10-7b2c-7d3e-8f4a-5b6c7d8e9f01';

describe('GET /api/environments/{project_id}/explicit_members/', () => {
  it('answers 200 with a bare array of ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_list',
      api.GET('/api/environments/{project_id}/explicit_members/', { params: { path: project } }),
      200,
    );
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    for (const m of body) expectExplicitMember(m);
    expect(body).toEqual(exampleOf('environments_explicit_members_list', '200'));
  });
});

describe('POST /api/environments/{project_id}/explicit_members/', () => {
  it('answers 201 with the new ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_create',
      api.POST('/api/environments/{project_id}/explicit_members/', { params: { path: project }, body: { user_uuid: memberUuid, level: 1 } }),
      201,
    );
    expectExplicitMember(body);
    expect(body.user.uuid).toBe(memberUuid);
    expect(body).toEqual(exampleOf('environments_explicit_members_create', '201'));
  });
});

describe('GET /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 200 with the ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_retrieve',
      api.GET('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
        params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
      }),
      200,
    );
    expectExplicitMember(body);
    expect(body).toEqual(exampleOf('environments_explicit_members_retrieve', '200'));
  });
});

describe('PATCH /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 200 with the updated ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_partial_update',
      api.PATCH('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
        params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
        body: { level: 8 },
      }),
      200,
    );
    expectExplicitMember(body);
    expect(body.level).toBe(8);
    expect(body).toEqual(exampleOf('environments_explicit_members_partial_update', '200'));
  });
});

describe('DELETE /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 204 with no body', async () => {
    const { response, data } = await api.DELETE('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
      params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
    });
    called.add('environments_explicit_members_destroy');
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// identity and discovery, persons, event definitions
// ---------------------------------------------------------------------------------------------

describe('identity, discovery, persons and event definitions: the first declared example of each', () => {
  const org = { id: '0192f1a4-5b7c-7d2e-9f31-6a8b4c2d1e0f' };
  it('GET /api/users/@me/', async () => {
    const body = await expectStatus('users_retrieve', api.GET('/api/users/{uuid}/', { params: { path: { uuid: '@me' } } }), 200);
    expect(body).toEqual(exampleOf('users_retrieve', '200'));
  });
  it('GET /api/personal_api_keys/@current/', async () => {
    const body = await expectStatus('personal_api_keys_retrieve', api.GET('/api/personal_api_keys/{id}/', { params: { path: { id: '@current' } } }), 200);
    expect(body).toEqual(exampleOf('personal_api_keys_retrieve', '200'));
  });
  it('GET /api/organizations/ and /{id}/ and /{id}/projects/', async () => {
    expect(await expectStatus('organizations_list', api.GET('/api/organizations/', {}), 200)).toEqual(exampleOf('organizations_list', '200'));
    expect(await expectStatus('organizations_retrieve', api.GET('/api/organizations/{id}/', { params: { path: { id: '@current' } } }), 200)).toEqual(exampleOf('organizations_retrieve', '200'));
    expect(await expectStatus('organizations_projects_list', api.GET('/api/organizations/{organization_id}/projects/', { params: { path: { organization_id: org.id } } }), 200)).toEqual(
      exampleOf('organizations_projects_list', '200'),
    );
  });
  it('GET /api/projects/{id}/ and /api/environments/{id}/', async () => {
    expect(await expectStatus('projects_retrieve', api.GET('/api/projects/{id}/', { params: { path: { id: '1' } } }), 200)).toEqual(exampleOf('projects_retrieve', '200'));
    expect(await expectStatus('environments_retrieve', api.GET('/api/environments/{id}/', { params: { path: { id: '@current' } } }), 200)).toEqual(exampleOf('environments_retrieve', '200'));
  });
  it('GET persons/ and persons/{id}/', async () => {
    expect(await expectStatus('environments_persons_list', api.GET('/api/environments/{project_id}/persons/', { params: { path: project } }), 200)).toEqual(exampleOf('environments_persons_list', '200'));
    const one = await expectStatus('environments_persons_retrieve', api.GET('/api/environments/{project_id}/persons/{id}/', { params: { path: { ...project, id: '1' } } }), 200);
    expect(one).toEqual(exampleOf('environments_persons_retrieve', '200'));
  });
  it('POST query/ with a HogQLQuery', async () => {
    const body = await expectStatus(
      'environments_query_create',
      api.POST('/api/environments/{project_id}/query/', { params: { path: project }, body: { query: { kind: 'HogQLQuery', query: 'select event, count() from events group by event' } } }),
      200,
    );
    expect(body).toEqual(exampleOf('environments_query_create', '200'));
  });
  it('GET /api/projects/{project_id}/event_definitions/', async () => {
    const body = await expectStatus('event_definitions_list', api.GET('/api/projects/{project_id}/event_definitions/', { params: { path: project } }), 200);
    expect(body).toEqual(exampleOf('event_definitions_list', '200'));
  });
});

describe('the Prism mock, capture endpoints (x-served-by: capture)', () => {
  const captureOps = listCaptureOperations(spec).filter((o) => opObject(o).tags?.includes('capture'));
  it.each(captureOps.filter((o) => o.method === 'post').map((o) => [o.path]))('POST %s with the batch example and the project token answers the 200 example', async (path) => {
    const op = captureOps.find((o) => o.path === path && o.method === 'post')!;
    const body = deref<Schema>(opObject(op).requestBody).content['application/json'].examples.batch;
    const res = await fetch(`${mock.url}${path}?token=phc_mock`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(deref<{ value: unknown }>(body).value) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'Ok' });
  });
});

describe('the Prism mock, SDK start-up calls (tag sdk)', () => {
  const exampleValue = (op: string, status: string, media: string) => {
    const found = listCaptureOperations(spec).find((o) => o.operationId === op)!;
    const content = deref<Schema>(opObject(found).responses[status]).content[media];
    return deref<{ value: unknown }>(Object.values(content.examples as Record<string, unknown>)[0]).value;
  };
  it('POST /flags/?v=2 answers the no-flag example', async () => {
    const res = await fetch(`${mock.url}/flags/?v=2&token=phc_mock`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: 'phc_mock', distinct_id: 'u' }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(exampleValue('capture_flags_create', '200', 'application/json'));
  });
  it('GET /array/{token}/config and config.js answer the remote config examples', async () => {
    const json = await fetch(`${mock.url}/array/phc_mock/config`);
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual(exampleValue('capture_array_config_retrieve', '200', 'application/json'));
    const js = await fetch(`${mock.url}/array/phc_mock/config.js`);
    expect(js.status).toBe(200);
    expect(await js.text()).toBe(exampleValue('capture_array_config_js_retrieve', '200', 'application/javascript'));
  });
});

// ---------------------------------------------------------------------------------------------
// Coverage: must stay last in this file.
// ---------------------------------------------------------------------------------------------

describe('the Prism mock', () => {
  it('was called for every hand-written operationId of openapi.yaml, and for no other', () => {
    const inSpec = new Set(handWrittenOperations.map((o) => o.operationId));
    expect([...called].sort()).toEqual([...inSpec].sort());
  });
});

/**
 * A request of `op` built from the spec's examples: each path parameter's first example, each
 * required query parameter's, the request body's first example.
 */
function exampleRequest(op: SpecOperation): { path: string; init: RequestInit } {
  const exampleOf = (p: { example?: unknown; examples?: Record<string, { value?: unknown }> }) => p.example ?? Object.values(p.examples ?? {})[0]?.value;
  let path = op.path;
  const query = new URLSearchParams();
  for (const p of paramsOf(op)) {
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(exampleOf(p))));
    else if (p.in === 'query' && p.required) query.set(p.name, String(exampleOf(p)));
  }
  const init: RequestInit = { method: op.method.toUpperCase(), headers: { Authorization: 'Bearer phx_mock' } };
  const rb = opObject(op).requestBody;
  if (rb) {
    const examples = deref<Schema>(rb).content?.['application/json']?.examples as Record<string, unknown> | undefined;
    const first = examples && deref<{ value: unknown }>(Object.values(examples)[0]).value;
    init.body = JSON.stringify(first);
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
  }
  return { path: query.size ? `${path}?${query}` : path, init };
}

describe('the Prism mock, under /api/projects/{project_id}/', () => {
  it.each(projectsCopies.map((o) => [o.operationId, o]))('serves %s as it serves its /api/environments/ twin', async (_id, op) => {
    const twin = environmentsTwin(op)!;
    const [mine, theirs] = [exampleRequest(op), exampleRequest(twin)];
    const [a, b] = await Promise.all([fetch(mock.url + mine.path, mine.init), fetch(mock.url + theirs.path, theirs.init)]);
    // the same answer (the examples are shared components), and never Prism's 404 of an unknown path
    expect(a.status, `${op.method} ${mine.path}`).toBe(b.status);
    expect(a.status).not.toBe(404);
    expect(await a.text()).toBe(await b.text());
  });
});
