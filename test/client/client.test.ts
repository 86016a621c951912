/**
 * The typed client (`client/index.ts`) against the real server in-process (`startTestServer`,
 * response validation on): `unwrap` returns the data of a 2xx and throws `EnvApiError` with
 * PostHog's error fields otherwise, `paginate` follows `next` links with the client's key, the
 * key is sent as `Authorization: Bearer`, and answers that are not JSON (CSV with `format=csv`, the
 * frontend's JavaScript) come back as strings (`textAnswers`). The same client as a built,
 * installed package: test/client/package.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, EnvApiError, paginate, unwrap } from '../../client/index.js';
import { insertEvents } from '../helpers/events-store.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The fields of a listed config these tests read. (Not `components['schemas']['PluginConfig']`:
 * openapi-fetch's `Readable` drops its `error: null` property from response types.)
 */
interface PluginConfig {
  id: number;
  order: number;
}

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t?.close();
});

/** Ids of the bootstrap catalog's frontend (site) apps: plugins whose `capabilities` is `{}`. */
function frontendPluginIds(): number[] {
  const ids = t.boot.plugins.filter((p) => Object.keys(p.capabilities ?? {}).length === 0).map((p) => p.id);
  expect(ids.length, 'the catalog has frontend apps').toBeGreaterThan(0);
  return ids;
}

/** The `EnvApiError` a promise rejects with (fails the test if it resolves or throws anything else). */
async function rejection(p: Promise<unknown>): Promise<EnvApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(EnvApiError);
    return err as EnvApiError;
  }
  throw new Error('expected an EnvApiError, the call succeeded');
}

const project = () => ({ project_id: String(t.boot.team.id) });

describe('unwrap', () => {
  it('when the answer is 2xx, returns its data', async () => {
    const page = await unwrap(t.client.GET('/api/projects/', {}));
    expect(page.count).toBeGreaterThanOrEqual(1);
    expect(page.results.map((p) => p.id)).toContain(t.boot.team.id);
  });

  it('when a create answers 201, returns the created config', async () => {
    const plugin = frontendPluginIds()[0]!;
    const created = await unwrap(
      t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project() },
        body: { plugin, order: 100, enabled: false, config: {} },
      }),
    );
    expect(created.id).toBeTypeOf('number');
    expect(created.plugin).toBe(plugin);
    expect(created.team_id).toBe(t.boot.team.id);
    // clean up so the pagination test below starts from an empty list
    await unwrap(
      t.client.DELETE('/api/environments/{project_id}/pipeline_destination_configs/{id}/', {
        params: { path: { ...project(), id: created.id } },
      }),
    );
  });

  it('when a 204 answers, returns undefined', async () => {
    const plugin = frontendPluginIds()[0]!;
    const created = await unwrap(
      t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project() },
        body: { plugin, order: 101 },
      }),
    );
    const deleted = await unwrap(
      t.client.DELETE('/api/environments/{project_id}/pipeline_destination_configs/{id}/', {
        params: { path: { ...project(), id: created.id } },
      }),
    );
    expect(deleted).toBeUndefined();
  });

  it('when a create names an unknown plugin, throws EnvApiError 400 does_not_exist with attr plugin', async () => {
    const err = await rejection(
      unwrap(
        t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
          params: { path: project() },
          body: { plugin: 999_999, order: 1 },
        }),
      ),
    );
    expect(err.status).toBe(400);
    expect(err.type).toBe('validation_error');
    expect(err.code).toBe('does_not_exist');
    expect(err.attr).toBe('plugin');
    expect(err.detail).toBe('Invalid pk "999999" - object does not exist.');
    expect(err.message).toContain('does_not_exist');
    expect(err.name).toBe('EnvApiError');
  });

  it('when the config does not exist, throws EnvApiError 404 not_found', async () => {
    const err = await rejection(
      unwrap(
        t.client.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/{id}/', {
          params: { path: { ...project(), id: 987_654 } },
        }),
      ),
    );
    expect(err.status).toBe(404);
    expect(err.type).toBe('invalid_request');
    expect(err.code).toBe('not_found');
    expect(err.detail).toBe('Not found.');
    expect(err.attr).toBeNull();
  });

  it('when the project does not exist, throws EnvApiError 404 Project not found.', async () => {
    const err = await rejection(
      unwrap(
        t.client.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', { params: { path: { project_id: '424242' } } }),
      ),
    );
    expect(err.status).toBe(404);
    expect(err.code).toBe('not_found');
    expect(err.detail).toBe('Project not found.');
  });
});

describe('paginate', () => {
  it('follows next links across several pages and yields every config exactly once, in order', async () => {
    const plugins = frontendPluginIds();
    const created: PluginConfig[] = [];
    for (let i = 0; i < 7; i += 1) {
      created.push(
        await unwrap(
          t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
            params: { path: project() },
            body: { plugin: plugins[i % plugins.length]!, order: i, enabled: i % 2 === 0, name: `App ${i}` },
          }),
        ),
      );
    }

    const first = await unwrap(
      t.client.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', { params: { path: project(), query: { limit: 2 } } }),
    );
    expect(first.count).toBe(7);
    expect(first.results).toHaveLength(2);
    expect(first.next).toBeTruthy();
    const next = new URL(first.next!);
    expect(next.origin).toBe(t.url);
    expect(next.searchParams.get('limit')).toBe('2');
    expect(next.searchParams.get('offset')).toBe('2');
    expect(first.previous).toBeNull();

    // count the pages actually fetched through the client's fetch
    const fetched: string[] = [];
    const counting = createClient({
      baseUrl: t.url,
      apiKey: t.boot.key,
      fetch: (input, init) => {
        fetched.push(input instanceof Request ? input.url : String(input));
        return fetch(input, init);
      },
    });

    const seen: PluginConfig[] = [];
    for await (const c of paginate(counting, first)) seen.push(c);

    expect(fetched).toHaveLength(3); // pages 2, 3 and 4 (7 rows, 2 per page)
    for (const u of fetched) expect(new URL(u).searchParams.get('limit')).toBe('2');
    const ids = seen.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(created.map((c) => c.id)); // order 0..6
    expect(seen.map((c) => c.order)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('stops after the first page when next is null', async () => {
    const page = await unwrap(t.client.GET('/api/projects/', { params: { query: { limit: 100 } } }));
    expect(page.next).toBeNull();
    const seen = [];
    for await (const p of paginate(t.client, page)) seen.push(p);
    expect(seen).toEqual(page.results);
  });

  it('when a next page answers an error, throws EnvApiError', async () => {
    const bad = createClient({ baseUrl: t.url, apiKey: 'phx_not_a_real_key' });
    const page = {
      next: `${t.url}/api/environments/${t.boot.team.id}/pipeline_frontend_apps_configs/?limit=2&offset=2`,
      results: [] as PluginConfig[],
    };
    const err = await rejection(
      (async () => {
        for await (const _ of paginate(bad, page)) void _;
      })(),
    );
    expect(err.status).toBe(401);
    expect(err.code).toBe('authentication_failed');
  });
});

describe('createClient', () => {
  it('sends the key as Authorization: Bearer', async () => {
    const headers: string[] = [];
    const client = createClient({
      baseUrl: `${t.url}/`,
      apiKey: t.boot.key,
      fetch: (input, init) => {
        const req = input instanceof Request ? input : new Request(input, init);
        headers.push(req.headers.get('authorization') ?? '');
        return fetch(req);
      },
    });
    const page = await unwrap(client.GET('/api/projects/', {}));
    expect(page.results.length).toBeGreaterThan(0);
    expect(headers).toEqual([`Bearer ${t.boot.key}`]);
  });

  it('with a bad key, the call throws EnvApiError 401 authentication_failed', async () => {
    const bad = createClient({ baseUrl: t.url, apiKey: 'phx_not_a_real_key' });
    const err = await rejection(unwrap(bad.GET('/api/projects/', {})));
    expect(err.status).toBe(401);
    expect(err.type).toBe('authentication_error');
    expect(err.code).toBe('authentication_failed');
    expect(err.attr).toBeNull();
  });

  it('with a key lacking the scope, the call throws EnvApiError 403 permission_denied', async () => {
    const key = await t.key(['plugin:read']);
    const err = await rejection(
      unwrap(
        t.clientFor(key).POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
          params: { path: project() },
          body: { plugin: frontendPluginIds()[0]!, order: 1 },
        }),
      ),
    );
    expect(err.status).toBe(403);
    expect(err.code).toBe('permission_denied');
    expect(err.detail).toBe("API key missing required scope 'plugin:write'");
  });
});

describe('text answers', () => {
  const EVENTS = '/api/environments/{project_id}/events/';
  const FRONTEND = '/api/environments/{project_id}/pipeline_destination_configs/{id}/frontend/';

  /** A project of its own with one `$pageview`, seeded straight into the store (as test/server/events.test.ts does). */
  async function projectWithOneEvent(): Promise<string> {
    const team = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: `CSV ${randomUUID()}` });
    const event = {
      uuid: randomUUID(),
      event: '$pageview',
      distinct_id: 'user@example.com',
      properties: { $current_url: 'https://example.com/' },
      timestamp: new Date().toISOString(),
      elements_chain: '',
    };
    await insertEvents(t.store, team.id, [event]);
    return String(team.id);
  }

  it('with format=csv and parseAs text, the events list is the CSV as a string (typed string)', async () => {
    const project_id = await projectWithOneEvent();
    const { data, response } = await t.client.GET(EVENTS, { params: { path: { project_id }, query: { format: 'csv' } }, parseAs: 'text' });
    expectTypeOf(data).toEqualTypeOf<string | undefined>();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(typeof data).toBe('string');
    expect(data).toMatch(/^[^\r\n]*distinct_id[^\r\n]*\r?\n/);
    expect(data).toContain('user@example.com');
  });

  it('with format=csv and the default parseAs, the answer is the same string, not a JSON parse error', async () => {
    const project_id = await projectWithOneEvent();
    const data = await unwrap(t.client.GET(EVENTS, { params: { path: { project_id }, query: { format: 'csv' } } }));
    expect(typeof data).toBe('string');
    expect(data as string).toContain('user@example.com');
    const asText = await unwrap(t.client.GET(EVENTS, { params: { path: { project_id }, query: { format: 'csv' } }, parseAs: 'text' }));
    expect(data).toBe(asText);
  });

  it('an empty CSV page is an empty string, with either parseAs', async () => {
    const query = { format: 'csv' as const, event: 'no_such_event' };
    expect(await unwrap(t.client.GET(EVENTS, { params: { path: project(), query }, parseAs: 'text' }))).toBe('');
    expect(await unwrap(t.client.GET(EVENTS, { params: { path: project(), query } }))).toBe('');
  });

  it("a destination's frontend is its JavaScript as a string (typed string)", async () => {
    const destination = t.boot.plugins.find((p) => Object.keys(p.capabilities ?? {}).length > 0);
    expect(destination, 'the catalog has destinations').toBeDefined();
    const created = await unwrap(
      // PostHog creates every kind of config through the frontend apps path
      t.client.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
        params: { path: project() },
        body: { plugin: destination!.id, order: 0, enabled: false },
      }),
    );
    try {
      const { data, response } = await t.client.GET(FRONTEND, { params: { path: { ...project(), id: created.id } } });
      expectTypeOf(data).toEqualTypeOf<string | undefined>();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/javascript/);
      expect(response.url).toContain(`/pipeline_destination_configs/${created.id}/frontend/`);
      expect(data).toMatch(/^export function getFrontendApp \(\) \{/);
    } finally {
      await unwrap(
        t.client.DELETE('/api/environments/{project_id}/pipeline_destination_configs/{id}/', {
          params: { path: { ...project(), id: created.id } },
        }),
      );
    }
  });

  it('an error answer of a text operation is still the JSON error (EnvApiError 404)', async () => {
    const err = await rejection(unwrap(t.client.GET(FRONTEND, { params: { path: { ...project(), id: 987_654 } } })));
    expect(err.status).toBe(404);
    expect(err.code).toBe('not_found');
  });
});
