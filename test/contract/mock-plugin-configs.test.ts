/**
 * Contract ↔ mock, the plugin configs (tag `plugin_configs`: `pipeline_frontend_apps_configs`,
 * `pipeline_destination_configs`): each operation is called through the project's typed client
 * against the Prism mock (`npm run mock`), with valid parameters and bodies. Each answer must carry
 * the declared 2xx status, the declared shape, and the first example the spec declares for it: the
 * examples are what frontend teams build against. Also checks the mock's 401 without a key, and
 * `Prefer: code=…` / `Prefer: example=…` picking the other declared answers, and the next link of
 * a page pointing at the mock itself (scripts/mock.mjs). The other hand-written operations are in
 * mock-resources.test.ts; each file's last test checks that it called every operation of its share.
 */
import { describe, expect, it } from 'vitest';
import {
  api,
  called,
  declaredExampleOf,
  exampleOf,
  expectPage,
  expectStatus,
  handWrittenOperationIds,
  ISO_UTC,
  mock,
  project,
  rawGet,
  useMock,
  UUID,
  auth,
  type Json,
} from '../helpers/mock-contract.js';

useMock();

/** Asserts the shape of a PluginConfig; `pluginInfo` says what its `plugin_info` must be. */
function expectPluginConfig(x: unknown, opts: { pluginInfo?: 'object' | 'null' } = {}): void {
  const c = x as Json;
  expect(c).toMatchObject({
    id: expect.any(Number),
    plugin: expect.any(Number),
    enabled: expect.any(Boolean),
    order: expect.any(Number),
    team_id: expect.any(Number),
  });
  expect(c.config).toBeTypeOf('object');
  expect(c.error).toBeNull();
  expect(c.created_at).toMatch(ISO_UTC);
  expect(c.updated_at).toMatch(ISO_UTC);
  for (const k of ['name', 'description', 'deleted', 'delivery_rate_24h', 'plugin_info']) expect(c).toHaveProperty(k);
  if (opts.pluginInfo === 'null') expect(c.plugin_info).toBeNull();
  if (opts.pluginInfo === 'object') {
    expect(c.plugin_info).toMatchObject({
      id: c.plugin,
      name: expect.any(String),
      capabilities: expect.any(Object),
      public_jobs: expect.any(Object),
    });
  }
}

/** Asserts PostHog's error shape (`type`, `code`, `detail`, `attr`) and returns the error. */
function expectErrorBody(x: unknown): Json {
  const e = x as Json;
  expect(Object.keys(e).sort()).toEqual(['attr', 'code', 'detail', 'type']);
  expect(['validation_error', 'authentication_error', 'invalid_request', 'throttled_error', 'server_error']).toContain(e.type);
  expect(e.code).toBeTypeOf('string');
  expect(e.detail).toBeTypeOf('string');
  expect(e.attr === null || typeof e.attr === 'string').toBe(true);
  return e;
}

describe('GET /api/environments/{project_id}/pipeline_frontend_apps_configs/', () => {
  it('answers 200 with a PaginatedPluginConfigList, the first declared example', async () => {
    const body = await expectStatus(
      'environments_pipeline_frontend_apps_configs_list',
      api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project, query: { limit: 100, offset: 0 } },
      }),
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
    expect(
      String((declaredExampleOf('environments_pipeline_frontend_apps_configs_list', '200', 'application/json', 'first_page') as Json).next),
    ).toMatch(/^http:\/\/127\.0\.0\.1:8000\/api\//);
    const { data } = await api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
      params: { path: project, query: { limit: 1 } },
      headers: { Prefer: 'example=first_page' },
    });
    const next = String(data?.next);
    expect(next.startsWith(`${mock.url}/api/environments/1/pipeline_frontend_apps_configs/?`)).toBe(true);
    const res = await fetch(next, { headers: { Authorization: 'Bearer phx_mock' } });
    expect(res.status).toBe(200);
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
    const res = await rawGet('/api/environments/1/pipeline_destination_configs/42/frontend/', {
      ...auth,
      Accept: 'application/javascript',
    });
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
// Coverage: must stay last in this file.
// ---------------------------------------------------------------------------------------------

describe('the Prism mock', () => {
  it('was called for every hand-written operationId of openapi.yaml tagged plugin_configs, and for no other', () => {
    expect([...called].sort()).toEqual(handWrittenOperationIds((tags) => tags.includes('plugin_configs')));
  });
});
