/**
 * HogQL reads run where the events list runs — in the read pool's worker threads, under the time
 * budget (server/read-pool/): the query endpoint (HogQLQuery and EventsQuery) and the events list
 * with `select` or `where`. Through the real HTTP stack, on both stores. A read is held on purpose
 * by the test worker ./helpers/blocking-query-worker.ts, which stands for a long SQLite scan: it
 * blocks its thread synchronously, as better-sqlite3 does (a really slow query cannot be made
 * from a small dataset: SQLite's LIKE/GLOB and the RE2 `regexp` are linear in the text). No timing
 * is asserted: the tests check which answers came, and in what order.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { BLOCK_CHANNEL, BLOCK_MARK } from './helpers/blocking-query-worker.js';

const blockingWorker = fileURLToPath(new URL('./helpers/blocking-query-worker.ts', import.meta.url));

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

const j = (v: unknown) => JSON.stringify(v);
const HELD_WHERE = `properties.$browser != '${BLOCK_MARK}'`;

/** The HogQL reads of each surface, as (server, held?) → request; a held one mentions `BLOCK_MARK`. */
const SURFACES: [string, (t: TestServer, held: boolean) => Promise<Response>][] = [
  [
    'POST …/query/ with a HogQLQuery',
    (t, held) =>
      post(t, { kind: 'HogQLQuery', query: `select event, count() from events where ${held ? HELD_WHERE : '1 = 1'} group by event` }),
  ],
  [
    'POST …/query/ with an EventsQuery',
    (t, held) => post(t, { kind: 'EventsQuery', select: ['event', 'count()'], where: held ? [HELD_WHERE] : undefined, after: 'all' }),
  ],
  [
    'GET …/events/ with select',
    (t, held) =>
      t.fetch(
        `/api/environments/1/events/?${new URLSearchParams({ select: j(['event', 'count()']), ...(held ? { where: j([HELD_WHERE]) } : {}) }).toString()}`,
      ),
  ],
  [
    'GET …/events/ with where',
    (t, held) => t.fetch(`/api/environments/1/events/?${new URLSearchParams({ where: j([held ? HELD_WHERE : '1 = 1']) }).toString()}`),
  ],
];

function post(t: TestServer, query: Record<string, unknown>): Promise<Response> {
  return t.fetch('/api/environments/1/query/', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: j({ query }) });
}

describe('HogQL reads in the read pool', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('when a HogQL query holds a worker, /_health, a keyed retrieve, the latest page, the dashboards and a cheap HogQL query still answer', async () => {
    t = await startTestServer({ readPool: { threads: 2, workerFilename: blockingWorker, queryTimeoutMs: 60_000 } });
    const server = t;
    const blocked = nextBlock();
    let heldAnswered = false;
    // closing the server terminates the held thread; its request ends one way or another
    void SURFACES[0]![1](server, true).then(
      () => (heldAnswered = true),
      () => undefined,
    );
    await blocked;
    expect((await fetch(`${server.url}/_health`)).status).toBe(200);
    expect((await server.fetch(`/api/environments/1/events/${randomUUID()}/`)).status).toBe(404);
    expect((await server.fetch('/api/environments/1/events/?limit=10')).status).toBe(200);
    expect((await server.fetch('/api/environments/1/dashboards/')).status).toBe(200);
    // the pool's other thread runs a cheap query meanwhile
    const cheap = await post(server, { kind: 'HogQLQuery', query: 'select count() from events' });
    expect(cheap.status).toBe(200);
    expect(((await cheap.json()) as { results: unknown[][] }).results).toEqual([[0]]);
    // the held query had not answered while the others did: they did not wait for it
    expect(heldAnswered).toBe(false);
  });

  for (const [surface, send] of SURFACES) {
    it(`${surface}: when the read runs past QUERY_TIMEOUT_MS, answers 504 query_timeout as the events list does, and the next read is served by a fresh thread`, async () => {
      // the budget covers the fresh thread's start (module load under tsx, the parser's WASM) on a
      // loaded machine: 5 s did not, with two npm test runs and more at once
      t = await startTestServer({ readPool: { threads: 1, workerFilename: blockingWorker, queryTimeoutMs: 20_000 } });
      const res = await send(t, true);
      expect(res.status).toBe(504);
      const body = (await res.json()) as { detail: string };
      expect(body).toEqual({ type: 'server_error', code: 'query_timeout', detail: expect.any(String), attr: null });
      expect(body.detail).toMatch(/max execution time \(20 s\).*cancelled/);
      const after = await send(t, false);
      expect(after.status).toBe(200);
    });
  }
});
