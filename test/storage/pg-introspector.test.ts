/**
 * Kysely's introspection on PostgreSQL is limited to the store's own schema
 * (server/storage/pg-introspector.ts), so that Kysely's Migrator, which introspects at every run,
 * cannot be failed by what other sessions do to other schemas of the database.
 *
 * Checks, on fresh schemas: the introspector lists exactly the tables of the own schema (not a
 * table of another schema, not a partition, Kysely's bookkeeping tables only when asked) with
 * their columns; and, while another session adds and drops a column of a partitioned table in
 * another schema in a loop (what a test dematerializing a column does), migrating fresh schemas
 * and introspecting never fail. With Kysely's own introspector, a third of the introspections
 * failed that way (`column "m" of relation "t_3" does not exist`), and an `envapi import` started
 * in one test failed while another test dematerialized a column. Skipped on SQLite, whose
 * introspection reads one file.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { createTestPgSchema, usesPostgres, type TestPgSchema } from '../helpers/pg.js';

describe.skipIf(!usesPostgres())('introspection of the own schema only (PostgreSQL)', () => {
  const schemas: TestPgSchema[] = [];
  const stores: Store[] = [];

  /** A fresh schema and a store on it, both removed after the test. */
  async function freshStore(): Promise<{ schema: TestPgSchema; store: Store }> {
    const schema = await createTestPgSchema();
    schemas.push(schema);
    const store = openStore({ databaseUrl: schema.url, poolSize: 2 });
    stores.push(store);
    return { schema, store };
  }

  let other: TestPgSchema;
  beforeEach(async () => {
    other = await createTestPgSchema();
    schemas.push(other);
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await schema.drop();
  });

  it('lists the tables of the own schema with their columns, and nothing of another schema', async () => {
    const { schema, store } = await freshStore();
    await migrateToLatest(store);
    const otherClient = new pg.Client({ connectionString: other.url });
    await otherClient.connect();
    try {
      await otherClient.query('create table elsewhere (id serial primary key, note text)');
    } finally {
      await otherClient.end();
    }
    const own = await sql<{
      name: string;
    }>`select tablename as name from pg_tables where schemaname = current_schema() and tablename not in (select c.relname from pg_class c where c.relispartition and c.relnamespace = current_schema()::regnamespace) order by 1`.execute(
      store.db,
    );
    const expected = own.rows.map((r) => r.name);
    expect(expected).toContain('events');
    expect(expected).toContain('kysely_migration');

    expect(await store.db.introspection.getSchemas()).toEqual([{ name: schema.name }]);
    const withKysely = await store.db.introspection.getTables({ withInternalKyselyTables: true });
    expect(withKysely.map((t) => t.name).sort()).toEqual(expected);
    for (const t of withKysely) expect(t.schema).toBe(schema.name);
    const tables = await store.db.introspection.getTables();
    expect(tables.map((t) => t.name).sort()).toEqual(expected.filter((n) => !n.startsWith('kysely_')));

    const teams = tables.find((t) => t.name === 'teams')!;
    const id = teams.columns.find((c) => c.name === 'id')!;
    expect(id).toMatchObject({ dataType: 'int4', isAutoIncrementing: true, isNullable: false, hasDefaultValue: true });
    const events = tables.find((t) => t.name === 'events')!;
    expect(events.columns.map((c) => c.name).slice(0, 3)).toEqual(['uuid', 'team_id', 'event']);
    expect(events.columns.find((c) => c.name === 'properties')).toMatchObject({ dataType: 'json', isAutoIncrementing: false });
  });

  it('migrating and introspecting never fail while another schema adds and drops a column', async () => {
    const churnClient = new pg.Client({ connectionString: other.url });
    await churnClient.connect();
    await churnClient.query('create table t (a int, b int) partition by range (a)');
    for (let i = 0; i < 20; i++)
      await churnClient.query(`create table t_${i} partition of t for values from (${i * 10}) to (${i * 10 + 10})`);
    let stop = false;
    let rounds = 0;
    const churn = (async () => {
      while (!stop) {
        await churnClient.query('alter table t add column m text');
        await churnClient.query('alter table t drop column m');
        rounds += 1;
      }
    })();
    try {
      for (let i = 0; i < 2; i++) {
        const { store } = await freshStore();
        expect((await migrateToLatest(store)).applied.length).toBeGreaterThan(0);
        for (let j = 0; j < 15; j++) expect((await store.db.introspection.getTables()).length).toBeGreaterThan(10);
      }
    } finally {
      stop = true;
      await churn;
      await churnClient.end();
    }
    // the other schema did change during the migrations
    expect(rounds).toBeGreaterThan(0);
  });
});
