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
 * Person updates follow PostHog's person processing in the simplified form of
 * `EventsWriteRepository.applyPersonUpdates` (posthog plugin-server
 * src/worker/ingestion/persons/person-state.ts): `properties.$set` / `$set_once` apply to the
 * person of `distinct_id`; a `$identify` event marks the person identified and links
 * `properties.$anon_distinct_id` to it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { CsvError, parse as parseCsv } from 'csv-parse';
import type { Kysely } from 'kysely';
import { parseIsoTimestamp } from '../domain/timestamps.js';
import { isStoreBusy, type Store } from '../storage/db.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { EventsWriteRepository, type EventInput, type PersonUpdate } from '../storage/repositories/events-write.js';
import type { Database } from '../storage/schema.js';

/** One event as read from a file or produced by a generator, before validation (see module doc). */
export interface RawEventRow {
  event?: unknown;
  distinct_id?: unknown;
  properties?: unknown;
  timestamp?: unknown;
  uuid?: unknown;
  id?: unknown;
  elements_chain?: unknown;
  $set?: unknown;
  $set_once?: unknown;
  [key: string]: unknown;
}

/** Input file formats. */
export type ImportFormat = 'jsonl' | 'csv';

/** `validating`: the first pass over a file (nothing written yet); `importing`: batches being written. */
export type ImportPhase = 'validating' | 'importing';

/**
 * Progress callback: `done` rows validated (phase `validating`, reported every 10,000 rows and at
 * the end) or rows written or skipped (phase `importing`, after each committed batch); `total` is
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
}

/** Options of `importEventsFile`. */
export interface ImportFileOptions {
  /** overrides detection from the file name */
  format?: ImportFormat | undefined;
  batchSize?: number | undefined;
  onProgress?: ProgressCallback | undefined;
  onLockWait?: LockWaitCallback | undefined;
}

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
}

/**
 * A row that cannot be imported: `line` is the 1-based line of the file where the row starts (for
 * an iterable, the 1-based row number), `reason` what is wrong. The message is
 * `<source>:<line>: <reason>`, e.g. `events.jsonl:17: missing "event"`.
 */
export class ImportError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${source}:${line}: ${reason}`);
    this.name = 'ImportError';
  }
}

/** A row the rest of the pipeline can store: the event and what it does to its person. */
export interface NormalizedEventRow {
  event: EventInput;
  person: PersonUpdate;
}

/** Default rows per batch. */
export const DEFAULT_BATCH_SIZE = 2_000;
const MAX_BATCH_SIZE = 100_000;
/** Ids per `IN (…)` list, well under SQLite's variable limit. */
const IDS_PER_QUERY = 500;
const VALIDATE_PROGRESS_EVERY = 10_000;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REASON_DUPLICATE = 'duplicate uuid';
const REASON_OTHER_PROJECT = 'uuid used by another project';

/** A problem with one row; `toImportError` adds the source and line. */
class RowProblem extends Error {}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** A value cut to `max` characters for an error message. */
function shorten(s: string, max = 120): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/**
 * JSON with object keys sorted at every level (`undefined` members dropped as JSON.stringify
 * does), so that equal objects give equal text whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === undefined || typeof v === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The uuid of a row that has none: the first 16 bytes of SHA-256 over (project id, event,
 * distinct id, normalised timestamp, canonical JSON of the stored properties), formatted as a UUID
 * with version nibble 5 and the RFC 4122 variant (name-based, like uuid v5 but on SHA-256). The same
 * row imported into the same project always gets the same uuid; another project gets another one.
 */
export function deterministicUuid(teamId: number, event: string, distinctId: string, timestamp: string, properties: Record<string, unknown>): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([String(teamId), event, distinctId, timestamp]))
    .update('\u0000')
    .update(canonicalJson(properties))
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.toString('hex', 0, 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function optionalObject(v: unknown, name: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw new RowProblem(`"${name}" must be an object, got ${kindOf(v)}`);
  return v;
}

/**
 * Validates and normalises one row (see module doc) for project `teamId`. Throws `Error` whose
 * message is the reason (e.g. `missing "event"`, `unparsable "timestamp": "yesterday"`); callers
 * add where the row came from (`importEvents` throws `ImportError`).
 */
export function normalizeEventRow(teamId: number, raw: RawEventRow): NormalizedEventRow {
  return normalize(teamId, raw, true);
}

/** `normalizeEventRow`; without `deriveUuid` a row without uuid keeps `uuid: ''` (validation only). */
function normalize(teamId: number, raw: RawEventRow, deriveUuid: boolean): NormalizedEventRow {
  const { event, distinct_id: rawDistinctId, timestamp } = raw;
  if (event === undefined || event === null || event === '') throw new RowProblem('missing "event"');
  if (typeof event !== 'string') throw new RowProblem(`"event" must be a string, got ${kindOf(event)}`);
  let distinctId: string;
  if (rawDistinctId === undefined || rawDistinctId === null || rawDistinctId === '') throw new RowProblem('missing "distinct_id"');
  if (typeof rawDistinctId === 'string') distinctId = rawDistinctId;
  else if (typeof rawDistinctId === 'number' && Number.isFinite(rawDistinctId)) distinctId = String(rawDistinctId);
  else throw new RowProblem(`"distinct_id" must be a string or a number, got ${kindOf(rawDistinctId)}`);
  if (!distinctId.trim()) throw new RowProblem('"distinct_id" is blank');
  if (timestamp === undefined || timestamp === null || timestamp === '') throw new RowProblem('missing "timestamp"');
  if (typeof timestamp !== 'string') throw new RowProblem(`"timestamp" must be an ISO 8601 string, got ${kindOf(timestamp)}`);
  const ts = parseIsoTimestamp(timestamp);
  if (!ts) throw new RowProblem(`unparsable "timestamp": ${JSON.stringify(shorten(timestamp, 60))} (expected ISO 8601, e.g. 2024-11-20T14:03:10.871Z)`);

  let properties: Record<string, unknown>;
  if (raw.properties === undefined || raw.properties === null) properties = {};
  else if (isPlainObject(raw.properties)) properties = raw.properties;
  else throw new RowProblem(`"properties" must be an object, got ${kindOf(raw.properties)}`);

  const topSet = optionalObject(raw.$set, '$set');
  const topSetOnce = optionalObject(raw.$set_once, '$set_once');
  const propSet = optionalObject(properties.$set, 'properties.$set');
  const propSetOnce = optionalObject(properties.$set_once, 'properties.$set_once');
  const set = topSet ? { ...propSet, ...topSet } : propSet;
  const setOnce = topSetOnce ? { ...propSetOnce, ...topSetOnce } : propSetOnce;
  if (topSet || topSetOnce) {
    properties = { ...properties };
    if (set) properties.$set = set;
    if (setOnce) properties.$set_once = setOnce;
  }

  let elementsChain = '';
  if (raw.elements_chain !== undefined && raw.elements_chain !== null) {
    if (typeof raw.elements_chain !== 'string') throw new RowProblem(`"elements_chain" must be a string, got ${kindOf(raw.elements_chain)}`);
    elementsChain = raw.elements_chain;
  }

  const rawUuid = raw.uuid !== undefined && raw.uuid !== null && raw.uuid !== '' ? raw.uuid : raw.id;
  let uuid: string;
  if (rawUuid === undefined || rawUuid === null || rawUuid === '') {
    uuid = deriveUuid ? deterministicUuid(teamId, event, distinctId, ts.value, properties) : '';
  } else {
    const name = rawUuid === raw.uuid ? 'uuid' : 'id';
    if (typeof rawUuid !== 'string' || !UUID_RE.test(rawUuid)) {
      throw new RowProblem(`"${name}" is not a UUID: ${typeof rawUuid === 'string' ? JSON.stringify(shorten(rawUuid, 60)) : kindOf(rawUuid)}`);
    }
    uuid = rawUuid.toLowerCase();
  }

  const person: PersonUpdate = { distinct_id: distinctId };
  if (set && Object.keys(set).length) person.set = set;
  if (setOnce && Object.keys(setOnce).length) person.set_once = setOnce;
  if (event === '$identify') {
    const anon = properties.$anon_distinct_id;
    person.identify = { anon_distinct_id: typeof anon === 'string' && anon ? anon : typeof anon === 'number' ? String(anon) : undefined };
  }
  return {
    event: { uuid, event, distinct_id: distinctId, properties, timestamp: ts.value, elements_chain: elementsChain },
    person,
  };
}

/** A raw row and the line it starts on. */
interface NumberedRow {
  line: number;
  row: RawEventRow;
}

function toImportError(source: string, line: number, err: unknown): ImportError {
  if (err instanceof ImportError) return err;
  if (err instanceof RowProblem) return new ImportError(source, line, err.message);
  throw err;
}

/** Validates the options shared by both entry points; throws RangeError on a bad batch size. */
function batchSizeOf(batchSize: number | undefined): number {
  const size = batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new RangeError(`batch size must be an integer from 1 to ${MAX_BATCH_SIZE}, got ${size}`);
  }
  return size;
}

async function requireProject(store: Store, teamId: number): Promise<void> {
  if (!Number.isInteger(teamId) || teamId < 1 || !(await new AccountsRepository(store.db).findTeam(teamId))) {
    throw new Error(`Project ${teamId} does not exist.`);
  }
}

/** uuid → project of the stored events among `uuids`. */
async function storedUuids(db: Kysely<Database>, uuids: readonly string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (let i = 0; i < uuids.length; i += IDS_PER_QUERY) {
    const rows = await db
      .selectFrom('events')
      .select(['uuid', 'team_id'])
      .where('uuid', 'in', uuids.slice(i, i + IDS_PER_QUERY))
      .execute();
    for (const r of rows) found.set(r.uuid, r.team_id);
  }
  return found;
}

/**
 * The person updates of a batch, in order, ready for `applyPersonUpdates`: an update that only
 * makes sure a person exists is dropped when the batch already named that distinct id (it would
 * change nothing). `$identify` linking is the repository's (events-write.ts).
 */
function planPersonUpdates(updates: readonly PersonUpdate[]): PersonUpdate[] {
  const seen = new Set<string>();
  const planned: PersonUpdate[] = [];
  for (const u of updates) {
    if (!u.set && !u.set_once && !u.identify && seen.has(u.distinct_id)) continue;
    seen.add(u.distinct_id);
    if (u.identify?.anon_distinct_id) seen.add(u.identify.anon_distinct_id);
    planned.push(u);
  }
  return planned;
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
async function writeBatch(store: Store, teamId: number, batch: readonly NormalizedEventRow[], totals: Totals, state: { lookUp: boolean }, onLockWait?: LockWaitCallback): Promise<void> {
  const skipped: Record<string, number> = {};
  const inBatch = new Set<string>();
  const unique: NormalizedEventRow[] = [];
  for (const r of batch) {
    if (inBatch.has(r.event.uuid)) countSkip(skipped, REASON_DUPLICATE);
    else {
      inBatch.add(r.event.uuid);
      unique.push(r);
    }
  }
  const write = (lookUp: boolean) =>
    store.db.transaction().execute(async (trx) => {
      const written: Record<string, number> = { ...skipped };
      let rows = unique;
      if (lookUp) {
        const stored = await storedUuids(
          trx,
          unique.map((r) => r.event.uuid),
        );
        if (stored.size) {
          rows = [];
          for (const r of unique) {
            const owner = stored.get(r.event.uuid);
            if (owner === undefined) rows.push(r);
            else countSkip(written, owner === teamId ? REASON_DUPLICATE : REASON_OTHER_PROJECT);
          }
        }
      }
      const repo = new EventsWriteRepository(trx);
      const inserted = rows.length ? await repo.insertEvents(teamId, rows.map((r) => r.event)) : 0;
      if (inserted !== rows.length) {
        if (!lookUp) throw new StoredUuidsMet();
        // Stored by someone else between our look-up and our insert: still a duplicate.
        countSkip(written, REASON_DUPLICATE, rows.length - inserted);
      }
      const updates = rows.map((r) => r.person);
      const personsCreated = updates.length ? await repo.applyPersonUpdates(teamId, planPersonUpdates(updates)) : 0;
      return { inserted, personsCreated, skipped: written, metStored: inserted !== unique.length };
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
async function waitingForStore<T>(write: () => Promise<T>, rowsBefore: number, rows: number, onLockWait: LockWaitCallback | undefined): Promise<T> {
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
 * one transaction), reports progress after each batch. Throws ImportError on the first bad row.
 */
async function writeRows(
  store: Store,
  teamId: number,
  rows: AsyncIterable<NumberedRow> | Iterable<NumberedRow>,
  source: string,
  opts: { batchSize: number; onProgress?: ProgressCallback | undefined; total?: number | undefined; onLockWait?: LockWaitCallback | undefined },
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
  const flush = async (): Promise<void> => {
    await writeBatch(store, teamId, batch, totals, state, opts.onLockWait);
    batch = [];
    opts.onProgress?.(totals.rows, opts.total, 'importing');
  };
  if (Symbol.asyncIterator in rows) {
    for await (const { line, row } of rows) if (add(line, row)) await flush();
  } else {
    // A synchronous source (an array, the demo generator) is read without a promise per row.
    for (const { line, row } of rows) if (add(line, row)) await flush();
  }
  if (batch.length) {
    await writeBatch(store, teamId, batch, totals, state, opts.onLockWait);
    opts.onProgress?.(totals.rows, opts.total, 'importing');
  }
  if (totals.inserted > 0) await new EventsWriteRepository(store.db).refreshStatistics();
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
  const batchSize = batchSizeOf(opts.batchSize);
  await requireProject(store, teamId);
  return writeRows(store, teamId, numbered(rows), opts.source ?? 'rows', { batchSize, onProgress: opts.onProgress, total: opts.total, onLockWait: opts.onLockWait });
}

/** The format of `file` from its name (`.gz` looked through); undefined when it cannot be told. */
export function detectFormat(file: string): ImportFormat | undefined {
  const name = file.toLowerCase().replace(/\.gz$/, '');
  if (/\.(jsonl|ndjson|json)$/.test(name)) return 'jsonl';
  if (name.endsWith('.csv')) return 'csv';
  return undefined;
}

/** The file's bytes, decompressed for `.gz`; read errors reach whoever consumes the stream. */
function openInput(file: string): Readable {
  const stream = fs.createReadStream(file);
  return file.toLowerCase().endsWith('.gz') ? pipeline(stream, zlib.createGunzip(), () => undefined) : stream;
}

/** A read or decompression error as a clear one naming the file; ImportErrors pass through. */
function readError(file: string, err: unknown): unknown {
  if (err instanceof ImportError || !(err instanceof Error)) return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return new Error(code.startsWith('Z_') ? `${file}: not a valid gzip file (${err.message})` : `${file}: cannot read (${err.message})`);
}

const JSON_ARRAY_HINT = "a JSON array: the importer reads JSON Lines, one event object per line (convert with: jq -c '.[]' FILE)";

/** Raw rows of a JSON Lines file with their line numbers; throws ImportError on a line that is not a JSON object. */
async function* readJsonl(file: string): AsyncGenerator<NumberedRow> {
  const input = openInput(file);
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let first = true;
  try {
    for await (let text of lines) {
      line += 1;
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (!text.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        if (first && text.trimStart().startsWith('[')) {
          throw new ImportError(file, line, JSON_ARRAY_HINT);
        }
        throw new ImportError(file, line, `invalid JSON: ${shorten(err instanceof Error ? err.message : String(err))}`);
      }
      if (!isPlainObject(value)) {
        if (first && Array.isArray(value)) throw new ImportError(file, line, JSON_ARRAY_HINT);
        throw new ImportError(file, line, `expected a JSON object, got ${kindOf(value)}`);
      }
      first = false;
      yield { line, row: value };
    }
  } catch (err) {
    throw readError(file, err);
  } finally {
    lines.close();
    input.destroy();
  }
}

const CSV_REQUIRED_COLUMNS = ['event', 'distinct_id', 'timestamp'] as const;

function parseJsonCell(text: string, column: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RowProblem(`invalid JSON in column "${column}": ${shorten(err instanceof Error ? err.message : String(err))}`);
  }
  if (!isPlainObject(value)) throw new RowProblem(`column "${column}" must hold a JSON object, got ${kindOf(value)}`);
  return value;
}

/** A CSV record (header → cell) as a raw row; throws RowProblem on a bad JSON cell. */
function csvRecordToRow(record: Record<string, string>): RawEventRow {
  const properties: Record<string, unknown> = parseJsonCell(record.properties ?? '', 'properties') ?? {};
  const row: RawEventRow = {};
  for (const [column, cell] of Object.entries(record)) {
    if (column.startsWith('properties.') && column.length > 'properties.'.length) {
      if (cell !== '') properties[column.slice('properties.'.length)] = cell;
    } else if (column === '$set' || column === '$set_once') {
      const obj = parseJsonCell(cell, column);
      if (obj) row[column] = obj;
    } else if (column === 'event' || column === 'distinct_id' || column === 'timestamp' || column === 'uuid' || column === 'id' || column === 'elements_chain') {
      if (cell !== '') row[column] = cell;
    }
  }
  row.properties = properties;
  return row;
}

/** Raw rows of a CSV file with the line each record starts on; throws ImportError on unparsable CSV. */
async function* readCsv(file: string): AsyncGenerator<NumberedRow> {
  const input = openInput(file);
  const parser = pipeline(input, parseCsv({ columns: true, info: true, bom: true, skip_empty_lines: true }), () => undefined);
  let first = true;
  let overCounted = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      const { record, info } = item;
      if (first) {
        first = false;
        const missing = CSV_REQUIRED_COLUMNS.filter((c) => !(c in record));
        if (missing.length) throw new ImportError(file, 1, `the header row lacks column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `"${c}"`).join(', ')}`);
      }
      // csv-parse reports the line a record ends on, and counts a \r\n inside quoted cells as two
      // line breaks (for the rest of the file too): correct for both, to the line the record starts on.
      let breaks = 0;
      for (const cell of Object.values(record)) {
        if (cell.indexOf('\n') < 0 && cell.indexOf('\r') < 0) continue;
        for (let i = 0; i < cell.length; i++) {
          const c = cell.charCodeAt(i);
          if (c === 10) breaks++;
          else if (c === 13) {
            breaks++;
            if (cell.charCodeAt(i + 1) === 10) {
              overCounted++;
              i++;
            }
          }
        }
      }
      const line = info.lines - overCounted - breaks;
      let row: RawEventRow;
      try {
        row = csvRecordToRow(record);
      } catch (err) {
        throw toImportError(file, line, err);
      }
      yield { line, row };
    }
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines ?? 0;
      throw new ImportError(file, line, `invalid CSV: ${err.message}`);
    }
    throw readError(file, err);
  } finally {
    input.destroy();
  }
}

function readRows(file: string, format: ImportFormat): AsyncGenerator<NumberedRow> {
  return format === 'csv' ? readCsv(file) : readJsonl(file);
}

/**
 * Reads a whole file once and validates every row without writing anything; returns the number
 * of rows. Throws ImportError (`<file>:<line>: <reason>`) on the first bad line.
 */
export async function validateEventsFile(teamId: number, file: string, format: ImportFormat, onProgress?: ProgressCallback): Promise<number> {
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
  const batchSize = batchSizeOf(opts.batchSize);
  const format = opts.format ?? detectFormat(file);
  if (!format) throw new Error(`Cannot tell the format of ${file} from its name (.jsonl, .ndjson, .json or .csv): pass the format (jsonl or csv).`);
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot read (${code ?? String(err)})`);
  }
  if (!stat.isFile()) throw new Error(`${file}: not a file`);
  await requireProject(store, teamId);
  const started = performance.now();
  const total = await validateEventsFile(teamId, file, format, opts.onProgress);
  const summary = await writeRows(store, teamId, readRows(file, format), file, { batchSize, onProgress: opts.onProgress, total, onLockWait: opts.onLockWait });
  const durationMs = Math.round(performance.now() - started);
  return {
    ...summary,
    duration_ms: durationMs,
    events_per_second: durationMs > 0 ? Math.round((summary.rows_read * 1000) / durationMs) : summary.rows_read,
  };
}
