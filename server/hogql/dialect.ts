/**
 * What the HogQL compiler asks of a store's SQL: one interface, one module per store
 * (`./dialect-sqlite.ts`, `./dialect-postgres.ts`). Every value reaches SQL as a bound parameter;
 * the SQL text only ever holds what these functions write. Types are held as `./types.ts` says.
 */
import type { RawBuilder } from 'kysely';
import type { EventsDialectName } from '../storage/events/index.js';
import type { Interval } from './types.js';

/** Raw SQL as the compiler composes it. */
export type Sql = RawBuilder<unknown>;

/** The SQL a store needs for HogQL's subset. */
export interface HogQLDialect {
  name: EventsDialectName;
  /** a string value (bound) */
  str(value: string): Sql;
  /** an integer value (bound) */
  int(value: number): Sql;
  /** a float value (bound) */
  float(value: number): Sql;
  /** a boolean value (bound) */
  bool(value: boolean): Sql;
  /**
   * A number constant of the query kept opaque to the planner (PostgreSQL: a subquery, which it
   * evaluates at run time and only where a row needs it, as SQLite does; without it PostgreSQL
   * folds constant arithmetic while planning and refuses an overflow that no row reaches).
   */
  opaque(value: Sql): Sql;
  /** the SQL literals for conditions' defaults */
  readonly trueSql: Sql;
  readonly falseSql: Sql;
  /** a condition as a 0/1 value (for SELECT, arithmetic, comparisons of booleans) */
  boolValue(cond: Sql): Sql;
  /** a text column or expression that orders and compares byte by byte */
  text(expr: Sql): Sql;
  /**
   * The property `key` of a JSON object column as text (PostHog's rule: strings unquoted,
   * missing/null → NULL), the same text on both stores: numbers in PostgreSQL's plain decimal form
   * (`1e-7` → `0.0000001`, `2.50` kept), objects and arrays as compact JSON (`{"a":1,"b":[1,2]}`)
   * with object keys in jsonb's order (shorter keys first, then byte order).
   */
  jsonText(source: Sql, key: string): Sql;
  /** JSON text (a whole object) in the canonical form `jsonText` gives objects */
  jsonCanonical(json: Sql): Sql;
  /** a whole JSON object column as JSON text (normalised after reading) */
  jsonWhole(source: Sql): Sql;
  /**
   * For a store whose materialized columns (`EventsTable.materializedColumn`) hold a property's
   * HogQL text for most values but not all (ClickHouse's `mat_` columns): the condition, never
   * NULL, that a row's column value is the property's text. The compiler then reads the column on
   * the rows where it holds and the JSON on the others (./select.ts). Undefined: the column is
   * read only where ./expr.ts `compareValues` may read it.
   */
  materializedExact?(column: Sql): Sql;
  /** a timestamp column that the store holds natively (persons.created_at) in the stored text form */
  timestampColumn(column: Sql): Sql;
  /** text parsed as a number (Float), NULL when it is not one */
  textToFloat(text: Sql): Sql;
  /** text parsed as an integer (Int), NULL when it is not one */
  textToInt(text: Sql): Sql;
  /** a Float truncated toward zero to an Int; NULL outside Int64's range (as accurateCastOrNull) */
  floatToInt(value: Sql): Sql;
  /** an Int/Float as a Float */
  toFloat(value: Sql): Sql;
  /** an integer (Int, UInt, Bool as 0/1) as text (`3`, `-12`) */
  intToText(value: Sql): Sql;
  /**
   * A Float as text, as JavaScript's `String(x)` writes it (`0.1`, `1440`, `1e-7`, `1.5e+300`):
   * ./text-forms.ts. An aggregate in `value` must read a column (see `Compiled.unbound`).
   */
  floatToText(value: Sql): Sql;
  /**
   * An Int result of `+`, `-` or `*` (`raw`, whose Int operands are themselves unchecked) that fails
   * with the store's integer-overflow error when it left Int64's range: PostgreSQL's bigint
   * arithmetic fails by itself (SQLSTATE 22003); SQLite turns the value into a REAL, which is
   * checked here (its `abs()` of the smallest Int64 fails with "integer overflow"). An aggregate
   * in `raw` must read a column (see `Compiled.unbound`).
   */
  checkInt(raw: Sql): Sql;
  /**
   * `a op b` of Ints that fails with the Int64 overflow itself, for a store whose integers wrap
   * around (ClickHouse): each operation is checked, and `checkInt` is not used. Undefined: the
   * compiler checks a tree of `+ - *` once, at its root, with `checkInt`.
   */
  intOp?(op: '+' | '-' | '*', a: Sql, b: Sql): Sql;
  /**
   * An unsigned count (count(), uniq(), length()) as the store's Int, for a store that cannot mix
   * unsigned and signed integers in one expression (ClickHouse has no common type of UInt64 and
   * Int64). Undefined: as it is.
   */
  unsigned?(value: Sql): Sql;
  /**
   * HogQL's `uniq(x)` (`exact` false) and `uniqExact(x)` of a value, for a store with its own
   * (ClickHouse: `uniq`, PostHog's approximation, exact up to 65,536 distinct values but for hash
   * collisions, and `uniqExact`). Undefined: `count(distinct x)`, exact.
   */
  uniq?(value: Sql, exact: boolean): Sql;
  /**
   * `a op b` of Floats (or a Float and an Int), failing with the Float range error as PostgreSQL's
   * float8 arithmetic does (SQLSTATE 22003): a result beyond ±1.7976931348623157e308 (overflow),
   * or a product or quotient of non-zero values that rounds to 0 (underflow). `/` is `divide`'s
   * (NULL when `b` is 0). SQLite binds `a` and `b` in a subquery, as `checkInt` (`bindsChecked`).
   */
  checkFloat(op: '+' | '-' | '*' | '/', a: Sql, b: Sql): Sql;
  /** whether `checkInt` and `checkFloat` bind their values in a subquery (then their aggregates must read a column) */
  readonly bindsChecked: boolean;
  /** text read as a date-time in the stored form, NULL when it is not one */
  textToDateTime(text: Sql): Sql;
  /**
   * For a store whose stored time key (`StoredTime`, ../storage/events/store.ts) is this dialect's
   * own date-time (ClickHouse: the DateTime64 `timestamp`): the Sunday (mode 0) or the first of
   * the month that starts a key's week or month, as a date value that orders as its text
   * (NULL before 0001-01-01), and that value's `YYYY-MM-DD` text. Undefined: computed from the text.
   */
  readonly timeKeyDates?: { startOf(key: Sql, unit: 'week' | 'month'): Sql; text(date: Sql): Sql };
  /** the Sunday (mode 0) that starts the week of a Date or DateTime, as a Date */
  startOfWeek(value: Sql): Sql;
  /**
   * A DateTime (`date` false) or Date (`date` true) moved by `sign * interval`; months, quarters and
   * years clamp to the last day of the month (2024-01-31 + 1 month = 2024-02-29), as ClickHouse.
   */
  addInterval(value: Sql, interval: Interval, sign: 1 | -1, date: boolean): Sql;
  /** length in UTF-8 bytes (an Int64, as every Int of the compiler) */
  byteLength(text: Sql): Sql;
  /** `a / b` as a Float, NULL when b is 0 */
  divide(a: Sql, b: Sql): Sql;
  /** `a % b`, NULL when b is 0 */
  modulo(a: Sql, b: Sql): Sql;
  /** RE2-checked pattern match (unanchored); `ignoreCase` for `=~*` */
  regexMatch(text: Sql, pattern: string, ignoreCase: boolean): Sql;
  /**
   * Sum of an Int (`isFloat` false) or Float column; 0 over no rows. Exact whatever the order of the
   * rows: Ints fail with the Int64 overflow only when the total leaves Int64; Floats are added as
   * the exact decimals of their shortest text (`0.1 + 0.2 = 0.3`) and the total is rounded once,
   * failing with the Float range error beyond the doubles.
   */
  sum(value: Sql, isFloat: boolean): Sql;
  /** average as a Float: the exact sum (as `sum`) rounded to a double, divided by the count; NULL over no rows */
  avg(value: Sql, isFloat: boolean): Sql;
}
