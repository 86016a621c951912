/**
 * PostHog's own web frontend, replayed: the requests its `lib/api.ts` and scene logics send for
 * plugin configs, dashboards and explicit members (PostHog/posthog frontend/src/lib/api.ts,
 * scenes/dashboard/dashboardLogic.tsx, scenes/dashboard/newDashboardLogic.ts,
 * scenes/project/Settings/teamMembersLogic.tsx, the pipeline scene logics), each as it sends it:
 * relative `api/…` URLs without the trailing slash, `@current` or the numeric team id, the
 * `/api/projects/` prefix where the frontend uses it, JSON bodies with the fields it adds
 * (`creation_context`, `_create_in_folder`, a whole tile object), and `loadPaginatedResults`,
 * which follows `next` until it is null. Each answer must be what the frontend then reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { OrganizationLevel } from '../../server/storage/repositories/accounts.js';

let t: TestServer;
let teamId: number;

beforeAll(async () => {
  t = await startTestServer();
  teamId = t.boot.team.id;
});

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;

/** `api.get/create/update/delete` of lib/api.ts: a relative `api/…` URL, JSON in and out. */
async function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await t.fetch(url.startsWith('http') ? url.slice(t.url.length) : `/${url}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
}

/** `api.loadPaginatedResults(url)`: GET, then every `next`, collecting `results`. */
async function loadPaginatedResults(url: string): Promise<Json[]> {
  const out: Json[] = [];
  let next: string | null = url;
  while (next) {
    const page: { status: number; json: Json } = await api('GET', next);
    expect(page.status, next).toBe(200);
    out.push(...(page.json.results as Json[]));
    next = page.json.next as string | null;
  }
  return out;
}

describe('pipeline scene logics: destinations and site apps', () => {
  it('load every config of each kind with loadPaginatedResults, @current and the numeric id alike', async () => {
    const plugin = (part: string) => t.boot.plugins.find((p) => p.url.includes(part))!.id;
    for (let i = 0; i < 3; i += 1) {
      expect(
        (
          await api('POST', `api/environments/${teamId}/pipeline_frontend_apps_configs`, {
            plugin: plugin('customerio'),
            order: i,
            enabled: true,
          })
        ).status,
      ).toBe(201);
      expect(
        (await api('POST', `api/environments/${teamId}/pipeline_frontend_apps_configs`, { plugin: plugin('notification-bar'), order: i }))
          .status,
      ).toBe(201);
    }
    const destinations = await loadPaginatedResults('api/projects/@current/pipeline_destination_configs');
    const apps = await loadPaginatedResults(`api/projects/${teamId}/pipeline_frontend_apps_configs`);
    expect(destinations).toHaveLength(3);
    expect(apps).toHaveLength(3);
    // the 2026 migration helper's form
    const limited = await api('GET', `api/projects/${teamId}/pipeline_destination_configs/?limit=100`);
    expect((limited.json.results as Json[]).map((c) => c.id)).toEqual(destinations.map((c) => c.id));
    // what the scene reads of each config
    for (const c of [...destinations, ...apps]) {
      expect(c).toMatchObject({
        id: expect.any(Number),
        plugin: expect.any(Number),
        enabled: expect.any(Boolean),
        order: expect.any(Number),
        config: expect.any(Object),
      });
    }
    // the detail the edit form loads
    const one = await api('GET', `api/projects/@current/pipeline_destination_configs/${destinations[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.json.plugin_info).toMatchObject({ id: destinations[0]!.plugin });
  });
});

describe('dashboards: newDashboardLogic and dashboardLogic', () => {
  const template = (name: string) => ({
    template_name: name,
    dashboard_description: 'Made by the frontend',
    dashboard_filters: {},
    tags: [],
    tiles: [
      { type: 'TEXT', body: 'Hello', layouts: {}, color: null },
      {
        type: 'INSIGHT',
        name: 'Pageviews',
        query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] } },
        layouts: {},
        color: null,
      },
    ],
    variables: [],
  });

  it('creates from a template (projects prefix, creation_context, _create_in_folder), lists, loads, and moves a tile with to_dashboard', async () => {
    const created = await api('POST', `api/projects/${teamId}/dashboards/create_from_template_json`, {
      template: template('Source'),
      creation_context: 'dashboard_template',
      _create_in_folder: 'Unfiled/Dashboards',
    });
    expect(created.status).toBe(200);
    const target = await api('POST', `api/projects/${teamId}/dashboards/create_from_template_json`, {
      template: template('Target'),
      creation_context: 'dashboard_template',
    });
    const source = created.json as { id: number; name: string; tiles: Json[] };
    expect(source.name).toBe('Source');
    expect(source.tiles).toHaveLength(2);

    const list = await api('GET', `api/environments/${teamId}/dashboards/?limit=2000`);
    expect((list.json.results as Json[]).map((d) => d.id)).toEqual(expect.arrayContaining([source.id, target.json.id]));
    const loaded = await api('GET', `api/environments/${teamId}/dashboards/${source.id}`);
    // a loaded dashboard's insight tiles carry their results, computed on load; the rest is as created
    const computed = (loaded.json.tiles as Json[]).map((x) => x.insight as Json | null).filter((i): i is Json => i !== null);
    expect(computed.map((i) => Array.isArray(i.result))).toEqual([true]);
    for (const i of computed) for (const k of ['result', 'last_refresh', 'is_cached']) delete i[k];
    // and a computed tile says when (its last_refresh); the created one had none
    for (const tile of loaded.json.tiles as Json[])
      if (tile.insight) {
        expect(typeof tile.last_refresh).toBe('string');
        tile.last_refresh = null;
      }
    expect(loaded.json).toEqual(source);

    // the newest dashboardLogic: the whole tile object, to_dashboard
    const tile = source.tiles[1]!;
    const moved = await api('PATCH', `api/environments/${teamId}/dashboards/${source.id}/move_tile`, {
      tile,
      to_dashboard: target.json.id,
    });
    expect(moved.status).toBe(200);
    expect((moved.json.tiles as Json[]).map((x) => x.id)).toEqual([source.tiles[0]!.id]);
    // an older one: toDashboard, under the projects prefix
    const back = await api('PATCH', `api/projects/${teamId}/dashboards/${target.json.id}/move_tile`, { tile, toDashboard: source.id });
    expect(back.status).toBe(200);
    expect(((await api('GET', `api/environments/${teamId}/dashboards/${source.id}`)).json.tiles as Json[]).map((x) => x.id).sort()).toEqual(
      source.tiles.map((x) => x.id).sort(),
    );
  });
});

describe('teamMembersLogic: explicit members of a private project', () => {
  it.each(['environments', 'projects'])('lists, adds, changes the level of and removes a member under /api/%s/', async (prefix) => {
    const team = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: `Private ${prefix}`, access_control: true });
    const member = await t.user({ level: OrganizationLevel.MEMBER });
    const base = `api/${prefix}/${team.id}/explicit_members`;
    expect((await api('GET', `${base}/`)).status).toBe(200);
    const added = await api('POST', `${base}/`, { user_uuid: member.uuid, level: 1 });
    expect(added.status).toBe(201);
    const listed = (await api('GET', `${base}/`)).json as unknown as Json[];
    const row = listed.find((m) => (m.user as Json).uuid === member.uuid)!;
    // what the members table reads
    expect(row).toMatchObject({
      level: 1,
      effective_level: expect.any(Number),
      user: { uuid: member.uuid, first_name: expect.any(String), email: member.email },
    });
    expect(row).toHaveProperty('parent_level');
    const changed = await api('PATCH', `${base}/${member.uuid}/`, { level: 8 });
    expect(changed.status).toBe(200);
    expect(changed.json.level).toBe(8);
    expect((await api('DELETE', `${base}/${member.uuid}/`)).status).toBe(204);
    expect(((await api('GET', `${base}/`)).json as unknown as Json[]).some((m) => (m.user as Json).uuid === member.uuid)).toBe(false);
  });
});
