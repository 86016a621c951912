/**
 * Crash safety (issue 6): an import of 200,000 demo events in a child process (`envapi demo`) is
 * killed with SIGKILL midway; the store then opens cleanly, holds whole batches only (a multiple of
 * the batch size), and re-running the same command completes with exactly 200,000 events and no
 * duplicate uuid. On SQLite (a temporary data directory) "opens cleanly" is `PRAGMA
 * integrity_check` = ok; in the PostgreSQL pass (a fresh schema, reached through DATABASE_URL) the
 * killed process is a client of a server that kept running, so it is: the killed process's
 * connections are gone (its open transaction rolled back), the schema is fully migrated and every
 * index of `events` is valid.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqlite } from '../server/storage/sqlite-driver.js';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BATCH_SIZE } from '../server/ingest/import.js';
import { migrateToLatest } from '../server/storage/db.js';
import { childEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'envapi.js');
const TOTAL = 200_000;
const KILL_AFTER_ROWS = 20_000;
const KILL_AFTER_MS = 20_000;

let location: TestStoreLocation;
let dbFile: string;
/** on PostgreSQL: one connection to the test's schema, for counting while the import runs */
let watcher: pg.Client | undefined;

function envapi(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...location.cliArgs, ...args], {
    cwd: ROOT,
    env: childEnv(location.cliEnv),
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const DEMO = ['demo', '--project', '1', '--events', String(TOTAL), '--seed', '3', '--now', '2026-01-01T00:00:00Z', '--json'];

/** Rows in `events`, read through another connection (read-only on SQLite; null while the table does not exist). */
async function countEvents(): Promise<number | null> {
  if (watcher) {
    try {
      return (await watcher.query<{ n: number }>('select count(*)::int as n from events')).rows[0]!.n;
    } catch {
      return null;
    }
  }
  if (!fs.existsSync(dbFile)) return null;
  const db = openSqlite(dbFile, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 1000');
    return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

/** The events counts, and the team ids used, read once the processes are done. */
async function eventTotals(): Promise<{ n: number; d: number; teams: number[] }> {
  if (location.pg) {
    const store = location.open();
    try {
      const r = await sql<{ n: number; d: number }>`select count(*)::int as n, count(distinct uuid)::int as d from events`.execute(
        store.db,
      );
      const teams = await sql<{ team_id: number }>`select distinct team_id from events order by team_id`.execute(store.db);
      return { n: r.rows[0]!.n, d: r.rows[0]!.d, teams: teams.rows.map((t) => t.team_id) };
    } finally {
      await store.close();
    }
  }
  const db = openSqlite(dbFile, { readonly: true });
  try {
    const { n, d } = db.prepare('SELECT count(*) AS n, count(DISTINCT uuid) AS d FROM events').get() as { n: number; d: number };
    const teams = (db.prepare('SELECT DISTINCT team_id FROM events ORDER BY team_id').all() as Array<{ team_id: number }>).map(
      (t) => t.team_id,
    );
    return { n, d, teams };
  } finally {
    db.close();
  }
}

/**
 * Checks that the store opens cleanly after the kill; returns the number of events it holds.
 * SQLite: integrity and quick checks pass on the file. PostgreSQL (SQLite's PRAGMAs have no
 * equivalent there: the database server did not crash): the killed process's connections are gone,
 * so nothing it sent can still commit; the schema needs no migration; every index of `events` and
 * of its partitions is valid.
 */
async function checkStoreAfterKill(): Promise<number> {
  if (location.pg) {
    const deadline = Date.now() + 15_000;
    while ((await location.pg.backends()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await location.pg.backends(), 'connections of the killed process are still open').toBe(0);
    const store = location.open();
    try {
      expect(await migrateToLatest(store)).toEqual({ applied: [] });
      const indexes = await sql<{ name: string; valid: boolean; ready: boolean }>`
        select c.relname as name, i.indisvalid as valid, i.indisready as ready
        from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid in (select relid from pg_partition_tree('events'))`.execute(store.db);
      expect(indexes.rows.length).toBeGreaterThan(0);
      for (const ix of indexes.rows) expect(ix, ix.name).toMatchObject({ valid: true, ready: true });
      return (await sql<{ n: number }>`select count(*)::int as n from events`.execute(store.db)).rows[0]!.n;
    } finally {
      await store.close();
    }
  }
  const db = openSqlite(dbFile);
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(db.pragma('quick_check', { simple: true })).toBe('ok');
    return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  location = await createTestStoreLocation('envapi-crash-');
  dbFile = path.join(location.dir, 'envapi.sqlite3');
  if (location.pg) {
    // under its own application_name, so that it is not counted among the import's connections
    const url = new URL(location.pg.url);
    url.searchParams.set('application_name', `${location.pg.name}_watcher`);
    watcher = new pg.Client({ connectionString: url.toString() });
    await watcher.connect();
  }
});

afterAll(async () => {
  await watcher?.end();
  await location?.cleanup();
});

describe('an import killed with SIGKILL midway', () => {
  it('leaves whole batches only, and re-running it completes without duplicates', { timeout: 600_000 }, async () => {
    expect(DEFAULT_BATCH_SIZE).toBe(2_000);
    const boot = envapi(['bootstrap', '--json']);
    expect(boot.status, boot.stderr).toBe(0);
    expect(await countEvents()).toBe(0);

    // 1. start the import and SIGKILL it once it has written some batches
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...location.cliArgs, ...DEMO], {
      cwd: ROOT,
      env: childEnv(location.cliEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let seen = 0;
    let finished = false;
    void exited.then(() => (finished = true));
    while (!finished && Date.now() - started < KILL_AFTER_MS) {
      seen = (await countEvents()) ?? 0;
      if (seen > KILL_AFTER_ROWS) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(finished, `the import finished before it could be killed:\n${output}`).toBe(false);
    child.kill('SIGKILL');
    const { signal } = await exited;
    expect(signal).toBe('SIGKILL');
    expect(seen).toBeGreaterThan(0);

    // 2. the store opens cleanly and holds whole batches only
    const partial = await checkStoreAfterKill();
    expect(partial).toBeGreaterThanOrEqual(seen);
    expect(partial).toBeLessThan(TOTAL);
    expect(partial % DEFAULT_BATCH_SIZE, `${partial} events is not a whole number of batches`).toBe(0);

    // 3. the same command again completes: exactly TOTAL events, no duplicate uuid
    const again = envapi(DEMO);
    expect(again.status, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { rows_read: number; inserted: number; skipped: number };
    expect(summary.rows_read).toBe(TOTAL);
    if (!location.pg) {
      const check = openSqlite(dbFile, { readonly: true });
      try {
        expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        check.close();
      }
    }
    const { n, d, teams } = await eventTotals();
    expect(n).toBe(TOTAL);
    expect(d).toBe(TOTAL);
    expect(summary.inserted + summary.skipped).toBe(TOTAL);
    // the batches written before the kill are skipped as duplicates, the rest inserted
    expect(summary.skipped).toBe(partial);
    expect(summary.inserted).toBe(TOTAL - partial);
    expect(teams).toEqual([1]);
  });
});
