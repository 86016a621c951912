/**
 * The events store: the one entry point to `server/storage/events/` for the rest of the server.
 *
 * What comes in and out is the interface of ./store.ts: `EventsStore` (the events reads of one
 * database, its materialized columns, the events filters as SQL conditions) and `EventsTable`
 * (PostHog's `events` table as HogQL reads it), with the data types they take and give in
 * PostHog's forms (ISO 8601 UTC timestamps with microseconds, uuids as lowercase hex with dashes,
 * properties as JSON objects). `eventsStore` opens it on a database. Besides, for the layers
 * that write and administer events: the write repository (ingest/), the materialized columns'
 * DDL (the `envapi events materialize` command) and the monthly partitions (server/main.ts).
 *
 * How the rows are laid out (integer microsecond times and 16-byte uuids on SQLite, property sets,
 * element groups, interned texts, partitions) is the business of the other modules here and of
 * nothing outside `server/storage/`: eslint.config.js refuses an import of them from any other
 * layer (test/lint/events-store.test.ts), so that another store (ClickHouse's `events` table) is
 * one more implementation of ./store.ts, not edits across the tree.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { Store } from '../db.js';
import type { Database } from '../schema.js';
import { RowEventsStore } from './row-store.js';
import type { EventsStore } from './store.js';

export type {
  DefinitionOrder,
  EventDefinitionFilters,
  EventDefinitionQuery,
  EventDefinitionRow,
  EventFilters,
  EventListQuery,
  EventPerson,
  EventRow,
  EventsDialectName,
  EventsStore,
  EventsTable,
  EventValuesQuery,
  ListedEventRow,
  Sql,
  StoredTime,
  StoredUuid,
} from './store.js';
export { PROPERTY_OPERATORS, type PropertyFilter, type PropertyGroup, type PropertyOperator } from './filter-tree.js';
export {
  dematerializeProperty,
  listMaterializedColumns,
  MaterializeError,
  materializeProperty,
  whyNotMaterializable,
  type MaterializedColumn,
  type MaterializedColumns,
  type MaterializedKind,
  type MaterializeStep,
} from './materialized.js';
export { EventsWriteRepository, type EventInput, type PersonUpdate } from './write.js';
export {
  openClickHouseEvents,
  DEFAULT_EMBEDDED_MAX_QUERIES,
  type ClickHouseEvents,
  type ClickHouseEventsOptions,
} from './clickhouse/open.js';
export type { ClickHouseEventsWriter } from './clickhouse/write.js';
export { keepEventPartitions, type PartitionKeeper, type PartitionsLog } from './partitions.js';

/**
 * The events store of database `db` (SQLite or PostgreSQL: the row store, ./row-store.ts).
 * `readRows`: the store's array-rows reader (SQLite, `Store.readRows` in ../db.ts), which the
 * events list's page reads through when given, without one object per row.
 */
export function eventsStore(db: Kysely<Database>, readRows?: (query: CompiledQuery) => unknown[][] | undefined): EventsStore {
  return new RowEventsStore(db, readRows);
}

/** The events store of `store`: ClickHouse's when the events live there (`Store.clickhouse`), else the row store of its database. */
export function eventsStoreOf(store: Store): EventsStore {
  return store.clickhouse ? store.clickhouse.store(store.db) : new RowEventsStore(store.db, store.readRows);
}
