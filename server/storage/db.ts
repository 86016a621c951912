/**
 * Opening the store. `DATABASE_URL=postgres://…` selects PostgreSQL (node-postgres pool);
 * otherwise SQLite (better-sqlite3) in `<dataDir>/envapi.sqlite3`, in WAL mode (synchronous NORMAL)
 * with foreign keys on, a prepared-statement cache, and the SQL functions of ./sqlite-functions.ts.
 *
 * SQLite files: the data directory is created 0700 and the database file 0600 before SQLite opens
 * it (its `-wal` and `-shm` files take the database file's mode), whatever the umask: they hold
 * plugin secret values. An existing directory is left as it is; existing files are tightened to
 * 0600.
 *
 * SQLite writers: every transaction takes the write lock up front (`BEGIN IMMEDIATE`), and a
 * statement that cannot get the lock because another connection or process holds it (an import's
 * batch, another server process) is retried asynchronously until `lockTimeoutMs`, then fails with
 * `StoreBusyError` (the API answers 503 with `Retry-After`). See `LockWaitingSqliteDriver`.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { openSqlite } from './sqlite-driver.js';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type SqliteDatabase,
  type TransactionSettings,
} from 'kysely';
import type PgModule from 'pg';
import { ChangeTracker } from './change-tracker.js';
import { startBackgroundCheckpoints } from './checkpoints.js';
import type { DialectName } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import { CurrentSchemaPostgresDialect } from './pg-introspector.js';
import { registerSqliteFunctions } from './sqlite-functions.js';
import type { Database } from './schema.js';
import { isSqliteBusy, StoreBusyError } from './errors.js';

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
  /**
   * SQLite only: the longest a write waits, in ms, for the write lock that another connection or
   * process holds (an import's batch, another server process's transaction) before it fails with
   * `StoreBusyError`; default `DEFAULT_LOCK_TIMEOUT_MS` (10,000). `Infinity` waits for ever. The
   * wait is asynchronous (see `LockWaitingSqliteDriver`): the event loop keeps serving meanwhile.
   */
  lockTimeoutMs?: number | undefined;
  /**
   * SQLite only (a file, not read-only): WAL checkpoints run in a worker thread of their own
   * instead of inside the commit that fills the WAL (./checkpoints.ts; the server sets it, so
   * that no request waits for a checkpoint's copy and fsync). Off by default: a CLI command or a
   * test keeps SQLite's auto-checkpoints.
   */
  backgroundCheckpoints?: boolean | undefined;
}

/** What the store tells its opener of, besides the results of queries (not part of `StorageConfig`, which is plain data a worker thread receives). */
export interface StoreListeners {
  /**
   * PostgreSQL only: called when a pooled connection that was idle fails (the server restarted,
   * an administrator or `idle_session_timeout` ended the session, the network dropped it). The
   * pool has already discarded that connection and opens a new one for the next query, so this is
   * for logging only. The store hears the pool's `error` event whether or not this is given
   * (node-postgres would otherwise throw it as an uncaught exception and end the process). Not
   * called for connections that end while the store closes.
   */
  onConnectionError?: ((err: Error) => void) | undefined;
  /**
   * SQLite with `backgroundCheckpoints` only: called when the checkpoint worker failed; the
   * connection is back on SQLite's own auto-checkpoints (for logging only).
   */
  onCheckpointFailure?: ((err: Error) => void) | undefined;
}

/** Default of `StorageConfig.lockTimeoutMs`, ms. */
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/**
 * SQLite's own (synchronous) busy handler wait per attempt, ms, once the store is open: none, so
 * that no statement blocks the event loop while another process holds the lock; waiting is done
 * between attempts, asynchronously (`LockWaitingSqliteDriver`). While opening (pragmas, in WAL
 * recovery) the wait is `OPEN_BUSY_TIMEOUT_MS`.
 */
const BUSY_TIMEOUT_PER_ATTEMPT_MS = 0;
const OPEN_BUSY_TIMEOUT_MS = 5_000;
/** Delays between attempts to take the lock, ms: doubling from the first to the last, then the last. */
const RETRY_FIRST_DELAY_MS = 1;
const RETRY_MAX_DELAY_MS = 25;
/**
 * `journal_size_limit` of every writable SQLite connection, bytes: when a checkpoint has copied
 * the whole WAL and a writer starts it again from its beginning, the `-wal` file is truncated back
 * to this size, so that one large transaction (an import's batch, the index of a materialized
 * column over every event) does not leave it at its size.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The page size of a new SQLite store, bytes (SQLite's default is 4,096). Events rows are about a KB
 * (their properties' JSON), a few to a 4 KB page: with 16 KB pages a read that visits every event
 * of a project (a filter on a property without a materialized column) and an import are both
 * faster, and the file smaller (docs/performance.md). SQLite takes the page size when it creates the file;
 * a store created before keeps its own (docs/deploy.md says how to convert one).
 */
export const SQLITE_PAGE_SIZE_BYTES = 16 * 1024;

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
   * object per row as Kysely does (a visible share of an events page; docs/performance.md).
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
export function openStore(config: StorageConfig, listeners: StoreListeners = {}): Store {
  if (config.databaseUrl) {
    // node-postgres is loaded only for PostgreSQL (~70 ms of an SQLite server's cold start otherwise)
    const pg = createRequire(import.meta.url)('pg') as typeof PgModule;
    // Session settings go into the URL's own `options` (appended to any it has, such as a
    // search_path): node-postgres lets a URL's parameters override the same keys of its config.
    const connection = new URL(config.databaseUrl);
    const options = [
      connection.searchParams.get('options') ?? '',
      config.statementTimeoutMs ? `-c statement_timeout=${Math.trunc(config.statementTimeoutMs)}` : '',
      config.readOnly ? '-c default_transaction_read_only=on' : '',
    ].filter(Boolean);
    if (options.length) connection.searchParams.set('options', options.join(' '));
    const pool = new pg.Pool({ connectionString: connection.toString(), max: config.poolSize ?? 10 });
    let closing = false;
    // an idle connection's error is emitted by the pool: unheard, it would end the process
    pool.on('error', (err) => {
      if (!closing) listeners.onConnectionError?.(err);
    });
    const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    const url = new URL(config.databaseUrl);
    url.password = '';
    const close = async () => {
      // the pool's end resolves before its connections have closed: one may still fail after it
      closing = true;
      await db.destroy();
    };
    return { db, dialect: 'postgres', location: url.toString(), config, close };
  }
  let file = ':memory:';
  if (!config.inMemory) {
    const dir = path.resolve(config.dataDir ?? 'data');
    file = path.join(dir, 'envapi.sqlite3');
    if (!config.readOnly) prepareDataFiles(dir, file);
  }
  const sqlite = openSqlite(file, config.readOnly ? { readonly: true, fileMustExist: true } : {});
  sqlite.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`);
  if (!config.readOnly) {
    // before WAL mode, which fixes the page size of a new file; an existing file keeps its own
    sqlite.pragma(`page_size = ${SQLITE_PAGE_SIZE_BYTES}`);
    sqlite.pragma('journal_mode = WAL');
    // With WAL, NORMAL cannot corrupt the database; a power cut may lose the last transactions.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  }
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_PER_ATTEMPT_MS}`);
  registerSqliteFunctions(sqlite);
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
  const lockTimeoutMs = config.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const db = new Kysely<Database>({ dialect: new LockWaitingSqliteDialect(sqlite, withStatementCache(sqlite, changes), lockTimeoutMs) });
  // raw-mode statements are kept apart: raw mode is a setting of the statement object
  const rawStatement = statementCache(sqlite, (stmt) => {
    if (!stmt.reader || !stmt.readonly) throw new Error('readRows runs read-only queries only');
    stmt.raw(true);
  });
  const readRows = (query: CompiledQuery): unknown[][] | undefined => {
    if (sqlite.inTransaction) return undefined;
    return rawStatement(query.sql).all(...query.parameters) as unknown[][];
  };
  const checkpoints =
    config.backgroundCheckpoints && !config.inMemory && !config.readOnly
      ? startBackgroundCheckpoints(sqlite, file, { onFailure: listeners.onCheckpointFailure })
      : undefined;
  const close = async () => {
    await checkpoints?.stop();
    await db.destroy();
  };
  return { db, dialect: 'sqlite', location: file, config, changeCounter, readRows, close };
}

/** Owner-only modes of the data directory and of the SQLite files. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Makes the data directory and the database file exist with owner-only modes before SQLite opens
 * the file: a missing directory is created 0700 (and chmod-ed, so the umask does not matter); an
 * existing one is left as it is. A missing database file is created empty, 0600 (SQLite treats an
 * empty file as a new database, and creates its `-wal` and `-shm` files with the database file's
 * mode, fchmod-ing them past the umask). Existing database, `-wal` and `-shm` files with group or
 * other bits are tightened to 0600; a file this process may not chmod (another owner) is left as
 * it is. Throws when the directory or the file cannot be created.
 */
function prepareDataFiles(dir: string, file: string): void {
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    fs.chmodSync(dir, DIR_MODE);
  }
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, FILE_MODE);
    try {
      fs.fchmodSync(fd, FILE_MODE);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      const { mode } = fs.statSync(f);
      if ((mode & 0o077) !== 0) fs.chmodSync(f, FILE_MODE);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM' && code !== 'EACCES') throw err;
    }
  }
}

/**
 * Kysely's SQLite dialect with `LockWaitingSqliteDriver` as its driver (Kysely's own driver begins
 * transactions with a plain, deferred `begin` and has no option for another kind).
 */
class LockWaitingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly database: SqliteDatabase,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
  }

  override createDriver(): Driver {
    return new LockWaitingSqliteDriver(this.sqlite, this.database, this.lockTimeoutMs);
  }
}

/**
 * Kysely's SQLite driver, changed in two ways so that writers of several connections or processes
 * (the server and an import, `serve --workers`) wait for each other instead of failing:
 *
 * 1. Transactions start with `BEGIN IMMEDIATE`, taking the write lock before their first
 *    statement (`BEGIN DEFERRED` when Kysely is asked for a `read only` one). With a deferred
 *    `begin`, a transaction that reads and then writes while another connection committed in
 *    between gets SQLITE_BUSY (BUSY_SNAPSHOT) at once, without the busy handler being called,
 *    whatever `busy_timeout` is: that was the "database is locked" 500 of a PATCH during an import.
 *    Inside an immediate transaction no statement waits for a lock any more.
 * 2. Taking the lock is retried asynchronously. SQLite's busy handler (`busy_timeout`) sleeps
 *    synchronously in the thread that runs the statement: in the server that would freeze every
 *    request while one write waits for an import's batch (hundreds of ms). So the connection runs
 *    with `busy_timeout` 0 (`BUSY_TIMEOUT_PER_ATTEMPT_MS`), and `BEGIN IMMEDIATE`, as well as any
 *    statement outside a transaction (an autocommit write, or a read during WAL recovery), that
 *    fails with SQLITE_BUSY is tried again after a timer (1, 2, 4, … ms up to 25 ms between
 *    attempts) until it succeeds or `lockTimeoutMs` has passed, then `StoreBusyError` is thrown.
 *    Retrying is safe there: a statement or `BEGIN` that failed with SQLITE_BUSY changed nothing.
 *    A statement inside a transaction is never retried (its error is passed on as it is).
 *
 * The price: Kysely runs one query at a time on the connection (its mutex), and a transaction
 * waiting for the lock holds that mutex, so this process's other Kysely queries wait (without
 * blocking the event loop) until the transaction has run. `Store.readRows` does not go through
 * Kysely and keeps reading meanwhile. Lock acquisition between processes is not fair (each side
 * polls), which is fine while transactions are short: an import's batch takes the lock for a
 * fraction of a second and the API's transactions for about a millisecond.
 */
class LockWaitingSqliteDriver extends SqliteDriver {
  private readonly beginImmediate: SQLite.Statement;
  private readonly beginDeferred: SQLite.Statement;
  private connection: DatabaseConnection | undefined;

  constructor(
    private readonly sqlite: SQLite.Database,
    database: SqliteDatabase,
    private readonly lockTimeoutMs: number,
  ) {
    super({ database });
    // prepared here, not through the statement cache: `BEGIN IMMEDIATE` is not a read-only
    // statement for SQLite, and the change tracker would count it as a write of every table
    this.beginImmediate = sqlite.prepare('BEGIN IMMEDIATE');
    this.beginDeferred = sqlite.prepare('BEGIN DEFERRED');
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    this.connection ??= {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        this.sqlite.inTransaction ? inner.executeQuery<R>(query) : this.waitingForLock(() => inner.executeQuery<R>(query)),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => inner.streamQuery<R>(query, chunkSize),
    };
    return this.connection;
  }

  override async beginTransaction(_connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    const begin = settings?.accessMode === 'read only' ? this.beginDeferred : this.beginImmediate;
    await this.waitingForLock(() => begin.run());
  }

  /**
   * Runs `attempt` until it does not fail with SQLITE_BUSY, waiting asynchronously between
   * attempts; throws `StoreBusyError` once `lockTimeoutMs` has passed, and any other error at once.
   */
  private async waitingForLock<T>(attempt: () => T | Promise<T>): Promise<T> {
    let started: number | undefined;
    let delay = RETRY_FIRST_DELAY_MS;
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        if (!isSqliteBusy(err)) throw err;
        const now = performance.now();
        started ??= now;
        const waited = now - started;
        if (waited >= this.lockTimeoutMs) throw new StoreBusyError(waited, { cause: err });
        await new Promise((resolve) => setTimeout(resolve, Math.min(delay, this.lockTimeoutMs - waited)));
        delay = Math.min(delay * 2, RETRY_MAX_DELAY_MS);
      }
    }
  }
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

/**
 * SQLite: copies every page of the WAL into the database file and truncates the `-wal` file to
 * zero bytes (`PRAGMA wal_checkpoint(TRUNCATE)`), for after a transaction that wrote a large part
 * of the file (the index of a materialized column over every event: gigabytes at ten million
 * events), which the WAL would otherwise keep on disk for as long as another connection (a
 * running server) keeps the store open. Best effort and without waiting: while another
 * connection is writing or reading an older snapshot, it does what it can (the server's
 * checkpoints and `journal_size_limit` finish the work later). A no-op on PostgreSQL.
 */
export async function truncateWal(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') await sql`pragma wal_checkpoint(truncate)`.execute(store.db);
}

/** Result of running migrations: the names applied by this call (empty when up to date). */
export interface MigrateResult {
  applied: string[];
}

/**
 * Applies every pending migration in order. Throws the first migration error, after rolling it
 * back. On PostgreSQL, Kysely's Migrator looks for its tables in the connection's own schema only
 * (./pg-introspector.ts), so what other sessions do to other schemas of the database cannot fail it.
 */
export async function migrateToLatest(store: Store): Promise<MigrateResult> {
  // On PostgreSQL, Kysely's bookkeeping tables are named with the connection's own schema (where
  // the introspector looks for them, ./pg-introspector.ts), whatever else the search_path lists.
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
