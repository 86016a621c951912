/**
 * Helpers shared by the HTTP benchmarks (`scripts/bench-http.ts`, `scripts/bench-pair.ts`,
 * `scripts/bench-hostile.ts`, `scripts/bench-capture.ts`): a store of demo events, free ports, pinning to a core with `taskset`, starting a server and waiting for its first 200, one
 * autocannon run in its own process (parsed from its `--json` output), resident memory (now and
 * peak), medians, and writing a table between markers of docs/performance.md.
 * Not a test; nothing here is imported by the server (the test helpers take `freePort` from here).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bootstrap } from '../server/bootstrap.js';
import { generateDemoEvents } from '../server/ingest/demo.js';
import { importEvents } from '../server/ingest/import.js';
import { migrateToLatest, openStore } from '../server/storage/db.js';
import { AccountsRepository } from '../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../server/storage/repositories/api-keys.js';

/** The project's root folder. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One benchmarked request. */
export interface Scenario {
  name: string;
  label: string;
  method: 'GET' | 'PATCH';
  /** path with the query string */
  url: string;
  body?: string;
  group: 'keyed' | 'events' | 'write';
}

/** One autocannon run's figures (req/s; latencies in ms). */
export interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  bytesPerRequest: number;
  failed?: string;
}

/** A started target server. */
export interface Running {
  name: string;
  child: ChildProcess;
  port: number;
  coldStartMs: number;
  /** Throws, with the end of its stderr, when the process has exited (e.g. it could not bind its port). */
  assertAlive(): void;
  stop(): Promise<void>;
}

/** The median of `xs` (NaN when empty). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `median (min–max)` of `xs`, with `digits` decimals. */
export function spread(xs: number[], digits = 0): string {
  const f = (x: number) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  if (!xs.length) return '—';
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** Resident memory of a process in MB (VmRSS), or NaN without /proc. */
export function rssMb(pid: number | undefined): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024);
  } catch {
    return NaN;
  }
}

/** A TCP port free on 127.0.0.1 now. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `n` distinct free ports on 127.0.0.1: all are held open at once before any is released (ports
 * taken one after the other may repeat: two targets were once given the same port, and the second
 * one's probe was answered by the first).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const srv = net.createServer();
          srv.once('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((srv) => (srv.address() as net.AddressInfo).port);
  await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  return ports;
}

/** One HTTP exchange; resolves with status, content type and body bytes (never rejects on status). */
export function request(
  port: number,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: url,
        headers: { ...headers, ...(body ? { 'Content-Length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether `taskset` can pin processes here (present, and 2+ cores). */
export function canPin(): boolean {
  if (os.cpus().length < 2) return false;
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

/** `[command, ...args]` run on `core` with taskset when pinning is on. */
export function pinned(pin: boolean, core: number, argv: string[]): [string, string[]] {
  return pin ? ['taskset', ['-c', String(core), ...argv]] : [argv[0]!, argv.slice(1)];
}

/**
 * Spawns a target and waits for its first 200 on `probe` (GET with `headers`), polling every 5 ms.
 * Rejects with the process's stderr when it exits first or is not ready within 60 s.
 */
export async function startTarget(
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  probe: string,
  headers: Record<string, string>,
  pin: boolean,
  label = name,
): Promise<Running> {
  const [cmd, args] = pinned(pin, 0, argv);
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  for (;;) {
    if (exited) throw new Error(`${label} exited before answering:\n${stderr}`);
    if (performance.now() - t0 > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`${label} did not answer 200 within 60 s:\n${stderr}`);
    }
    const r = await request(port, 'GET', probe, headers).catch(() => undefined);
    if (r?.status === 200) break;
    if (r && r.status !== 200 && r.status !== 404 && r.status !== 503)
      throw new Error(`${label} answered ${r.status} to ${probe}: ${r.body.toString().slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 5));
  }
  const coldStartMs = performance.now() - t0;
  return {
    name,
    child,
    port,
    coldStartMs,
    assertAlive() {
      if (exited) throw new Error(`${label} has exited:\n${stderr}`);
    },
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
}

/** Runs autocannon (its own process, core 1) against one target; parses its JSON result. */
export function autocannon(
  pin: boolean,
  port: number,
  s: Scenario,
  headers: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<RunResult> {
  const argv = [
    process.execPath,
    path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-j',
    '-n',
    '-c',
    String(connections),
    '-d',
    String(seconds),
    '-m',
    s.method,
  ];
  for (const [k, v] of Object.entries(headers)) argv.push('-H', `${k}=${v}`);
  if (s.body) argv.push('-H', 'Content-Type=application/json', '-b', s.body);
  argv.push(`http://127.0.0.1:${port}${s.url}`);
  const [cmd, args] = pinned(pin, 1, argv);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      const r = JSON.parse(out) as {
        requests: { average: number };
        latency: { p50: number; p99: number };
        throughput: { average: number };
        non2xx: number;
        errors: number;
        timeouts: number;
      };
      const failures = [r.non2xx && `${r.non2xx} non-2xx`, r.errors && `${r.errors} errors`, r.timeouts && `${r.timeouts} timeouts`].filter(
        Boolean,
      );
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        bytesPerRequest: r.requests.average ? r.throughput.average / r.requests.average : 0,
        ...(failures.length ? { failed: failures.join(', ') } : {}),
      });
    });
  });
}

/** A commander option parser for a positive number; throws naming the option otherwise. */
export const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
};

/**
 * Makes (or reuses) the SQLite store in `dataDir`: `events` demo events in `project`, imported as
 * `envapi demo` does (progress on stderr), and a new key with scope `*`.
 */
export async function prepareStore(dataDir: string, events: number, seed: number, project = 1): Promise<{ key: string; imported: string }> {
  const store = openStore({ dataDir });
  try {
    await migrateToLatest(store);
    const boot = await bootstrap(store);
    const owner = boot.user ?? (await new AccountsRepository(store.db).listUsers())[0];
    if (!owner) throw new Error(`${dataDir} has no user`);
    const { key } = await new ApiKeysRepository(store.db).create({ user_id: owner.id, label: 'bench', scopes: ['*'], scoped_teams: null });
    const have = Number(
      (
        await store.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('team_id', '=', project)
          .executeTakeFirstOrThrow()
      ).n,
    );
    if (have >= events) return { key, imported: `reused ${have.toLocaleString('en-US')} events in ${dataDir}` };
    console.error(`Importing ${events.toLocaleString('en-US')} demo events into ${dataDir} …`);
    const t0 = performance.now();
    let last = 0;
    const summary = await importEvents(store, project, generateDemoEvents({ count: events, seed, now: new Date() }), {
      onProgress: (done: number) => {
        if (performance.now() - last > 5000) {
          last = performance.now();
          console.error(`  ${done.toLocaleString('en-US')} events…`);
        }
      },
    });
    return {
      key,
      imported: `imported ${summary.inserted.toLocaleString('en-US')} events in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    };
  } finally {
    await store.close();
  }
}

/** Peak resident memory of a process in MB (VmHWM: the highest VmRSS over its life), or NaN without /proc. */
export function peakRssMb(pid: number | undefined): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024);
  } catch {
    return NaN;
  }
}

/**
 * Replaces the text between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->` of
 * docs/performance.md with `text`; when the markers are absent, appends `## heading`, `intro`
 * (when given) and the marked block at the end of the file.
 */
export function writePerformanceBlock(name: string, text: string, heading: string, intro = ''): void {
  const file = path.join(ROOT, 'docs/performance.md');
  const begin = `<!-- bench:${name}:begin -->`;
  const end = `<!-- bench:${name}:end -->`;
  const doc = fs.readFileSync(file, 'utf8');
  const block = `${begin}\n${text}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  fs.writeFileSync(
    file,
    i !== -1 && j > i
      ? doc.slice(0, i) + block + doc.slice(j + end.length)
      : `${doc.trimEnd()}\n\n## ${heading}\n\n${intro ? `${intro}\n\n` : ''}${block}\n`,
  );
}

/** CPU time so far, in seconds: of the whole machine (busy, all cores) and of each of `pids` (user + system). */
export interface CpuSample {
  at: number;
  machine: number;
  pids: number[];
}

/** Reads /proc/stat and /proc/<pid>/stat (clock ticks of 10 ms); NaN where a file is missing. */
export function cpuSample(pids: readonly number[]): CpuSample {
  const TICK = 100;
  let machine = NaN;
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
    machine = (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0)) / TICK;
  } catch {
    // no /proc: NaN
  }
  const ofPid = (pid: number) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / TICK;
    } catch {
      return NaN;
    }
  };
  return { at: performance.now(), machine, pids: pids.map(ofPid) };
}

/** Cores used between two samples: the machine's and each pid's (CPU seconds / wall seconds). */
export function coresBetween(a: CpuSample, b: CpuSample): { machine: number; pids: number[] } {
  const wall = (b.at - a.at) / 1000;
  return { machine: (b.machine - a.machine) / wall, pids: b.pids.map((x, i) => (x - a.pids[i]!) / wall) };
}

/**
 * Runs one statement on the PostgreSQL server at `baseUrl` on a connection of its own, outside any
 * bench schema (create or drop a schema, end a schema's sessions). Throws what `pg` throws.
 */
export async function pgAdmin(baseUrl: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}
