/**
 * server/storage/worker-threads.ts: the server's worker threads load ES modules only
 * asynchronously. piscina tries `require()` before `import()`; with require(esm) on, a worker
 * terminated during that synchronous load aborted the whole server (SIGABRT, V8's "IsGraphAsync
 * must be used on an instantiated module"; reproduced by destroying a read pool at random moments
 * of its first worker's load). In a worker started with `workerExecArgv`, `require()` of an ES
 * module must fail at once, so that piscina falls back to `import()`; and the read pool's and the
 * checkpoint worker's modules must still load that way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { workerExecArgv } from '../../server/storage/worker-threads.js';
import { ROOT } from '../helpers/process.js';

/** What `require(file)` does in a worker started with `execArgv`: 'loaded', or the error's code. */
function requireInWorker(file: string, execArgv: string[]): Promise<string> {
  const code = `const { parentPort, workerData } = require('node:worker_threads');
try { require(workerData); parentPort.postMessage('loaded'); } catch (err) { parentPort.postMessage(String(err.code)); }`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: file, execArgv });
    worker.once('message', (m: string) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe('worker threads (storage/worker-threads.ts)', () => {
  const readWorker = path.join(ROOT, 'dist/server/read-pool/worker.js');
  const checkpointWorker = path.join(ROOT, 'dist/server/storage/checkpoint-worker.js');

  it('require() of an ES module fails at once in a server worker (piscina then imports it)', async () => {
    expect(await requireInWorker(readWorker, workerExecArgv(readWorker))).toBe('ERR_REQUIRE_ESM');
  }, 60_000);

  it("the built read pool's and checkpoint worker's modules load through piscina with those options", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-worker-threads-'));
    const pool = (filename: string, workerData?: unknown) =>
      new Piscina({ filename, minThreads: 0, maxThreads: 1, atomics: 'disabled', execArgv: workerExecArgv(filename), workerData });
    const checkpoints = pool(checkpointWorker);
    const reads = pool(readWorker, { storage: { dataDir: path.join(dir, 'missing'), readOnly: true } });
    try {
      // answered by the module's handler: it was loaded
      await expect(checkpoints.run({ op: 'close', file: path.join(dir, 'none') })).resolves.toBeUndefined();
      // the handler's own error (its store's directory is missing), not a failure to load the module
      await expect(reads.run({ op: 'values' })).rejects.toThrow(/directory does not exist/);
    } finally {
      await checkpoints.destroy();
      await reads.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
