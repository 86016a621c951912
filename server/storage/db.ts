/**
 * Opening the store. `DATABASE_URL=postgres://…` selects PostgreSQL (node-postgres pool);
 * otherwise SQLite (better-sqlite3) in `<dataDir>/envapi.sqlite3`, in WAL mode (synchronous NORMAL)
 * with foreign keys on, a prepared-statement cache, and the `regexp` (RE2) / `icontains` functions.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { RE2JS } from 're2js';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type CompiledQuery, type SqliteDatabase } from 'kysely';
import type PgModule from 'pg';
import { ChangeTracker } from './change-tracker.js';
import { compileRe2, type DialectName } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

/** Where the data lives: a PostgreSQL URL, or a directory for the SQLite file. */
export interface StorageConfig {
  /** `postgres://user@host:port/db`; when set, PostgreSQL is used. */
  databaseUrl?: string | undefined;
  /** Directory of the SQLite file (created if missing); default `./data`. Ignored for PostgreSQL. */
  dataDir?: string | undefined;
  /** Pool size for PostgreSQL (default 10). */
  poolSize?: number | undefined;
  /** `:memory:` SQLite, for tests that need no file. */
  inMemory?: boolean | undefined;
  /**
   * Open for reading only (the events read workers): SQLite opens the existing file read-only
   * (no directory is created, no pragma that writes is set; the file is in WAL mode already, so
   * reads never wait on a writer); PostgreSQL sessions are `default_transaction_read_only`.
   */
  readOnly?: boolean | undefined;
  /**
   * PostgreSQL only: `statement_timeout` of every session, ms (0 or unset = none). A statement
   * past it is cancelled by the server (SQLSTATE 57014, `isQueryCanceled`).
   */
  statementTimeoutMs?: number | undefined;
}

/** An open store: the Kysely instance and the dialect it speaks. */
export interface Store {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Human-readable location (file path or URL without password). */
  location: string;
  /** What it was opened with (the events read workers open their own connections from it). */
  config: StorageConfig;
  /**
   * SQLite only: a number that changes whenever any of `tables` (every table when undefined) may
   * have changed since it was last read: a write through this store, counted per table as each
   * writing statement is prepared (with the tables its foreign-key actions reach; a statement whose
   * target is unknown counts for all, see `ChangeTracker`), or a commit by any other connection or
   * process, seen through `PRAGMA data_version`, which counts for all. Equal numbers mean none of
   * those tables was written in between, so what was read from them then is still what the store
   * holds; caches keyed on it are never stale. Undefined on PostgreSQL, which has no such cheap
   * signal.
   */
  changeCounter?: (tables?: readonly string[]) => number;
  /**
   * SQLite only: runs a compiled read-only query (a SELECT) and returns its rows as arrays of
   * column values in the select list's order (better-sqlite3's raw mode), without building one
   * object per row as Kysely does (~90 µs of a 101-row events page; docs/performance.md).
   * Returns undefined, running nothing, while a transaction is open on the connection (Kysely
   * runs one transaction at a time on it and awaits between statements: reading then would see
   * its uncommitted rows), so the caller runs the query through Kysely, which waits for it.
   * Throws when the statement could write. Undefined on PostgreSQL.
   */
  readRows?: (query: CompiledQuery) => unknown[][] | undefined;
  close(): Promise<void>;
}

/**
 * Opens the store without migrating it. Throws when the SQLite directory cannot be created or the
 * PostgreSQL URL is malformed (connection errors surface on first query).
 */
export function openStore(config: StorageConfig): Store {
  if (config.databaseUrl) {
    // node-postgres is loaded only for PostgreSQL (~70 ms of an SQLite server's cold start otherwise)
    const pg = createRequire(import.meta.url)('pg') as typeof PgModule;
    const options = [
      config.statementTimeoutMs ? `-c statement_timeout=${Math.trunc(config.statementTimeoutMs)}` : '',
      config.readOnly ? '-c default_transaction_read_only=on' : '',
    ].filter(Boolean);
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.poolSize ?? 10, ...(options.length ? { options: options.join(' ') } : {}) });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const url = new URL(config.databaseUrl);
    url.password = '';
    return { db, dialect: 'postgres', location: url.toString(), config, close: () => db.destroy() };
  }
  let file = ':memory:';
  if (!config.inMemory) {
    const dir = path.resolve(config.dataDir ?? 'data');
    if (!config.readOnly) fs.mkdirSync(dir, { recursive: true });
    file = path.join(dir, 'envapi.sqlite3');
  }
  const sqlite = new SQLite(file, config.readOnly ? { readonly: true, fileMustExist: true } : {});
  if (!config.readOnly) {
    sqlite.pragma('journal_mode = WAL');
    // With WAL, NORMAL cannot corrupt the database; a power cut may lose the last transactions.
    sqlite.pragma('synchronous = NORMAL');
  }
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  registerRegexp(sqlite);
  // Case-insensitive containment beyond ASCII (SQLite's LIKE folds ASCII only).
  sqlite.function('icontains', { deterministic: true }, (text: unknown, needle: unknown) =>
    text === null || text === undefined || typeof needle !== 'string' ? 0 : String(text).toLowerCase().includes(needle.toLowerCase()) ? 1 : 0,
  );
  const changes = new ChangeTracker(sqlite);
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  let lastDataVersion = dataVersion.get() as number;
  // Other processes' commits are looked for once per turn of the event loop: every request handled
  // in the same turn shares one `PRAGMA data_version` (it was ~10 µs a call and 3–4 calls a request).
  // A commit by another process is seen from the next turn on, so a request sent after the commit
  // returned always sees it. Writes through this store count at once (`changes.willWrite`).
  let versionReadThisTurn = false;
  const nextTurn = () => {
    versionReadThisTurn = false;
  };
  const changeCounter = (tables?: readonly string[]) => {
    if (!versionReadThisTurn) {
      versionReadThisTurn = true;
      setImmediate(nextTurn);
      const v = dataVersion.get() as number;
      if (v !== lastDataVersion) {
        lastDataVersion = v;
        changes.changedAnything();
      }
    }
    return changes.counter(tables);
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, changes) }) });
  // raw-mode statements are kept apart: raw mode is a setting of the statement object
  const rawStatement = statementCache(sqlite, (stmt) => {
    if (!stmt.reader || !stmt.readonly) throw new Error('readRows runs read-only queries only');
    stmt.raw(true);
  });
  const readRows = (query: CompiledQuery): unknown[][] | undefined => {
    if (sqlite.inTransaction) return undefined;
    return rawStatement(query.sql).all(...query.parameters) as unknown[][];
  };
  return { db, dialect: 'sqlite', location: file, config, changeCounter, readRows, close: () => db.destroy() };
}

/** Prepared statements kept per SQLite connection, by SQL text (least recently used dropped). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; this keeps prepared statements by SQL text so
 * a repeated query shape (every request's key lookup, the events list) is compiled once. Safe
 * because the driver runs one query at a time per connection and never keeps an iterator open.
 * Every statement that is not read-only (better-sqlite3's `readonly`) is reported to `changes`
 * (see `Store.changeCounter`).
 */
function withStatementCache(sqlite: SQLite.Database, changes: ChangeTracker): SqliteDatabase {
  const cachedStatement = statementCache(sqlite);
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const stmt = cachedStatement(sql);
      // Kysely prepares before every execution: a statement that may write moves the change counter
      if (!stmt.readonly) changes.willWrite(sql);
      return stmt;
    },
  };
}

/**
 * A prepare function that keeps up to `STATEMENT_CACHE_SIZE` statements by SQL text, least
 * recently used dropped. `setup` runs once on each newly prepared statement (it may throw: the
 * statement is then not kept).
 */
function statementCache(sqlite: SQLite.Database, setup?: (stmt: SQLite.Statement) => void): (sql: string) => SQLite.Statement {
  const cache = new Map<string, SQLite.Statement>();
  return (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql);
    } else {
      stmt = sqlite.prepare(sql);
      setup?.(stmt);
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
    }
    cache.set(sql, stmt);
    return stmt;
  };
}

/** Compiled patterns of the `regexp` SQL function, by source (patterns repeat across rows). */
const REGEXP_CACHE_SIZE = 256;

/**
 * Registers SQLite's `regexp(pattern, text)` (what `text REGEXP pattern` calls) with RE2 semantics
 * (re2js, pure-JavaScript RE2): matching is linear in the text whatever the pattern, as in
 * ClickHouse's `match()`, PostHog's engine, so no pattern can stall the thread that runs it.
 * NULL text never matches; a pattern RE2 cannot compile matches nothing (callers validate patterns
 * first with `compileRe2` and answer 400).
 */
function registerRegexp(sqlite: SQLite.Database): void {
  const cache = new Map<string, RE2JS | null>();
  sqlite.function('regexp', { deterministic: true }, (pattern: unknown, text: unknown) => {
    if (text === null || text === undefined || typeof pattern !== 'string') return 0;
    let re = cache.get(pattern);
    if (re === undefined) {
      re = compileRe2(pattern);
      if (cache.size >= REGEXP_CACHE_SIZE) cache.clear();
      cache.set(pattern, re);
    }
    return re !== null && re.test(String(text)) ? 1 : 0;
  });
}

/** Result of running migrations: the names applied by this call (empty when up to date). */
export interface MigrateResult {
  applied: string[];
}

/** Applies every pending migration in order. Throws the first migration error, after rolling it back. */
export async function migrateToLatest(store: Store): Promise<MigrateResult> {
  // On PostgreSQL, keep Kysely's bookkeeping tables in the connection's own schema: its existence
  // check would otherwise find them in another schema of the same database and skip creating them.
  let migrationTableSchema: string | undefined;
  if (store.dialect === 'postgres') {
    const r = await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db);
    migrationTableSchema = r.rows[0]?.schema;
  }
  const migrator = new Migrator({ db: store.db, provider: migrationProvider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
