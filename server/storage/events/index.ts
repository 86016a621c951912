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
import {
  dematerializeClickHouseProperty,
  listClickHouseMaterializedColumns,
  materializeClickHouseProperty,
} from './clickhouse/materialize.js';
import type { ClickHouseEvents } from './clickhouse/open.js';
import * as rowMaterialized from './materialized.js';
import type { MaterializedColumn, MaterializedKind, MaterializeStep } from './materialized.js';
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
  MaterializeError,
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

/**
 * The ClickHouse events store of each store whose events live there, set by whoever opened it
 * (server/main.ts, the CLI, the tests) and closed by them. Kept beside the store rather than in
 * it, so that the store's module (../db.ts) knows nothing of the events stores.
 */
const clickhouseStores = new WeakMap<Store, ClickHouseEvents>();

/** From now on the events of `store` are `events` (`EVENTS_STORE=clickhouse`); undefined: back to the row store. */
export function useClickHouseEvents(store: Store, events: ClickHouseEvents | undefined): void {
  if (events) clickhouseStores.set(store, events);
  else clickhouseStores.delete(store);
}

/** The ClickHouse events store of `store`, or undefined when its events are rows of its own database. */
export function clickhouseEventsOf(store: Store): ClickHouseEvents | undefined {
  return clickhouseStores.get(store);
}

/** The events store of `store`: ClickHouse's when the events live there (`useClickHouseEvents`), else the row store of its database. */
export function eventsStoreOf(store: Store): EventsStore {
  return clickhouseStores.get(store)?.store(store.db) ?? new RowEventsStore(store.db, store.readRows);
}

/**
 * Materializes `property` of `kind` where the events of `store` are: on ClickHouse
 * (./clickhouse/materialize.ts: PostHog's `mat_`/`pmat_` columns, a mutation writes the stored
 * parts) when `clickhouseEventsOf(store)` is set, else on the row store's database
 * (./materialized.ts: a generated column and its index, in one transaction). Returns the new
 * column; `onStep` is told when each step starts. Throws `MaterializeError` for a key no column
 * expression holds, a property already materialized, past `MAX_MATERIALIZED_COLUMNS` of a kind
 * (and on ClickHouse what its module doc adds); the store's own error when the DDL fails.
 */
export function materializeProperty(
  store: Store,
  kind: MaterializedKind,
  property: string,
  onStep?: (step: MaterializeStep) => void,
): Promise<MaterializedColumn> {
  const clickhouse = clickhouseStores.get(store);
  return clickhouse
    ? materializeClickHouseProperty(clickhouse, kind, property, onStep)
    : rowMaterialized.materializeProperty(store, kind, property, onStep);
}

/** Every materialized column where the events of `store` are (ClickHouse's or the row store's, as `materializeProperty`), by kind then property. */
export function listMaterializedColumns(store: Store): Promise<MaterializedColumn[]> {
  const clickhouse = clickhouseStores.get(store);
  return clickhouse ? listClickHouseMaterializedColumns(clickhouse) : rowMaterialized.listMaterializedColumns(store.db);
}

/**
 * Drops the materialized column of `property` of `kind` where the events of `store` are (as
 * `materializeProperty`); the reads go back to the JSON. Returns false when it is not materialized.
 */
export function dematerializeProperty(store: Store, kind: MaterializedKind, property: string): Promise<boolean> {
  const clickhouse = clickhouseStores.get(store);
  return clickhouse
    ? dematerializeClickHouseProperty(clickhouse, kind, property)
    : rowMaterialized.dematerializeProperty(store, kind, property);
}
