/**
 * Property filters (./filter-tree.ts, validated by the domain) compiled to SQL conditions: on the
 * events rows (the event's own properties, read through its property set on SQLite:
 * ./property-sets.ts; or its person's) and, with another source, on the persons list's rows
 * (../repositories/persons.ts). A property with a materialized column (./materialized.ts) is read
 * from the column, which holds the very text the JSON gives. Dialect differences (JSON access,
 * regex, ILIKE, jsonb containment) come from `../dialect.ts`.
 */
import { sql, type RawBuilder } from 'kysely';
import { icontains, jsonHas, jsonText, jsonTextInByContainment, regexMatch, type DialectName, type JsonSource } from '../dialect.js';
import { textToFilterTimestamp, textToNumber } from '../text-values.js';
import type { PropertyFilter, PropertyGroup } from './filter-tree.js';
import { NO_MATERIALIZED_COLUMNS, type MaterializedColumns, type MaterializedKind } from './materialized.js';
import { readEventProperty } from './property-sets.js';

/**
 * A column of the event's person (NULL without a person): `uuid`, `created_at`, `properties`, or
 * a materialized column; a subquery over `person_distinct_ids` and `persons` (the relational
 * store's persons, the same team).
 */
export function personColumn(column: string): RawBuilder<unknown> {
  return sql`(select p.${sql.ref(column)} from person_distinct_ids pdi inner join persons p on p.id = pdi.person_id where pdi.team_id = events.team_id and pdi.distinct_id = events.distinct_id)`;
}

/**
 * Where a filter reads its properties: how to read a key out of the JSON that holds it (`read`,
 * `where`), which of the store's materialized columns belong to it (storage/events/materialized.ts), and
 * how to read one of those. `ginIndexed`: the JSON is a column of the filtered row with a GIN
 * `jsonb_path_ops` index on PostgreSQL (migration 0007), so `exact` filters are written as
 * containment, which it answers.
 */
export interface FilterSource {
  /** `read(json)` for property `key`, `json` the JSON holding it (the event's may be its property set: storage/events/property-sets.ts) */
  read<T>(key: string, read: (json: JsonSource) => RawBuilder<T>): RawBuilder<T>;
  /** the condition `where(json)` on property `key`, for a WHERE clause (a NULL answer counts as false) */
  where(key: string, where: (json: JsonSource) => RawBuilder<boolean>): RawBuilder<boolean>;
  kind: MaterializedKind;
  column(name: string): RawBuilder<string | null>;
  ginIndexed?: boolean;
}

/** The source of a filter of each `type`. */
export type FilterSources = (type: PropertyFilter['type']) => FilterSource;

/** A source whose keys are all in one JSON column or subquery (`json`). */
export function jsonFilterSource(
  json: JsonSource,
  kind: MaterializedKind,
  column: FilterSource['column'],
  ginIndexed?: boolean,
): FilterSource {
  return { read: (_key, read) => read(json), where: (_key, where) => where(json), kind, column, ...(ginIndexed ? { ginIndexed } : {}) };
}

/** The event's own properties on `dialect` (storage/events/property-sets.ts). */
function eventSource(dialect: DialectName): FilterSource {
  return {
    read: (key, read) => readEventProperty(dialect, key, read),
    where: (key, where) => readEventProperty(dialect, key, where),
    kind: 'event',
    column: (name) => sql<string | null>`events.${sql.ref(name)}`,
    ginIndexed: true,
  };
}
const PERSON_OF_EVENT_SOURCE = jsonFilterSource(
  personColumn('properties'),
  'person',
  (name) => personColumn(name) as RawBuilder<string | null>,
);

const EVENT_SOURCES: Record<DialectName, FilterSource> = { sqlite: eventSource('sqlite'), postgres: eventSource('postgres') };

/** The event's own properties on `dialect`, as a filter (or `values`) reads them. */
export function eventPropertySource(dialect: DialectName): FilterSource {
  return EVENT_SOURCES[dialect];
}

/** The events list's sources on `dialect`: the event's own properties, or its person's. */
export function eventSources(dialect: DialectName): FilterSources {
  return (type) => (type === 'person' ? PERSON_OF_EVENT_SOURCE : EVENT_SOURCES[dialect]);
}

/**
 * The text of property `key` of `source` (`jsonText`'s semantics): its materialized column when
 * it has one, which holds that very text (storage/events/materialized.ts), else out of the JSON.
 */
export function propertyText(
  dialect: DialectName,
  source: FilterSource,
  key: string,
  columns: MaterializedColumns,
): RawBuilder<string | null> {
  const column = columns[source.kind].get(key);
  return column !== undefined ? source.column(column) : source.read(key, (json) => jsonText(dialect, json, key));
}

/** SQL for one property filter (see domain/event-filters.ts for the semantics). */
function compileFilter(dialect: DialectName, f: PropertyFilter, sources: FilterSources, columns: MaterializedColumns): RawBuilder<boolean> {
  const from = sources(f.type);
  const column = columns[from.kind].get(f.key);
  // set-ness reads the JSON; any other operator the materialized column, when there is one
  if (column !== undefined && f.operator !== 'is_set' && f.operator !== 'is_not_set')
    return filterCondition(dialect, f, from.column(column), undefined);
  return from.where(f.key, (json) =>
    filterCondition(dialect, f, jsonText(dialect, json, f.key), from.ginIndexed && column === undefined ? json : undefined, json),
  );
}

/**
 * One filter's condition on the property's `text`; `containable`: the JSON, when `exact` may be
 * written as jsonb containment (PostgreSQL's GIN index; ../dialect.ts); `json`: the JSON, for set-ness.
 */
function filterCondition(
  dialect: DialectName,
  f: PropertyFilter,
  text: RawBuilder<string | null>,
  containable: JsonSource | undefined,
  json?: JsonSource,
): RawBuilder<boolean> {
  switch (f.operator) {
    case 'exact': {
      // PostgreSQL: the same condition as jsonb containment, which the GIN index answers
      // (../dialect.ts); not where a materialized column answers: its btree index serves better
      const contained = containable !== undefined ? jsonTextInByContainment(dialect, containable, f.key, f.texts) : undefined;
      return contained ?? sql<boolean>`(${text} in (${sql.join(f.texts)}))`;
    }
    case 'is_not':
      return sql<boolean>`(${text} is null or ${text} not in (${sql.join(f.texts)}))`;
    case 'icontains':
      return sql<boolean>`(${text} is not null and ${icontains(dialect, text, f.needle)})`;
    case 'not_icontains':
      return sql<boolean>`(${text} is null or not ${icontains(dialect, text, f.needle)})`;
    case 'regex':
      return sql<boolean>`(${text} is not null and ${regexMatch(dialect, text, f.pattern)})`;
    case 'not_regex':
      return sql<boolean>`(${text} is null or not ${regexMatch(dialect, text, f.pattern)})`;
    case 'gt':
      return sql<boolean>`(${textToNumber(dialect, text)} > ${f.number})`;
    case 'gte':
      return sql<boolean>`(${textToNumber(dialect, text)} >= ${f.number})`;
    case 'lt':
      return sql<boolean>`(${textToNumber(dialect, text)} < ${f.number})`;
    case 'lte':
      return sql<boolean>`(${textToNumber(dialect, text)} <= ${f.number})`;
    case 'is_set':
      return jsonHas(dialect, json!, f.key);
    case 'is_not_set':
      return sql<boolean>`(not ${jsonHas(dialect, json!, f.key)})`;
    case 'is_date_exact': {
      const d = textToFilterTimestamp(dialect, text);
      return f.dayEnd
        ? sql<boolean>`(${d} >= ${f.date} and ${d} < ${f.dayEnd})`
        : sql<boolean>`(substr(${d}, 1, 19) = ${f.date.slice(0, 19)})`;
    }
    case 'is_date_after':
      return sql<boolean>`(${textToFilterTimestamp(dialect, text)} > ${f.date})`;
    case 'is_date_before':
      return sql<boolean>`(${textToFilterTimestamp(dialect, text)} < ${f.date})`;
  }
}

/**
 * SQL for a group of property filters; an empty group is true. `sources` says where each filter
 * `type` reads (the events list: the event's properties or its person's; the persons list: the
 * person's own, server/storage/repositories/persons.ts).
 */
export function compilePropertyGroup(
  dialect: DialectName,
  g: PropertyGroup,
  sources: FilterSources,
  columns: MaterializedColumns = NO_MATERIALIZED_COLUMNS,
): RawBuilder<boolean> {
  if (g.values.length === 0) return sql<boolean>`(1 = 1)`;
  const parts = g.values.map((v) =>
    v.kind === 'group' ? compilePropertyGroup(dialect, v, sources, columns) : compileFilter(dialect, v, sources, columns),
  );
  return sql<boolean>`(${sql.join(parts, g.type === 'AND' ? sql` and ` : sql` or `)})`;
}
