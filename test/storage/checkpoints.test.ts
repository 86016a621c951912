/**
 * Background WAL checkpoints (server/storage/checkpoints.ts, `StorageConfig.backgroundCheckpoints`):
 * the store's own connection no longer checkpoints (`wal_autocheckpoint` 0), and a worker thread
 * copies the WAL into the database file meanwhile. In WAL mode only a checkpoint writes the
 * database file, so its size growing while the writer never checkpoints is the worker's work.
 * Without the option the store keeps SQLite's auto-checkpoints.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openStore, type Store } from '../../server/storage/db.js';

let dir: string | undefined;
let store: Store | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const autocheckpoint = async (s: Store) =>
  Number((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(s.db)).rows[0]!.wal_autocheckpoint);

/** Writes `mb` MiB in 1 MiB transactions; returns the database file's path. */
async function fill(s: Store, mb: number): Promise<string> {
  await sql`create table filler (x blob not null)`.execute(s.db);
  for (let i = 0; i < mb; i++) {
    await s.db.transaction().execute(async (trx) => {
      for (let j = 0; j < 16; j++) await sql`insert into filler (x) values (randomblob(65536))`.execute(trx);
    });
  }
  return s.location;
}

describe('background checkpoints', () => {
  it('the connection does not checkpoint; the worker copies the WAL into the database file', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-checkpoints-'));
    store = openStore({ dataDir: dir, backgroundCheckpoints: true });
    expect(await autocheckpoint(store)).toBe(0);
    const file = await fill(store, 8);
    // the worker's checkpoints (every 100 ms) bring the 8 MiB into the file; bounded wide for a loaded machine
    await vi.waitFor(() => expect(fs.statSync(file).size).toBeGreaterThan(8 * 1024 * 1024), { timeout: 60_000, interval: 50 });
    const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
    expect(Number(rows.rows[0]!.n)).toBe(128);
  });

  it('closing the store stops the worker, and the file opens again with every row', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-checkpoints-'));
    store = openStore({ dataDir: dir, backgroundCheckpoints: true });
    await fill(store, 2);
    await store.close();
    store = openStore({ dataDir: dir });
    const rows = await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db);
    expect(Number(rows.rows[0]!.n)).toBe(32);
  });

  it('without the option the connection keeps SQLite auto-checkpoints', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-checkpoints-'));
    store = openStore({ dataDir: dir });
    expect(await autocheckpoint(store)).toBe(1000);
  });
});
