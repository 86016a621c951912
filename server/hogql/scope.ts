/**
 * What the expression compiler knows while it compiles one query: the store's dialect and events
 * table, the query text (for error positions), the table of FROM, the SELECT aliases, the clock, and where in the
 * query it is (aggregates allowed or not). Also the helpers that build `Compiled` values.
 */
import { sql } from 'kysely';
import type { EventsTable, StoredTime } from '../storage/events/index.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { HogQLError } from './errors.js';
import type { AstNode } from './parser.js';
import type { Compiled, HogType } from './types.js';

/** The tables a HogQL query may read (`FROM events`, `FROM persons`). */
export type TableName = 'events' | 'persons';

/** The compile-time context of one query. */
export interface Scope {
  dialect: HogQLDialect;
  /** the store's events table: the SQL of each field of `events`, and its materialized columns (./fields.ts) */
  events: EventsTable;
  /** the HogQL text the AST's positions point into */
  source: string;
  /** the request field that holds the text (errors' `attr`) */
  attr: string | null;
  /** the FROM table, or null for a query without FROM */
  table: TableName | null;
  /** names that stand for the table in a field chain (`events`, or its alias) */
  tableNames: Set<string>;
  /** SELECT aliases (`count() as c`), usable anywhere in the query as ClickHouse allows */
  aliases: Map<string, AstNode>;
  /** aliases being expanded (a cycle is an error) */
  expanding: Set<string>;
  /** `now()` and `today()` for the whole query */
  now: Date;
  /** whether aggregate functions may appear here (SELECT, HAVING, ORDER BY), and whether we are inside one */
  aggAllowed: boolean;
  inAgg: boolean;
  /**
   * the derived table's columns (one per field the query reads), by field key (./fields.ts);
   * `canonical`: for a whole properties object, the same value in the canonical text both stores
   * compare alike (used when the query groups, orders or de-duplicates by it)
   */
  columns: Map<string, DerivedColumn>;
  /** fields read straight off the table's row instead (a condition added to another query's WHERE) */
  inline?: boolean;
  /** aggregates read the row column (`rowColumn`) even when their arguments read none (see `bindable`) */
  bindAggregates?: boolean;
  /** compiling WHERE, where a comparison may read a materialized column instead of its property */
  inWhere?: boolean;
  /** the query reads a column of the event's person (the store's `EventsTable.personJoin` is then added) */
  readsPerson?: boolean;
}

/**
 * A column of the derived table: its SQL, and for a whole properties object its `canonical`
 * form (see `Scope.columns`); `split`: for a materialized property on a store whose column does
 * not hold every value's text (`HogQLDialect.materializedExact`), the column's value (`fast`) and
 * the condition (`exact`) under which it is the property's text, while `sql` reads the JSON where
 * the condition fails (./select.ts reads `fast` on the rows where every such condition holds, when
 * no other column reads the JSON: `json`).
 */
export interface DerivedColumn {
  name: string;
  sql: Sql;
  canonical?: Sql;
  split?: { fast: Sql; exact: Sql };
  /** reads the events' properties JSON on every row (a property without a materialized column, the whole object) */
  json?: boolean;
}

/**
 * How the store keeps `timestamp` when a compiled value has a `timeKey` (only fields of a store
 * with `EventsTable.storedTime` do, and what is computed from them). Throws when it has none: a
 * compiler bug, not the query's.
 */
export function storedTime(scope: Scope): StoredTime {
  const time = scope.events.storedTime;
  if (!time) throw new Error("a time key without the store's stored time");
  return time;
}

/** Throws a `HogQLError` located at `node`. */
export function fail(scope: Scope, node: AstNode | undefined, message: string): never {
  throw new HogQLError(message, scope.source, node?.start?.offset, scope.attr);
}

/**
 * `fail` for a type error, with the code of the error ClickHouse raises for it, as PostHog answers
 * (`ExposedCHQueryError.code_name`, posthog/errors.py): `illegal_type_of_argument` (ClickHouse's
 * ILLEGAL_TYPE_OF_ARGUMENT, 43) for an argument of the wrong type, `no_common_type` (386) for
 * values that share no type.
 */
export function typeFail(
  scope: Scope,
  node: AstNode | undefined,
  message: string,
  code: 'illegal_type_of_argument' | 'no_common_type' = 'illegal_type_of_argument',
): never {
  throw new HogQLError(message, scope.source, node?.start?.offset, scope.attr, 'invalid', code);
}

/**
 * A compiled expression built from parts (`agg`, `fields`, `unbound` and `canFail` come from the
 * parts unless given; `unchecked` only when given).
 */
export function make(
  sql: Sql,
  type: HogType,
  nullable: boolean,
  key: string,
  parts: readonly Compiled[] = [],
  extra: Partial<Compiled> = {},
): Compiled {
  const c: Compiled = {
    sql,
    type,
    nullable,
    key,
    agg: parts.some((p) => p.agg),
    fields: [...new Set(parts.flatMap((p) => p.fields))],
  };
  if (parts.some((p) => p.unbound)) c.unbound = true;
  if (parts.some((p) => p.canFail)) c.canFail = true;
  return Object.assign(c, extra);
}

/**
 * `c`, compiled from `node`, in a form whose value a subquery may bind: itself, or, when it holds
 * an aggregate that reads no column (`Compiled.unbound`), `node` compiled again with
 * `bindAggregates`, which makes every such aggregate read the query's row column.
 */
export function bindable(
  scope: Scope,
  c: Compiled,
  node: AstNode | undefined,
  compile: (scope: Scope, node: AstNode) => Compiled,
): Compiled {
  if (!c.unbound || !node || scope.bindAggregates) return c;
  scope.bindAggregates = true;
  try {
    return compile(scope, node);
  } finally {
    scope.bindAggregates = false;
  }
}

/** A constant of the query, bound as a parameter of its type (numbers opaque to the planner: `HogQLDialect.opaque`). */
export function constant(scope: Scope, value: unknown, node?: AstNode): Compiled {
  const d = scope.dialect;
  const key = `const:${JSON.stringify(value)}`;
  if (value === null) return make(sqlNull, 'Null', true, key, [], { constant: { value: null } });
  if (typeof value === 'boolean') return make(d.bool(value), 'Bool', false, key, [], { constant: { value } });
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(scope, node, 'Numbers must be finite');
    // written with a point or an exponent (`1.0`, `1e300`), a number is a Float, as in ClickHouse
    const written = node?.start && node.end ? scope.source.slice(node.start.offset, node.end.offset) : '';
    if (Number.isInteger(value) && !/^[-+]?[0-9]*[.eE]/.test(written.trim())) {
      if (!Number.isSafeInteger(value)) fail(scope, node, `The integer ${value} is out of range`);
      return make(d.opaque(d.int(value)), 'Int', false, key, [], { constant: { value } });
    }
    return make(d.opaque(d.float(value)), 'Float', false, Number.isInteger(value) ? `${key}.0` : key, [], { constant: { value } });
  }
  if (typeof value === 'string') return make(d.str(value), 'String', false, key, [], { constant: { value } });
  return fail(scope, node, 'Unsupported constant');
}

/** SQL NULL. */
export const sqlNull: Sql = sql`null`;
