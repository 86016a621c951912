/**
 * The event import pipeline: rows in PostHog's export shape → validated, normalised events and
 * person updates → batches written inside transactions through `EventsWriteRepository`.
 *
 * Row shape (one object per event, as PostHog's event exports and `posthog-js` captures carry it):
 * - `event` (required, non-empty string);
 * - `distinct_id` (required, a non-empty string or a finite number, stored as a string);
 * - `timestamp` (required, ISO 8601; read by `parseIsoTimestamp`, so no offset means UTC; stored as
 *   `YYYY-MM-DDTHH:MM:SS.ffffffZ`);
 * - `properties` (optional object, default `{}`);
 * - `uuid` (optional UUID, lowercased; `id` is accepted as its alias, so rows from our own events
 *   list can be imported back); without one the row gets a deterministic uuid (`deterministicUuid`),
 *   so re-importing the same file inserts nothing twice;
 * - `elements_chain` (optional string, default `''`);
 * - `$set` / `$set_once` (optional objects): merged into `properties.$set` / `properties.$set_once`,
 *   the top-level keys winning, as PostHog's ingestion does (plugin-server/src/utils/event.ts
 *   `normalizeEvent`). Other top-level keys (`person`, `elements`, `created_at`, …) are ignored.
 *
 * Files: JSON Lines (`.jsonl`, `.ndjson`, `.json`: one event object per line, blank lines skipped)
 * or CSV with a header row (`.csv`): columns `event`, `distinct_id`, `timestamp`, optional `uuid`
 * (or `id`), `elements_chain`, `properties` (a JSON object), `$set` / `$set_once` (JSON objects),
 * and flattened `properties.<key>` columns, whose non-empty cells are merged into `properties` as
 * strings (over the JSON column). Unknown columns are ignored. A `.gz` suffix is decompressed.
 *
 * Person updates follow PostHog's person processing, the same for imported and captured events
 * (server/ingest/person-rules.ts, server/storage/repositories/person-updates.ts):
 * `properties.$set` / `$set_once` / `$unset` apply to the person of `distinct_id`; `$identify`
 * (with `properties.$anon_distinct_id`) and `$create_alias` (with `properties.alias`) merge the
 * other id's person into it unless that person is identified already; `$process_person_profile:
 * false` leaves persons alone. Rows are written through the shared write path (write-events.ts).
 *
 * Modules (import/): normalize.ts (a row: its shape, validation, normalisation, derived uuid and
 * errors), readers.ts (JSON Lines and CSV files, gzip), write.ts (batches, transactions, waiting
 * for the write lock, totals); this module holds the entry points.
 */
import fs from 'node:fs';
import type { Store } from '../storage/db.js';
import { clickhouseEventsOf } from '../storage/events/index.js';
import { normalize, toImportError, type NumberedRow, type RawEventRow } from './import/normalize.js';
import { detectFormat, readRows, type ImportFormat } from './import/readers.js';
import {
  batchSizeOf,
  requireProject,
  writeRows,
  type BatchSink,
  type ImportSummary,
  type LockWaitCallback,
  type ProgressCallback,
} from './import/write.js';

export {
  DEFAULT_BATCH_SIZE,
  type BatchSink,
  type ImportPhase,
  type ImportSummary,
  type LockWait,
  type LockWaitCallback,
  type ProgressCallback,
} from './import/write.js';
export {
  ImportError,
  canonicalJson,
  deterministicUuid,
  normalizeEventRow,
  type NormalizedEventRow,
  type RawEventRow,
} from './import/normalize.js';
export { detectFormat, type ImportFormat } from './import/readers.js';

/** Options of `importEvents`. */
export interface ImportOptions {
  /** rows per batch, each batch one transaction; integer 1–100,000, default 2,000 */
  batchSize?: number | undefined;
  onProgress?: ProgressCallback | undefined;
  /** name used in error messages (`<source>:<row>: <reason>`), default `rows` */
  source?: string | undefined;
  /** the expected number of rows, passed on to `onProgress` */
  total?: number | undefined;
  onLockWait?: LockWaitCallback | undefined;
  /** send the batches to a running server instead of writing them to the store (./import/write.ts) */
  sink?: BatchSink | undefined;
}

/** Options of `importEventsFile`. */
export interface ImportFileOptions {
  /** overrides detection from the file name */
  format?: ImportFormat | undefined;
  batchSize?: number | undefined;
  onProgress?: ProgressCallback | undefined;
  onLockWait?: LockWaitCallback | undefined;
  sink?: BatchSink | undefined;
}

const VALIDATE_PROGRESS_EVERY = 10_000;

async function* numberedAsync(rows: AsyncIterable<RawEventRow>): AsyncGenerator<NumberedRow> {
  let line = 0;
  for await (const row of rows) yield { line: ++line, row };
}

function* numberedSync(rows: Iterable<RawEventRow>): Generator<NumberedRow> {
  let line = 0;
  for (const row of rows) yield { line: ++line, row };
}

function numbered(rows: AsyncIterable<RawEventRow> | Iterable<RawEventRow>): AsyncIterable<NumberedRow> | Iterable<NumberedRow> {
  return Symbol.asyncIterator in rows ? numberedAsync(rows) : numberedSync(rows);
}

/**
 * Imports rows (an array, a generator, any iterable or async iterable) into project `teamId`,
 * in batches of `opts.batchSize` (default 2,000), each batch one transaction: a row whose uuid is
 * stored already is skipped and counted (`duplicate uuid`). Rows are validated as they are read:
 * the first bad one throws `ImportError` (`<source>:<row number>: <reason>`) with the batches
 * before it committed and its own batch not written; `importEventsFile` validates a whole file
 * before writing anything. A batch that cannot take the store's write lock in time (the server or
 * another import keeps writing) is retried until it can, calling `opts.onLockWait` each time.
 * Throws `Error` when the project does not exist, RangeError on a bad batch size, and the driver's
 * error when the store fails otherwise (the batch being written rolls back).
 */
export async function importEvents(
  store: Store,
  teamId: number,
  rows: AsyncIterable<RawEventRow> | Iterable<RawEventRow>,
  opts: ImportOptions = {},
): Promise<ImportSummary> {
  const batchSize = batchSizeOf(opts.batchSize, opts.sink !== undefined || clickhouseEventsOf(store) !== undefined);
  await requireProject(store, teamId);
  return writeRows(store, teamId, numbered(rows), opts.source ?? 'rows', {
    batchSize,
    onProgress: opts.onProgress,
    total: opts.total,
    onLockWait: opts.onLockWait,
    sink: opts.sink,
  });
}

/**
 * Reads a whole file once and validates every row without writing anything; returns the number
 * of rows. Throws ImportError (`<file>:<line>: <reason>`) on the first bad line.
 */
export async function validateEventsFile(
  teamId: number,
  file: string,
  format: ImportFormat,
  onProgress?: ProgressCallback,
): Promise<number> {
  let rows = 0;
  for await (const { line, row } of readRows(file, format)) {
    try {
      normalize(teamId, row, false);
    } catch (err) {
      throw toImportError(file, line, err);
    }
    rows += 1;
    if (rows % VALIDATE_PROGRESS_EVERY === 0) onProgress?.(rows, undefined, 'validating');
  }
  onProgress?.(rows, undefined, 'validating');
  return rows;
}

/**
 * Imports a JSON Lines or CSV file (see module doc) into project `teamId` in two streaming passes
 * (the file is read twice; memory stays at one batch): the first validates every line and throws
 * ImportError (`<file>:<line>: <reason>`, e.g.
 * `events.jsonl:17: invalid JSON: …`) before anything is written; the second writes batches of
 * `opts.batchSize` rows (default 2,000), each in one transaction, skipping uuids stored already;
 * a batch waits for the store's write lock as long as it takes (`opts.onLockWait` is told).
 * Throws `Error` when the file cannot be read, its format cannot be told from its name (pass
 * `opts.format`), or the project does not exist; RangeError on a bad batch size.
 */
export async function importEventsFile(store: Store, teamId: number, file: string, opts: ImportFileOptions = {}): Promise<ImportSummary> {
  const batchSize = batchSizeOf(opts.batchSize, opts.sink !== undefined || clickhouseEventsOf(store) !== undefined);
  const format = opts.format ?? detectFormat(file);
  if (!format)
    throw new Error(`Cannot tell the format of ${file} from its name (.jsonl, .ndjson, .json or .csv): pass the format (jsonl or csv).`);
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot read (${code ?? String(err)})`, { cause: err });
  }
  if (!stat.isFile()) throw new Error(`${file}: not a file`);
  await requireProject(store, teamId);
  const started = performance.now();
  const total = await validateEventsFile(teamId, file, format, opts.onProgress);
  const summary = await writeRows(store, teamId, readRows(file, format), file, {
    batchSize,
    onProgress: opts.onProgress,
    total,
    onLockWait: opts.onLockWait,
    sink: opts.sink,
  });
  const durationMs = Math.round(performance.now() - started);
  return {
    ...summary,
    duration_ms: durationMs,
    events_per_second: durationMs > 0 ? Math.round((summary.rows_read * 1000) / durationMs) : summary.rows_read,
  };
}
