/**
 * PostgreSQL side of the test suites (the PostgreSQL pass of `npm test`, see `usesPostgres`): a
 * fresh schema per test server, test file or test, dropped afterwards; and a dump of everything the
 * tables of a schema hold.
 */
import { sql } from 'kysely';
import pg from 'pg';
import type { Store } from '../../server/storage/db.js';

/**
 * Whether test servers run on PostgreSQL: in the PostgreSQL pass of `npm test`
 * (scripts/test-postgres.mjs sets TEST_STORE=postgres) with TEST_DATABASE_URL set.
 */
export function usesPostgres(): boolean {
  return process.env.TEST_STORE === 'postgres' && Boolean(process.env.TEST_DATABASE_URL);
}

/** A schema made for one test (or one test file) in the database of TEST_DATABASE_URL. */
export interface TestPgSchema {
  /** its name: `envapi_test_<pid>_<ms>_<random>`, so that parallel test files never share one */
  name: string;
  /**
   * The base URL with `options=-c search_path=<name>` (every connection through it works in the
   * schema) and `application_name=<name>` (its connections can be told apart in pg_stat_activity).
   */
  url: string;
  /** Connections through `url` still open on the server, from any process (see `application_name`). */
  backends(): Promise<number>;
  /** Ends every connection through `url` still open on the server (as a PostgreSQL restart would); returns how many. */
  terminateBackends(): Promise<number>;
  /**
   * Ends connections through `url` that are still open (e.g. of a child process killed with
   * SIGKILL), then drops the schema and everything in it. Safe to call twice.
   */
  drop(): Promise<void>;
}

/** Runs `fn` on a short-lived connection to `url` (no search_path of a test schema). */
async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates a fresh schema in the database of `baseUrl` (default TEST_DATABASE_URL). */
export async function createTestPgSchema(baseUrl: string | undefined = process.env.TEST_DATABASE_URL): Promise<TestPgSchema> {
  if (!baseUrl) throw new Error('createTestPgSchema needs TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)');
  const name = `envapi_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await withClient(baseUrl, (c) => c.query(`create schema ${name}`));
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${name}`);
  url.searchParams.set('application_name', name);
  const backends = (c: pg.Client) =>
    c.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()', [
      name,
    ]);
  const terminate = async (c: pg.Client) =>
    (
      await c.query<{ n: number }>(
        'select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()) t',
        [name],
      )
    ).rows[0]?.n ?? 0;
  return {
    name,
    url: url.toString(),
    backends: () => withClient(baseUrl, async (c) => (await backends(c)).rows[0]?.n ?? 0),
    terminateBackends: () => withClient(baseUrl, terminate),
    drop: () =>
      withClient(baseUrl, async (c) => {
        await terminate(c);
        await c.query(`drop schema if exists ${name} cascade`);
      }),
  };
}

/** What one table holds, as text. */
export interface TableDump {
  table: string;
  rows: number;
  /** every row as PostgreSQL's text form of the row (`(1,"a b",{…})`: all columns, any type), one per line */
  text: string;
}

/**
 * Every row of every table in the store's current schema (a PostgreSQL store), each row rendered
 * whole as text, so that a value held in any column of any table can be searched for.
 */
export async function dumpPgSchema(store: Store): Promise<TableDump[]> {
  if (store.dialect !== 'postgres') throw new Error(`dumpPgSchema needs a PostgreSQL store, got ${store.dialect}`);
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'
    order by table_name`.execute(store.db);
  const dumps: TableDump[] = [];
  for (const { table_name } of tables.rows) {
    const r = await sql<{ rows: number; text: string }>`
      select count(*)::int as rows, coalesce(string_agg(t::text, E'\n'), '') as text from ${sql.table(table_name)} as t`.execute(store.db);
    dumps.push({ table: table_name, rows: r.rows[0]?.rows ?? 0, text: r.rows[0]?.text ?? '' });
  }
  return dumps;
}

/** Whether a PostgreSQL server answers `select 1` at `url` within 2 s (a reason to skip a suite when not). */
export async function pgReachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}
