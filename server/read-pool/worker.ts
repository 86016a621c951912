/**
 * A worker thread of the events read pool (see ./index.ts): opens the store read-only on its first
 * task (from `workerData`, a `WorkerSetup`), then runs each `ReadTask` with `EventsService` and
 * returns a `ReadOutcome`: the result in a structured-cloneable form (a JSON page as UTF-8 bytes),
 * or the `ApiError` it threw as plain data, or `timedOut` when PostgreSQL cancelled the statement
 * at its `statement_timeout` (SQLSTATE 57014). Any other error is thrown to the pool (a 500).
 */
import { workerData } from 'node:worker_threads';
import { EventsService, type EventListParams, type EventValuesParams } from '../domain/events.js';
import { ApiError, type ErrorBody } from '../domain/errors.js';
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
  | { op: 'values'; team: Team; params: EventValuesParams; format: 'csv' | 'json' | undefined; now: number };

/** A list page as it crosses threads: CSV text, or the JSON document's UTF-8 bytes. */
export type PageOutcome = { format: 'csv'; body: string } | { format: 'json'; bytes: Uint8Array };

/** What a task answers. */
export type ReadOutcome =
  | { ok: true; result: { op: 'list'; page: PageOutcome } | { op: 'values'; answer: Awaited<ReturnType<EventsService['values']>> } }
  | { ok: false; timedOut: true }
  | { ok: false; timedOut?: false; error: { status: number; body: ErrorBody; headers: Record<string, string> } };

let store: Store | undefined;

/** PostgreSQL's "canceling statement due to statement timeout" (query_canceled). */
function isStatementTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '57014';
}

/** Runs one read (piscina calls the default export with each task). */
export default async function runRead(task: ReadTask): Promise<ReadOutcome> {
  store ??= openStore((workerData as WorkerSetup).storage);
  const events = new EventsService(store, () => new Date(task.now));
  try {
    if (task.op === 'list') {
      const page = await events.list(task.team, task.params, new URL(task.url));
      const bytes = page.format === 'json' ? page.body.text : undefined;
      return {
        ok: true,
        result: { op: 'list', page: page.format === 'csv' ? page : { format: 'json', bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes ?? Buffer.alloc(0) } },
      };
    }
    return { ok: true, result: { op: 'values', answer: await events.values(task.team, task.params, task.format) } };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: { status: err.status, body: err.body, headers: err.headers } };
    if (isStatementTimeout(err)) return { ok: false, timedOut: true };
    throw err;
  }
}
