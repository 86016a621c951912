/**
 * What the HogQL compiler asks of a store's SQL: one interface, one module per store
 * (`./dialect-sqlite.ts`, `./dialect-postgres.ts`). Every value reaches SQL as a bound parameter;
 * the SQL text only ever holds what these functions write. Types are held as `./types.ts` says.
 */
import type { RawBuilder } from 'kysely';
import type { DialectName } from '../storage/dialect.js';
import type { Interval } from './types.js';

/** Raw SQL as the compiler composes it. */
export type Sql = RawBuilder<unknown>;

/** The SQL a store needs for HogQL's subset. */
export interface HogQLDialect {
  name: DialectName;
  /** a string value (bound) */
  str(value: string): Sql;
  /** an integer value (bound) */
  int(value: number): Sql;
  /** a float value (bound) */
  float(value: number): Sql;
  /** a boolean value (bound) */
  bool(value: boolean): Sql;
  /** the SQL literals for conditions' defaults */
  readonly trueSql: Sql;
  readonly falseSql: Sql;
  /** a condition as a 0/1 value (for SELECT, arithmetic, comparisons of booleans) */
  boolValue(cond: Sql): Sql;
  /** a text column or expression that orders and compares byte by byte */
  text(expr: Sql): Sql;
  /** the property `key` of a JSON object column as text (PostHog's rule: strings unquoted, missing/null → NULL) */
  jsonText(source: Sql, key: string): Sql;
  /** a whole JSON object column as JSON text (normalised after reading) */
  jsonWhole(source: Sql): Sql;
  /** a timestamp column that the store holds natively (persons.created_at, events.created_at) in the stored text form */
  timestampColumn(column: Sql): Sql;
  /** text parsed as a number (Float), NULL when it is not one */
  textToFloat(text: Sql): Sql;
  /** text parsed as an integer (Int), NULL when it is not one */
  textToInt(text: Sql): Sql;
  /** a number truncated toward zero to an Int */
  floatToInt(value: Sql): Sql;
  /** an Int/Float as a Float */
  toFloat(value: Sql): Sql;
  /** a number as text (`3`, `1.5`) */
  numberToText(value: Sql, isFloat: boolean): Sql;
  /** text read as a date-time in the stored form, NULL when it is not one */
  textToDateTime(text: Sql): Sql;
  /** the Sunday (mode 0) that starts the week of a Date or DateTime, as a Date */
  startOfWeek(value: Sql): Sql;
  /** a DateTime (`date` false) or Date (`date` true) moved by `sign * interval` */
  addInterval(value: Sql, interval: Interval, sign: 1 | -1, date: boolean): Sql;
  /** length in UTF-8 bytes */
  byteLength(text: Sql): Sql;
  /** `a / b` as a Float, NULL when b is 0 */
  divide(a: Sql, b: Sql): Sql;
  /** `a % b`, NULL when b is 0 */
  modulo(a: Sql, b: Sql): Sql;
  /** RE2-checked pattern match (unanchored); `ignoreCase` for `=~*` */
  regexMatch(text: Sql, pattern: string, ignoreCase: boolean): Sql;
  /** sum of an Int (`isFloat` false) or Float column; 0 over no rows */
  sum(value: Sql, isFloat: boolean): Sql;
  /** average as a Float */
  avg(value: Sql): Sql;
}
