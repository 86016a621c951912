/**
 * The store's own errors, and how to tell a storage error that will not recur when the request is
 * sent again a moment later (`isTransientStoreError`): `http/errors.ts` answers those 503 with
 * `Retry-After`; the importer waits and retries a batch that found the store busy (`isStoreBusy`).
 */

/**
 * A SQLite write could not take the store's write lock within `StorageConfig.lockTimeoutMs`:
 * another connection or process kept it (typically an import writing a batch). Nothing was
 * written by the statement or transaction that failed; sending it again later is safe.
 * `http/errors.ts` answers it 503 with `Retry-After`.
 */
export class StoreBusyError extends Error {
  /** how long the write waited, ms */
  readonly waitedMs: number;
  constructor(waitedMs: number, options?: { cause?: unknown }) {
    super(`the store is busy: another writer held the lock for ${Math.round(waitedMs)} ms (database is locked)`, options);
    this.name = 'StoreBusyError';
    this.waitedMs = waitedMs;
  }
}

/**
 * True for better-sqlite3's `SqliteError` meaning "another connection holds a lock"
 * (`SQLITE_BUSY` and its extended codes `SQLITE_BUSY_SNAPSHOT`, `SQLITE_BUSY_RECOVERY`,
 * `SQLITE_BUSY_TIMEOUT`: "database is locked").
 */
export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** True when `err` says the store was only momentarily unable to write (`StoreBusyError`, a raw SQLITE_BUSY). */
export function isStoreBusy(err: unknown): boolean {
  return err instanceof StoreBusyError || isSqliteBusy(err);
}

/**
 * A read that ran past its time budget (`QUERY_TIMEOUT_MS`), its wait for a turn included: from
 * the read pool (server/read-pool/), or from ClickHouse (its `max_execution_time`, code 159
 * TIMEOUT_EXCEEDED, or the queue of ./clickhouse/kysely-dialect.ts). `http/errors.ts` answers it
 * 504, as PostHog answers a ClickHouse timeout.
 */
export class QueryTimeoutError extends Error {
  constructor(
    readonly budgetMs: number,
    options?: { cause?: unknown },
  ) {
    super(`Query has hit the max execution time (${budgetMs} ms) before completing.`, options);
    this.name = 'QueryTimeoutError';
  }
}

/**
 * PostgreSQL SQLSTATEs that mean "try again": serialization_failure, deadlock_detected,
 * lock_not_available, too_many_connections, cannot_connect_now. (query_canceled, 57014, is the
 * events reads' time budget and is not in this list.)
 */
const TRANSIENT_PG_CODES = new Set(['40001', '40P01', '55P03', '53300', '57P03']);

/**
 * True for a storage error that will likely not recur if the request is sent again a moment later:
 * `StoreBusyError` or a raw SQLITE_BUSY from SQLite, a transient SQLSTATE from PostgreSQL
 * (node-postgres's `DatabaseError` carries it in `code`).
 */
export function isTransientStoreError(err: unknown): boolean {
  if (isStoreBusy(err)) return true;
  const e = err as { code?: unknown; severity?: unknown } | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string' && TRANSIENT_PG_CODES.has(e.code);
}
