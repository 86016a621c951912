/**
 * Stores for tests that drive the real processes (`envapi`, `server/main.ts`) or open the store
 * themselves: a temporary directory (the SQLite file, and any files the test writes) and, in the
 * PostgreSQL pass (`usesPostgres`), a fresh PostgreSQL schema that the processes reach through
 * DATABASE_URL. Also a trigger that makes the store refuse a write, on either dialect.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { openStore, type Store } from '../../server/storage/db.js';
import { migrationProvider } from '../../server/storage/migrations/index.js';
import type { Database } from '../../server/storage/schema.js';
import { usesClickHouse } from './clickhouse.js';
import { createTestPgSchema, usesPostgres, type TestPgSchema } from './pg.js';

/** Where one test's (or test file's) store lives. */
export interface TestStoreLocation {
  dialect: 'sqlite' | 'postgres';
  /** a fresh temporary directory: the SQLite store's directory on SQLite; on both, room for the test's files */
  dir: string;
  /** the schema, on PostgreSQL */
  pg: TestPgSchema | undefined;
  /** the environment that points a server (server/main.ts) at this store: `{ DATA_DIR }` on SQLite, `{ DATABASE_URL }` on PostgreSQL */
  env: Record<string, string>;
  /** global `envapi` options naming this store: `--data-dir DIR` on SQLite; none on PostgreSQL (see `cliEnv`) */
  cliArgs: string[];
  /** the environment of an `envapi` command run with `cliArgs`: none on SQLite, `{ DATABASE_URL }` on PostgreSQL */
  cliEnv: Record<string, string>;
  /** opens the store (not migrated); the caller closes it */
  open(): Store;
  /** drops the schema (ending connections still open to it) and removes the directory */
  cleanup(): Promise<void>;
}

/** A fresh store location: SQLite in a temp directory, or a fresh schema in the PostgreSQL pass. */
export async function createTestStoreLocation(prefix = 'envapi-test-'): Promise<TestStoreLocation> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const pg = usesPostgres() ? await createTestPgSchema() : undefined;
  // in the ClickHouse pass the processes keep their events on embedded chDB in DATA_DIR/clickhouse/
  const events: Record<string, string> = usesClickHouse() ? { EVENTS_STORE: 'clickhouse' } : {};
  const env: Record<string, string> = pg ? { DATABASE_URL: pg.url, ...events } : { DATA_DIR: dir, ...events };
  return {
    dialect: pg ? 'postgres' : 'sqlite',
    dir,
    pg,
    env,
    cliArgs: pg ? [] : ['--data-dir', dir],
    cliEnv: pg ? { DATABASE_URL: pg.url, ...events } : events,
    open: () => (pg ? openStore({ databaseUrl: pg.url, poolSize: 2 }) : openStore({ dataDir: dir })),
    async cleanup() {
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The environment of a child process: `base` (default process.env) without the variables that
 * choose a store or change how node starts (DATABASE_URL, DATA_DIR, NODE_OPTIONS), then `extra`
 * (e.g. a location's `env` or `cliEnv`).
 */
export function childEnv(extra: Record<string, string> = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

/**
 * Makes the store refuse (abort with `message`) every insert into `table` whose `column` equals
 * `value`: a SQLite trigger, or on PostgreSQL a PL/pgSQL trigger function in the store's schema.
 * For tests of what a failing write leaves behind.
 */
export async function refuseInserts(
  store: Store,
  table: keyof Database & string,
  column: string,
  value: string,
  message: string,
): Promise<void> {
  const trigger = sql.id(`refuse_${table}_${column}`);
  if (store.dialect === 'postgres') {
    const fn = sql.id('envapi_test_refuse_insert');
    await sql`create or replace function ${fn}() returns trigger language plpgsql as $$ begin raise exception '%', tg_argv[0]; end $$`.execute(
      store.db,
    );
    await sql`create trigger ${trigger} before insert on ${sql.table(table)} for each row when (new.${sql.id(column)} = ${sql.lit(value)}) execute function ${fn}(${sql.lit(message)})`.execute(
      store.db,
    );
  } else {
    await sql`create trigger ${trigger} before insert on ${sql.table(table)} when new.${sql.id(column)} = ${sql.lit(value)} begin select raise(abort, ${sql.lit(message)}); end`.execute(
      store.db,
    );
  }
}

/**
 * The columns of `events_team_time` (server/storage/events/materialized.ts): SQLite's key columns;
 * PostgreSQL's key then `include` columns, read from its definition (e.g. `… USING btree (team_id,
 * "timestamp", uuid) INCLUDE (mat_city_…)`).
 */
export async function timeIndexColumns(store: Store): Promise<string[]> {
  if (store.dialect === 'sqlite') {
    const r = await sql<{ name: string }>`select name from pragma_index_xinfo('events_team_time') where key = 1 order by seqno`.execute(
      store.db,
    );
    return r.rows.map((x) => x.name);
  }
  const r = await sql<{
    def: string;
  }>`select indexdef as def from pg_indexes where schemaname = current_schema() and indexname = 'events_team_time'`.execute(store.db);
  return [...(r.rows[0]?.def ?? '').matchAll(/\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(',').map((c) => c.trim().replace(/"/g, '')));
}

/**
 * The store of `location` opened and migrated up to `migration` (its name, e.g. `0010_element_groups`),
 * for tests of a later migration on a store as an older version left it. Throws the migration's error.
 */
export async function openMigratedTo(location: TestStoreLocation, migration: string): Promise<Store> {
  const store = location.open();
  const migrator = new Migrator({
    db: store.db,
    provider: migrationProvider,
    ...(location.pg ? { migrationTableSchema: location.pg.name } : {}),
  });
  const result = await migrator.migrateTo(migration);
  if (result.error) throw result.error;
  return store;
}
