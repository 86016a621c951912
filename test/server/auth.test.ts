/**
 * Authentication and project resolution: personal API keys (`Authorization: Bearer phx_…`), how
 * they are stored, `project_id` (numeric or `@current`), access to another organization's project,
 * `GET /api/projects/`, and the order in which the checks refuse a request.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrganizationLevel } from '../../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../../server/storage/repositories/api-keys.js';
import { openStore } from '../../server/storage/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  type ErrorBody,
  INVALID_KEY,
  missingScope,
  NO_PROJECT_ACCESS,
  NOT_AUTHENTICATED,
  PROJECT_NOT_FOUND,
  projectNotAllowed,
} from '../helpers/errors.js';

interface ProjectWire {
  id: number;
  uuid: string;
  organization: string;
  name: string;
  api_token: string;
  timezone: string;
  access_control: boolean;
}

interface ProjectPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: ProjectWire[];
}

const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';
const listOf = (projectId: string | number) => `/api/environments/${projectId}/pipeline_frontend_apps_configs/`;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t?.close();
});

async function expectError(res: Response, status: number, body: ErrorBody): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(JSON.parse(text)).toEqual(body);
}

/** The id of a key, found by its hash as stored. */
async function keyId(plain: string): Promise<string> {
  const hash = 'sha256$' + createHash('sha256').update(plain, 'utf8').digest('hex');
  const row = await t.store.db.selectFrom('personal_api_keys').select('id').where('secure_value', '=', hash).executeTakeFirstOrThrow();
  return row.id;
}

describe('Authorization header', () => {
  it('without an Authorization header, answers 401 not_authenticated', async () => {
    await expectError(await t.fetch(LIST, { key: null }), 401, NOT_AUTHENTICATED);
  });

  it('without an Authorization header on GET /api/projects/, answers 401 not_authenticated', async () => {
    await expectError(await t.fetch('/api/projects/', { key: null }), 401, NOT_AUTHENTICATED);
  });

  it('with an unknown key, answers 401 authentication_failed', async () => {
    await expectError(await t.fetch(LIST, { key: 'phx_thisKeyDoesNotExist0000000000000000000000000' }), 401, INVALID_KEY);
  });

  it('with a value that is not a phx_ key, answers 401 authentication_failed', async () => {
    await expectError(await t.fetch(LIST, { key: 'not-a-key' }), 401, INVALID_KEY);
  });

  it('with a key that differs from a real one in its last character, answers 401 authentication_failed', async () => {
    const real = t.boot.key;
    const last = real.slice(-1) === 'a' ? 'b' : 'a';
    await expectError(await t.fetch(LIST, { key: real.slice(0, -1) + last }), 401, INVALID_KEY);
  });

  it('with a valid key under a non-Bearer scheme (Basic), answers 401', async () => {
    const res = await t.fetch(LIST, { key: null, headers: { Authorization: `Basic ${Buffer.from(`${t.boot.key}:`).toString('base64')}` } });
    await expectError(res, 401, NOT_AUTHENTICATED);
  });

  it('with a valid key under a non-Bearer scheme (Token), answers 401', async () => {
    const res = await t.fetch(LIST, { key: null, headers: { Authorization: `Token ${t.boot.key}` } });
    await expectError(res, 401, NOT_AUTHENTICATED);
  });

  it('with "Bearer" and no key, answers 401', async () => {
    const res = await t.fetch(LIST, { key: null, headers: { Authorization: 'Bearer ' } });
    expect(res.status).toBe(401);
    const body = (await res.json()) as ErrorBody;
    expect(body.type).toBe('authentication_error');
  });

  it('with a valid key, answers 200', async () => {
    const res = await t.fetch(LIST);
    expect(res.status).toBe(200);
  });
});

describe('personal_api_key in the query string or the body (PostHog’s find_key_with_source)', () => {
  it('a valid key in ?personal_api_key= is accepted; an unknown one answers 401', async () => {
    const key = await t.key(['*']);
    const ok = await t.fetch(`${LIST}?personal_api_key=${encodeURIComponent(key)}`, { key: null });
    expect(ok.status).toBe(200);
    await expectError(
      await t.fetch(`${LIST}?personal_api_key=phx_thisKeyDoesNotExist0000000000000000000000000`, { key: null }),
      401,
      INVALID_KEY,
    );
    await expectError(await t.fetch(`${LIST}?personal_api_key=`, { key: null }), 401, NOT_AUTHENTICATED);
  });

  it('a key in a JSON body’s personal_api_key is accepted; the header wins over both', async () => {
    const key = await t.key(['*']);
    const res = await t.fetch('/api/environments/1/query/', {
      key: null,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ personal_api_key: key, query: { kind: 'HogQLQuery', query: 'select 1' } }),
    });
    expect(res.status).toBe(200);
    const header = await t.fetch(`${LIST}?personal_api_key=phx_thisKeyDoesNotExist0000000000000000000000000`, { key });
    expect(header.status).toBe(200);
  });
});

describe('key lifecycle', () => {
  it('a revoked key answers 401 authentication_failed', async () => {
    const key = await t.key(['*']);
    expect((await t.fetch(LIST, { key })).status).toBe(200);
    const revoked = await new ApiKeysRepository(t.store.db).revoke(await keyId(key));
    expect(revoked).toBe(true);
    await expectError(await t.fetch(LIST, { key }), 401, INVALID_KEY);
  });

  it('revoking one key leaves the user’s other keys working', async () => {
    const a = await t.key(['*']);
    const b = await t.key(['*']);
    await new ApiKeysRepository(t.store.db).revoke(await keyId(a));
    expect((await t.fetch(LIST, { key: a })).status).toBe(401);
    expect((await t.fetch(LIST, { key: b })).status).toBe(200);
  });

  it('the key of an inactive user answers 401 authentication_failed', async () => {
    const user = await t.user({ level: OrganizationLevel.ADMIN });
    const key = await t.key(['*'], { user });
    expect((await t.fetch(LIST, { key })).status).toBe(200);
    await t.store.db.updateTable('users').set({ is_active: 0 }).where('id', '=', user.id).execute();
    await expectError(await t.fetch(LIST, { key }), 401, INVALID_KEY);
  });

  it('a key used a moment ago and then revoked through another connection (another process) is refused on the next request', async () => {
    const key = await t.key(['*']);
    for (let i = 0; i < 3; i++) expect((await t.fetch(LIST, { key })).status).toBe(200);
    // a second connection to the same store, as `envapi keys revoke` in another process opens
    const other =
      t.store.dialect === 'sqlite'
        ? openStore({ dataDir: path.dirname(t.store.location) })
        : openStore({ databaseUrl: t.store.location, poolSize: 1 });
    try {
      expect(await new ApiKeysRepository(other.db).revoke(await keyId(key))).toBe(true);
    } finally {
      await other.close();
    }
    await expectError(await t.fetch(LIST, { key }), 401, INVALID_KEY);
  });

  it('a membership removed through another connection takes the project away on the next request', async () => {
    const user = await t.user({ level: OrganizationLevel.MEMBER });
    const key = await t.key(['*'], { user });
    expect((await t.fetch(LIST, { key })).status).toBe(200);
    const other =
      t.store.dialect === 'sqlite'
        ? openStore({ dataDir: path.dirname(t.store.location) })
        : openStore({ databaseUrl: t.store.location, poolSize: 1 });
    try {
      await other.db.deleteFrom('organization_memberships').where('user_id', '=', user.id).execute();
    } finally {
      await other.close();
    }
    expect((await t.fetch(LIST, { key })).status).toBe(403);
  });

  it('keys are stored only as sha256$<64 hex>, never in plain text', async () => {
    const extra = await t.key(['plugin:read'], { projects: [1] });
    const plainKeys = [t.boot.key, extra];
    const rows = await t.store.db.selectFrom('personal_api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      expect(row.secure_value).toMatch(/^sha256\$[0-9a-f]{64}$/);
      const dump = JSON.stringify(row);
      for (const plain of plainKeys) expect(dump).not.toContain(plain);
    }
    for (const plain of plainKeys) {
      const hash = 'sha256$' + createHash('sha256').update(plain, 'utf8').digest('hex');
      expect(rows.filter((r) => r.secure_value === hash)).toHaveLength(1);
    }
  });

  it('the stored mask shows only phx_ and the last 4 characters', async () => {
    const key = await t.key(['*']);
    const row = await t.store.db
      .selectFrom('personal_api_keys')
      .selectAll()
      .where('id', '=', await keyId(key))
      .executeTakeFirstOrThrow();
    expect(row.mask_value).toBe(`phx_...${key.slice(-4)}`);
  });
});

describe('project_id', () => {
  it.each(['abc', '1abc', '1.5', '-1', 'current', '@me'])('project_id %j answers 404 "Project not found."', async (value) => {
    await expectError(await t.fetch(listOf(encodeURIComponent(value))), 404, PROJECT_NOT_FOUND);
  });

  it('a project that does not exist (99999) answers 404 "Project not found."', async () => {
    await expectError(await t.fetch(listOf(99999)), 404, PROJECT_NOT_FOUND);
  });

  it('a project of another organization answers 403 "You don\'t have access to the project."', async () => {
    const other = await t.otherOrganization();
    await expectError(await t.fetch(listOf(other.team.id)), 403, NO_PROJECT_ACCESS);
    // and the other organization's owner is refused on project 1 the same way
    await expectError(await t.fetch(LIST, { key: other.key }), 403, NO_PROJECT_ACCESS);
  });

  it('a project of another organization answers 403 on a write operation too', async () => {
    const other = await t.otherOrganization();
    const res = await t.fetch(listOf(other.team.id), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin: t.boot.plugins[0]!.id, order: 1 }),
    });
    await expectError(res, 403, NO_PROJECT_ACCESS);
  });

  it('a GET with ?token= (a project API token) acts on that project: 401 unknown, 403 another organization', async () => {
    const second = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'by token' });
    const events = (id: number | string, query: string) => t.fetch(`/api/projects/${id}/events/?${query}`);
    // the token's project wins over the path's (PostHog's _get_team_from_request)
    const created = await t.fetch(`/api/projects/${second.id}/dashboards/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'only in the second project' }),
    });
    expect(created.status).toBe(201);
    const viaToken = (await (await t.fetch(`/api/projects/1/dashboards/?token=${second.api_token}`)).json()) as {
      results: { name: string }[];
    };
    expect(viaToken.results.map((r) => r.name)).toEqual(['only in the second project']);
    expect((await events(99999, `token=${second.api_token}`)).status).toBe(200);
    expect((await events(1, `api_key=${second.api_token}`)).status).toBe(200);
    await expectError(await events(1, 'token=phc_NoSuchProjectToken'), 401, {
      type: 'authentication_error',
      code: 'authentication_failed',
      detail: 'Incorrect authentication credentials.',
      attr: null,
    });
    const other = await t.otherOrganization();
    await expectError(await events(1, `token=${other.team.api_token}`), 403, NO_PROJECT_ACCESS);
    // an empty token is no token
    expect((await events(1, 'token=')).status).toBe(200);
  });

  it('a member of the organization can use a project of it', async () => {
    const user = await t.user({ level: OrganizationLevel.MEMBER });
    const key = await t.key(['plugin:read'], { user });
    expect((await t.fetch(LIST, { key })).status).toBe(200);
  });

  it('@current is the key owner’s current project and answers like 1', async () => {
    const create = await t.fetch(LIST, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin: t.boot.plugins.find((p) => p.name === 'Notification Bar')!.id, order: 1 }),
    });
    expect(create.status).toBe(201);
    const one = await t.fetch(LIST);
    const current = await t.fetch(listOf('@current'));
    expect(current.status).toBe(200);
    const a = (await one.json()) as { count: number; results: Array<{ id: number; team_id: number }> };
    const b = (await current.json()) as { count: number; results: Array<{ id: number; team_id: number }> };
    expect(b.count).toBeGreaterThan(0);
    expect(b.count).toBe(a.count);
    expect(b.results.map((r) => r.id)).toEqual(a.results.map((r) => r.id));
    expect(b.results.every((r) => r.team_id === 1)).toBe(true);
  });

  it('@current resolves per key owner: another organization’s owner reaches their own project', async () => {
    const created = await t.fetch(LIST, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin: t.boot.plugins.find((p) => p.name === 'Notification Bar')!.id, order: 2 }),
    });
    expect(created.status).toBe(201);
    const other = await t.otherOrganization();
    const viaCurrent = await t.fetch(listOf('@current'), { key: other.key });
    const viaId = await t.fetch(listOf(other.team.id), { key: other.key });
    expect(viaCurrent.status).toBe(200);
    expect(viaId.status).toBe(200);
    const a = (await viaCurrent.json()) as { count: number };
    const b = (await viaId.json()) as { count: number };
    expect(a).toEqual(b);
    // project 1 has a config, theirs has none: @current was not project 1
    expect(a.count).toBe(0);
  });

  it('@current of a user without a current project answers 404 "Project not found."', async () => {
    const user = await t.user({ level: OrganizationLevel.ADMIN });
    const key = await t.key(['*'], { user });
    await expectError(await t.fetch(listOf('@current'), { key }), 404, PROJECT_NOT_FOUND);
  });

  it('@current with a key limited to another project answers 403 naming the current project', async () => {
    const second = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'limited' });
    const key = await t.key(['*'], { projects: [second.id] });
    await expectError(await t.fetch(listOf('@current'), { key }), 403, projectNotAllowed(1));
  });
});

describe('GET /api/projects/', () => {
  const FIELDS = ['access_control', 'api_token', 'id', 'name', 'organization', 'timezone', 'uuid'];

  it('lists only the projects of the user’s organizations, in the {count, next, previous, results} envelope', async () => {
    const other = await t.otherOrganization();
    const second = await t.accounts.createTeam({
      organization_id: t.boot.organization.id,
      name: 'Second project',
      timezone: 'Europe/London',
    });
    const res = await t.fetch('/api/projects/');
    expect(res.status).toBe(200);
    const page = (await res.json()) as ProjectPage;
    expect(Object.keys(page).sort()).toEqual(['count', 'next', 'previous', 'results']);
    const ids = page.results.map((p) => p.id);
    expect(ids).toContain(1);
    expect(ids).toContain(second.id);
    expect(ids).not.toContain(other.team.id);
    expect(page.count).toBe(page.results.length);
    expect(page.next).toBeNull();
    expect(page.previous).toBeNull();
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    for (const p of page.results) {
      expect(Object.keys(p).sort()).toEqual(FIELDS);
      expect(p.organization).toBe(t.boot.organization.id);
    }
    const one = page.results.find((p) => p.id === 1)!;
    expect(one).toEqual({
      id: 1,
      uuid: t.boot.team.uuid,
      organization: t.boot.organization.id,
      name: t.boot.team.name,
      api_token: t.boot.team.api_token,
      timezone: t.boot.team.timezone,
      access_control: false,
    });
    expect(one.api_token).toMatch(/^phc_/);
    expect(page.results.find((p) => p.id === second.id)).toMatchObject({ name: 'Second project', timezone: 'Europe/London' });

    // the other organization's owner sees only their project
    const theirs = (await (await t.fetch('/api/projects/', { key: other.key })).json()) as ProjectPage;
    expect(theirs.results.map((p) => p.id)).toEqual([other.team.id]);
    expect(theirs.count).toBe(1);
  });

  it('a key limited to some projects is refused on the lists, as PostHog (project-based endpoints only)', async () => {
    const key = await t.key(['*'], { projects: [1] });
    const refused: ErrorBody = {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'API keys with scoped projects are only supported on project-based endpoints.',
      attr: null,
    };
    for (const path of ['/api/projects/', '/api/organizations/', '/api/organizations/@current/', '/api/organizations/@current/projects/'])
      await expectError(await t.fetch(path, { key }), 403, refused);
    // project-based ones answer: the project, the key's user and the key itself
    for (const path of [
      '/api/projects/1/',
      '/api/environments/@current/',
      '/api/users/@me/',
      '/api/personal_api_keys/@current/',
      '/api/environments/1/dashboards/',
    ])
      expect((await t.fetch(path, { key })).status, path).toBe(200);
  });

  it('a user of no organization lists nothing', async () => {
    const lonely = await t.accounts.createUser({ email: `lonely-${Date.now()}@example.com` });
    const key = await t.key(['project:read'], { user: lonely });
    const page = (await (await t.fetch('/api/projects/', { key })).json()) as ProjectPage;
    expect(page).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('pages with limit and offset, with absolute next/previous URLs', async () => {
    const all = (await (await t.fetch('/api/projects/')).json()) as ProjectPage;
    expect(all.count).toBeGreaterThanOrEqual(2);
    const first = (await (await t.fetch('/api/projects/?limit=1')).json()) as ProjectPage;
    expect(first.count).toBe(all.count);
    expect(first.results.map((p) => p.id)).toEqual([all.results[0]!.id]);
    expect(first.previous).toBeNull();
    expect(first.next).not.toBeNull();
    const next = new URL(first.next!);
    expect(next.origin).toBe(t.url);
    expect(next.searchParams.get('limit')).toBe('1');
    expect(next.searchParams.get('offset')).toBe('1');
    const second = (await (await t.fetch(next.pathname + next.search)).json()) as ProjectPage;
    expect(second.results.map((p) => p.id)).toEqual([all.results[1]!.id]);
    expect(second.previous).not.toBeNull();
  });

  it('works through the project’s own client', async () => {
    const { data, response } = await t.client.GET('/api/projects/');
    expect(response.status).toBe(200);
    expect(data?.results.some((p) => p.id === 1)).toBe(true);
  });
});

describe('order of checks', () => {
  it('no key and an invalid body answer 401, not 400', async () => {
    const res = await t.fetch(LIST, {
      key: null,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ order: 'not a number' }),
    });
    await expectError(res, 401, NOT_AUTHENTICATED);
  });

  // PostHog (DRF) parses the body lazily, after authentication and permissions: a caller without
  // credentials learns nothing about the body, malformed or not.
  it('no key and malformed JSON answer 401, not 400 parse_error', async () => {
    const res = await t.fetch(LIST, { key: null, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"plugin": ' });
    await expectError(res, 401, NOT_AUTHENTICATED);
  });

  it('a missing scope and malformed JSON answer 403, not 400 parse_error', async () => {
    const key = await t.key(['plugin:read']);
    const res = await t.fetch(LIST, { key, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"plugin": ' });
    await expectError(res, 403, missingScope('plugin:write'));
  });

  it('no key and a body of an unsupported media type answer 401, not 415', async () => {
    const res = await t.fetch(LIST, { key: null, method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'hello' });
    await expectError(res, 401, NOT_AUTHENTICATED);
  });

  it('an invalid key and an invalid body answer 401, not 400', async () => {
    const res = await t.fetch(LIST, {
      key: 'phx_nope',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({}),
    });
    await expectError(res, 401, INVALID_KEY);
  });

  it('a missing scope and an invalid body answer 403, not 400', async () => {
    const key = await t.key(['plugin:read']);
    const res = await t.fetch(LIST, { key, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    await expectError(res, 403, missingScope('plugin:write'));
  });

  it('no key on an unknown project answers 401, not 404', async () => {
    await expectError(await t.fetch(listOf(99999), { key: null }), 401, NOT_AUTHENTICATED);
  });

  it('a missing scope on an unknown project answers 403 with the scope message', async () => {
    const key = await t.key(['dashboard:read']);
    await expectError(await t.fetch(listOf(99999), { key }), 403, missingScope('plugin:read'));
  });

  it('a missing scope on a malformed project id answers 403 with the scope message', async () => {
    const key = await t.key(['dashboard:read']);
    const res = await t.fetch(listOf('abc'), { key });
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).detail).toBe("API key missing required scope 'plugin:read'");
  });

  it('a missing scope on another organization’s project answers 403 with the scope message', async () => {
    const other = await t.otherOrganization();
    const key = await t.key(['dashboard:read']);
    const res = await t.fetch(listOf(other.team.id), { key });
    expect(res.status).toBe(403);
    expect(((await res.json()) as ErrorBody).detail).toBe("API key missing required scope 'plugin:read'");
  });

  it('a key limited to other projects on an unknown project answers 403 naming that project', async () => {
    const key = await t.key(['*'], { projects: [1] });
    await expectError(await t.fetch(listOf(99999), { key }), 403, projectNotAllowed(99999));
  });

  it('a key limited to project 1 on a malformed project id answers 404 "Project not found."', async () => {
    const key = await t.key(['*'], { projects: [1] });
    await expectError(await t.fetch(listOf('abc'), { key }), 404, PROJECT_NOT_FOUND);
  });

  it('a valid key, scope and project with an invalid body answer 400', async () => {
    const res = await t.fetch(LIST, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).type).toBe('validation_error');
  });
});

describe('several keys on one keep-alive connection (as through a proxy)', () => {
  /** GET on one shared socket; resolves status and the socket's local port (to prove it is shared). */
  function get(agent: http.Agent, pathname: string, key: string): Promise<{ status: number; port: number | undefined }> {
    const url = new URL(pathname, t.url);
    return new Promise((resolve, reject) => {
      const req = http.get(url, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, port: req.socket?.localPort }));
      });
      req.on('error', reject);
    });
  }

  it('each request is authenticated with its own key, and a revoked one is refused on the next request', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const reader = await t.key(['plugin:read']);
      const other = await t.key(['dashboard:read']);
      const answers = [];
      for (const key of [reader, other, reader, 'phx_' + 'x'.repeat(43), reader]) answers.push(await get(agent, LIST, key));
      expect(answers.map((a) => a.status)).toEqual([200, 403, 200, 401, 200]);
      expect(new Set(answers.map((a) => a.port)).size).toBe(1);
      const keys = new ApiKeysRepository(t.store.db);
      const row = await t.store.db
        .selectFrom('personal_api_keys')
        .select('id')
        .where('secure_value', '=', 'sha256$' + createHash('sha256').update(reader).digest('hex'))
        .executeTakeFirstOrThrow();
      expect(await keys.revoke(row.id)).toBe(true);
      const after = await get(agent, LIST, reader);
      expect(after).toEqual({ status: 401, port: answers[0]!.port });
    } finally {
      agent.destroy();
    }
  });
});
