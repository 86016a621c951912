/**
 * The capture queue (server/capture/queue.ts) through the real HTTP stack: a 200 only once the
 * events are committed, concurrent requests waiting while a group is written and then committed
 * together, and past the bound (events accepted and not yet committed) a 503 with `Retry-After`
 * while nothing of the refused request is stored. The store's writes are held by another
 * connection (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `LOCK TABLE events IN EXCLUSIVE MODE`), so the
 * queue fills without any timing.
 */
import path from 'node:path';
import { openSqlite } from '../../server/storage/sqlite-driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture, listEvents, uuid } from './helpers.js';
import { readConfig } from '../../server/config.js';
import { DEFAULT_MAX_QUEUED_EVENTS } from '../../server/capture/index.js';

const MAX = 3;
let t: TestServer;
let token: string;
let queued = 0;

beforeAll(async () => {
  t = await startTestServer({ capture: { maxQueuedEvents: MAX, onQueueChange: (n) => (queued = n) } });
  token = t.boot.team.api_token;
});
afterAll(async () => {
  await t.close();
});

/** Takes the store's write lock from another connection; resolves to the function that gives it back. */
async function holdWrites(): Promise<() => Promise<void>> {
  if (t.store.dialect === 'sqlite') {
    const blocker = openSqlite(path.join(t.store.config.dataDir!, 'envapi.sqlite3'), { timeout: 0 });
    blocker.exec('BEGIN IMMEDIATE');
    return async () => {
      blocker.exec('ROLLBACK');
      blocker.close();
    };
  }
  const client = new pg.Client({ connectionString: t.store.config.databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('lock table events in exclusive mode');
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

function batch(names: string[]) {
  return { api_key: token, batch: names.map((event) => ({ event, distinct_id: 'queue-user', uuid: uuid() })) };
}

describe('the capture queue', () => {
  it('answers only after the commit; requests wait together; past the bound 503 with Retry-After', async () => {
    const release = await holdWrites();
    let answeredA = false;
    const a = capture(t, '/batch/', batch(['queued a1', 'queued a2'])).then((r) => ((answeredA = true), r));
    await vi.waitFor(() => expect(queued).toBe(2));
    const b = capture(t, '/batch/', batch(['queued b1']));
    await vi.waitFor(() => expect(queued).toBe(3));
    // past the bound: refused at once, while the others still wait for the commit
    const refused = await capture(t, '/e/', batch(['refused']));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.text()).toBe('transient error, please retry');
    expect(answeredA).toBe(false);
    await release();
    const [ra, rb] = await Promise.all([a, b]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    await vi.waitFor(() => expect(queued).toBe(0));
    const names = (await listEvents(t)).map((e) => e.event).sort();
    expect(names).toEqual(['queued a1', 'queued a2', 'queued b1']);
  });

  it('accepts a request larger than the bound when nothing else waits', async () => {
    const res = await capture(t, '/batch/', batch(['big 1', 'big 2', 'big 3', 'big 4', 'big 5']));
    expect(res.status).toBe(200);
  });
});

describe('CAPTURE_MAX_QUEUED_EVENTS (server/config.ts)', () => {
  it('defaults to 50,000, takes a positive integer, and refuses anything else naming the variable', () => {
    expect(readConfig({}).captureMaxQueuedEvents).toBe(DEFAULT_MAX_QUEUED_EVENTS);
    expect(DEFAULT_MAX_QUEUED_EVENTS).toBe(50_000);
    expect(readConfig({ CAPTURE_MAX_QUEUED_EVENTS: '500' }).captureMaxQueuedEvents).toBe(500);
    for (const bad of ['0', '-1', 'abc', '1.5'])
      expect(() => readConfig({ CAPTURE_MAX_QUEUED_EVENTS: bad }), bad).toThrow(/CAPTURE_MAX_QUEUED_EVENTS/);
  });
});
