/**
 * Crash safety of capture (issue 19): the real server (server/main.ts from source, a child
 * process) takes a capture load — CLIENTS concurrent clients each sending `POST /batch/` batches of
 * EVENTS_PER_BATCH events (every event with its own uuid and a `batch_id` property; gzip and plain
 * JSON in turn), as a user would with the project API token (`phc_…`, read from
 * `GET /api/projects/` with the key the first start prints) — and is killed with SIGKILL as soon as
 * KILL_AFTER_ACKS batches have been answered 200, while the other clients' requests are in flight.
 * A 200 means committed (server/capture/queue.ts, group commit), so the store, opened after the
 * kill, must hold:
 * - every event of every acknowledged batch, exactly once (no uuid twice);
 * - whole batches only: a batch_id present has all its events (those of a batch that was in flight
 *   are all there or none are: one request's rows are written in one transaction).
 * SQLite (a temporary data directory): `PRAGMA integrity_check` = ok. In npm test's ClickHouse
 * pass the events are read from the server's embedded chDB, which reopens after the kill. PostgreSQL (a fresh schema):
 * the database server kept running, so, as test/crash-safety.test.ts checks, the killed process's
 * connections are gone (nothing it sent can still commit) and the schema needs no migration.
 * Then the server starts again on the same store, answers keyed reads of acknowledged events, and
 * takes the batches that were not acknowledged again (as an SDK retries). Load, kill, check and
 * restart are done ROUNDS times on one store (each kill lands at a different point of the group
 * commit); at the end every batch sent is stored whole exactly once. No timing is assumed: each
 * kill follows a count of answers. A server that answered before committing was caught by
 * roughly 3 kills in 5 (checked by hand), hence several rounds.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { openSqlite } from '../../server/storage/sqlite-driver.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../server/storage/db.js';
import { eventUuidOut } from '../../server/storage/events/uuids.js';
import { SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from '../helpers/process.js';
import { childEnv, createTestStoreLocation, type TestStoreLocation } from '../helpers/store.js';
import { uuid } from './helpers.js';
import { usesClickHouse } from '../helpers/clickhouse.js';
import { openClickHouse } from '../../server/storage/clickhouse/connection.js';

/** concurrent capture clients */
const CLIENTS = 8;
/** events per `/batch/` request */
const EVENTS_PER_BATCH = 200;
/** the server is killed when this many batches have been answered 200 */
const KILL_AFTER_ACKS = 30;
/** load, kill, check, restart: this many times on one store */
const ROUNDS = 3;
/** safety net only (never reached on a working server): a request that gets no answer at all */
const REQUEST_TIMEOUT_MS = 60_000;
const LOAD_EVENT = 'crash load';

/** One `/batch/` request of the load. */
interface SentBatch {
  id: string;
  uuids: string[];
  body: Buffer;
  gzip: boolean;
  /** the HTTP status, or undefined when no answer came (connection closed by the kill) */
  status?: number | undefined;
}

let location: TestStoreLocation;
let child: ChildProcess | undefined;

beforeAll(async () => {
  location = await createTestStoreLocation('envapi-capture-crash-');
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await location?.cleanup();
});

/** Starts server/main.ts from source on the test's store (a second start reuses it). */
function startServer(): Promise<ListeningProcess> {
  const env = childEnv({ ...location.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '30000' });
  delete env.REDIS_URL;
  return spawnListening(SERVER_FROM_SOURCE, env, { timeoutMs: 60_000, track: (p) => (child = p) });
}

/** A keyed GET against the running server; returns the parsed JSON of a 200, throws otherwise. */
async function keyedGet<T>(url: string, key: string, apiPath: string): Promise<T> {
  const res = await fetch(url + apiPath, { headers: { Authorization: `Bearer ${key}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${apiPath} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A batch of the load: EVENTS_PER_BATCH events, each with a new uuid and the batch's `batch_id`; gzip when `gzip`. */
function makeBatch(token: string, id: string, distinctId: string, gzip: boolean): SentBatch {
  const uuids = Array.from({ length: EVENTS_PER_BATCH }, () => uuid());
  const events = uuids.map((u, i) => ({
    event: LOAD_EVENT,
    distinct_id: distinctId,
    uuid: u,
    properties: { batch_id: id, n: i, ...(i === 0 ? { $set: { last_batch: id } } : {}) },
  }));
  const json = JSON.stringify({ api_key: token, sent_at: new Date().toISOString(), batch: events });
  return { id, uuids, body: gzip ? gzipSync(json) : Buffer.from(json), gzip };
}

/** POSTs a batch to `/batch/`; resolves to the status (once the headers arrive), or undefined when the connection failed. */
async function sendBatch(url: string, b: SentBatch): Promise<number | undefined> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (b.gzip) headers['Content-Encoding'] = 'gzip';
  let res: Response;
  try {
    res = await fetch(`${url}/batch/`, { method: 'POST', headers, body: b.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch {
    return undefined;
  }
  // the status is the acknowledgement: a body cut by the kill does not take it back
  await res.arrayBuffer().catch(() => undefined);
  return res.status;
}

/** What the store holds: per batch_id, the uuids stored (with repeats, if any). */
interface Stored {
  total: number;
  byBatch: Map<string, string[]>;
}

/** Reads every event's uuid and batch_id from the store directly (the server is not running). */
async function readStore(): Promise<Stored> {
  let rows: Array<{ uuid: string; batch_id: string | null }>;
  if (usesClickHouse()) {
    // npm test's ClickHouse pass: the events are in the server's embedded chDB (DATA_DIR/clickhouse/),
    // opened here once the killed server let it go, and closed before the server starts again
    const ch = await openClickHouse({ dataDir: location.dir });
    try {
      const r = await ch.client.query({
        query: `SELECT toString(uuid) AS uuid, JSONExtract(properties, 'batch_id', 'Nullable(String)') AS batch_id FROM events`,
        format: 'JSONEachRow',
      });
      rows = await r.json();
    } finally {
      await ch.close();
    }
  } else if (location.pg) {
    const store = location.open();
    try {
      rows = (
        await sql<{ uuid: string; batch_id: string | null }>`select uuid, properties->>'batch_id' as batch_id from events`.execute(store.db)
      ).rows;
    } finally {
      await store.close();
    }
  } else {
    const db = openSqlite(path.join(location.dir, 'envapi.sqlite3'), { readonly: true, fileMustExist: true });
    try {
      // uuids are stored as their 16 bytes (storage/events/uuids.ts)
      rows = (
        db.prepare(`SELECT uuid, json_extract(properties, '$.batch_id') AS batch_id FROM events`).all() as Array<{
          uuid: Uint8Array;
          batch_id: string | null;
        }>
      ).map((r) => ({ ...r, uuid: eventUuidOut(r.uuid) }));
    } finally {
      db.close();
    }
  }
  const byBatch = new Map<string, string[]>();
  for (const r of rows) {
    const key = r.batch_id ?? '(none)';
    const list = byBatch.get(key);
    if (list) list.push(r.uuid);
    else byBatch.set(key, [r.uuid]);
  }
  return { total: rows.length, byBatch };
}

/**
 * The store opens cleanly after the kill (module doc): SQLite integrity and quick checks pass
 * (opened read-write, so a WAL left by the killed process is recovered); PostgreSQL: the killed
 * process's connections are gone and no migration is pending.
 */
async function checkStoreAfterKill(): Promise<void> {
  if (location.pg) {
    const deadline = Date.now() + 30_000;
    while ((await location.pg.backends()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await location.pg.backends(), 'connections of the killed server are still open').toBe(0);
    const store = location.open();
    try {
      expect(await migrateToLatest(store)).toEqual({ applied: [] });
    } finally {
      await store.close();
    }
    return;
  }
  const db = openSqlite(path.join(location.dir, 'envapi.sqlite3'), { fileMustExist: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('quick_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
}

/**
 * Every batch_id stored belongs to a sent batch and holds exactly its uuids, each once; every
 * batch of `mustHave` is stored. Returns the ids of the batches stored.
 */
function checkWholeBatches(stored: Stored, sent: Map<string, SentBatch>, mustHave: Iterable<string>): Set<string> {
  expect(stored.byBatch.has('(none)'), 'events without a batch_id').toBe(false);
  for (const [id, uuids] of stored.byBatch) {
    const batch = sent.get(id);
    expect(batch, `stored batch_id ${id} was never sent`).toBeDefined();
    expect(
      uuids.length,
      `batch ${id} (status ${batch!.status ?? 'no answer'}) holds ${uuids.length} of its ${EVENTS_PER_BATCH} events`,
    ).toBe(EVENTS_PER_BATCH);
    expect([...uuids].sort(), `batch ${id} holds other uuids than it was sent with`).toEqual([...batch!.uuids].sort());
  }
  for (const id of mustHave) expect(stored.byBatch.has(id), `acknowledged batch ${id} is missing`).toBe(true);
  return new Set(stored.byBatch.keys());
}

/** What one round of load did. */
interface Round {
  /** batches answered 200 in this round (some may have been answered after the kill) */
  acked: number;
  /** requests the clients were waiting on when the kill was sent */
  inFlightAtKill: number;
  /** batches of this round that got no 200 */
  unacked: SentBatch[];
}

/**
 * The load (module doc) against `server`: CLIENTS clients, each sending its next batch as soon as
 * its last one is answered; SIGKILL on the KILL_AFTER_ACKS-th 200 of the round, when the other
 * clients' requests are in flight. Records every batch in `sent` and every 200 in `acked`.
 */
async function loadAndKill(
  server: ListeningProcess,
  token: string,
  round: number,
  sent: Map<string, SentBatch>,
  acked: Set<string>,
): Promise<Round> {
  const unexpected: string[] = [];
  const mine: SentBatch[] = [];
  let ackedHere = 0;
  let killed = false;
  let inFlight = 0;
  let inFlightAtKill = 0;
  const client = async (c: number): Promise<void> => {
    for (let seq = 0; !killed; seq++) {
      const b = makeBatch(token, `r${round}-c${c}-b${seq}`, `crash-user-${c}-${seq % 3}`, (c + seq) % 2 === 0);
      sent.set(b.id, b);
      mine.push(b);
      inFlight++;
      b.status = await sendBatch(server.url, b);
      inFlight--;
      if (b.status === 200) {
        acked.add(b.id);
        ackedHere++;
        if (!killed && ackedHere >= KILL_AFTER_ACKS) {
          killed = true;
          inFlightAtKill = inFlight;
          server.proc.kill('SIGKILL');
        }
      } else if (!killed && b.status !== 503) {
        // before the kill only 200 (or 503: busy, not acknowledged) may come; anything else stops the load
        unexpected.push(`${b.id}: ${b.status ?? 'no answer'}`);
        killed = true;
        server.proc.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  const exit = await server.exited;
  expect(unexpected, `answers before the kill:\n${server.output()}`).toEqual([]);
  expect(exit.signal).toBe('SIGKILL');
  // answers that were on their way when the server died count as acknowledgements too
  expect(ackedHere).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
  expect(inFlightAtKill).toBeGreaterThan(0);
  return { acked: ackedHere, inFlightAtKill, unacked: mine.filter((b) => !acked.has(b.id)) };
}

describe('capture: the server killed with SIGKILL under a /batch/ load', () => {
  it('loses no acknowledged event, leaves no partial batch, and starts again on the same store', { timeout: 180_000 }, async () => {
    // a first start on a fresh store; the project API token as a user finds it
    let server = await startServer();
    const key = /^\s+(phx_\S+)$/m.exec(server.output())?.[1];
    expect(key, server.output()).toBeTruthy();
    const projects = await keyedGet<{ results: Array<{ id: number; api_token: string }> }>(server.url, key!, '/api/projects/');
    const { id: projectId, api_token: token } = projects.results[0]!;
    expect(token).toMatch(/^phc_/);

    const sent = new Map<string, SentBatch>();
    const acked = new Set<string>();
    const summary: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // 1. the load, killed after KILL_AFTER_ACKS acknowledgements
      const r = await loadAndKill(server, token, round, sent, acked);

      // 2. the store, opened after the kill: every acknowledged event once, whole batches only
      await checkStoreAfterKill();
      const afterKill = await readStore();
      const present = checkWholeBatches(afterKill, sent, acked);
      expect(afterKill.total).toBe(present.size * EVENTS_PER_BATCH);
      const unackedStored = r.unacked.filter((b) => present.has(b.id)).length;
      summary.push(
        `round ${round}: ${r.acked} acknowledged, ${r.inFlightAtKill} in flight at the kill, ${r.unacked.length} unacknowledged of which ${unackedStored} committed whole`,
      );

      // 3. the server starts again on the same store: keyed reads see acknowledged events, and the
      // batches that got no 200 are taken again (an SDK's retry) without duplicating any event
      server = await startServer();
      const someAcked = sent.get([...acked].find((id) => id.startsWith(`r${round}-`))!)!;
      const event = await keyedGet<{ id: string; event: string; properties: Record<string, unknown> }>(
        server.url,
        key!,
        `/api/environments/${projectId}/events/${someAcked.uuids[0]}/`,
      );
      expect(event).toMatchObject({ id: someAcked.uuids[0], event: LOAD_EVENT, properties: { batch_id: someAcked.id } });
      for (const b of r.unacked) {
        b.status = await sendBatch(server.url, b);
        expect(b.status, `retry of ${b.id}`).toBe(200);
        acked.add(b.id);
      }
    }
    const page = await keyedGet<{ results: unknown[] }>(
      server.url,
      key!,
      `/api/environments/${projectId}/events/?event=${encodeURIComponent(LOAD_EVENT)}&limit=1`,
    );
    expect(page.results).toHaveLength(1);
    server.proc.kill('SIGTERM');
    expect((await server.exited).code, server.output()).toBe(0);

    // 4. after the retries, every batch sent is stored whole, exactly once
    const final = await readStore();
    checkWholeBatches(final, sent, sent.keys());
    expect(final.total).toBe(sent.size * EVENTS_PER_BATCH);
    console.log(
      `capture crash (${location.dialect}): ${summary.join('; ')}; ${sent.size} batches, ${final.total} events stored at the end`,
    );
  });
});
