/**
 * The events reads whose cost grows with a project's size — the events list (filters, HogQL
 * `where`, CSV of up to 10,000 rows), the list with HogQL `select`, property values, and the query
 * endpoint's HogQLQuery and EventsQuery — run off the main thread, in a pool of worker threads
 * (piscina), each with its own read-only connection to the store, under a time budget.
 *
 * What comes in: the calls of `EventsReads` (server/domain/events-reads.ts), as
 * `inProcessEventsReads` runs them with `EventsService` (server/domain/events.ts) and
 * `QueryService` (server/domain/query.ts): `list(team, params, url)`, `select(team, params)`,
 * `values(team, params, format)`, `query(team, query, now)`. The workers call the same domain
 * methods (one code path builds each query; PostHog's HogQL parser, WASM, loads once per worker).
 * What goes out: the same results (a JSON page as UTF-8 bytes, CSV text, a values list, HogQL
 * columns and rows), or the same `ApiError`s (400/404, HogQL's 400 naming the construct), now
 * thrown on the main thread. Why: a scan of 200,000 events with a regex or `icontains` filter, or
 * serializing 10,000 rows, takes hundreds of ms of CPU; on the main thread every other request
 * (`/_health`, a keyed retrieve) waited for it. In a worker they keep answering (docs/reliability.md
 * has the measurement). SQLite runs in WAL mode, so a worker's read-only connection reads the last
 * committed state without ever waiting on the server's writes; on PostgreSQL each worker has a
 * small pool of its own.
 *
 * The time budget (`queryTimeoutMs`, `QUERY_TIMEOUT_MS`, default 30 s) counts from the call,
 * waiting in the queue included. Past it the task is aborted — a queued task is dropped, a running
 * one's worker thread is terminated (piscina; a new one takes its place) — and the call throws
 * `QueryTimeoutError`, which `http/` answers 504 as PostHog answers a ClickHouse timeout. On
 * PostgreSQL the same budget is also the sessions' `statement_timeout`, so the server stops the
 * statement too. More than `maxQueue` calls waiting throws `ReadPoolBusyError` (503 with
 * `Retry-After`): memory stays bounded whatever the load.
 *
 * Cheap pages stay on the main thread (`readsFewRows`): a JSON page of at most 1,000 rows (offset
 * included) without `properties`, `person_id` or both `event` and `distinct_id` is one range of
 * one index (events_team_time, events_team_event_time, events_team_distinct_id_time) and reads
 * only the rows it returns; sending it to a worker and copying the page back costs more than the
 * read itself (measured in docs/performance.md). Everything else — property filters, HogQL `where`, a person's
 * events, CSV, deep offsets, values, `select`, the query endpoint — may read the whole project and
 * goes to the pool.
 *
 * `threads: 0`, or a store in memory (which no other connection can open), runs the same calls on
 * the main thread: the store's own `EventsService`, with no time budget on SQLite.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { Piscina } from 'piscina';
import { EventsService, type EventListParams, type EventValuesParams } from '../domain/events.js';
import { inProcessEventsReads, type EventsReads } from '../domain/events-reads.js';
import type { QueryInput } from '../domain/query.js';
import { ApiError } from '../domain/errors.js';
import { JsonText } from '../domain/json-text.js';
import type { Store } from '../storage/db.js';
import { clickhouseEventsOf } from '../storage/events/index.js';
import { QueryTimeoutError, ReadPoolBusyError } from './errors.js';
import { workerExecArgv } from '../storage/worker-threads.js';
import type { ReadOutcome, ReadTask, WorkerSetup } from './worker.js';

export { QueryTimeoutError, ReadPoolBusyError };
export type { EventsReads };

/** How the pool is sized and bounded. */
export interface ReadPoolOptions {
  /** worker threads (`EVENTS_READ_THREADS`; default `defaultReadThreads()`); 0 = run on the main thread */
  threads?: number | undefined;
  /** time budget of one read, ms, queue wait included (`QUERY_TIMEOUT_MS`, default 30,000) */
  queryTimeoutMs?: number | undefined;
  /** reads that may wait for a thread before more are refused with 503 (default 256) */
  maxQueue?: number | undefined;
  /**
   * tests only: another worker module (absolute path) whose default export takes a `ReadTask` and
   * answers a `ReadOutcome`, e.g. one that wraps `./worker.ts` to hold a task on purpose
   */
  workerFilename?: string | undefined;
}

/** Default time budget of one read, ms (PostHog's HogQL default max_execution_time is 60 s; 30 s here). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_QUEUE = 256;

/** Threads by default: one per core, at most 4 (the main thread keeps serving keyed requests). */
export function defaultReadThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

/** The parameters the events list reads (what crosses to the worker; see `pick`). */
const LIST_PARAMS = [
  'after',
  'before',
  'event',
  'distinct_id',
  'person_id',
  'properties',
  'format',
  'limit',
  'offset',
  'cursor',
  'select',
  'where',
  'include_person',
  'orderBy',
] as const satisfies readonly (keyof EventListParams)[];
/** The parameters values suggestions read. */
const VALUES_PARAMS = [
  'key',
  'value',
  'event_name',
  'is_column',
  'property_filters',
] as const satisfies readonly (keyof EventValuesParams)[];

/** Most rows (limit + offset) a page read on the main thread may cover (see the module doc). */
const MAIN_THREAD_MAX_ROWS = 1_000;

/**
 * Whether a list read is served by one index range that reads only the rows it returns (see the
 * module doc), so it runs on the main thread. `limit` as the domain clamps it (default 100).
 */
export function readsFewRows(params: EventListParams): boolean {
  if (params.properties !== undefined || params.person_id !== undefined || params.format === 'csv') return false;
  if (params.where !== undefined || params.select !== undefined) return false;
  if (params.event !== undefined && params.distinct_id !== undefined) return false;
  return (params.limit ?? 100) + (params.offset ?? 0) <= MAIN_THREAD_MAX_ROWS;
}

/**
 * A copy of `params` with only `keys`: the parsed query also holds parameters the operation does
 * not read (unknown ones are allowed, as PostHog allows them), in shapes a worker message cannot
 * always carry (structured clone refused some the fuzzer sent: DataCloneError, a 500).
 */
function pick<T extends object>(params: T, keys: readonly (keyof T)[]): T {
  const out: Partial<T> = {};
  for (const k of keys) if (params[k] !== undefined) out[k] = params[k];
  return out as T;
}

/**
 * A copy of a query endpoint's `query` with only the fields its kind reads (`QueryService.run`):
 * the body is JSON, so every value can cross to a worker, but fields the kind ignores need not.
 */
function queryFields(query: QueryInput): QueryInput {
  if (query.kind === 'HogQLQuery') return pick(query, ['kind', 'query', 'values']);
  if (query.kind === 'EventsQuery')
    return pick(query, ['kind', 'select', 'where', 'orderBy', 'after', 'before', 'event', 'properties', 'limit', 'offset']);
  // the other kinds read nested objects throughout (series, filters, a wrapper's source): the JSON copy
  return JSON.parse(JSON.stringify(query)) as QueryInput;
}

/**
 * The events reads of `store`: a worker pool over the store's file or URL, or in-process (see the
 * module doc). The caller closes it (`close()`) after the server has drained, before the store.
 */
export function createEventsReads(store: Store, options: ReadPoolOptions = {}): EventsReads {
  const threads = options.threads ?? defaultReadThreads();
  // ClickHouse's reads stay on the main thread: chDB must be called from it (storage/clickhouse/connection.ts),
  // its calls are asynchronous, and ClickHouse bounds and times them itself (storage/clickhouse/kysely-dialect.ts)
  if (threads <= 0 || clickhouseEventsOf(store) || (store.dialect === 'sqlite' && store.config.inMemory))
    return inProcessEventsReads(store);
  const inline = new EventsService(store);
  const budgetMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
  const ownUrl = import.meta.url;
  // the sources run through tsx (npm run dev, vitest); the build runs the compiled worker
  const filename = options.workerFilename ?? fileURLToPath(new URL(ownUrl.endsWith('.ts') ? './worker.ts' : './worker.js', ownUrl));
  const setup: WorkerSetup = { storage: { ...store.config, readOnly: true, poolSize: 2, statementTimeoutMs: budgetMs } };
  const pool = new Piscina({
    filename,
    minThreads: 1,
    maxThreads: threads,
    // threads stay once started: a worker's start (module load, store open) costs far more CPU than a task
    idleTimeout: 60_000,
    // tasks are async (Kysely) and PostgreSQL sockets stay open between tasks: no Atomics.wait
    atomics: 'disabled',
    workerData: setup,
    // require(esm) off (a worker stopped while loading would abort the process), tsx for the sources
    execArgv: workerExecArgv(filename),
  });

  let closed = false;
  // Reads wait for a thread here, first come first served, and reach piscina only when a thread is
  // free: piscina queues tasks that carry an abort signal apart from its FIFO queue and puts one
  // back at the end whenever it finds no free thread, so some reads waited many times the median
  // under sustained load (docs/performance.md). Its
  // `maxQueue` does not count those tasks either: the bound is kept here too.
  const limit = pLimit(threads);
  const run = async (task: ReadTask): Promise<ReadOutcome> => {
    if (closed || limit.activeCount + limit.pendingCount >= threads + maxQueue) throw new ReadPoolBusyError(1);
    const signal = AbortSignal.timeout(budgetMs);
    const timedOut = new Promise<never>((_resolve, reject) =>
      signal.addEventListener('abort', () => reject(new QueryTimeoutError(budgetMs)), { once: true }),
    );
    const work = limit(async () => {
      // past the budget while waiting: answered already, not run
      if (signal.aborted) throw new QueryTimeoutError(budgetMs);
      return (await pool.run(task, { signal })) as ReadOutcome;
    });
    // whichever loses the race settles later, unobserved
    work.catch(() => undefined);
    timedOut.catch(() => undefined);
    try {
      return await Promise.race([work, timedOut]);
    } catch (err) {
      if (signal.aborted) throw new QueryTimeoutError(budgetMs);
      // the pool stopped under the task (the server is shutting down): retry later, elsewhere
      if (closed) throw new ReadPoolBusyError(1);
      throw err;
    }
  };
  const unwrap = (outcome: ReadOutcome) => {
    if (outcome.ok) return outcome.result;
    if (outcome.timedOut) throw new QueryTimeoutError(budgetMs);
    throw new ApiError(outcome.error.status, outcome.error.body, outcome.error.headers);
  };

  return {
    async list(team, params, url) {
      if (readsFewRows(params)) return inline.list(team, params, url);
      const result = unwrap(
        await run({ op: 'list', team: { ...team }, params: pick(params, LIST_PARAMS), url: url.href, now: Date.now() }),
      );
      if (result.op !== 'list') throw new Error('read pool: answer of another operation');
      const { page } = result;
      return page.format === 'csv'
        ? page
        : { format: 'json', body: new JsonText(Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength)) };
    },
    async select(team, params) {
      const result = unwrap(await run({ op: 'select', team: { ...team }, params: pick(params, LIST_PARAMS), now: Date.now() }));
      if (result.op !== 'select') throw new Error('read pool: answer of another operation');
      return result.answer;
    },
    async query(team, query, now) {
      const result = unwrap(await run({ op: 'query', team: { ...team }, query: queryFields(query), now: (now ?? new Date()).getTime() }));
      if (result.op !== 'query') throw new Error('read pool: answer of another operation');
      return result.answer;
    },
    async values(team, params, format) {
      const result = unwrap(await run({ op: 'values', team: { ...team }, params: pick(params, VALUES_PARAMS), format, now: Date.now() }));
      if (result.op !== 'values') throw new Error('read pool: answer of another operation');
      return result.answer;
    },
    retrieve: (team, id, format, includePerson) => inline.retrieve(team, id, format, includePerson),
    close: async () => {
      closed = true;
      await pool.destroy();
    },
  };
}
