/**
 * `Store.readRows` (server/storage/db.ts): the SQLite store's array-rows reader that the events
 * list uses. It must give the rows Kysely gives, in the select list's order; refuse statements
 * that could write; and run nothing while a transaction is open on the connection, so a read never
 * sees uncommitted rows (the caller then goes through Kysely, which waits for the transaction).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';

describe('Store.readRows (SQLite)', () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-readrows-'));
    store = openStore({ dataDir: dir });
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the rows Kysely answers, as arrays in the select order', async () => {
    const query = sql<{ b: string; a: number }>`with t(a, b) as (values (1, 'x'), (2, 'zoë ☕'), (3, null)) select b, a from t order by a`;
    const objects = (await query.execute(store.db)).rows;
    expect(objects).toHaveLength(3);
    expect(store.readRows!(query.compile(store.db))).toEqual(objects.map((o) => [o.b, o.a]));
  });

  it('refuses a statement that could write', () => {
    expect(() => store.readRows!(sql`delete from organizations where id = -1`.compile(store.db))).toThrow(/read-only/);
  });

  it('runs nothing while a transaction is open on the connection', async () => {
    const query = sql<{ n: number }>`select count(*) as n from organizations`.compile(store.db);
    expect(store.readRows!(query)).toEqual([[expect.any(Number)]]);
    let inside: unknown = 'not run';
    await store.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      inside = store.readRows!(query);
    });
    expect(inside).toBeUndefined();
    expect(store.readRows!(query)).toEqual([[expect.any(Number)]]);
  });

  it('is absent on PostgreSQL', () => {
    const pg = openStore({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none' });
    expect(pg.readRows).toBeUndefined();
    return pg.close();
  });
});
