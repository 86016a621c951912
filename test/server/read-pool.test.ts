/**
 * The events reads off the main thread (server/read-pool/): RE2 regex filters, other requests
 * answered while a read holds its worker, the time budget (504) and the bounded queue (503).
 * A read is held on purpose by the test worker test/helpers/blocking-read-worker.ts, which stands
 * for a long SQLite scan: it blocks its thread synchronously, as better-sqlite3 does.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import { readsFewRows } from '../../server/read-pool/index.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';
import { BLOCK_CHANNEL, BLOCK_EVENT } from '../helpers/blocking-read-worker.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const blockingWorker = fileURLToPath(new URL('../helpers/blocking-read-worker.ts', import.meta.url));
const ERROR_SHAPE = { type: expect.any(String), code: expect.any(String), detail: expect.any(String), attr: null };

/** Resolves when the blocking worker announces a held task. */
function nextBlock(): Promise<void> {
  const channel = new BroadcastChannel(BLOCK_CHANNEL);
  return new Promise((resolve) => {
    channel.onmessage = () => {
      channel.close();
      resolve();
    };
  });
}

const listPath = (query: string) => `/api/environments/1/events/?${query}`;
/** A read the test worker holds (CSV goes to the pool; a plain latest page stays on the main thread). */
const HELD = `event=${encodeURIComponent(BLOCK_EVENT)}&format=csv`;
const filter = (value: string, operator = 'regex', key = '$current_url') => encodeURIComponent(JSON.stringify([{ key, value, operator }]));

describe('GET /api/environments/{project_id}/events/ with regex filters (RE2)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    const now = Date.now();
    const rows = Array.from({ length: 2_000 }, (_, i) => ({
      uuid: randomUUID(),
      event: '$pageview',
      distinct_id: `user-${i % 50}`,
      properties: { $current_url: `https://hedgebox.net/${i % 4 === 0 ? 'pricing' : 'files'}/${'x'.repeat(60)}/${i}` },
      timestamp: formatTimestamp(new Date(now - 60_000 - i * 1000)),
      elements_chain: '',
    }));
    await t.store.db.transaction().execute((trx) => new EventsWriteRepository(trx).insertEvents(1, rows));
  });
  afterAll(() => t.close());

  it('when the pattern is .*.*.*.*\\u0001 (exponential for a backtracking engine), answers its correct empty result', async () => {
    const res = await t.fetch(listPath(`limit=5&properties=${filter('.*.*.*.*\u0001')}`));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results).toEqual([]);
  });

  it('when the pattern matches, answers the matching events (RE2 syntax: (?i), \\d)', async () => {
    const res = await t.fetch(listPath(`limit=1000&properties=${filter('(?i)/PRICING/x+/\\d+$')}`));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results).toHaveLength(500);
    const not = await t.fetch(listPath(`limit=10000&properties=${filter('/pricing/', 'not_regex')}`));
    expect(((await not.json()) as { results: unknown[] }).results).toHaveLength(1_500);
  });

  it('GET /api/environments/{project_id}/events/values/ answers from the pool: values containing the text', async () => {
    const res = await t.fetch('/api/environments/1/events/values/?key=$current_url&value=PRICING/');
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { name: string }[]).map((v) => v.name);
    expect(names).toHaveLength(10);
    for (const name of names) expect(name).toContain('/pricing/');
  });

  for (const [what, pattern] of [
    ['lookahead', 'pricing(?=/)'],
    ['lookbehind', '(?<=net)/files'],
    ['a backreference', '(x)\\1'],
  ] as const) {
    it(`when the pattern uses ${what}, which RE2 cannot run, answers 400 naming the filter`, async () => {
      const res = await t.fetch(listPath(`properties=${filter(pattern)}`));
      expect(res.status).toBe(400);
      const body = (await res.json()) as { detail: string; attr: string };
      expect(body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'properties' });
      expect(body.detail).toContain('"$current_url"');
      expect(body.detail).toContain('RE2');
    });
  }
});

describe('a read holding its worker thread', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('when a list read holds its worker, /_health, a keyed retrieve and the plugin configs list still answer', async () => {
    t = await startTestServer({ readPool: { threads: 1, workerFilename: blockingWorker, queryTimeoutMs: 60_000 } });
    const server = t;
    const blocked = nextBlock();
    let heldAnswered = false;
    // closing the server terminates the held thread; its request ends one way or another
    void server.fetch(listPath(HELD)).then(
      () => (heldAnswered = true),
      () => undefined,
    );
    await blocked;
    const health = await fetch(`${server.url}/_health`);
    expect(health.status).toBe(200);
    const dashboards = await server.fetch('/api/environments/1/dashboards/');
    expect(dashboards.status).toBe(200);
    const configs = await server.fetch('/api/environments/1/pipeline_frontend_apps_configs/');
    expect(configs.status).toBe(200);
    const event = await server.fetch(`/api/environments/1/events/${randomUUID()}/`);
    expect(event.status).toBe(404);
    // a page one index range serves is read on the main thread, not queued behind the held read
    const latest = await server.fetch(listPath('limit=100&event=%24pageview'));
    expect(latest.status).toBe(200);
    // the held read had not answered while the others did: they did not wait for it
    expect(heldAnswered).toBe(false);
  });

  it('when a read runs past QUERY_TIMEOUT_MS, answers 504 query_timeout, and the next read is served by a fresh thread', async () => {
    // the budget covers the fresh thread's start (module load under tsx) on a loaded machine: 5 s
    // did not for the HogQL twin of this test (test/hogql/budget.test.ts) under heavy load
    t = await startTestServer({ readPool: { threads: 1, workerFilename: blockingWorker, queryTimeoutMs: 20_000 } });
    const res = await t.fetch(listPath(HELD));
    expect(res.status).toBe(504);
    const body = (await res.json()) as { detail: string };
    expect(body).toEqual({ ...ERROR_SHAPE, type: 'server_error', code: 'query_timeout' });
    expect(body.detail).toMatch(/max execution time \(20 s\).*cancelled/);
    const after = await t.fetch(listPath('limit=1&format=csv'));
    expect(after.status).toBe(200);
  });

  it("when more reads wait than the queue holds, answers 503 with Retry-After in PostHog's shape", async () => {
    t = await startTestServer({ readPool: { threads: 1, workerFilename: blockingWorker, queryTimeoutMs: 60_000, maxQueue: 1 } });
    const server = t;
    const blocked = nextBlock();
    // closing the server stops the held thread; what was still waiting is answered or cut, not a 500
    const send = (query: string) => {
      const res = server.fetch(listPath(query));
      res.catch(() => undefined);
      return res;
    };
    const pending: Promise<Response>[] = [send(HELD)];
    await blocked;
    // With the only thread held, two more reads: one waits in the queue (it cannot be answered
    // while the thread is held), so the queue then holds 1 and the other is refused. Which of the
    // two is refused depends on arrival order; either way the first to settle is a 503, since
    // nothing else can answer. No timer decides anything here.
    const a = send('limit=1&format=csv');
    const b = send('limit=2&format=csv');
    pending.push(a, b);
    const refused = await Promise.race([a, b]);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ ...ERROR_SHAPE, type: 'server_error', code: 'service_unavailable' });
  });
});

describe('readsFewRows: which list reads stay on the main thread', () => {
  it('a JSON page of at most 1,000 rows on one index range stays; filters that may scan the project (HogQL where included) go to the pool', () => {
    expect(readsFewRows({})).toBe(true);
    expect(readsFewRows({ event: '$pageview', after: '-1d', cursor: 'x' })).toBe(true);
    expect(readsFewRows({ distinct_id: 'u1', limit: 1_000 })).toBe(true);
    expect(readsFewRows({ limit: 1_000, offset: 1 })).toBe(false);
    expect(readsFewRows({ properties: '[]' })).toBe(false);
    expect(readsFewRows({ person_id: '1' })).toBe(false);
    expect(readsFewRows({ format: 'csv', limit: 1 })).toBe(false);
    expect(readsFewRows({ event: '$pageview', distinct_id: 'u1' })).toBe(false);
    // HogQL: where may scan the project, select may aggregate all of it (test/hogql/budget.test.ts)
    expect(readsFewRows({ where: '["1 = 1"]' })).toBe(false);
    expect(readsFewRows({ select: '["event"]' })).toBe(false);
  });
});
