/**
 * The fields a HogQL query can name, per table, and how each reads from the store.
 *
 * `events`: uuid, event, timestamp (DateTime64), distinct_id, elements_chain, created_at,
 * properties (the whole object, JSON text), properties.<key> (also `properties['key']`),
 * person_id and person.id (the uuid of the event's person), person.properties.<key>,
 * person.created_at. `persons`: id (uuid), created_at, is_identified, properties,
 * properties.<key>. Property values are Strings, as HogQL reads them
 * (posthog/hogql/printer.py: JSONExtractRaw with quotes removed; a missing key or JSON null is NULL).
 *
 * Each field is computed once, in the derived table the query reads from (`t.fN`), so that the
 * outer query's GROUP BY, ORDER BY and HAVING only ever see plain columns (PostgreSQL matches
 * grouped expressions by their text, and a property's key is a bound parameter).
 *
 * How each field of `events` reads from the store is the store's (its `EventsTable`,
 * ../storage/events/index.ts): the SQL of the value, and, for a column the store keeps in another
 * form than its value, that form too: `uuid` (`EventsTable.storedUuid`, offered as
 * `Compiled.storedEquals`) and `timestamp` (`EventsTable.storedTime`, offered as
 * `Compiled.timeKey`), which comparisons, GROUP BY and ORDER BY read so that the indexes serve
 * them and no row's text is made only to compare it. A property with a materialized column is
 * read from the column where the store's column holds its text (`HogQLDialect.materializedExact`:
 * ClickHouse's `mat_` columns, on the rows where it holds; ./select.ts), and from the JSON elsewhere.
 */
import { sql } from 'kysely';
import type { Sql } from './dialect.js';
import type { AstNode } from './parser.js';
import { fail, make, type DerivedColumn, type Scope } from './scope.js';
import type { Compiled, HogType } from './types.js';

/** Registers (once) the column `key` of the derived table and answers the field as a column reference. */
function column(
  scope: Scope,
  key: string,
  build: () => Sql,
  type: HogType,
  nullable: boolean,
  canonical?: () => Sql,
  more?: () => Pick<DerivedColumn, 'split' | 'json'>,
): Compiled {
  if (scope.inline) return make(build(), type, nullable, key, [], { fields: [key] });
  const cols = scope.columns;
  let col = cols.get(key);
  if (!col) {
    col = { name: `f${cols.size}`, sql: build(), ...(canonical ? { canonical: canonical() } : {}), ...more?.() };
    cols.set(key, col);
  }
  return make(sql.raw(`t.${col.name}`), type, nullable, key, [], { fields: [key] });
}

/** `field` offering the materialized column of property `key` of `table` (`Compiled.materialized`), when the store has one. */
function withMaterialized(scope: Scope, table: 'events' | 'persons', key: string, field: Compiled): Compiled {
  const materialized = scope.events.materializedColumn(table, key);
  if (materialized === undefined) return field;
  return {
    ...field,
    materialized: () => column(scope, `${table}.materialized.${JSON.stringify(key)}`, () => materialized, 'String', true),
  };
}

/**
 * The query's row column: 1 on every row, a column of the derived table (of a one-row table when
 * the query has no FROM), which an aggregate reads to be the query's own inside a subquery
 * (`Compiled.unbound`).
 */
export function rowColumn(scope: Scope): Sql {
  let col = scope.columns.get('row');
  if (!col) {
    col = { name: `f${scope.columns.size}`, sql: sql`1` };
    scope.columns.set('row', col);
  }
  return sql.raw(`t.${col.name}`);
}

/** A column of the event's person (`EventsTable.personColumn`), noting that the query reads one (`Scope.readsPerson`). */
function personOf(scope: Scope, column: 'uuid' | 'created_at' | 'properties'): Sql {
  scope.readsPerson = true;
  return scope.events.personColumn(column);
}

/** A property key as written after `properties.` (one identifier) or in brackets (a string constant). */
export function propertyKey(scope: Scope, node: AstNode, rest: readonly string[]): string {
  if (rest.length !== 1) fail(scope, node, `Nested property access (${rest.join('.')}) is not supported: name one top-level key`);
  return rest[0]!;
}

/** Compiles a field chain (table prefix already stripped) of the scope's table. */
export function tableField(scope: Scope, chain: readonly string[], node: AstNode): Compiled {
  const d = scope.dialect;
  const events = scope.events;
  const [head, ...rest] = chain;
  const name = chain.join('.');
  if (scope.table === null) fail(scope, node, `Field "${name}" needs a FROM clause (FROM events or FROM persons)`);
  if (scope.table === 'events') {
    if (rest.length === 0) {
      switch (head) {
        case 'uuid': {
          const field = column(scope, 'events.uuid', () => events.uuid, 'UUID', false);
          const storedUuid = events.storedUuid;
          if (!storedUuid) return field;
          const stored = () => column(scope, 'events.uuid.stored', () => storedUuid.column, 'UUID', false).sql;
          return {
            ...field,
            storedEquals: (value) => {
              const literal = storedUuid.literal(value);
              return literal && sql`(${stored()} = ${literal})`;
            },
          };
        }
        case 'event':
        case 'distinct_id':
          return column(scope, `events.${head}`, () => sql`events.${sql.ref(head)}`, 'String', false);
        case 'elements_chain':
          return column(scope, 'events.elements_chain', () => events.elementsChain, 'String', false);
        case 'timestamp': {
          const field = column(scope, 'events.timestamp', () => events.timestamp, 'DateTime64', false);
          const storedTime = events.storedTime;
          if (!storedTime) return field;
          // the text for the answer, the stored key to compare, group and order
          return { ...field, timeKey: () => column(scope, 'events.timestamp.stored', () => storedTime.column, 'Int', false).sql };
        }
        case 'team_id':
          return column(scope, 'events.team_id', () => sql`events.team_id`, 'Int', false);
        case 'created_at':
          return column(scope, 'events.created_at', () => events.createdAt, 'DateTime64', false);
        case 'properties':
          return column(
            scope,
            'events.properties',
            () => d.jsonWhole(events.properties),
            'JSON',
            false,
            () => d.jsonCanonical(events.properties),
            () => ({ json: true }),
          );
        case 'person_id':
          return column(scope, 'events.person_id', () => personOf(scope, 'uuid'), 'UUID', true);
      }
    }
    if (head === 'properties') {
      const key = propertyKey(scope, node, rest);
      const json = () => events.property(key, (source) => d.jsonText(source, key));
      // a materialized column that holds most values' text (HogQLDialect.materializedExact): the
      // column where it holds, the JSON elsewhere (the split is ./select.ts's)
      const mat = d.materializedExact ? events.materializedColumn('events', key) : undefined;
      const exact = mat && d.materializedExact!(mat);
      const read = mat && exact ? () => sql`if(${exact}, ${mat}, ${json()})` : json;
      const more = mat && exact ? () => ({ split: { fast: mat, exact } }) : () => ({ json: true });
      return withMaterialized(
        scope,
        'events',
        key,
        column(scope, `events.properties.${JSON.stringify(key)}`, read, 'String', true, undefined, more),
      );
    }
    if (head === 'person' && rest.length >= 1) {
      const [sub, ...more] = rest;
      if (sub === 'id' && more.length === 0) return column(scope, 'events.person_id', () => personOf(scope, 'uuid'), 'UUID', true);
      if (sub === 'created_at' && more.length === 0)
        return column(scope, 'events.person.created_at', () => d.timestampColumn(personOf(scope, 'created_at')), 'DateTime64', true);
      if (sub === 'properties' && more.length >= 1) {
        const key = propertyKey(scope, node, more);
        return column(
          scope,
          `events.person.properties.${JSON.stringify(key)}`,
          () => d.jsonText(personOf(scope, 'properties'), key),
          'String',
          true,
        );
      }
    }
    return fail(
      scope,
      node,
      `Unknown field "${name}" of events (fields: uuid, event, timestamp, distinct_id, properties.<key>, person_id, person.properties.<key>, elements_chain, created_at)`,
    );
  }
  if (rest.length === 0) {
    switch (head) {
      case 'id':
        return column(scope, 'persons.id', () => sql`persons.uuid`, 'UUID', false);
      case 'created_at':
        return column(scope, 'persons.created_at', () => d.timestampColumn(sql`persons.created_at`), 'DateTime64', false);
      case 'is_identified':
        return column(scope, 'persons.is_identified', () => sql`persons.is_identified`, 'Bool', false);
      case 'properties':
        return column(
          scope,
          'persons.properties',
          () => d.jsonWhole(sql`persons.properties`),
          'JSON',
          false,
          () => d.jsonCanonical(sql`persons.properties`),
        );
    }
  }
  if (head === 'properties') {
    const key = propertyKey(scope, node, rest);
    return withMaterialized(
      scope,
      'persons',
      key,
      column(scope, `persons.properties.${JSON.stringify(key)}`, () => d.jsonText(sql`persons.properties`, key), 'String', true),
    );
  }
  return fail(scope, node, `Unknown field "${name}" of persons (fields: id, created_at, is_identified, properties.<key>)`);
}
