/**
 * Several processes (issue 7): two real server processes (`node --import tsx server/main.ts`) on
 * different ports against one PostgreSQL schema and one Redis. A write through one is read through
 * the other; concurrent rearranges and concurrent member updates through both end consistent; the
 * rate limit is counted once across both (Redis store).
 *
 * Needs PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) and Redis
 * (TEST_REDIS_URL, default redis://127.0.0.1:6379); the file is skipped when either is unreachable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../server/storage/db.js';
import { AccountsRepository, OrganizationLevel } from '../server/storage/repositories/accounts.js';
import { ExplicitMembersRepository } from '../server/storage/repositories/explicit-members.js';
import { pgReachable } from './helpers/pg.js';
import { redisPong, ROOT, SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from './helpers/process.js';
import { reportSkip } from './helpers/skips.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

const redisAt = new URL(REDIS_URL);
const [pgOk, redisOk] = await Promise.all([pgReachable(PG_URL), redisPong(redisAt.hostname, Number(redisAt.port || 6379), 2_000)]);
const reason = !pgOk ? `PostgreSQL not reachable at ${PG_URL}` : !redisOk ? `Redis not reachable at ${REDIS_URL}` : '';
if (reason)
  reportSkip(
    'test/multiprocess.test.ts',
    reason,
    pgOk
      ? 'start Redis there (redis-server --port 6379) or set TEST_REDIS_URL'
      : 'start PostgreSQL there or set TEST_DATABASE_URL=postgres://…',
  );

type Proc = ListeningProcess;

const procs: ChildProcess[] = [];

function startProcess(env: Record<string, string>, args: string[] = SERVER_FROM_SOURCE): Promise<Proc> {
  return spawnListening(
    args,
    { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
    { track: (p) => procs.push(p) },
  );
}

describe.skipIf(Boolean(reason))('two server processes on one PostgreSQL and one Redis', () => {
  const schema = `envapi_mp_${process.pid}_${Date.now()}`;
  let p1: Proc;
  let p2: Proc;
  let key: string;
  let store: Store;

  async function call(p: Proc, method: string, pathAndQuery: string, body?: unknown): Promise<Response> {
    return fetch(p.url + pathAndQuery, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async function json<T>(res: Response): Promise<T> {
    const text = await res.text();
    if (!res.ok) throw new Error(`${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      DATABASE_URL: url.toString(),
      REDIS_URL,
      RATE_LIMIT_REDIS_PREFIX: `envapi:test:${schema}:`,
      RATE_LIMIT_EVENT_VALUES: '5/minute,100/hour',
      DATABASE_POOL_SIZE: '4',
    };
    p1 = await startProcess(env);
    const m = /^ {2}(\S+)$/m.exec(p1.output());
    if (!m) throw new Error(`no key printed:\n${p1.output()}`);
    key = m[1]!;
    p2 = await startProcess(env);
    expect(p2.output()).not.toMatch(/Personal API key/);
    store = openStore({ databaseUrl: url.toString(), poolSize: 2 });
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
    // the counters expire with their window; remove them now all the same
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`envapi:test:${schema}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  }, 120_000);

  async function pluginIds(): Promise<number[]> {
    const rows = await store.db.selectFrom('plugins').select(['id', 'url']).orderBy('id').execute();
    const pick = (part: string) => rows.find((r) => r.url.includes(part))?.id;
    const ids = [pick('notification-bar'), pick('pineapple')].filter((x): x is number => typeof x === 'number');
    if (ids.length < 2) throw new Error(`catalog plugins not found: ${JSON.stringify(rows)}`);
    return ids;
  }

  type Config = { id: number; order: number; enabled: boolean };
  const APPS = '/api/environments/1/pipeline_frontend_apps_configs/';

  it('a plugin config created through process 1 is read through process 2', async () => {
    const [bar] = await pluginIds();
    const created = await json<Config>(await call(p1, 'POST', APPS, { plugin: bar, order: 1, enabled: true }));
    const read = await json<Config>(await call(p2, 'GET', `${APPS}${created.id}/`));
    expect(read).toMatchObject({ id: created.id, order: 1, enabled: true });
  });

  it('concurrent rearranges through both processes end with one request’s orders, never a mix', async () => {
    const [bar, pine] = await pluginIds();
    const configs: Config[] = [];
    for (const plugin of [bar!, pine!, bar!, pine!])
      configs.push(await json<Config>(await call(p1, 'POST', APPS, { plugin, order: 0, enabled: true })));
    const ids = configs.map((c) => c.id);
    for (let round = 0; round < 8; round++) {
      const a = Object.fromEntries(ids.map((id, i) => [String(id), 100 * round + i + 1]));
      const b = Object.fromEntries(ids.map((id, i) => [String(id), 100 * round + 50 - i]));
      const [ra, rb] = await Promise.all([
        call(p1, 'PATCH', '/api/environments/1/pipeline_destination_configs/rearrange/', { orders: a }),
        call(p2, 'PATCH', '/api/environments/1/pipeline_destination_configs/rearrange/', { orders: b }),
      ]);
      expect([ra.status, rb.status]).toEqual([200, 200]);
      const rows = await store.db.selectFrom('plugin_configs').select(['id', 'order']).where('id', 'in', ids).execute();
      const got = Object.fromEntries(rows.map((r) => [String(r.id), Number(r.order)]));
      expect([a, b], `round ${round}: ${JSON.stringify(got)}`).toContainEqual(got);
      // both processes answer the same state
      const via1 = await json<Config[]>(await call(p1, 'PATCH', '/api/environments/1/pipeline_destination_configs/rearrange/', {}));
      const via2 = await json<Config[]>(await call(p2, 'PATCH', '/api/environments/1/pipeline_destination_configs/rearrange/', {}));
      expect(via1.map((c) => [c.id, c.order])).toEqual(via2.map((c) => [c.id, c.order]));
    }
  });

  it('concurrent PATCHes of one explicit member’s level through both processes end consistent', async () => {
    const accounts = new AccountsRepository(store.db);
    const members = new ExplicitMembersRepository(store.db);
    const org = (await store.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow()).id;
    const team = await accounts.createTeam({ organization_id: org, name: 'Private', access_control: true });
    const user = await accounts.createUser({ email: `mp-${Date.now()}@example.com`, first_name: 'Mp' });
    await accounts.upsertMembership(org, user.id, OrganizationLevel.MEMBER);
    const membership = await accounts.findMembership(org, user.id);
    await members.create({ team_id: team.id, parent_membership_id: membership!.id, level: 1 });
    const member = `/api/environments/${team.id}/explicit_members/${user.uuid}/`;
    for (let round = 0; round < 6; round++) {
      const [r1, r2] = await Promise.all([call(p1, 'PATCH', member, { level: 8 }), call(p2, 'PATCH', member, { level: 1 })]);
      expect([r1.status, r2.status]).toEqual([200, 200]);
      const level = await members.levelOf(team.id, user.id);
      expect([1, 8]).toContain(level);
      const [g1, g2] = await Promise.all([
        json<{ level: number }>(await call(p1, 'GET', member)),
        json<{ level: number }>(await call(p2, 'GET', member)),
      ]);
      expect(g1.level).toBe(level);
      expect(g2.level).toBe(level);
    }
  });

  it('the events values limit (5/minute) is counted once across both processes', async () => {
    const values = '/api/environments/1/events/values/?key=$browser';
    const statuses: number[] = [];
    for (const p of [p1, p2, p1, p2, p1]) statuses.push((await call(p, 'GET', values)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const sixth = await call(p2, 'GET', values);
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(await sixth.json()).toMatchObject({ type: 'throttled_error', code: 'throttled' });
    // another class is not affected
    expect((await call(p1, 'GET', APPS)).status).toBe(200);
  });
});

// whatever a failed test left running (a cluster primary stops its workers on SIGTERM)
afterAll(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
});

describe('envapi serve --workers', () => {
  it('refuses more than one worker on SQLite (one writer)', async () => {
    const proc = spawn(process.execPath, ['bin/envapi.js', 'serve', '--workers', '2', '--port', '0'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: path.join(ROOT, 'data-never-created'), LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    expect(code).toBe(1);
    expect(out).toMatch(/--workers 2 needs PostgreSQL \(DATABASE_URL\)/);
  }, 120_000);

  it.skipIf(Boolean(reason))(
    'migrates and bootstraps once, serves from 2 workers on one port, and stops them on SIGTERM',
    async () => {
      const schema = `envapi_mpw_${process.pid}_${Date.now()}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${schema}`);
      try {
        const primary = await startProcess({ DATABASE_URL: url.toString(), REDIS_URL: '', SHUTDOWN_TIMEOUT_MS: '5000' }, [
          'bin/envapi.js',
          'serve',
          '--workers',
          '2',
          '--port',
          '0',
        ]);
        const key = /^ {2}(\S+)$/m.exec(primary.output())?.[1];
        expect(key, primary.output()).toBeTruthy();
        const res = await fetch(`${primary.url}/api/environments/1/pipeline_frontend_apps_configs/`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        expect(res.status).toBe(200);
        // both workers listen (their lines may come just after the primary's)
        const deadline = Date.now() + 10_000;
        while ((primary.output().match(/envapi worker \d+ listening on/g) ?? []).length < 2 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 100));
        expect(primary.output().match(/envapi worker \d+ listening on/g)).toHaveLength(2);
        expect(primary.output().match(/Personal API key/g)).toHaveLength(1);
        primary.proc.kill('SIGTERM');
        expect((await primary.exited).code, primary.output()).toBe(0);
        // the workers are gone with the primary: the port refuses connections (polled, not slept on)
        await expect
          .poll(
            () =>
              fetch(`${primary.url}/_health`).then(
                () => 'answered',
                () => 'refused',
              ),
            { timeout: 20_000 },
          )
          .toBe('refused');
      } finally {
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      }
    },
    120_000,
  );
});
