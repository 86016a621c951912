/**
 * Graceful shutdown of the real server process: a request in flight when SIGTERM arrives still
 * completes with 200, and the process exits 0. The slow request is `/_health?slow=1`, slow only
 * because the test sets `ENVAPI_TEST_SLOW_MS` (a test-only switch). The server runs on a SQLite
 * store in a temporary directory, or in the PostgreSQL pass on a fresh PostgreSQL schema
 * (DATABASE_URL), dropped afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from './helpers/process.js';
import { childEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

const SLOW_MS = 1_500;

let child: ChildProcess | undefined;
let location: TestStoreLocation | undefined;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await location?.cleanup();
  child = undefined;
  location = undefined;
});

async function startServer(): Promise<ListeningProcess> {
  location = await createTestStoreLocation('envapi-shutdown-');
  // DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL)
  const env = childEnv({ ...location.env, PORT: '0', HOST: '127.0.0.1', ENVAPI_TEST_SLOW_MS: String(SLOW_MS), SHUTDOWN_TIMEOUT_MS: '10000', LOG_LEVEL: 'silent', VITEST: '' });
  return spawnListening(SERVER_FROM_SOURCE, env, { timeoutMs: 15_000, track: (p) => (child = p) });
}

describe('graceful shutdown', () => {
  it('SIGTERM lets a request in flight finish with 200, then the process exits 0', async () => {
    const { proc, url, output, exited } = await startServer();
    expect((await fetch(`${url}/_health`)).status).toBe(200);
    // the process runs on this pass's store, and the store answers (with PostgreSQL, an open pool
    // the shutdown must close for the process to exit)
    expect(output()).toMatch(location!.dialect === 'postgres' ? /store: postgres postgres:\/\// : /store: sqlite \//);
    expect((await fetch(`${url}/_readyz`)).status).toBe(200);

    const started = Date.now();
    const slow = fetch(`${url}/_health?slow=1`).then(async (r) => ({ status: r.status, body: await r.json(), at: Date.now() }));
    await new Promise((r) => setTimeout(r, 300));
    proc.kill('SIGTERM');

    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
    expect(answer.at - started).toBeGreaterThanOrEqual(SLOW_MS - 50);

    const { code } = await exited;
    expect(code, output()).toBe(0);
    expect(output()).toMatch(/SIGTERM received/);
    // it did not wait for the keep-alive timeout or the shutdown timeout
    expect(Date.now() - started).toBeLessThan(SLOW_MS + 4_000);
  }, 30_000);
});
