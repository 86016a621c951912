/**
 * The person mirror as ClickHouse reads it: `person` and `person_distinct_id2` are
 * ReplacingMergeTree tables (../../clickhouse/schema.ts) that keep every version written
 * (./write.ts) until a merge, so a reader takes, per id (per distinct id), the row of the greatest
 * `version` and drops it when that row is deleted (`argMax(…, version)` with `HAVING
 * argMax(is_deleted, version) = 0`), as PostHog reads them (posthog/models/person/sql.py
 * `GET_TEAM_PERSON_DISTINCT_IDS`). The one place both the events filters (./filters.ts) and
 * HogQL's events table (./table.ts) take them from. Every read carries the team filter.
 */
import { sql } from 'kysely';
import type { Sql } from '../store.js';

/** The team's distinct ids with their person now (`distinct_id`, `person_id` UUID); `teamId` the team id's SQL. */
export function latestDistinctIds(teamId: Sql): Sql {
  return sql`(select distinct_id, argMax(person_id, version) as person_id from person_distinct_id2 where team_id = ${teamId} group by distinct_id having argMax(is_deleted, version) = 0)`;
}

/**
 * The team's persons now, as columns `p_id` (UUID), `p_created_at`, `p_is_identified`,
 * `p_properties` (JSON text), plus `p_<column>` for each of `extra` (the persons' materialized
 * columns). The aliases are not the columns' names: ClickHouse reads a name in an aggregate as
 * the SELECT alias first.
 */
export function latestPersons(teamId: Sql, extra: readonly string[] = []): Sql {
  const more = extra.map((c) => sql`, argMax(${sql.ref(c)}, version) as ${sql.ref(`p_${c}`)}`);
  return sql`(select id as p_id, argMax(created_at, version) as p_created_at, argMax(is_identified, version) as p_is_identified, argMax(properties, version) as p_properties${sql.join(more, sql``)} from person where team_id = ${teamId} group by id having argMax(is_deleted, version) = 0)`;
}

/** A DateTime64 column or expression as text in the stored form (`2024-11-20T14:03:10.871123Z`, UTC). */
export function clickhouseTimeText(column: Sql): Sql {
  return sql`formatDateTime(${column}, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')`;
}
