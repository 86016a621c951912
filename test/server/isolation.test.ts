/**
 * Isolation and keys (issue 6): for every operation that takes an id, a key acting in project A on
 * an object of project B answers exactly what it answers for an id that does not exist (same
 * status, same body once the id named in `detail` is replaced), for B a second project of the same
 * organization and for B a project of another organization. Also: revoked keys answer 401 on every
 * operation, keys limited to other projects answer 403 on every project-scoped operation, and the
 * store holds no plaintext key, only `sha256$` hashes: on SQLite in none of its files (database,
 * WAL, shared memory), on PostgreSQL in no row of any table of the test server's schema.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCatalogPlugin } from '../../server/bootstrap.js';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import { importEvents } from '../../server/ingest/import.js';
import { OrganizationLevel, type Organization, type User } from '../../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../../server/storage/repositories/api-keys.js';
import { ExplicitMembersRepository } from '../../server/storage/repositories/explicit-members.js';
import { dumpPgSchema } from '../helpers/pg.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { INVALID_KEY, projectNotAllowed } from '../helpers/errors.js';
import { bodyRequired, operations as OPERATIONS } from '../helpers/spec.js';

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: unknown;
}

/** The objects of one project that the matrix points at. */
interface Objects {
  project: number;
  destinationConfig: number;
  frontendConfig: number;
  dashboard: number;
  tile: number;
  event: string;
  memberUuid: string;
}

const MISSING_INT = 2_147_483_000;
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const EXPORT_JOB = { job: { type: 'Export historical events V2', payload: { dateRange: ['2024-01-01', '2024-01-31'] } } };

let t: TestServer;
/** every plaintext key this file created or saw */
const plaintextKeys: string[] = [];
/** project A: the bootstrap project, and a private project of the same organization for members */
let A: number;
let Apriv: number;
/** A's own dashboards: a source with a tile, and a target */
let aSource: { id: number; tile: number };
let aTarget: number;
let sameOrg: Objects;
let otherOrg: Objects;

function catalogPluginId(plugins: Array<{ id: number; url: string }>, key: string): number {
  const entry = PLUGIN_CATALOG.find((p) => p.key === key);
  const found = entry && plugins.find((p) => p.url === entry.url);
  if (!found) throw new Error(`catalog plugin ${key} not installed`);
  return found.id;
}

async function call(method: string, pathAndQuery: string, opts: { key?: string | null; body?: unknown } = {}): Promise<Answer> {
  const init: RequestInit & { key?: string | null } = { method };
  if (opts.key !== undefined) init.key = opts.key;
  if (opts.body !== undefined) {
    init.headers = JSON_HEADERS;
    init.body = JSON.stringify(opts.body);
  }
  const res = await t.fetch(pathAndQuery, init);
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  let body: unknown = text;
  if (contentType.includes('json') && text) body = JSON.parse(text);
  return { status: res.status, contentType, text, body };
}

async function ok<T>(a: Promise<Answer>, status = 200): Promise<T> {
  const r = await a;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  return r.body as T;
}

/** Creates in `project` (with `key`) one object of every kind the matrix needs. */
async function populate(
  project: number,
  key: string,
  organization: Organization,
  owner: User,
  plugins: Array<{ id: number; url: string }>,
): Promise<Objects> {
  const p = `/api/environments/${project}`;
  const destination = await ok<{ id: number }>(
    call('POST', `${p}/pipeline_frontend_apps_configs/`, {
      key,
      body: { plugin: catalogPluginId(plugins, 'customerio'), order: 1, enabled: true, config: {} },
    }),
    201,
  );
  const frontend = await ok<{ id: number }>(
    call('POST', `${p}/pipeline_frontend_apps_configs/`, {
      key,
      body: { plugin: catalogPluginId(plugins, 'notification-bar'), order: 2, enabled: true, config: {} },
    }),
    201,
  );
  const dashboard = await ok<{ id: number; tiles: Array<{ id: number }> }>(
    call('POST', `${p}/dashboards/create_from_template_json/`, {
      key,
      body: {
        template: {
          template_name: `Isolation ${project}`,
          dashboard_description: '',
          dashboard_filters: {},
          tiles: [{ type: 'TEXT', body: 'B' }],
        },
      },
    }),
  );
  const tile = dashboard.tiles[0]?.id;
  if (tile === undefined) throw new Error('the dashboard has no tile');
  const event = randomUUID();
  await importEvents(t.store, project, [
    { uuid: event, event: '$pageview', distinct_id: `d-${project}`, timestamp: '2025-01-01T00:00:00Z', properties: { $browser: 'Chrome' } },
  ]);
  // an explicit member of the project (private), a plain member of its organization
  await t.store.db
    .updateTable('teams')
    .set({ access_control: 1 } as never)
    .where('id', '=', project)
    .execute();
  const member = await t.user({ organization, level: OrganizationLevel.MEMBER });
  const membership = await t.accounts.findMembership(organization.id, member.id);
  if (!membership) throw new Error('no membership');
  await new ExplicitMembersRepository(t.store.db).create({ team_id: project, parent_membership_id: membership.id, level: 1 });
  // sanity: every object is reachable in its own project
  await ok(call('GET', `${p}/pipeline_frontend_apps_configs/${frontend.id}/`, { key }));
  await ok(call('GET', `${p}/pipeline_destination_configs/${destination.id}/activity/`, { key }));
  await ok(call('GET', `${p}/dashboards/${dashboard.id}/`, { key }));
  await ok(call('GET', `${p}/events/${event}/`, { key }));
  await ok(call('GET', `${p}/explicit_members/${member.uuid}/`, { key }));
  void owner;
  return {
    project,
    destinationConfig: destination.id,
    frontendConfig: frontend.id,
    dashboard: dashboard.id,
    tile,
    event,
    memberUuid: member.uuid,
  };
}

beforeAll(async () => {
  t = await startTestServer();
  plaintextKeys.push(t.boot.key);
  A = t.boot.team.id;
  Apriv = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'A private', access_control: true })).id;

  const src = await ok<{ id: number; tiles: Array<{ id: number }> }>(
    call('POST', `/api/environments/${A}/dashboards/create_from_template_json/`, {
      body: {
        template: { template_name: 'A source', dashboard_description: '', dashboard_filters: {}, tiles: [{ type: 'TEXT', body: 'A' }] },
      },
    }),
  );
  aSource = { id: src.id, tile: src.tiles[0]!.id };
  aTarget = (
    await ok<{ id: number }>(
      call('POST', `/api/environments/${A}/dashboards/create_from_template_json/`, {
        body: {
          template: { template_name: 'A target', dashboard_description: '', dashboard_filters: {}, tiles: [{ type: 'TEXT', body: 'T' }] },
        },
      }),
    )
  ).id;

  const B = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'B same org' })).id;
  sameOrg = await populate(B, t.boot.key, t.boot.organization, t.boot.user, t.boot.plugins);

  const other = await t.otherOrganization();
  plaintextKeys.push(other.key);
  const otherPlugins = [];
  for (const entry of PLUGIN_CATALOG) otherPlugins.push((await installCatalogPlugin(t.store, other.organization.id, entry)).plugin);
  otherOrg = await populate(other.team.id, other.key, other.organization, other.owner, otherPlugins);
});

afterAll(async () => {
  await t?.close();
});

/** One row of the matrix: a request naming a foreign object, and the same request naming none. */
interface Case {
  name: string;
  method: string;
  /** the path (and body) for an id, given the foreign objects or `missing` ones */
  build(o: Objects | 'missing'): { path: string; body?: unknown; id: string };
}

const missingUuid = randomUUID();
const pick = <K extends keyof Objects>(o: Objects | 'missing', k: K, missing: Objects[K]): Objects[K] => (o === 'missing' ? missing : o[k]);

const CASES: Case[] = [
  ...(
    [
      ['destination patch', 'PATCH', '', { name: 'hijacked' }],
      ['destination delete', 'DELETE', '', undefined],
      ['destination activity', 'GET', 'activity/', undefined],
      ['destination frontend', 'GET', 'frontend/', undefined],
      ['destination job', 'POST', 'job/', EXPORT_JOB],
      ['destination migrate', 'POST', 'migrate/', undefined],
    ] as const
  ).map(([name, method, suffix, body]): Case => ({
    name,
    method,
    build: (o) => {
      const id = String(pick(o, 'destinationConfig', MISSING_INT));
      return { path: `/api/environments/${A}/pipeline_destination_configs/${id}/${suffix}`, body, id };
    },
  })),
  {
    name: 'frontend app retrieve',
    method: 'GET',
    build: (o) => {
      const id = String(pick(o, 'frontendConfig', MISSING_INT));
      return { path: `/api/environments/${A}/pipeline_frontend_apps_configs/${id}/`, id };
    },
  },
  {
    name: 'destination patch of a frontend config',
    method: 'PATCH',
    build: (o) => {
      const id = String(pick(o, 'frontendConfig', MISSING_INT));
      return { path: `/api/environments/${A}/pipeline_destination_configs/${id}/`, body: { enabled: false }, id };
    },
  },
  {
    name: 'dashboard retrieve',
    method: 'GET',
    build: (o) => {
      const id = String(pick(o, 'dashboard', MISSING_INT));
      return { path: `/api/environments/${A}/dashboards/${id}/`, id };
    },
  },
  {
    name: 'move_tile: source dashboard',
    method: 'PATCH',
    build: (o) => {
      const id = String(pick(o, 'dashboard', MISSING_INT));
      const tile = pick(o, 'tile', MISSING_INT);
      return { path: `/api/environments/${A}/dashboards/${id}/move_tile/`, body: { tile: { id: tile }, toDashboard: aTarget }, id };
    },
  },
  {
    name: 'move_tile: toDashboard',
    method: 'PATCH',
    build: (o) => {
      const to = pick(o, 'dashboard', MISSING_INT);
      return {
        path: `/api/environments/${A}/dashboards/${aSource.id}/move_tile/`,
        body: { tile: { id: aSource.tile }, toDashboard: to },
        id: String(to),
      };
    },
  },
  {
    name: 'move_tile: tile id',
    method: 'PATCH',
    build: (o) => {
      const tile = pick(o, 'tile', MISSING_INT);
      return {
        path: `/api/environments/${A}/dashboards/${aSource.id}/move_tile/`,
        body: { tile: { id: tile }, toDashboard: aTarget },
        id: String(tile),
      };
    },
  },
  {
    name: 'event retrieve',
    method: 'GET',
    build: (o) => {
      const id = pick(o, 'event', missingUuid);
      return { path: `/api/environments/${A}/events/${id}/`, id };
    },
  },
  {
    name: 'event retrieve (csv)',
    method: 'GET',
    build: (o) => {
      const id = pick(o, 'event', missingUuid);
      return { path: `/api/environments/${A}/events/${id}/?format=csv`, id };
    },
  },
  ...(
    [
      ['member retrieve', 'GET', undefined],
      ['member patch', 'PATCH', { level: 8 }],
      ['member delete', 'DELETE', undefined],
    ] as const
  ).map(([name, method, body]): Case => ({
    name,
    method,
    build: (o) => {
      const id = pick(o, 'memberUuid', missingUuid);
      return { path: `/api/environments/${Apriv}/explicit_members/${id}/`, body, id };
    },
  })),
];

function normalized(a: Answer, id: string): { status: number; contentType: string; body: unknown } {
  const replace = (s: string) => s.split(id).join('<id>');
  const body = typeof a.body === 'string' ? replace(a.body) : (JSON.parse(replace(JSON.stringify(a.body))) as unknown);
  return { status: a.status, contentType: a.contentType, body };
}

describe('a key of project A acting on another project’s object answers as for an object that does not exist', () => {
  for (const which of ['same organization', 'other organization'] as const) {
    describe(`B in the ${which}`, () => {
      it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        const foreign = which === 'same organization' ? sameOrg : otherOrg;
        const missing = c.build('missing');
        const theirs = c.build(foreign);
        const expected = await call(c.method, missing.path, { body: missing.body });
        const actual = await call(c.method, theirs.path, { body: theirs.body });
        // the reference answer is an error, never a success
        expect(expected.status, `${c.method} ${missing.path}: ${expected.text}`).toBeGreaterThanOrEqual(400);
        expect(normalized(actual, theirs.id), `${c.method} ${theirs.path}`).toEqual(normalized(expected, missing.id));
      });
    });
  }

  it('left every foreign object untouched and reachable in its own project', async () => {
    for (const [o, key] of [
      [sameOrg, t.boot.key],
      [otherOrg, plaintextKeys[1]!],
    ] as const) {
      const p = `/api/environments/${o.project}`;
      const dest = await ok<{ name: string; deleted: boolean; enabled: boolean }>(
        call('GET', `${p}/pipeline_frontend_apps_configs/${o.frontendConfig}/`, { key }),
      );
      expect(dest).toMatchObject({ deleted: false, enabled: true });
      const activity = await ok<{ results: Array<{ activity: string }> }>(
        call('GET', `${p}/pipeline_destination_configs/${o.destinationConfig}/activity/`, { key }),
      );
      expect(activity.results.map((r) => r.activity)).toEqual(['enabled']);
      const dashboard = await ok<{ tiles: Array<{ id: number }> }>(call('GET', `${p}/dashboards/${o.dashboard}/`, { key }));
      expect(dashboard.tiles.map((x) => x.id)).toEqual([o.tile]);
      const member = await ok<{ level: number }>(call('GET', `${p}/explicit_members/${o.memberUuid}/`, { key }));
      expect(member.level).toBe(1);
    }
  });
});

// ------------------------------------------------------------------------------------------ keys

/** A request for every operation of the spec in `project` (ids need not exist: auth comes first). */
function requestFor(op: (typeof OPERATIONS)[number], project: number): { method: string; path: string; body?: unknown } {
  const filled = op.path
    .replace('{project_id}', String(project))
    .replace('{id}', op.path.includes('/events/') ? randomUUID() : '1')
    .replace('{parent_membership__user__uuid}', randomUUID());
  const needsBody = bodyRequired(op);
  const query = op.operationId === 'environments_events_values_retrieve' ? '?key=$browser' : '';
  return { method: op.method.toUpperCase(), path: filled + query, ...(needsBody ? { body: {} } : {}) };
}

async function keyIdOf(plain: string): Promise<string> {
  const hash = 'sha256$' + createHash('sha256').update(plain, 'utf8').digest('hex');
  const row = await t.store.db.selectFrom('personal_api_keys').select('id').where('secure_value', '=', hash).executeTakeFirstOrThrow();
  return row.id;
}

describe('keys', () => {
  it('a revoked key answers 401 authentication_failed on every operation', async () => {
    const key = await t.key(['*']);
    plaintextKeys.push(key);
    expect((await call('GET', '/api/projects/', { key })).status).toBe(200);
    expect(await new ApiKeysRepository(t.store.db).revoke(await keyIdOf(key))).toBe(true);
    for (const op of OPERATIONS) {
      const r = requestFor(op, A);
      const a = await call(r.method, r.path, { key, body: r.body });
      expect({ op: op.operationId, status: a.status, body: a.body }).toEqual({
        op: op.operationId,
        status: 401,
        body: INVALID_KEY,
      });
    }
  });

  it('a key limited to other projects answers 403 on every project-scoped operation of this one', async () => {
    const second = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Only this one' })).id;
    const key = await t.key(['*'], { projects: [second] });
    plaintextKeys.push(key);
    let checked = 0;
    for (const op of OPERATIONS) {
      if (!op.path.includes('{project_id}')) continue;
      for (const project of [A, sameOrg.project]) {
        const r = requestFor(op, project);
        const a = await call(r.method, r.path, { key, body: r.body });
        expect({ op: op.operationId, status: a.status, body: a.body }).toEqual({
          op: op.operationId,
          status: 403,
          body: projectNotAllowed(project),
        });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(20);
    // and the projects list refuses it, as PostHog refuses such a key on every list without a project
    const page = await call('GET', '/api/projects/', { key });
    expect(page.status).toBe(403);
  });

  it('the store holds no plaintext key, only sha256$ hashes (SQLite: its files; PostgreSQL: every row of every table)', async () => {
    // a few more keys, through the repository, limited and not
    plaintextKeys.push(await t.key(['plugin:read']), await t.key(['query:read'], { projects: [A] }));
    // use them once so that any "last used" bookkeeping is written too
    for (const key of plaintextKeys.slice(-2)) await call('GET', '/api/projects/', { key });
    let contents: Array<{ f: string; bytes: Buffer }>;
    if (t.store.dialect === 'postgres') {
      // every column of every row of every table in the test server's schema, as text
      const dumps = await dumpPgSchema(t.store);
      expect(dumps.find((d) => d.table === 'personal_api_keys')?.rows).toBeGreaterThanOrEqual(5);
      contents = dumps.map((d) => ({ f: `table ${d.table}`, bytes: Buffer.from(d.text, 'utf8') }));
    } else {
      // the database file, its WAL and shared memory
      const dir = path.dirname(t.store.location);
      const files = fs
        .readdirSync(dir)
        .map((f) => path.join(dir, f))
        .filter((f) => fs.statSync(f).isFile());
      expect(files.some((f) => f.endsWith('.sqlite3'))).toBe(true);
      contents = files.map((f) => ({ f: path.basename(f), bytes: fs.readFileSync(f) }));
    }
    const all = Buffer.concat(contents.map((c) => c.bytes));
    expect(plaintextKeys.length).toBeGreaterThanOrEqual(6);
    let hashesSeen = 0;
    for (const key of plaintextKeys) {
      expect(key).toMatch(/^phx_/);
      for (const { f, bytes } of contents) {
        expect(bytes.includes(Buffer.from(key, 'utf8')), `${f} holds the key ${key.slice(0, 8)}…`).toBe(false);
        // nor the secret part without its prefix, nor in UTF-16
        expect(bytes.includes(Buffer.from(key.slice(4), 'utf8')), `${f} holds the key body`).toBe(false);
        expect(bytes.includes(Buffer.from(key, 'utf16le')), `${f} holds the key in UTF-16`).toBe(false);
      }
      const hash = 'sha256$' + createHash('sha256').update(key, 'utf8').digest('hex');
      const stored = await t.store.db
        .selectFrom('personal_api_keys')
        .select('secure_value')
        .where('secure_value', '=', hash)
        .executeTakeFirst();
      // the revoked key is deleted; every other one is stored as its hash, and that is what the store holds
      if (stored) {
        expect(stored.secure_value).toBe(hash);
        expect(all.includes(Buffer.from(hash, 'utf8')), `the store does not hold the hash of ${key.slice(0, 8)}…`).toBe(true);
        hashesSeen += 1;
      }
    }
    expect(hashesSeen).toBeGreaterThanOrEqual(5);
    expect(all.includes(Buffer.from('sha256$', 'utf8'))).toBe(true);
    const rows = await t.store.db.selectFrom('personal_api_keys').select('secure_value').execute();
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const r of rows) expect(r.secure_value).toMatch(/^sha256\$[0-9a-f]{64}$/);
  });
});
