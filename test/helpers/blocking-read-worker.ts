/**
 * A read-pool worker for tests (`ReadPoolOptions.workerFilename`): the real one
 * (server/read-pool/worker.ts), except that an events list with `event=$test_block` first holds
 * its thread for `BLOCK_MS` synchronously, as a long SQLite scan does, after announcing it on the
 * BroadcastChannel `BLOCK_CHANNEL` (so a test knows the task is running, not queued). Only
 * terminating the thread ends the hold early.
 */
import { BroadcastChannel } from 'node:worker_threads';
import runRead, { type ReadOutcome, type ReadTask } from '../../server/read-pool/worker.js';

/** The event name that holds the thread. */
export const BLOCK_EVENT = '$test_block';
/** The channel a held task announces itself on ("blocked"). */
export const BLOCK_CHANNEL = 'envapi-test-read-block';
/** How long a task is held, ms. */
export const BLOCK_MS = 20_000;

/** Runs `task` as the real worker does, holding the thread first for `BLOCK_EVENT`. */
export default async function blockingRead(task: ReadTask): Promise<ReadOutcome> {
  if (task.op === 'list' && task.params.event === BLOCK_EVENT) {
    const channel = new BroadcastChannel(BLOCK_CHANNEL);
    channel.postMessage('blocked');
    channel.close();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BLOCK_MS);
  }
  return runRead(task);
}
