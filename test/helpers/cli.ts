/**
 * Shared set-up of the command-line suites (test/cli/*.test.ts): the `envapi` command
 * (`node bin/envapi.js`, the compiled CLI in dist/) and `npm start`
 * (`node --max-semi-space-size=8 bin/envapi.js serve`) run as child processes, on a temporary data
 * directory (SQLite: DATA_DIR / `--data-dir`) or, in the PostgreSQL pass, on a fresh PostgreSQL
 * schema (DATABASE_URL / `--database-url`), dropped afterwards.
 *
 * Each file calls `useCliProcesses()` once: it brings dist/ up to date before the file's tests and,
 * after them, kills every child still running and removes every store made with `newStore()`
 * (one list per test file: vitest loads this module anew for each file).
 *
 * Bounds: a child process gets CLI_TIMEOUT_MS (minutes, not seconds: the machine may be loaded, and
 * a command may first wait for a build of dist/); no test asserts a duration (speed is measured by
 * `npm run bench:cli`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { ROOT, spawnListening, type Exit, type ListeningProcess } from './process.js';
import { childEnv as storelessEnv, createTestStoreLocation, type TestStoreLocation } from './store.js';

/** The `envapi` command's entry point. */
export const BIN = path.join(ROOT, 'bin', 'envapi.js');
/** The sample export the README's import command names (relative to the project root). */
export const EXAMPLE = 'examples/hedgebox-events.jsonl';
/** How long one child process may run before it is killed. */
export const CLI_TIMEOUT_MS = 180_000;
/** The timeout of a test that runs a few child processes one after the other. */
export const T = 2 * CLI_TIMEOUT_MS;
/** A personal API key as the CLI and the server print it. */
export const KEY_RE = /\b(phx_[A-Za-z0-9]+)\b/;
/** A list every fresh store answers (project 1's frontend app configs). */
export const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';

/** Children still running, killed after the file's tests whatever happened. */
const children = new Set<ChildProcess>();
/** Stores made by this file, removed (directory, PostgreSQL schema) after its tests. */
const locations: TestStoreLocation[] = [];

/**
 * Registers the file's hooks: before its tests, `envapi build` (dist/ built once, or found fresh,
 * so that no test waits for a build; skipped with `build: false`); after them, every child still
 * running killed and every store of `newStore()` removed.
 */
export function useCliProcesses(opts: { build?: boolean } = {}): void {
  if (opts.build !== false) {
    beforeAll(async () => {
      // when the sources do not compile, the commands run from them with tsx (bin/envapi.js), slower
      const r = await node([BIN, 'build'], childEnv({}));
      if (r.code !== 0) console.warn(`envapi build failed; the CLI runs from the sources:\n${r.stdout}${r.stderr}`);
    }, T);
  }
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const location of locations) await location.cleanup();
  });
}

/** A fresh store (a temporary directory, or a PostgreSQL schema in the PostgreSQL pass), removed after the file's tests. */
export async function newStore(): Promise<TestStoreLocation> {
  const location = await createTestStoreLocation('envapi-cli-test-');
  locations.push(location);
  return location;
}

/** The environment of a child: ours, without anything that would pick another store or port, then `extra`. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = storelessEnv(extra);
  if (!('PORT' in extra)) delete env.PORT;
  delete env.HOST;
  return env;
}

/** How a command ended and what it printed. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <argv>` in the project root to completion (killed after CLI_TIMEOUT_MS). */
export function node(argv: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${argv.join(' ')} did not finish within ${CLI_TIMEOUT_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `envapi <args>` (node bin/envapi.js); with a store, on that store (`--data-dir DIR`, or DATABASE_URL on PostgreSQL). */
export function cli(args: string[], store?: TestStoreLocation, env: Record<string, string> = {}): Promise<Run> {
  return node([BIN, ...(store?.cliArgs ?? []), ...args], childEnv({ ...(store?.cliEnv ?? {}), ...env }));
}

/** `envapi <args>` expecting exit 0. */
export async function ok(args: string[], store?: TestStoreLocation): Promise<Run> {
  const r = await cli(args, store);
  expect(r.code, `envapi ${args.join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
  return r;
}

/** `envapi <args> --json` on a store, expecting exit 0; the parsed document. */
export async function cliJson<T>(store: TestStoreLocation, args: string[]): Promise<T> {
  return JSON.parse((await ok([...args, '--json'], store)).stdout) as T;
}

/** A request to the server at `url` with `key` as the bearer key. */
export async function api(url: string, key: string, p: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${key}`);
  return fetch(url + p, { ...init, headers });
}

/** A server started by `startServer`. */
export interface RunningServer extends ListeningProcess {
  /** SIGTERM, then how it exited. */
  stop(): Promise<Exit>;
}

/** What `npm start` runs (`node --max-semi-space-size=8 bin/envapi.js serve`), on `store`, PORT 0; resolves once it listens. */
export async function startServer(store: TestStoreLocation): Promise<RunningServer> {
  const server = await spawnListening(['--max-semi-space-size=8', BIN, 'serve'], childEnv({ ...store.env, PORT: '0' }), {
    timeoutMs: CLI_TIMEOUT_MS,
    track: trackChild,
  });
  return { ...server, stop: () => (server.proc.kill('SIGTERM'), server.exited) };
}

/** Adds `child` to the children killed after the file's tests (until it exits). */
export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** True while `s` was started and has not exited. */
export const running = (s: RunningServer | undefined): s is RunningServer => !!s && s.proc.exitCode === null && s.proc.signalCode === null;
