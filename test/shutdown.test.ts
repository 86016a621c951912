/**
 * Graceful shutdown of the real server process (server/main.ts, server/http/drain.ts): every
 * request that reached the server before SIGTERM gets its whole answer, new connections are then
 * refused, a keep-alive connection gets `Connection: close` on its last answer, and the process
 * exits 0. The server runs on a SQLite store in a temporary directory, or in the PostgreSQL pass on
 * a fresh PostgreSQL schema (DATABASE_URL), dropped afterwards.
 *
 * No timing is assumed. What is in flight when SIGTERM is sent is arranged by the test itself:
 * - a POST sent with `Expect: 100-continue` whose body is held back: the server's `100 Continue`
 *   proves it has received the request, which cannot complete before the test sends the body;
 * - events pages of 10,000 events whose sockets the test does not read until the server has
 *   stopped accepting: their bodies (megabytes) are larger than what the kernel buffers for a
 *   reader that does not read, so the server is still writing them (the case where
 *   `closeIdleConnections` used to cut bodies while the log said 200);
 * - SIGTERM is sent on the first answer to the other pages, once all 50 connections are established.
 * The same held POST, alone, is the request in flight of the second test.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../server/bootstrap.js';
import { generateDemoEvents } from '../server/ingest/demo.js';
import { importEvents } from '../server/ingest/import.js';
import { migrateToLatest } from '../server/storage/db.js';
import { SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from './helpers/process.js';
import { childEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

/** demo events in project 1 */
const EVENTS = 12_000;
/** concurrent events pages */
const PAGES = 50;
/** every PAUSE_EVERY-th page asks for 10,000 events and is not read until the server stops accepting */
const PAUSE_EVERY = 10;

let child: ChildProcess | undefined;
let location: TestStoreLocation | undefined;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await location?.cleanup();
  child = undefined;
  location = undefined;
});

/** A store with project 1 (and `events` demo events in it); returns the bootstrap key and a frontend app plugin id. */
async function prepareStore(events: number): Promise<{ key: string; frontendPluginId: number }> {
  location = await createTestStoreLocation('envapi-shutdown-');
  const store = location.open();
  try {
    await migrateToLatest(store);
    const boot = await bootstrap(store);
    if (events) await importEvents(store, 1, generateDemoEvents({ count: events, seed: 16, now: new Date(), days: 3 }));
    return { key: boot.key!, frontendPluginId: boot.plugins!.find((p) => p.name === 'Notification Bar')!.id };
  } finally {
    await store.close();
  }
}

async function startServer(extra: Record<string, string> = {}): Promise<ListeningProcess> {
  location ??= await createTestStoreLocation('envapi-shutdown-');
  // DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL)
  const env = childEnv({ ...location.env, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '60000', LOG_LEVEL: 'silent', ...extra });
  return spawnListening(SERVER_FROM_SOURCE, env, { timeoutMs: 30_000, track: (p) => (child = p) });
}

/** Resolves with the first line of `output()` matching `re`, polling it (the process's output grows as it prints). */
async function waitForLine(output: () => string, re: RegExp, exited: Promise<unknown>): Promise<RegExpExecArray> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    const m = re.exec(output());
    if (m) return m;
    if (gone) throw new Error(`the server exited before printing ${re}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP connection to `url`'s host and port, once established. */
function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What one answer brought: status, headers, the body as received, and whether it was complete. */
interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Node's parser saw the whole message (Content-Length reached) */
  complete: boolean;
}

/** Reads a response to its end; rejects on a connection error (ECONNRESET) or an aborted body. */
function readAnswer(res: http.IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.once('error', reject);
    res.once('aborted', () => reject(new Error('response aborted')));
    res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
  });
}

/** A POST the server has received but cannot answer until `send()` gives it its body. */
interface HeldPost {
  /** sends the body */
  send(): void;
  /** the answer, whether it came on a reused keep-alive connection, and when that connection closed */
  answer: Promise<{ answer: Answer; reused: boolean; socketClosed: Promise<void> }>;
}

/**
 * Creates a frontend app config (`name`) with `Expect: 100-continue` and holds its body back:
 * resolves once the server's `100 Continue` says it has received the request, which cannot
 * complete before `send()`.
 */
async function holdPost(url: string, key: string, pluginId: number, name: string, agent: http.Agent | false): Promise<HeldPost> {
  const body = JSON.stringify({ plugin: pluginId, order: 1, name });
  const held = http.request(`${url}/api/environments/1/pipeline_frontend_apps_configs/`, {
    method: 'POST',
    agent,
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      Expect: '100-continue',
    },
  });
  const answer = new Promise<{ answer: Answer; reused: boolean; socketClosed: Promise<void> }>((resolve, reject) => {
    held.once('error', reject);
    held.once('response', (res) => {
      const socketClosed = new Promise<void>((r) => (res.socket.destroyed ? r() : res.socket.once('close', () => r())));
      readAnswer(res).then((a) => resolve({ answer: a, reused: held.reusedSocket, socketClosed }), reject);
    });
  });
  await new Promise<void>((resolve, reject) => {
    held.once('continue', () => resolve());
    held.once('error', reject);
    held.flushHeaders();
  });
  return { send: () => held.end(body), answer };
}

/** Checks that an answer is a complete 200 events page with `expected` events. */
function expectCompletePage(answer: Answer, expected: number, where: string): void {
  expect(answer.status, where).toBe(200);
  expect(answer.complete, where).toBe(true);
  expect(answer.body.length, where).toBe(Number(answer.headers['content-length']));
  const page = JSON.parse(answer.body.toString('utf8')) as { next: string | null; results: Array<{ id: string }> };
  expect(page.results.length, where).toBe(expected);
}

describe('graceful shutdown', () => {
  it('SIGTERM during 50 concurrent events pages: all 50 get complete 200 bodies, new connections are refused, a keep-alive connection gets Connection: close, exit 0', async () => {
    const { key, frontendPluginId } = await prepareStore(EVENTS);
    const { proc, url, output, exited } = await startServer();
    expect(output()).toMatch(location!.dialect === 'postgres' ? /store: postgres postgres:\/\// : /store: sqlite \//);
    const auth = { Authorization: `Bearer ${key}` };

    // A keep-alive connection: one answer before SIGTERM, then a POST the server has received
    // (100 Continue) but cannot answer before the test sends its body.
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const first = await readAnswer(
      await new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get(`${url}/api/environments/1/events/?limit=1`, { agent: keepAlive, headers: auth }, resolve).once('error', reject);
      }),
    );
    expectCompletePage(first, 1, 'keep-alive, first answer');
    expect(first.headers.connection).toBe('keep-alive');
    const held = await holdPost(url, key, frontendPluginId, 'Created during the drain', keepAlive);

    // 50 connections, all established before any request is sent
    const sockets = await Promise.all(Array.from({ length: PAGES }, () => connect(url)));
    const paused = (i: number) => i % PAUSE_EVERY === 0;
    for (const [i, socket] of sockets.entries()) if (paused(i)) socket.pause();
    let answered = 0;
    let answeredAtSigterm: number | undefined;
    const pages = sockets.map((socket, i) => {
      const limit = paused(i) ? 10_000 : 500;
      const offset = i * 100;
      const expected = Math.min(limit, EVENTS - offset);
      return new Promise<Answer>((resolve, reject) => {
        const req = http.get(`${url}/api/environments/1/events/?limit=${limit}&offset=${offset}`, {
          headers: auth,
          createConnection: () => socket,
        });
        req.once('error', reject);
        req.once('response', (res) => {
          // SIGTERM on the first answer to the pages that are read: the server has received requests
          if (answeredAtSigterm === undefined) {
            answeredAtSigterm = answered;
            proc.kill('SIGTERM');
          }
          readAnswer(res).then((a) => {
            answered++;
            resolve(a);
          }, reject);
        });
      }).then((answer) => ({ answer, expected, i }));
    });
    // a page the test reads settles only after SIGTERM; the rejections are read below
    for (const p of pages) p.catch(() => {});

    // the server stops accepting: what it still had in flight then
    const [, inFlight, open] = await waitForLine(
      output,
      /stopped accepting connections; (\d+) requests in flight on (\d+) connections/,
      exited,
    );
    expect(answeredAtSigterm, 'SIGTERM was sent before any page had been answered in full').toBe(0);
    // at least the held POST and one events page (the unread 10,000-event pages cannot have finished)
    expect(Number(inFlight)).toBeGreaterThanOrEqual(2);
    expect(Number(open)).toBeGreaterThanOrEqual(Number(inFlight));

    // still draining (the held POST has not been answered), and a new connection is refused
    expect(proc.exitCode).toBeNull();
    await expect(connect(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    // the unread pages are read now; the held POST gets its body
    for (const [i, socket] of sockets.entries()) if (paused(i)) socket.resume();
    held.send();

    const results = await Promise.allSettled(pages);
    const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`page ${i}: ${String(r.reason)}`] : []));
    expect(failures, output()).toEqual([]);
    for (const r of results) {
      const { answer, expected, i } = (r as PromiseFulfilledResult<Awaited<(typeof pages)[number]>>).value;
      expectCompletePage(answer, expected, `page ${i}`);
      // each page's connection is closed after its answer
      expect(answer.headers.connection, `page ${i}`).toBe('close');
    }

    // the keep-alive connection's last answer: 201, complete, Connection: close, then closed
    const { answer: created, reused, socketClosed } = await held.answer;
    expect(reused).toBe(true);
    expect(created.status, created.body.toString()).toBe(201);
    expect(created.complete).toBe(true);
    expect(created.headers.connection).toBe('close');
    expect((JSON.parse(created.body.toString('utf8')) as { name: string }).name).toBe('Created during the drain');
    await socketClosed;
    keepAlive.destroy();

    const { code } = await exited;
    expect(code, output()).toBe(0);
    expect(output()).toMatch(/SIGTERM received/);
    console.log(
      `shutdown: ${PAGES}/${PAGES} complete 200 bodies; at SIGTERM ${answeredAtSigterm} answered; when the server stopped accepting ${inFlight} requests in flight on ${open} connections`,
    );
  }, 120_000);

  it('SIGTERM lets a request in flight (its body still on the way) finish with 201 and Connection: close, then the process exits 0', async () => {
    const { key, frontendPluginId } = await prepareStore(0);
    const { proc, url, output, exited } = await startServer();
    expect((await fetch(`${url}/_readyz`)).status).toBe(200);
    // the server has received the request (100 Continue) and waits for its body: SIGTERM arrives
    // while it is in flight, and the body is sent only once the server has stopped accepting
    const held = await holdPost(url, key, frontendPluginId, 'Created after SIGTERM', false);
    proc.kill('SIGTERM');
    await waitForLine(output, /stopped accepting connections; 1 requests in flight/, exited);
    expect(proc.exitCode).toBeNull();
    held.send();
    const { answer } = await held.answer;
    expect(answer.status, answer.body.toString()).toBe(201);
    expect(answer.complete).toBe(true);
    expect(answer.headers.connection).toBe('close');
    expect((JSON.parse(answer.body.toString('utf8')) as { name: string }).name).toBe('Created after SIGTERM');
    const { code } = await exited;
    expect(code, output()).toBe(0);
    expect(output()).toMatch(/SIGTERM received/);
  }, 180_000);
});
