/**
 * The events filters (../filter-tree.ts: `properties`, a person) as ClickHouse SQL conditions on
 * the rows of `events`, with the semantics the row store gives them (../filters.ts): a property's
 * text is its string unquoted or its JSON text, NULL when missing or JSON null; a negative
 * operator holds where the property is missing.
 *
 * A person's properties come from the mirror (`person`, `person_distinct_id2`, read as ./mirror.ts
 * says). ClickHouse has no
 * correlated subqueries, so a person filter is written as membership: the event's distinct id is
 * one whose person matches, or the event has no person and the filter holds of no properties
 * (`{}`), as the row store's NULL person reads.
 */
import { sql, type RawBuilder } from 'kysely';
import type { PropertyFilter, PropertyGroup } from '../filter-tree.js';
import type { MaterializedColumns } from '../materialized.js';
import { NO_MATERIALIZED_COLUMNS } from '../materialized.js';
import type { Sql } from '../store.js';
import { clickhouseTextToFilterMillis, clickhouseTextToNumber, timestampMillis } from '../../text-values.js';
import { latestDistinctIds, latestPersons } from './mirror.js';

/** The team id as bound SQL. */
function team(teamId: number): Sql {
  return sql`${teamId}`;
}

/**
 * The text of property `key` of JSON text `json`: a string unquoted, any other value its JSON text,
 * NULL when the key is missing or null.
 */
export function propertyTextSql(json: Sql, key: string): RawBuilder<string | null> {
  return sql<
    string | null
  >`if(JSONType(${json}, ${key}) = 'String', JSONExtractString(${json}, ${key}), nullIf(nullIf(JSONExtractRaw(${json}, ${key}), ''), 'null'))`;
}

/** `events.distinct_id` is one of the team's whose person now satisfies `cond(properties)` (`properties` the person's JSON text). */
function personHas(teamId: number, cond: (properties: Sql) => Sql): Sql {
  return sql`events.distinct_id in (select pdi.distinct_id from ${latestDistinctIds(team(teamId))} as pdi inner join ${latestPersons(team(teamId))} as p on p.p_id = pdi.person_id where ${cond(sql`p.p_properties`)})`;
}

/** `cond` of the event's person, or of `{}` when it has none. */
function personCondition(teamId: number, cond: (properties: Sql) => Sql): Sql {
  return sql`(${personHas(teamId, cond)} or (${cond(sql`'{}'`)} and events.distinct_id not in (select distinct_id from ${latestDistinctIds(team(teamId))})))`;
}

/** One filter's condition on the property's `text` (and its `json`, for set-ness). */
function filterCondition(f: PropertyFilter, text: Sql, json: Sql): Sql {
  switch (f.operator) {
    case 'exact':
      return sql`(${text} in (${sql.join(f.texts)}))`;
    case 'is_not':
      return sql`(${text} is null or ${text} not in (${sql.join(f.texts)}))`;
    case 'icontains':
      return sql`(${text} is not null and positionCaseInsensitiveUTF8(${text}, ${f.needle}) > 0)`;
    case 'not_icontains':
      return sql`(${text} is null or positionCaseInsensitiveUTF8(${text}, ${f.needle}) = 0)`;
    case 'regex':
      return sql`(${text} is not null and match(${text}, ${f.pattern}))`;
    case 'not_regex':
      return sql`(${text} is null or not match(${text}, ${f.pattern}))`;
    case 'gt':
      return sql`ifNull(${clickhouseTextToNumber(text)} > ${f.number}, 0)`;
    case 'gte':
      return sql`ifNull(${clickhouseTextToNumber(text)} >= ${f.number}, 0)`;
    case 'lt':
      return sql`ifNull(${clickhouseTextToNumber(text)} < ${f.number}, 0)`;
    case 'lte':
      return sql`ifNull(${clickhouseTextToNumber(text)} <= ${f.number}, 0)`;
    case 'is_set':
      return sql`JSONHas(${json}, ${f.key})`;
    case 'is_not_set':
      return sql`(not JSONHas(${json}, ${f.key}))`;
    case 'is_date_exact': {
      const d = clickhouseTextToFilterMillis(text);
      if (f.dayEnd) return sql`ifNull(${d} >= ${timestampMillis(f.date)} and ${d} < ${timestampMillis(f.dayEnd)}, 0)`;
      const second = timestampMillis(f.date.slice(0, 19));
      return sql`ifNull(${d} >= ${second} and ${d} < ${second + 1000}, 0)`;
    }
    case 'is_date_after':
      return sql`ifNull(${clickhouseTextToFilterMillis(text)} > ${timestampMillis(f.date)}, 0)`;
    case 'is_date_before':
      return sql`ifNull(${clickhouseTextToFilterMillis(text)} < ${timestampMillis(f.date)}, 0)`;
  }
}

function compileFilter(teamId: number, f: PropertyFilter, columns: MaterializedColumns): Sql {
  if (f.type === 'person') return personCondition(teamId, (props) => filterCondition(f, propertyTextSql(props, f.key), props));
  const column = columns.event.get(f.key);
  // a materialized column holds the property's text, NULL when missing or null (PostHog's nullable form: ./materialize.ts)
  const text =
    column !== undefined && f.operator !== 'is_set' && f.operator !== 'is_not_set'
      ? sql`events.${sql.ref(column)}`
      : propertyTextSql(sql`events.properties`, f.key);
  return filterCondition(f, text, sql`events.properties`);
}

/** A group of filters as one condition on `events`; an empty group is true. */
export function compilePropertyGroup(teamId: number, g: PropertyGroup, columns: MaterializedColumns = NO_MATERIALIZED_COLUMNS): Sql {
  if (g.values.length === 0) return sql`1`;
  const parts = g.values.map((v) => (v.kind === 'group' ? compilePropertyGroup(teamId, v, columns) : compileFilter(teamId, v, columns)));
  return sql`(${sql.join(parts, g.type === 'AND' ? sql` and ` : sql` or `)})`;
}

/** `events.distinct_id` is one of the person's (its uuid), now. */
export function personIs(teamId: number, personUuid: string): Sql {
  return sql`events.distinct_id in (select distinct_id from ${latestDistinctIds(team(teamId))} where person_id = toUUID(${personUuid}))`;
}
