/**
 * Migration 0009 (server/storage/migrations/0009_time_index_columns.ts) on the store of the pass:
 * a store whose event properties were materialized before it (the column and its index, the
 * record, and `events_team_time` as it was: `(team_id, timestamp, uuid)`) gets `events_team_time`
 * built again with the columns after its key, in the order they were added; a store without any
 * keeps the index as it was. Each on a fresh store migrated to 0008 first.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type Store } from '../../server/storage/db.js';
import { jsonTextLiteral } from '../../server/storage/dialect.js';
import { materializedColumnName } from '../../server/storage/events/materialized.js';
import { createTestStoreLocation, openMigratedTo, timeIndexColumns, type TestStoreLocation } from '../helpers/store.js';

let location: TestStoreLocation;
let store: Store;

beforeEach(async () => {
  location = await createTestStoreLocation('envapi-0009-');
  store = await openMigratedTo(location, '0008_events_partitions');
});

afterEach(async () => {
  await store?.close();
  await location?.cleanup();
});

/** A materialized event column as the store had it before migration 0009: column, index, record. */
async function materializedBefore0009(property: string, createdAt: string): Promise<string> {
  const column = materializedColumnName('event', property);
  const storage = store.dialect === 'postgres' ? sql`stored` : sql`virtual`;
  await sql`alter table events add column ${sql.ref(column)} text generated always as (${jsonTextLiteral(store.dialect, sql.ref('properties'), property)}) ${storage}`.execute(
    store.db,
  );
  await sql`create index ${sql.ref(`events_${column}`)} on events (team_id, ${sql.ref(column)}, timestamp, uuid)`.execute(store.db);
  await store.db
    .insertInto('materialized_columns')
    .values({ kind: 'event', property, column_name: column, created_at: createdAt })
    .execute();
  return column;
}

describe('migration 0009: events_team_time carries the materialized event columns', () => {
  it('builds the index again with the columns, in the order they were added', async () => {
    const later = await materializedBefore0009('$os', '2026-11-02T00:00:00.000Z');
    const earlier = await materializedBefore0009('$browser', '2026-11-01T00:00:00.000Z');
    expect(await timeIndexColumns(store)).toEqual(['team_id', 'timestamp', 'uuid']);
    await migrateToLatest(store);
    expect(await timeIndexColumns(store)).toEqual(['team_id', 'timestamp', 'uuid', earlier, later]);
  });

  it('leaves the index as it was when no event property is materialized', async () => {
    await migrateToLatest(store);
    expect(await timeIndexColumns(store)).toEqual(['team_id', 'timestamp', 'uuid']);
  });
});
