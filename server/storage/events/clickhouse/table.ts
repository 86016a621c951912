/**
 * HogQL's events table (`EventsTable`, ../store.ts) on ClickHouse: PostHog's `events` as its HogQL
 * printer reads it (posthog/hogql/database/schema/events.py, posthog/hogql/printer/; the facts are
 * in docs/research/clickhouse-chdb.md), in the forms server/hogql/types.ts holds values in:
 *
 * - `uuid` as its text (`toString(events.uuid)`), `timestamp` and `created_at` as the stored text
 *   form (`formatDateTime(…, '%Y-%m-%dT%H:%i:%S.%fZ')`, six digits), `properties` the JSON text
 *   column as it is.
 * - `timestamp` is also offered as its stored column (`storedTime`: the DateTime64(6, 'UTC')
 *   itself), so that comparisons with a time are DateTime64 comparisons, which the sort key's
 *   `toDate(timestamp)` and the monthly partitions prune by, and GROUP BY / ORDER BY of it, of its
 *   day or hour, read DateTime64 values; the text is made once per answer row. DateTime64 holds
 *   the years 0001–9999 (ClickHouse 26), the range of the text forms, so the keys order and
 *   compare as the texts do. Days and hours are counted in microseconds since 1970 (`startOf`):
 *   `toStartOfDay` of a DateTime64 is a DateTime (1970–2106) unless
 *   `enable_extended_results_for_datetime_functions` is set, which the store's reads do not set.
 * - Materialized columns are PostHog's nullable `mat_<property>` columns
 *   (`JSONExtract(properties, key, 'Nullable(String)')`: ./materialize.ts,
 *   ../../clickhouse/schema.ts `materializedColumnDdl`), offered as they are
 *   (`materializedColumn`). The column is read only where it is the property's HogQL text: `=` and
 *   `!=` with a constant it writes alike (server/hogql/expr.ts `columnWritesAlike`), and elsewhere
 *   on the rows where server/hogql/dialect-clickhouse.ts `materializedExact` holds (not NULL, which
 *   a missing and a null property both give, no object or array, which HogQL writes canonically,
 *   nothing that begins as a number, which the column writes as a Float64); the other rows read the
 *   JSON (server/hogql/select.ts).
 * - The event's person, and `FROM persons`, read the person mirror (`person`,
 *   `person_distinct_id2`: ReplacingMergeTree by `version`) as PostHog reads it: per id (per
 *   distinct id) the row of the greatest version, dropped when that row is deleted (`argMax(…,
 *   version)` with `HAVING argMax(is_deleted, version) = 0`). ClickHouse has no fast correlated
 *   subquery, so the event's person is a LEFT JOIN the compiler adds when the query reads it
 *   (`personJoin`), as PostHog's `events__pdi__person` join; its columns are Nullable, so an
 *   event without a person reads NULL (the defaults of a LEFT JOIN's missing rows).
 * Every read of the mirror carries the team filter.
 */
import { sql } from 'kysely';
import { NO_MATERIALIZED_COLUMNS, type MaterializedColumns } from '../materialized.js';
import type { EventsTable, StoredTime } from '../store.js';
import { clickhouseTimeText, latestDistinctIds, latestPersons } from './mirror.js';

/** The alias of the event's person in the derived table (`personJoin`). */
const PERSON = sql.raw('events__person');

/** Microseconds in a day and in an hour: the units `startOf` floors to. */
const MICROS_PER = { day: 86_400_000_000, hour: 3_600_000_000 } as const;

/** `timestamp` on ClickHouse: the DateTime64(6, 'UTC') column (module doc). */
const CLICKHOUSE_TIME: StoredTime = {
  column: sql`events.timestamp`,
  text: (key) => clickhouseTimeText(key),
  // the compiler passes stored-form text (a constant, folded once) or NULL
  fromText: (text) => sql`parseDateTime64BestEffortOrNull(${text}, 6, 'UTC')`,
  startOf: (key, unit) => {
    // (an Int64 size: `Int64 % UInt64` is computed unsigned)
    const size = sql.raw(`toInt64(${MICROS_PER[unit]})`);
    return sql`fromUnixTimestamp64Micro(${sql`(toUnixTimestamp64Micro(${key}) - ((toUnixTimestamp64Micro(${key}) % ${size} + ${size}) % ${size}))`}, 'UTC')`;
  },
};

/** The events table on ClickHouse, reading `materialized`'s columns (module doc). */
export function clickhouseEventsTable(materialized: MaterializedColumns = NO_MATERIALIZED_COLUMNS): EventsTable {
  const personMaterialized = [...materialized.person.values()];
  return {
    dialect: 'clickhouse',
    uuid: sql`toString(events.uuid)`,
    timestamp: clickhouseTimeText(sql`events.timestamp`),
    createdAt: clickhouseTimeText(sql`events.created_at`),
    elementsChain: sql`events.elements_chain`,
    properties: sql`events.properties`,
    property: (_key, read) => read(sql`events.properties`),
    materializedColumn: (table, property) => {
      const column = materialized[table === 'events' ? 'event' : 'person'].get(property);
      return column === undefined ? undefined : sql`${sql.raw(table)}.${sql.ref(column)}`;
    },
    personColumn: (column) => sql`${PERSON}.${sql.ref(column)}`,
    personJoin: (teamId) =>
      sql` left join (select pdi.distinct_id as distinct_id, toNullable(toString(p.p_id)) as uuid, toNullable(p.p_created_at) as created_at,
        toNullable(p.p_properties) as properties
        from ${latestDistinctIds(teamId)} as pdi
        inner join ${latestPersons(teamId)} as p on p.p_id = pdi.person_id) as ${PERSON} on ${PERSON}.distinct_id = events.distinct_id`,
    personsSource: (teamId) => {
      const more = personMaterialized.map((c) => sql`, ${sql.ref(`p_${c}`)} as ${sql.ref(c)}`);
      return sql`(select toString(p_id) as uuid, p_created_at as created_at, p_is_identified != 0 as is_identified, p_properties as properties,
        ${teamId} as team_id${sql.join(more, sql``)} from ${latestPersons(teamId, personMaterialized)})`;
    },
    hints: [],
    storedTime: CLICKHOUSE_TIME,
  };
}
