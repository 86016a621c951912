/**
 * The compiler's intermediate form: a compiled expression is SQL (a Kysely `RawBuilder` whose values
 * are all bound parameters) plus its HogQL type, whether it may be NULL, whether it aggregates,
 * and, for constants, the value (so that `now() - interval 7 day` is folded before it reaches SQL).
 *
 * How each type is held in SQL, on both stores (the dialect modules keep to it):
 * - `String`, `UUID`: text (PostgreSQL: with `collate "C"`, so that order is byte order as in ClickHouse);
 * - `Int`: integer (PostgreSQL bigint); `Float`: real (float8); `Bool`: SQLite 0/1, PostgreSQL boolean;
 * - `DateTime`, `DateTime64`: text `YYYY-MM-DDTHH:MM:SS.ffffffZ` (the events' stored form, UTC);
 * - `Date`: text `YYYY-MM-DD`; `Interval`: compile-time only; `JSON`: a whole properties object.
 */
import type { RawBuilder } from 'kysely';

/** HogQL's types as this compiler tracks them. */
export type HogType =
  'String' | 'UUID' | 'Int' | 'UInt' | 'Float' | 'Bool' | 'DateTime' | 'DateTime64' | 'Date' | 'Interval' | 'Null' | 'JSON';

/** An interval: `n` units (compile-time only). */
export interface Interval {
  n: number;
  unit: 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
}

/** One compiled expression. */
export interface Compiled {
  sql: RawBuilder<unknown>;
  type: HogType;
  nullable: boolean;
  /** contains an aggregate function (count, sum, …) */
  agg: boolean;
  /** the value, when the expression is a constant known at compile time */
  constant?: { value: string | number | boolean | null | Interval };
  /** a key that is equal for expressions that compile to the same SQL and values (GROUP BY matching) */
  key: string;
  /** the source fields it reads outside aggregates (their keys) */
  fields: string[];
  /** an Int result of `+`, `-`, `*` before its overflow check (the operand of an enclosing one) */
  unchecked?: RawBuilder<unknown>;
  /**
   * holds an aggregate that reads no column (`count()`, `sum(1)`): a subquery that binds the value
   * (./text-forms.ts, `HogQLDialect.checkInt`) would take such an aggregate as its own and count
   * its one row, so the value is compiled again with `Scope.bindAggregates` before it is bound
   */
  unbound?: boolean;
  /** may fail when a row reaches it (an Int overflow): WHERE and HAVING then evaluate in written order */
  canFail?: boolean;
  /**
   * a property the store keeps in a materialized column (`EventsTable.materializedColumn`,
   * ../storage/events/index.ts): that column, whose text is the property's HogQL text for every
   * value whose text is not empty, not `null`, holds no quote, backslash or control character and
   * does not begin with a digit, a sign, a point, `{` or `[` (ClickHouse's `mat_` columns write
   * the others otherwise), so `=` and `!=` with such a constant may read it (and its index)
   * instead (./expr.ts `compareValues`). Elsewhere the store's own `EventsTable.property` reads
   * the column where it can (ClickHouse: ../storage/events/clickhouse/table.ts)
   */
  materialized?: () => Compiled;
  /**
   * a column the store holds in another form than its value (`events.uuid`: `EventsTable.storedUuid`,
   * ../storage/events/index.ts): `=` with a String constant is the stored column `=` the constant's
   * stored form, which the column's index serves; undefined for a constant that has no stored form,
   * compared as text (./expr.ts `compareValues`)
   */
  storedEquals?: (value: string) => RawBuilder<unknown> | undefined;
  /**
   * a DateTime the store holds as a key in another form than its text (`events.timestamp`:
   * `EventsTable.storedTime`, ../storage/events/index.ts), or computed from one (`toStartOfDay`,
   * `toStartOfHour`): the SQL key, which orders and compares as the value does. Comparisons with a date read it
   * (./expr.ts `compareTimes`), so the time indexes serve them; GROUP BY and ORDER BY read it
   * (./select.ts), so no row's text is made to group or sort it.
   */
  timeKey?: () => RawBuilder<unknown>;
  /** like `timeKey` for GROUP BY and ORDER BY only: a Date computed from a stored time (`toDate`) */
  orderKey?: () => RawBuilder<unknown>;
}

/** Whether `t` is one of the numeric types (Bool counts: it is UInt8 in ClickHouse). */
export function isNumeric(t: HogType): boolean {
  return t === 'Int' || t === 'UInt' || t === 'Float' || t === 'Bool';
}

/** Whether `t` is a string type. */
export function isText(t: HogType): boolean {
  return t === 'String' || t === 'UUID';
}

/** Whether `t` is a date-time type (held as the stored text form). */
export function isDateTime(t: HogType): boolean {
  return t === 'DateTime' || t === 'DateTime64';
}

/** The type name the response's `types` gives (ClickHouse's names, as PostHog returns them). */
export function typeName(c: Pick<Compiled, 'type' | 'nullable'>): string {
  const base: Record<HogType, string> = {
    String: 'String',
    UUID: 'UUID',
    Int: 'Int64',
    UInt: 'UInt64',
    Float: 'Float64',
    Bool: 'UInt8',
    DateTime: "DateTime('UTC')",
    DateTime64: "DateTime64(6, 'UTC')",
    Date: 'Date',
    Interval: 'IntervalSecond',
    Null: 'Nullable(Nothing)',
    JSON: 'String',
  };
  const name = base[c.type];
  return c.nullable && c.type !== 'Null' ? `Nullable(${name})` : name;
}
