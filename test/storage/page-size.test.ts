/**
 * The page size of SQLite stores (`SQLITE_PAGE_SIZE_BYTES` in server/storage/db.ts): a new store
 * is created with 16 KB pages, in WAL mode; a store created with another page size keeps it when
 * opened and migrated again. Skipped in the PostgreSQL pass (nothing of this exists there).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '../../server/storage/sqlite-driver.js';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore, SQLITE_PAGE_SIZE_BYTES } from '../../server/storage/db.js';
import { usesPostgres } from '../helpers/pg.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-page-size-'));
  dirs.push(dir);
  return dir;
}

/** The page size and journal mode of the file, read by a connection of its own. */
function fileSettings(dir: string): { pageSize: unknown; journalMode: unknown } {
  const db = openSqlite(path.join(dir, 'envapi.sqlite3'), { readonly: true });
  try {
    return { pageSize: db.pragma('page_size', { simple: true }), journalMode: db.pragma('journal_mode', { simple: true }) };
  } finally {
    db.close();
  }
}

describe.skipIf(usesPostgres())('SQLite page size', () => {
  it('a new store has 16 KB pages and is in WAL mode', async () => {
    const dir = tempDir();
    const store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    await store.close();
    expect(SQLITE_PAGE_SIZE_BYTES).toBe(16_384);
    expect(fileSettings(dir)).toEqual({ pageSize: 16_384, journalMode: 'wal' });
  });

  it('a store created with 4 KB pages keeps them', async () => {
    const dir = tempDir();
    const old = openSqlite(path.join(dir, 'envapi.sqlite3'));
    old.pragma('page_size = 4096');
    old.pragma('journal_mode = WAL');
    old.exec('create table kept (x integer)');
    old.close();
    const store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    await store.close();
    expect(fileSettings(dir)).toEqual({ pageSize: 4096, journalMode: 'wal' });
  });
});
