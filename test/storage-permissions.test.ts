/**
 * The SQLite store's files hold plugin secret values: a data directory the store creates is 0700,
 * and the database, WAL and SHM files are 0600 whatever the umask; a directory the user made is
 * left as it is, but files found with group or other bits are tightened to 0600.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqlite } from '../server/storage/sqlite-driver.js';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore } from '../server/storage/db.js';

const FILES = ['envapi.sqlite3', 'envapi.sqlite3-wal', 'envapi.sqlite3-shm'];
const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe.skipIf(process.platform === 'win32')('SQLite store file permissions', () => {
  const roots: string[] = [];
  const previousUmask = process.umask();
  afterEach(() => {
    process.umask(previousUmask);
    for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
  });

  function tempRoot(): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-perm-'));
    roots.push(root);
    return root;
  }

  it.each([
    ['022', 0o022],
    ['002', 0o002],
    ['000', 0o000],
  ])('with umask %s, a new data directory is 0700 and the database, -wal and -shm files are 0600', async (_label, umask) => {
    process.umask(umask);
    const dir = path.join(tempRoot(), 'nested', 'data');
    const store = openStore({ dataDir: dir });
    try {
      await migrateToLatest(store);
      expect(mode(dir).toString(8)).toBe('700');
      for (const f of FILES) expect(mode(path.join(dir, f)).toString(8), f).toBe('600');
    } finally {
      await store.close();
    }
  });

  it('an existing 0755 directory is left as it is; existing 0644 database, -wal and -shm files are tightened to 0600', async () => {
    process.umask(0o022);
    const dir = path.join(tempRoot(), 'data');
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    // a store written by an earlier version: files 0644, WAL and SHM present (a connection kept open)
    const earlier = openSqlite(path.join(dir, 'envapi.sqlite3'));
    earlier.pragma('journal_mode = WAL');
    earlier.exec('create table t (x); insert into t values (1)');
    for (const f of FILES) fs.chmodSync(path.join(dir, f), 0o644);
    const store = openStore({ dataDir: dir });
    try {
      await migrateToLatest(store);
      expect(mode(dir).toString(8)).toBe('755');
      for (const f of FILES) expect(mode(path.join(dir, f)).toString(8), f).toBe('600');
    } finally {
      await store.close();
      earlier.close();
    }
  });

  it('a read-only open (the events read workers) changes no mode', async () => {
    const dir = path.join(tempRoot(), 'data');
    const store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    await store.close();
    fs.chmodSync(path.join(dir, 'envapi.sqlite3'), 0o640);
    const reader = openStore({ dataDir: dir, readOnly: true });
    try {
      expect(mode(path.join(dir, 'envapi.sqlite3')).toString(8)).toBe('640');
    } finally {
      await reader.close();
    }
  });
});
