/**
 * The writing half of an import: normalised rows in batches, each batch one transaction through
 * the shared write path (../write-events.ts: events inserted idempotently on uuid, persons updated), a batch waiting
 * its turn while another writer holds the store's write lock, and the running totals that become
 * the `ImportSummary`. A first import inserts straight away; once a batch meets stored uuids, the
 * following batches look them up first, so re-importing a file replays none of its `$set`s.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Store } from '../../storage/db.js';
import { isStoreBusy } from '../../storage/errors.js';
import { AccountsRepository } from '../../storage/repositories/accounts.js';
import { clickhouseEventsOf, EventsWriteRepository } from '../../storage/events/index.js';
import { writeEventRows, type NormalizedEventRow } from '../write-events.js';
import { normalizeEventRow, toImportError, type NumberedRow, type RawEventRow } from './normalize.js';

/**
 * `validating`: the first pass over a file (nothing written yet); `importing`: batches being
 * written; `vacuuming`: PostgreSQL only, after the last batch, `VACUUM (ANALYZE)` of the tables
 * written (`vacuumAfterBulkWrite`, storage/events/write.ts), reported once.
 */
export type ImportPhase = 'validating' | 'importing' | 'vacuuming';

/**
 * Progress callback: `done` rows validated (phase `validating`, reported every 10,000 rows and at
 * the end) or rows written or skipped (phase `importing`, after each committed batch; phase
 * `vacuuming` once, with the rows written, when the vacuum starts); `total` is
 * the number of rows when known (a file's row count once validated, or `ImportOptions.total`).
 */
export type ProgressCallback = (done: number, total: number | undefined, phase: ImportPhase) => void;

/** What `LockWaitCallback` is told. */
export interface LockWait {
  /** 1-based number of the first and last row of the batch that waits */
  from_row: number;
  to_row: number;
  /** how long this batch has waited so far, ms */
  waited_ms: number;
}

/**
 * Called each time a batch could not take the store's write lock within the store's
 * `lockTimeoutMs` (another process, e.g. the server, kept writing); the batch, rolled back, is then
 * tried again, for as long as it takes.
 */
export type LockWaitCallback = (wait: LockWait) => void;

/** The outcome of an import. */
export interface ImportSummary {
  /** the file path as given, or `ImportOptions.source` */
  source: string;
  /** rows read and validated */
  rows_read: number;
  /** events written */
  inserted: number;
  /** rows not written, `rows_read - inserted` */
  skipped: number;
  /** why rows were skipped: `duplicate uuid` (stored already, or repeated in the input), `uuid used by another project` */
  skipped_reasons: Record<string, number>;
  /** persons created for distinct ids seen for the first time */
  persons_created: number;
  /** wall time of the whole import, milliseconds */
  duration_ms: number;
  /** `rows_read` per second of `duration_ms`, rounded */
  events_per_second: number;
  /**
   * set when the rows went to a running server (a `BatchSink`): its address. The server then
   * skips uuids stored already without saying how many, so `inserted` counts the rows it
   * accepted and `persons_created` is 0 (not known here).
   */
  sent_to?: string;
}

/**
 * Where an import's batches go instead of the store it opened: `send` takes one batch of
 * normalised rows and resolves once they are stored (a server's `/batch/`, ./http-sink.ts), or
 * throws, which stops the import. `via` (the server's address) is told in the summary.
 */
export interface BatchSink {
  via: string;
  send(batch: readonly NormalizedEventRow[]): Promise<void>;
}

/** Default rows per batch. */
export const DEFAULT_BATCH_SIZE = 2_000;
/**
 * Default rows per batch with the events on ClickHouse (or sent to a server holding them): each
 * batch is one insert, and ClickHouse takes few large inserts best (each makes a part to merge);
 * 10,000 imported ~20% faster than 2,000 (docs/performance.md, issue 39).
 */
export const CLICKHOUSE_BATCH_SIZE = 10_000;
const MAX_BATCH_SIZE = 100_000;

/**
 * Validates the options shared by both entry points; throws RangeError on a bad batch size. The
 * default is `CLICKHOUSE_BATCH_SIZE` when the events go to ClickHouse (`clickhouse`), else
 * `DEFAULT_BATCH_SIZE`.
 */
export function batchSizeOf(batchSize: number | undefined, clickhouse = false): number {
  const size = batchSize ?? (clickhouse ? CLICKHOUSE_BATCH_SIZE : DEFAULT_BATCH_SIZE);
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new RangeError(`batch size must be an integer from 1 to ${MAX_BATCH_SIZE}, got ${size}`);
  }
  return size;
}

/** Throws `Error` ("Project N does not exist.") unless project `teamId` exists. */
export async function requireProject(store: Store, teamId: number): Promise<void> {
  if (!Number.isInteger(teamId) || teamId < 1 || !(await new AccountsRepository(store.db).findTeam(teamId))) {
    throw new Error(`Project ${teamId} does not exist.`);
  }
}

/** Running totals of one import. */
interface Totals {
  rows: number;
  inserted: number;
  personsCreated: number;
  skipped: Record<string, number>;
}

function countSkip(totals: Record<string, number>, reason: string, n = 1): void {
  if (n > 0) totals[reason] = (totals[reason] ?? 0) + n;
}

/** Thrown inside a batch's transaction to roll it back when the optimistic insert met stored uuids. */
class StoredUuidsMet extends Error {}

/**
 * Writes one batch in one transaction; updates `totals` only once it has committed.
 *
 * Uuids repeated within the batch are dropped first. Then, while no stored uuid has been met
 * (`state.lookUp` false: a first import), the batch is inserted straight away and all its person
 * updates applied; if the insert skipped a stored uuid, the transaction is rolled back and the
 * batch written again the careful way: look the uuids up first, insert and update persons only
 * for the new rows (so that re-importing an old file does not replay its `$set`s), count the
 * others by reason. The careful way stays on while batches keep meeting stored uuids.
 */
async function writeBatch(
  store: Store,
  teamId: number,
  batch: readonly NormalizedEventRow[],
  totals: Totals,
  state: { lookUp: boolean },
  onLockWait?: LockWaitCallback,
): Promise<void> {
  const write = (lookUp: boolean) =>
    store.db.transaction().execute(async (trx) => {
      const outcome = await writeEventRows(trx, teamId, batch, lookUp, clickhouseEventsOf(store)?.writer);
      if (outcome.aborted) throw new StoredUuidsMet();
      return outcome;
    });
  let result: Awaited<ReturnType<typeof write>> | undefined;
  if (!state.lookUp) {
    try {
      result = await waitingForStore(() => write(false), totals.rows, batch.length, onLockWait);
    } catch (err) {
      if (!(err instanceof StoredUuidsMet)) throw err;
    }
  }
  result ??= await waitingForStore(() => write(true), totals.rows, batch.length, onLockWait);
  state.lookUp = result.metStored;
  totals.rows += batch.length;
  totals.inserted += result.inserted;
  totals.personsCreated += result.personsCreated;
  for (const [reason, n] of Object.entries(result.skipped)) countSkip(totals.skipped, reason, n);
}

/**
 * Runs one batch's transaction (`write`) again and again while it fails because the store's write
 * lock stayed with another writer past the store's `lockTimeoutMs` (`isStoreBusy`: the
 * transaction rolled back, nothing of it was written), telling `onLockWait` each time: an import
 * beside a busy server waits its turn rather than gives up. Other errors are thrown as they are.
 */
async function waitingForStore<T>(
  write: () => Promise<T>,
  rowsBefore: number,
  rows: number,
  onLockWait: LockWaitCallback | undefined,
): Promise<T> {
  const started = performance.now();
  for (;;) {
    try {
      return await write();
    } catch (err) {
      if (!isStoreBusy(err)) throw err;
      onLockWait?.({ from_row: rowsBefore + 1, to_row: rowsBefore + rows, waited_ms: Math.round(performance.now() - started) });
    }
  }
}

/**
 * The second half of every import: normalises rows as they come, writes them in batches (each
 * one transaction), reports progress after each batch and then lets the event loop turn (timers,
 * I/O), as SQLite's synchronous writes would otherwise hold it for the whole import. Throws
 * ImportError on the first bad row.
 */
export async function writeRows(
  store: Store,
  teamId: number,
  rows: AsyncIterable<NumberedRow> | Iterable<NumberedRow>,
  source: string,
  opts: {
    batchSize: number;
    onProgress?: ProgressCallback | undefined;
    total?: number | undefined;
    onLockWait?: LockWaitCallback | undefined;
    /** send the batches there instead of writing them to `store` */
    sink?: BatchSink | undefined;
  },
): Promise<ImportSummary> {
  const started = performance.now();
  const totals: Totals = { rows: 0, inserted: 0, personsCreated: 0, skipped: {} };
  const state = { lookUp: false };
  let batch: NormalizedEventRow[] = [];
  /** Adds a row; true when the batch is full. */
  const add = (line: number, row: RawEventRow): boolean => {
    try {
      batch.push(normalizeEventRow(teamId, row));
    } catch (err) {
      throw toImportError(source, line, err);
    }
    return batch.length >= opts.batchSize;
  };
  const write = async (): Promise<void> => {
    if (!opts.sink) return writeBatch(store, teamId, batch, totals, state, opts.onLockWait);
    await opts.sink.send(batch);
    totals.rows += batch.length;
    totals.inserted += batch.length;
  };
  const flush = async (): Promise<void> => {
    await write();
    batch = [];
    opts.onProgress?.(totals.rows, opts.total, 'importing');
    // SQLite's statements are synchronous and a batch's promises settle as microtasks: without a
    // turn of the event loop between batches no timer runs until the import ends (the CLI's
    // progress line every 5 s, or its bar's redraw, never came during a demo import).
    await yieldToEventLoop();
  };
  if (Symbol.asyncIterator in rows) {
    for await (const { line, row } of rows) if (add(line, row)) await flush();
  } else {
    // A synchronous source (an array, the demo generator) is read without a promise per row.
    for (const { line, row } of rows) if (add(line, row)) await flush();
  }
  if (batch.length) {
    await write();
    opts.onProgress?.(totals.rows, opts.total, 'importing');
  }
  if (opts.sink) return { ...summarize(source, totals, started), sent_to: opts.sink.via };
  if (totals.inserted > 0) {
    await new EventsWriteRepository(store.db).vacuumAfterBulkWrite(() => opts.onProgress?.(totals.rows, opts.total, 'vacuuming'));
  }
  return summarize(source, totals, started);
}

function summarize(source: string, totals: Totals, started: number): ImportSummary {
  const durationMs = Math.round(performance.now() - started);
  const skipped = totals.rows - totals.inserted;
  return {
    source,
    rows_read: totals.rows,
    inserted: totals.inserted,
    skipped,
    skipped_reasons: totals.skipped,
    persons_created: totals.personsCreated,
    duration_ms: durationMs,
    events_per_second: durationMs > 0 ? Math.round((totals.rows * 1000) / durationMs) : totals.rows,
  };
}
