/**
 * Test harness: the Prism mock of the contract (generated/openapi.bundle.yaml: openapi.yaml and its
 * `/api/projects/` copies), started as `npm run mock` starts it
 * (scripts/mock.mjs, which runs Prism as its own child) on a free local port, for the contract
 * tests that check what frontend teams get from `npm run mock`.
 *
 * ```ts
 * const mock = await startPrismMock();
 * const api = createClient({ baseUrl: mock.url, apiKey: 'phx_mock' });
 * // …
 * await mock.close();
 * ```
 *
 * Readiness is Prism's own "Prism is listening" line, never a sleep. The process is
 * `scripts/mock.mjs` (what `npm run mock` runs: the examples' `next` links rewritten to the mock's
 * origin), started with `node` (no shell, no npx); it passes SIGTERM on to Prism, so `close()`
 * stops both by the wrapper's PID (and if the wrapper has to be killed with SIGKILL, Prism follows
 * it: scripts/mock-exit-with-parent.mjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort, ROOT } from '../../scripts/bench-lib.js';

/** A running Prism mock. */
export interface PrismMock {
  /** e.g. `http://127.0.0.1:41234` (no trailing slash) */
  url: string;
  /** the process id of `scripts/mock.mjs` (Prism's parent) */
  pid: number;
  /** Prism's output so far (stdout and stderr, the last 64 KiB) */
  output(): string;
  /** Stops Prism: SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. */
  close(): Promise<void>;
}

/** Options of `startPrismMock`. */
export interface PrismMockOptions {
  /** how long to wait for "Prism is listening" (default 20 s) */
  timeoutMs?: number;
}

/** A TCP port that was free a moment ago (the one helper the scripts and the tests share). */
export { freePort };

const MOCK_SCRIPT = path.join(ROOT, 'scripts', 'mock.mjs');
const MAX_OUTPUT = 64 * 1024;
const READY = /Prism is listening on (http:\/\/\S+)/;
const PORT_TAKEN = /EADDRINUSE|address already in use/i;

/** Resolves when `child` has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => child.once('exit', () => resolve()));
}

/** Stops `child`: SIGTERM, SIGKILL after `graceMs`, and waits for its exit. */
async function stop(child: ChildProcess, graceMs = 3000): Promise<void> {
  const done = exited(child);
  if (child.exitCode !== null || child.signalCode !== null) return done;
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }, graceMs);
  try {
    await done;
  } finally {
    clearTimeout(timer);
  }
}

/** One attempt on one port; rejects with Prism's output if it exits or is not ready in time. */
async function startOn(port: number, timeoutMs: number): Promise<PrismMock> {
  const child = spawn(process.execPath, [MOCK_SCRIPT, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > MAX_OUTPUT) output = output.slice(-MAX_OUTPUT);
  };
  // Both pipes are read for the whole life of the process, so Prism never blocks on a full pipe.
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);

  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      cleanup();
      reject(Object.assign(new Error(`Prism mock on port ${port} ${why}. Its output:\n${output || '(none)'}`), { output }));
    };
    const onData = () => {
      const m = READY.exec(output);
      if (m?.[1]) {
        cleanup();
        resolve(m[1].replace(/\/+$/, ''));
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited before listening (code ${code}, signal ${signal})`);
    const onError = (err: Error) => fail(`could not be started: ${err.message}`);
    const timer = setTimeout(() => fail(`was not listening after ${timeoutMs} ms`), timeoutMs);
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  }).catch(async (err: unknown) => {
    await stop(child);
    throw err;
  });

  let closing: Promise<void> | undefined;
  return {
    url,
    pid: child.pid ?? -1,
    output: () => output,
    close: () => (closing ??= stop(child)),
  };
}

/**
 * Starts `npm run mock`'s Prism mock of the contract (scripts/mock.mjs) on a free port of 127.0.0.1 and resolves once Prism prints
 * "Prism is listening". If the port was taken in the meantime it retries on another one (3
 * attempts). Rejects after `timeoutMs` (default 20 s), or when Prism exits early, with Prism's
 * output in the error message.
 */
export async function startPrismMock(opts: PrismMockOptions = {}): Promise<PrismMock> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    try {
      return await startOn(port, timeoutMs);
    } catch (err) {
      last = err;
      const output = (err as { output?: string }).output ?? '';
      if (!PORT_TAKEN.test(output)) throw err;
    }
  }
  throw last;
}
