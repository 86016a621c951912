/**
 * A read-pool worker for tests (`ReadPoolOptions.workerFilename`): the real one
 * (server/read-pool/worker.ts), except that a HogQL read whose text mentions `BLOCK_MARK` — a
 * HogQLQuery's `query`, an EventsQuery's or the events list's `select`/`where` — first holds its
 * thread for `BLOCK_MS` synchronously, as a long SQLite scan does (better-sqlite3 blocks its
 * thread), after announcing it on the BroadcastChannel `BLOCK_CHANNEL` (so a test knows the task
 * is running, not queued). Only terminating the thread ends the hold early.
 */
import { BroadcastChannel } from 'node:worker_threads';
import runRead, { type ReadOutcome, type ReadTask } from '../../../server/read-pool/worker.js';

/** The text that holds the thread when a HogQL read contains it (write it as a string constant). */
export const BLOCK_MARK = '$test_hogql_block';
/** The channel a held task announces itself on ("blocked"). */
export const BLOCK_CHANNEL = 'envapi-test-hogql-block';
/** How long a task is held, ms. */
export const BLOCK_MS = 20_000;

/** The HogQL text of a task, as one string (empty when it has none). */
function hogqlText(task: ReadTask): string {
  if (task.op === 'query') return JSON.stringify(task.query);
  if (task.op === 'list' || task.op === 'select') return `${task.params.select ?? ''}${task.params.where ?? ''}`;
  return '';
}

/** Runs `task` as the real worker does, holding the thread first when its HogQL mentions `BLOCK_MARK`. */
export default async function blockingQuery(task: ReadTask): Promise<ReadOutcome> {
  if (hogqlText(task).includes(BLOCK_MARK)) {
    const channel = new BroadcastChannel(BLOCK_CHANNEL);
    channel.postMessage('blocked');
    channel.close();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BLOCK_MS);
  }
  return runRead(task);
}
