/**
 * HogQL's events table (`EventsTable`, ./store.ts) on the row store, per dialect: the SQL of each
 * field of an `events` row in the layout of this directory.
 *
 * - SQLite: `uuid` is its 16 bytes (./uuids.ts), offered as `storedUuid` (the key's bytes, so a
 *   `uuid = '…'` reads the uuid's key) and as text made of them; `timestamp` and `created_at` are
 *   integer microseconds since 1970 UTC (./times.ts), `timestamp` offered as `storedTime` (the
 *   microseconds order as the instants do: the time indexes serve comparisons, GROUP BY and ORDER
 *   BY, and a row's text is made only for the answer); session-constant properties are in a
 *   property set (./property-sets.ts), read per key or rebuilt whole; the elements chain is in an
 *   element group (./element-groups.ts). `hints` steers SQLite to the time index (below).
 * - PostgreSQL: the columns hold the values' own text (uuid, timestamp) and json (`properties`, as sent), `created_at` a
 *   timestamptz; no stored forms, no hints (its statistics choose the index).
 * Materialized columns (./materialized.ts) on both.
 */
import { sql } from 'kysely';
import type { DialectName } from '../dialect.js';
import { timestampColumnText } from '../text-values.js';
import { elementsChainOf } from './element-groups.js';
import { personColumn } from './filters.js';
import { NO_MATERIALIZED_COLUMNS, type MaterializedColumns } from './materialized.js';
import { eventPropertiesWhole, readEventProperty } from './property-sets.js';
import type { EventsTable, StoredTime, StoredUuid } from './store.js';
import { eventTimeFromText, eventTimeMicros, eventTimeText, startOfMicros } from './times.js';
import { eventUuidLiteral, eventUuidText } from './uuids.js';

/** SQLite's `uuid`: its 16 bytes (./uuids.ts). */
const SQLITE_UUID: StoredUuid = { column: sql`events.uuid`, literal: (uuid) => eventUuidLiteral(uuid) };

/** SQLite's `timestamp`: integer microseconds since 1970-01-01T00:00:00Z (./times.ts). */
const SQLITE_TIME: StoredTime = {
  column: sql`events.timestamp`,
  text: (key) => eventTimeText('sqlite', key),
  fromText: (text) => eventTimeFromText('sqlite', text),
  startOf: (key, unit) => startOfMicros(key, unit),
};

/**
 * SQLite: `events.timestamp >= <0001-01-01>` holds for every event (the accepted years start at
 * 0001). Three indexes begin with team_id and SQLite has no statistics to tell them apart: for a
 * read of the whole project (HogQL's `count() where properties.$browser = 'Chrome'` without a
 * column) it took `events_team_distinct_id_time`, which visits the rows in distinct_id order,
 * several times slower than time order through `events_team_time` (docs/performance.md). The range on its second column makes `events_team_time` the cheaper
 * choice there, while an equality on event, distinct_id or a materialized column still takes that
 * column's index.
 */
const SQLITE_HINTS = [sql`events.timestamp >= ${sql.raw(String(eventTimeMicros('0001-01-01')))}`];

/** The events table of the row store on `dialect`, reading `materialized`'s columns (module doc). */
export function rowEventsTable(dialect: DialectName, materialized: MaterializedColumns = NO_MATERIALIZED_COLUMNS): EventsTable {
  const sqlite = dialect === 'sqlite';
  return {
    dialect,
    uuid: eventUuidText(dialect, sql`events.uuid`),
    timestamp: eventTimeText(dialect, sql`events.timestamp`),
    createdAt: sqlite ? eventTimeText('sqlite', sql`events.created_at`) : timestampColumnText(dialect, sql`events.created_at`),
    elementsChain: elementsChainOf(),
    properties: eventPropertiesWhole(dialect),
    property: (key, read) => readEventProperty(dialect, key, read),
    materializedColumn: (table, property) => {
      const column = materialized[table === 'events' ? 'event' : 'person'].get(property);
      return column === undefined ? undefined : sql`${sql.raw(table)}.${sql.ref(column)}`;
    },
    personColumn,
    hints: sqlite ? SQLITE_HINTS : [],
    ...(sqlite ? { storedUuid: SQLITE_UUID, storedTime: SQLITE_TIME } : {}),
  };
}
