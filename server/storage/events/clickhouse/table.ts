/**
 * HogQL's events table (`EventsTable`, ../store.ts) on ClickHouse: PostHog's `events` as its HogQL
 * printer reads it (posthog/hogql/database/schema/events.py, posthog/hogql/printer/; the facts are
 * in docs/research/clickhouse-chdb.md), in the forms server/hogql/types.ts holds values in:
 *
 * - `uuid` as its text (`toString(events.uuid)`), `timestamp` and `created_at` as the stored text
 *   form (`formatDateTime(…, '%Y-%m-%dT%H:%i:%S.%fZ')`, six digits), `properties` the JSON text
 *   column as it is.
 * - Materialized columns are PostHog's `mat_<property>` String columns (DEFAULT the property's
 *   trimmed JSON text), read as its printer reads them: `nullIf(nullIf(col, ''), 'null')`.
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
import type { EventsTable } from '../store.js';
import { clickhouseTimeText, latestDistinctIds, latestPersons } from './mirror.js';

/** The alias of the event's person in the derived table (`personJoin`). */
const PERSON = sql.raw('events__person');

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
      return column === undefined ? undefined : sql`nullIf(nullIf(${sql.raw(table)}.${sql.ref(column)}, ''), 'null')`;
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
  };
}
