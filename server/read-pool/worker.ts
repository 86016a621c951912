/**
 * A worker thread of the events read pool (see ./index.ts): opens the store read-only on its first
 * task (from `workerData`, a `WorkerSetup`), then runs each `ReadTask` with the same domain code as
 * the main thread would (`EventsService` for the list, `select` and values; `QueryService` for the
 * query endpoint's HogQL, which loads PostHog's parser WASM once per worker, on its first HogQL
 * task) and returns a `ReadOutcome`: the result in a structured-cloneable form (a JSON page as
 * UTF-8 bytes, plain objects otherwise), or the `ApiError` it threw as plain data, or `timedOut`
 * when PostgreSQL cancelled the statement at its `statement_timeout` (SQLSTATE 57014, raw or as
 * HogQL's 504 `query_timeout`). Any other error is thrown to the pool (a 500).
 */
import { workerData } from 'node:worker_threads';
import { EventsService, type EventListParams, type EventValuesParams } from '../domain/events.js';
import type { EventSelectResult, EventValuesResult } from '../domain/events-reads.js';
import { ApiError, type ErrorBody } from '../domain/errors.js';
import { QueryService, type QueryInput } from '../domain/query.js';
import { openStore, type StorageConfig, type Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';

/** What each worker is started with. */
export interface WorkerSetup {
  /** the server's store, with `readOnly: true` and the time budget as `statementTimeoutMs` */
  storage: StorageConfig;
}

/** One read; `now` (ms since the epoch) is the main thread's clock when the request arrived. */
export type ReadTask =
  | { op: 'list'; team: Team; params: EventListParams; url: string; now: number }
  | { op: 'select'; team: Team; params: EventListParams; now: number }
  | { op: 'values'; team: Team; params: EventValuesParams; format: 'csv' | 'json' | undefined; now: number }
  | { op: 'query'; team: Team; query: QueryInput; now: number };

/** A list page as it crosses threads: CSV text, or the JSON document's UTF-8 bytes. */
export type PageOutcome = { format: 'csv'; body: string } | { format: 'json'; bytes: Uint8Array };

/** A task's result, by operation. */
export type ReadResult =
  | { op: 'list'; page: PageOutcome }
  | { op: 'select'; answer: EventSelectResult }
  | { op: 'values'; answer: EventValuesResult }
  | { op: 'query'; answer: Awaited<ReturnType<QueryService['run']>> };

/** What a task answers. */
export type ReadOutcome =
  | { ok: true; result: ReadResult }
  | { ok: false; timedOut: true }
  | { ok: false; timedOut?: false; error: { status: number; body: ErrorBody; headers: Record<string, string> } };

let store: Store | undefined;

/**
 * PostgreSQL's "canceling statement due to statement timeout" (query_canceled): raw, or as
 * server/hogql/run.ts answers it (504 `query_timeout`), so that both read as the pool's own timeout.
 */
function isStatementTimeout(err: unknown): boolean {
  if (err instanceof ApiError) return err.status === 504 && err.body.code === 'query_timeout';
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '57014';
}

/** Runs one task's read and shapes its result for the trip back. */
async function read(task: ReadTask, db: Store): Promise<ReadResult> {
  const now = new Date(task.now);
  switch (task.op) {
    case 'list': {
      const page = await new EventsService(db, () => now).list(task.team, task.params, new URL(task.url));
      if (page.format === 'csv') return { op: 'list', page };
      const bytes = page.body.text;
      return {
        op: 'list',
        page: { format: 'json', bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : (bytes ?? Buffer.alloc(0)) },
      };
    }
    case 'select':
      return { op: 'select', answer: await new EventsService(db, () => now).select(task.team, task.params) };
    case 'values':
      return { op: 'values', answer: await new EventsService(db, () => now).values(task.team, task.params, task.format) };
    case 'query':
      return { op: 'query', answer: await new QueryService(db).run(task.team, task.query, now) };
  }
}

/** Runs one read (piscina calls the default export with each task). */
export default async function runRead(task: ReadTask): Promise<ReadOutcome> {
  store ??= openStore((workerData as WorkerSetup).storage);
  try {
    return { ok: true, result: await read(task, store) };
  } catch (err) {
    if (isStatementTimeout(err)) return { ok: false, timedOut: true };
    if (err instanceof ApiError) return { ok: false, error: { status: err.status, body: err.body, headers: err.headers } };
    throw err;
  }
}
