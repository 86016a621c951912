/**
 * Redis unreachable (issue 7): two real server processes (`node --import tsx server/main.ts`) on
 * one SQLite file whose `REDIS_URL` points at a throwaway `redis-server` on a free port, which the
 * test starts, kills and starts again (the machine's Redis at 6379 is never touched). Checked: a
 * start-up with nothing listening there (the server listens and warns once), requests answering
 * 200 quickly while Redis is down (counted per process), the limit shared again once Redis is
 * back, Redis dying while serving (one warning, no 500, no long wait), the shared limit again after
 * that, and logs without key material.
 *
 * Needs the `redis-server` binary (TEST_REDIS_SERVER, default `redis-server` on PATH); the file is
 * skipped when it is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, redisPong, SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from './helpers/process.js';
import { reportSkip } from './helpers/skips.js';

const REDIS_SERVER = process.env.TEST_REDIS_SERVER || 'redis-server';
const APPS = '/api/environments/1/pipeline_frontend_apps_configs/';
const VALUES = '/api/environments/1/events/values/?key=$browser';
/** Hang guard of each request (ms): far past any answer on a loaded machine, far below RATE_LIMIT_REDIS_TIMEOUT_MS. */
const HANG_MS = 30_000;

const redisServerFound = spawnSync(REDIS_SERVER, ['--version'], { stdio: 'ignore' }).status === 0;
const reason = redisServerFound ? '' : `${REDIS_SERVER} not found (set TEST_REDIS_SERVER to its path)`;
if (reason) reportSkip('test/redis-down.test.ts', reason, 'apt-get install redis-server');

/** Raw RESP command (array of bulk strings) over a fresh socket; resolves with the raw reply. */
function redisRaw(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(2_000, () => {
      socket.destroy();
      reject(new Error('redis did not answer'));
    });
    socket.once('error', reject);
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (d) => {
      reply += d.toString();
      // enough for the replies used here (an integer, or an array of short keys)
      setTimeout(() => {
        socket.destroy();
        resolve(reply);
      }, 50);
    });
  });
}

const children: ChildProcess[] = [];

function stop(p: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return new Promise((resolve) => {
    if (!p || p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill(signal);
  });
}

/** A throwaway redis-server on `port`, no persistence; resolves once it answers PING. */
async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.push(proc);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
    if (await redisPong('127.0.0.1', port)) return proc;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not answer on port ${port}`);
}

type Proc = ListeningProcess;

function startServer(env: Record<string, string>): Promise<Proc> {
  return spawnListening(
    SERVER_FROM_SOURCE,
    { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: '' },
    { track: (p) => children.push(p) },
  );
}

interface LogLine {
  level: number;
  component?: string;
  redis?: string;
  reason?: string;
  msg: string;
}

/** The rate limiter's pino lines in a process's output. */
function limiterLines(p: Proc): LogLine[] {
  return p
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.component === 'rate-limit');
}
const warnings = (p: Proc) => limiterLines(p).filter((l) => l.level === 40);
const recoveries = (p: Proc) => limiterLines(p).filter((l) => l.level === 30 && l.redis === 'ok');

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(Boolean(reason))('REDIS_URL pointing at a Redis that is down, then up, then killed, then up again', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-redis-down-'));
  let redisPort: number;
  let redis: ChildProcess | undefined;
  let p1: Proc;
  let p2: Proc;
  let key: string;

  async function call(p: Proc, pathAndQuery: string): Promise<{ status: number; body: string }> {
    const res = await fetch(p.url + pathAndQuery, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(HANG_MS) });
    const body = await res.text();
    return { status: res.status, body };
  }

  async function readyz(p: Proc): Promise<{ status: number; body: { status: string; redis?: string } }> {
    const res = await fetch(`${p.url}/_readyz`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as { status: string; redis?: string } };
  }

  /** The events values limit (4/minute) counted once across both processes: 4 × 200, then 429 on each. */
  /** Both processes report Redis ok on /_readyz and have logged exactly `n` recoveries (log lines are written asynchronously: waited for too). */
  async function expectRecoveredOnBoth(n: number): Promise<void> {
    await waitFor(
      'readyz redis ok and the recovery logged on both',
      async () =>
        (await readyz(p1)).body.redis === 'ok' &&
        (await readyz(p2)).body.redis === 'ok' &&
        recoveries(p1).length >= n &&
        recoveries(p2).length >= n,
    );
    expect(recoveries(p1)).toHaveLength(n);
    expect(recoveries(p2)).toHaveLength(n);
  }

  async function expectSharedValuesLimit(): Promise<void> {
    const statuses: number[] = [];
    for (const p of [p1, p2, p1, p2, p1, p2]) statuses.push((await call(p, VALUES)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  }

  beforeAll(async () => {
    redisPort = await freePort();
    const env = {
      DATA_DIR: dataDir,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      RATE_LIMIT_REDIS_PREFIX: 'envapi:test:redis-down:',
      RATE_LIMIT_EVENT_VALUES: '4/minute,100/hour',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '5000',
      // Far past every request's hang guard (HANG_MS): a request that waited on the dead Redis
      // would be aborted and fail the test, so no assertion bounds how fast an answer is; and a
      // live but slow Redis (the whole suite runs beside this file) never counts as down
      RATE_LIMIT_REDIS_TIMEOUT_MS: '600000',
    };
    p1 = await startServer(env);
    const m = /^ {2}(phx_\S+)$/m.exec(p1.output());
    if (!m) throw new Error(`no key printed:\n${p1.output()}`);
    key = m[1]!;
    // the same SQLite file (already bootstrapped): only reads below, so two processes are fine
    p2 = await startServer(env);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => stop(c)));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('starts and listens with nothing on the Redis port, and logs one warning', async () => {
    await waitFor('the Redis warnings', () => warnings(p1).length > 0 && warnings(p2).length > 0, 10_000);
    for (const p of [p1, p2]) {
      expect(warnings(p)).toHaveLength(1);
      expect(warnings(p)[0]).toMatchObject({ redis: 'unavailable', msg: expect.stringMatching(/Redis unreachable/) });
      expect(await readyz(p)).toEqual({ status: 200, body: { status: 'ok', redis: 'unavailable' } });
    }
  });

  it('while Redis is down, requests answer 200 without waiting on it, counted by each process', async () => {
    for (const p of [p1, p2]) {
      for (let i = 0; i < 3; i++) {
        const r = await call(p, APPS);
        expect(r.status, r.body).toBe(200);
      }
    }
    // per-process counting: process 1 reaches its own 4/minute, process 2 has its own count
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(p1, VALUES)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await call(p2, VALUES)).status).toBe(200);
    expect(warnings(p1)).toHaveLength(1);
    expect(warnings(p2)).toHaveLength(1);
  });

  it('once Redis answers, both processes share one count again (their first script load had failed)', async () => {
    redis = await startRedis(redisPort);
    // log lines are written asynchronously (server/http/logging.ts): wait for them too
    await expectRecoveredOnBoth(1);
    await expectSharedValuesLimit();
    const keys = await redisRaw(redisPort, 'KEYS', 'envapi:test:redis-down:*');
    expect(keys).toMatch(/envapi:test:redis-down:event_values:60000:event_values:[0-9a-f]{64}/);
  }, 120_000);

  it('when Redis dies while serving, requests keep answering 200 without waiting on it, and each process warns once', async () => {
    await stop(redis);
    const burst = await Promise.all([...Array(10)].map((_, i) => call(i % 2 ? p2 : p1, APPS)));
    for (const r of burst) expect(r.status, r.body).toBe(200);
    for (let i = 0; i < 6; i++) {
      const r = await call(i % 2 ? p2 : p1, APPS);
      expect(r.status, r.body).toBe(200);
    }
    await waitFor('the second warning on both', () => warnings(p1).length >= 2 && warnings(p2).length >= 2, 10_000);
    for (const p of [p1, p2]) {
      expect(warnings(p)).toHaveLength(2);
      expect(await readyz(p)).toEqual({ status: 200, body: { status: 'ok', redis: 'unavailable' } });
    }
  }, 120_000);

  it('when Redis comes back (empty), the limit is shared and enforced again', async () => {
    redis = await startRedis(redisPort);
    await expectRecoveredOnBoth(2);
    await expectSharedValuesLimit();
  }, 120_000);

  it('never logs the key or its hash, and never a 500', async () => {
    const hash = createHash('sha256').update(key).digest('hex');
    for (const p of [p1, p2]) {
      // everything after the first start's key block and listening line is the log
      const log = p.output().slice(p.output().indexOf('envapi listening on'));
      expect(log.split('\n').length).toBeGreaterThan(20);
      expect(log).not.toContain(key);
      expect(log).not.toContain(hash);
      expect(log).not.toMatch(/"statusCode":500/);
      expect(log).not.toMatch(/express-rate-limit/);
    }
  });

  it('SIGTERM while Redis is down exits 0 at once', async () => {
    await stop(redis);
    expect((await call(p2, APPS)).status).toBe(200);
    await waitFor('the Redis warning', () => warnings(p2).length === 3, 5_000);
    const exited = new Promise<number | null>((resolve) => p2.proc.once('exit', resolve));
    p2.proc.kill('SIGTERM');
    const code = await exited;
    // server/main.ts builds its client with `redisClientOptions()` (commands fail fast) and only
    // disconnects a client that is not ready, so nothing waits on the dead Redis. A shutdown that
    // waited would pass SHUTDOWN_TIMEOUT_MS (the Redis timeout is far longer) and exit 1.
    expect(code, p2.output().slice(-2_000)).toBe(0);
  }, 120_000);
});
