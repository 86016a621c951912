/**
 * `GET …/pipeline_destination_configs/` and `GET …/pipeline_destination_configs/{id}/` through the
 * real HTTP stack, under both prefixes (`/api/environments/` and `/api/projects/`, as PostHog's
 * frontend loads destinations): only the project's non-deleted destination configs (plugins with
 * `methods` or `scheduled_tasks`), ordered as the frontend apps list, paginated with links that
 * keep the caller's prefix; retrieve answers `plugin_info` and 404 for another kind's config.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paginate, unwrap, type components } from '../../client/index.js';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope, NOT_FOUND } from '../helpers/errors.js';

type PluginConfig = components['schemas']['PluginConfig'];
type PluginConfigRequest = components['schemas']['PluginConfigRequest'];
type PaginatedPluginConfigList = components['schemas']['PaginatedPluginConfigList'];

let t: TestServer;
const plugin: Record<string, number> = {};
let project: number;
/** the project's non-deleted destination configs, in list order */
let expected: number[];
let frontendApp: PluginConfig;

async function create(body: PluginConfigRequest, projectId: number): Promise<PluginConfig> {
  return unwrap(
    t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
      params: { path: { project_id: String(projectId) } },
      body,
    }),
  );
}

async function getJson(path: string, key?: string): Promise<{ status: number; body: unknown }> {
  const res = await t.fetch(path, key ? { key } : {});
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  t = await startTestServer();
  for (const entry of PLUGIN_CATALOG) plugin[entry.key] = t.boot.plugins.find((p) => p.url === entry.url)!.id;
  project = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Destinations' })).id;
  const other = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Other' })).id;
  const d1 = await create({ plugin: plugin.customerio!, order: 2, enabled: true }, project);
  const d2 = await create({ plugin: plugin.webhook!, order: 0 }, project);
  const d3 = await create({ plugin: plugin.hubspot!, order: 2 }, project);
  await create({ plugin: plugin.customerio!, order: 1, deleted: true }, project);
  // other kinds, and a destination of another project
  frontendApp = await create({ plugin: plugin['notification-bar']!, order: -1, enabled: true }, project);
  await create({ plugin: plugin['pineapple-mode']!, order: -1 }, project);
  await create({ plugin: plugin.customerio!, order: 0 }, other);
  // order, then plugin id, then config id
  expected = [d2, d1, d3].sort((a, b) => a.order - b.order || a.plugin - b.plugin || a.id - b.id).map((c) => c.id);
});

afterAll(async () => {
  await t?.close();
});

describe.each(['environments', 'projects'])('under /api/%s/{project_id}/', (prefix) => {
  const listPath = (query = '') => `/api/${prefix}/${project}/pipeline_destination_configs/${query}`;

  it('lists only the non-deleted destination configs, ordered by order, plugin id, then id; plugin_info null', async () => {
    const { status, body } = await getJson(listPath());
    expect(status).toBe(200);
    const page = body as PaginatedPluginConfigList;
    expect(page).toMatchObject({ count: 3, next: null, previous: null });
    expect(page.results.map((c) => c.id)).toEqual(expected);
    for (const c of page.results) {
      expect(c.team_id).toBe(project);
      expect(c.plugin_info).toBeNull();
      expect(c.deleted).toBe(false);
    }
  });

  it('paginates with absolute links that keep the prefix and the other parameters', async () => {
    const { body } = await getJson(listPath('?limit=1&offset=1&mine=x'));
    const page = body as PaginatedPluginConfigList;
    expect(page.results.map((c) => c.id)).toEqual([expected[1]]);
    expect(page.next).toBe(`${t.url}/api/${prefix}/${project}/pipeline_destination_configs/?limit=1&offset=2&mine=x`);
    expect(page.previous).toBe(`${t.url}/api/${prefix}/${project}/pipeline_destination_configs/?limit=1&mine=x`);
  });

  it('answers 400 on a limit that is not an integer', async () => {
    const { status, body } = await getJson(listPath('?limit=abc'));
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'validation_error', attr: 'limit' });
  });

  it('retrieves a destination config with plugin_info; a frontend app config or an unknown id is 404', async () => {
    const { status, body } = await getJson(`/api/${prefix}/${project}/pipeline_destination_configs/${expected[0]}/`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: expected[0],
      team_id: project,
      plugin_info: { id: expect.any(Number), capabilities: expect.any(Object) },
    });
    for (const id of [frontendApp.id, 999_999]) {
      const r = await getJson(`/api/${prefix}/${project}/pipeline_destination_configs/${id}/`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual(NOT_FOUND);
    }
  });

  it('needs plugin:read: a dashboard-only key gets 403', async () => {
    const key = await t.key(['dashboard:read']);
    const r = await getJson(listPath(), key);
    expect(r.status).toBe(403);
    expect(r.body).toEqual(missingScope('plugin:read'));
  });
});

it('the typed client pages through every destination of project 1 under both prefixes alike', async () => {
  for (const plug of ['customerio', 'webhook', 'hubspot']) await create({ plugin: plugin[plug]!, order: 0 }, 1);
  const all = async (first: PaginatedPluginConfigList) => {
    const ids: number[] = [];
    for await (const c of paginate(t.client, first)) ids.push(c.id);
    return ids;
  };
  const viaEnvironments = await all(
    await unwrap(
      t.client.GET('/api/environments/{project_id}/pipeline_destination_configs/', {
        params: { path: { project_id: '1' }, query: { limit: 2 } },
      }),
    ),
  );
  const viaProjects = await all(
    await unwrap(
      t.client.GET('/api/projects/{project_id}/pipeline_destination_configs/', {
        params: { path: { project_id: '@current' }, query: { limit: 2 } },
      }),
    ),
  );
  expect(viaEnvironments.length).toBeGreaterThanOrEqual(3);
  expect(viaProjects).toEqual(viaEnvironments);
});
