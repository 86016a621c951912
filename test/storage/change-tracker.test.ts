/**
 * Per-table change counting on SQLite (`Store.changeCounter`, server/storage/change-tracker.ts),
 * which decides how long the key, project-access, plugin and answer caches keep what they read:
 * a write moves the counters of its table and of the tables its foreign-key actions reach; a
 * commit by another connection, DDL, a write whose target cannot be read off its text and a write
 * to a table with a trigger move every counter. Then the lists of tables the server's caches
 * declare are checked: every load registered with `cachedLoad` (server/storage/cached-loads.ts,
 * the only loads a cache can be made from) is run on a logging connection, and its `reads` must
 * be exactly the tables its SQL reads (plus those its arguments carry): a table left out of a list
 * would let a stale key or membership through. A registered load this file does not know how to
 * run fails too, as does a module other than the cache reading the change counter itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSqlite } from '../../server/storage/sqlite-driver.js';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, type BootstrapResult } from '../../server/bootstrap.js';
import { ANSWER_READS, PluginConfigService } from '../../server/domain/plugin-configs.js';
import { registeredLoads } from '../../server/storage/cached-loads.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { AccountsRepository, PROJECT_ACCESS } from '../../server/storage/repositories/accounts.js';
import { ApiKeysRepository, KEY_BY_VALUE } from '../../server/storage/repositories/api-keys.js';
import { PluginConfigsRepository } from '../../server/storage/repositories/plugin-configs.js';
import { PluginsRepository } from '../../server/storage/repositories/plugins.js';
import type { Database } from '../../server/storage/schema.js';

let dir: string;
let store: Store;
let boot: BootstrapResult;
const counter = (tables?: readonly string[]) => store.changeCounter!(tables);
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-changes-'));
  store = openStore({ dataDir: dir });
  await migrateToLatest(store);
  boot = await bootstrap(store);
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs `write` in a later turn of the event loop and tells which of the counters moved. */
async function moved(write: () => Promise<unknown>, tables: string[][]): Promise<boolean[]> {
  await nextTurn();
  const before = tables.map((t) => counter(t));
  const total = counter();
  await write();
  await nextTurn();
  expect(counter(), 'every change moves the all-tables counter').toBeGreaterThan(total);
  return tables.map((t, i) => counter(t) !== before[i]);
}

describe('Store.changeCounter per table (SQLite)', () => {
  it('a write to plugin_configs moves its counter and leaves the key and access tables’ counters', async () => {
    const id = Number(
      (
        await sql<{
          id: number;
        }>`insert into plugin_configs (team_id, plugin_id, enabled, "order", config, web_token, deleted, created_at, updated_at) values (${boot.team!.id}, ${boot.plugins![0]!.id}, 0, 1, '{}', 'tok', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z') returning id`.execute(
          store.db,
        )
      ).rows[0]!.id,
    );
    expect(
      await moved(
        () => store.db.updateTable('plugin_configs').set({ order: 2 }).where('id', '=', id).execute(),
        [['plugin_configs'], [...KEY_BY_VALUE.reads], [...PROJECT_ACCESS.reads]],
      ),
    ).toEqual([true, false, false]);
    expect(
      await moved(
        () =>
          store.db
            .insertInto('activity_log')
            .values({
              id: 'a1',
              team_id: boot.team!.id,
              organization_id: boot.organization!.id,
              user_id: null,
              is_system: 0,
              scope: 'Plugin',
              item_id: '1',
              activity: 'updated',
              detail: '{}',
              created_at: '2026-01-01T00:00:00.000Z',
            })
            .execute(),
        [ANSWER_READS as string[], [...KEY_BY_VALUE.reads]],
      ),
    ).toEqual([false, false]);
  });

  it('a write to personal_api_keys moves the key counter only', async () => {
    expect(
      await moved(
        () => store.db.updateTable('personal_api_keys').set({ label: 'renamed' }).execute(),
        [[...KEY_BY_VALUE.reads], [...PROJECT_ACCESS.reads], ANSWER_READS as string[]],
      ),
    ).toEqual([true, false, false]);
  });

  it('a delete from teams moves explicit_team_memberships too (ON DELETE CASCADE)', async () => {
    const team = await new AccountsRepository(store.db).createTeam({ organization_id: boot.organization!.id, name: 'Doomed' });
    expect(
      await moved(
        () => store.db.deleteFrom('teams').where('id', '=', team.id).execute(),
        [['explicit_team_memberships'], ['personal_api_keys']],
      ),
    ).toEqual([true, false]);
  });

  it('table names are matched whatever their case (SQLite’s are case-insensitive)', async () => {
    await sql`create table Case_Parent (id integer primary key)`.execute(store.db);
    await sql`create table case_child (id integer primary key, parent integer references CASE_PARENT(id) on delete cascade)`.execute(
      store.db,
    );
    expect(
      await moved(() => sql`delete from "case_parent" where id = -1`.execute(store.db), [['case_child'], ['CASE_PARENT'], ['users']]),
    ).toEqual([true, true, false]);
  });

  it('a commit by another connection moves every counter', async () => {
    const other = openSqlite(path.join(dir, 'envapi.sqlite3'));
    try {
      expect(
        await moved(
          async () => other.prepare(`update plugins set description = 'changed elsewhere'`).run(),
          [['personal_api_keys'], ['teams'], ['activity_log']],
        ),
      ).toEqual([true, true, true]);
    } finally {
      other.close();
    }
  });

  it('a write whose target is not read off its text, or DDL, moves every counter', async () => {
    expect(
      await moved(() => sql`update teams set name = name where id = -1`.execute(store.db), [['personal_api_keys'], ['users']]),
    ).toEqual([true, true]);
    expect(
      await moved(
        () => sql`with x as (select 1) update "activity_log" set scope = scope where id = 'none'`.execute(store.db),
        [['personal_api_keys']],
      ),
    ).toEqual([true]);
    expect(await moved(() => sql`create table scratch (a integer)`.execute(store.db), [['personal_api_keys']])).toEqual([true]);
  });

  it('once a table has a trigger, a write to it moves every counter', async () => {
    await sql`create trigger scratch_touch after insert on scratch begin update users set first_name = first_name where id = -1; end`.execute(
      store.db,
    );
    expect(
      await moved(
        () =>
          store.db
            .insertInto('scratch' as never)
            .values({ a: 1 } as never)
            .execute(),
        [['personal_api_keys'], ['users']],
      ),
    ).toEqual([true, true]);
  });

  it('a read-only statement and an empty transaction move nothing', async () => {
    await nextTurn();
    const total = counter();
    await store.db.transaction().execute(async (trx) => trx.selectFrom('teams').selectAll().execute());
    await nextTurn();
    expect(counter()).toBe(total);
  });
});

describe('every cached load is registered, and its reads are the tables its SQL reads', () => {
  /**
   * How each registered load is run here (server/storage/cached-loads.ts): its context and
   * arguments, on a logging connection (`db`) or a store without a change counter (`logged`,
   * so that nothing is served from a cache). A load registered without an entry here fails.
   */
  const runs: Record<string, (db: Kysely<Database>, logged: Store) => Promise<[unknown, unknown?, unknown?][]>> = {
    'personal API key by value': async (db) => [[new ApiKeysRepository(db), boot.key!]],
    'project access': async (db) => [[new AccountsRepository(db), boot.team!.id, boot.user!.id]],
    'team id by project API token': async (db) => [[new AccountsRepository(db), boot.team!.api_token]],
    'decoded plugins': async (db) => [[db, boot.plugins!.map((p) => p.id)]],
    'plugins of an organization by kind': async (db) => [[new PluginsRepository(db), boot.organization!.id, 'any']],
    'plugin config answers': async (_db, logged) => {
      const access = (await new AccountsRepository(store.db).projectAccessOf(boot.team!.id, boot.user!.id))!;
      const project = { team: access.team, organization: access.organization!, membership: access.membership!, level: 8 };
      const pluginId = boot.plugins!.find((p) => p.url.includes('notification-bar'))!.id;
      const config = await new PluginConfigsRepository(store.db).create({
        team_id: boot.team!.id,
        plugin_id: pluginId,
        enabled: true,
        order: 1,
        config: {},
        web_token: 'tok2',
        name: null,
        description: null,
        deleted: false,
      });
      const service = new PluginConfigService(logged);
      return [
        [service, project, { kind: 'frontend_app', id: config.id }],
        [
          service,
          project,
          {
            kind: 'frontend_app',
            page: { limit: 100, offset: 0 },
            url: new URL('http://x/api/environments/1/pipeline_frontend_apps_configs/'),
          },
        ],
      ];
    },
  };

  /** Table names after `from` and `join` in the SQL `run` sends through `db` (or `logged.db`). */
  async function tablesRead(run: (db: Kysely<Database>, logged: Store) => Promise<unknown>): Promise<Set<string>> {
    const statements: string[] = [];
    const connection = openSqlite(path.join(dir, 'envapi.sqlite3'));
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: connection }),
      log: (e) => void statements.push(e.query.sql),
    });
    try {
      await run(db, { db, dialect: 'sqlite', location: 'logged', config: { dataDir: dir }, close: () => db.destroy() });
    } finally {
      await db.destroy();
    }
    expect(statements.length).toBeGreaterThan(0);
    const tables = new Set<string>();
    for (const s of statements) for (const m of s.matchAll(/\b(?:from|join)\s+"([^"]+)"/gi)) tables.add(m[1]!);
    return tables;
  }

  /** Every module under server/ that declares a cached load (`cachedLoad(`), relative to the repository. */
  function modulesDeclaringLoads(): string[] {
    const found: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && /\bcachedLoad\s*[<(]/.test(fs.readFileSync(p, 'utf8').replace(/export function cachedLoad\b/, '')))
          found.push(p);
      }
    };
    walk(path.resolve('server'));
    return found;
  }

  it('every module that declares one is loaded, and every registered load is run here', async () => {
    const modules = modulesDeclaringLoads();
    expect(modules.length).toBeGreaterThan(0);
    for (const m of modules) await import(pathToFileURL(m).href);
    expect(
      registeredLoads()
        .map((l) => l.name)
        .sort(),
      'a load registered with cachedLoad() needs an entry in `runs`',
    ).toEqual(Object.keys(runs).sort());
  });

  it.each(Object.keys(runs))('%s: reads = the tables its SQL reads + readsThroughArgument', async (name) => {
    for (const m of modulesDeclaringLoads()) await import(pathToFileURL(m).href);
    const load = registeredLoads().find((l) => l.name === name);
    expect(load, `no load registered as "${name}"`).toBeDefined();
    const read = await tablesRead(async (db, logged) => {
      for (const [context, a, b] of await runs[name]!(db, logged)) await load!.load(context, a, b);
    });
    expect([...new Set([...read, ...(load!.readsThroughArgument ?? [])])].sort()).toEqual([...load!.reads].sort());
  });

  it('no module but the cache reads the store’s change counter (a cache is made only from a registered load)', () => {
    const readers: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && /\bchangeCounter\s*(?:\?\.)?\(/.test(fs.readFileSync(p, 'utf8')))
          readers.push(path.relative(path.resolve('server'), p));
      }
    };
    walk(path.resolve('server'));
    expect(readers).toEqual([path.join('storage', 'unchanged-cache.ts')]);
  });
});
