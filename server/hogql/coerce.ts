/**
 * Conversions between HogQL's types in SQL, as HogQL and ClickHouse make them: a value as a
 * condition, as a 0/1 value, as text (`toString`), as a date-time; and the date arithmetic that
 * folds at compile time when its operands are constants (`now() - interval 7 day`).
 */
import { sql } from 'kysely';
import { parseIsoTimestamp, formatTimestamp } from '../storage/timestamps.js';
import type { Sql } from './dialect.js';
import type { AstNode } from './parser.js';
import { fail, make, type Scope } from './scope.js';
import { isDateTime, isNumeric, isText, type Compiled, type Interval } from './types.js';

/** The expression as a SQL condition (Bool as it is; numbers `<> 0`; NULL is false). */
export function asCondition(scope: Scope, c: Compiled, node: AstNode | undefined): Sql {
  const d = scope.dialect;
  if (c.type === 'Null') return d.falseSql;
  if (c.type === 'Bool') return c.nullable ? sql`coalesce(${c.sql}, ${d.falseSql})` : c.sql;
  if (isNumeric(c.type)) return sql`coalesce((${c.sql}) <> 0, ${d.falseSql})`;
  return fail(scope, node, `A condition must be a comparison or a number, not ${c.type}`);
}

/** The expression as a value (a Bool becomes 0/1). */
export function asValue(scope: Scope, c: Compiled): Sql {
  return c.type === 'Bool' ? scope.dialect.boolValue(c.sql) : c.sql;
}

/** A Bool compiled expression from a condition. */
export function condition(sqlText: Sql, key: string, parts: readonly Compiled[]): Compiled {
  return make(sqlText, 'Bool', false, key, parts);
}

/**
 * The expression as text, as ClickHouse's `toString` writes it (DateTime `YYYY-MM-DD HH:MM:SS`,
 * a Float as JavaScript's `String(x)`: ./text-forms.ts, a whole properties object as compact JSON).
 */
export function asText(scope: Scope, c: Compiled, node: AstNode | undefined): Sql {
  const d = scope.dialect;
  if (isText(c.type)) return c.sql;
  if (c.type === 'Null') return sql`null`;
  if (c.type === 'Bool') return d.intToText(d.boolValue(c.sql));
  // the caller passes a Float bindable in a subquery (`bindable`)
  if (c.type === 'Float') return d.floatToText(c.sql);
  if (isNumeric(c.type)) return d.intToText(c.sql);
  if (c.type === 'DateTime64') return d.text(sql`replace(substr(${c.sql}, 1, 26), 'T', ' ')`);
  if (c.type === 'DateTime') return d.text(sql`replace(substr(${c.sql}, 1, 19), 'T', ' ')`);
  if (c.type === 'Date') return c.sql;
  if (c.type === 'JSON') return d.jsonCanonical(c.sql);
  return fail(scope, node, `${c.type} cannot be converted to a String`);
}

/** A constant string read as a DateTime in the stored form; throws when it is not a date-time. */
export function constantDateTime(scope: Scope, text: string, node: AstNode | undefined): string {
  const parsed = parseIsoTimestamp(text);
  if (!parsed) return fail(scope, node, `Cannot parse "${text}" as a DateTime (use YYYY-MM-DD or YYYY-MM-DD HH:MM:SS, UTC)`);
  return parsed.value;
}

/** The expression as a DateTime in the stored text form (Date at midnight; Strings parsed). */
export function asDateTime(scope: Scope, c: Compiled, node: AstNode | undefined): Sql {
  const d = scope.dialect;
  if (isDateTime(c.type)) return c.sql;
  if (c.type === 'Date') return d.text(sql`(${c.sql} || 'T00:00:00.000000Z')`);
  if (c.type === 'Null') return sql`null`;
  if (isText(c.type)) {
    if (c.constant && typeof c.constant.value === 'string') return d.str(constantDateTime(scope, c.constant.value, node));
    return d.textToDateTime(c.sql);
  }
  return fail(scope, node, `${c.type} cannot be read as a DateTime`);
}

/** The expression as a Date (`YYYY-MM-DD`). */
export function asDate(scope: Scope, c: Compiled, node: AstNode | undefined): Sql {
  const d = scope.dialect;
  if (c.type === 'Date') return c.sql;
  if (c.type === 'Null') return sql`null`;
  if (isText(c.type) && c.constant && typeof c.constant.value === 'string')
    return d.str(constantDateTime(scope, c.constant.value, node).slice(0, 10));
  return d.text(sql`substr(${asDateTime(scope, c, node)}, 1, 10)`);
}

/** `value` (stored form) moved by `sign * interval`, in JavaScript, UTC (months clamp to the month's last day, as ClickHouse). */
export function shiftTimestamp(value: string, interval: Interval, sign: 1 | -1): string {
  const date = new Date(Date.parse(value.slice(0, 23) + 'Z'));
  const n = interval.n * sign;
  const ms: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
  if (interval.unit in ms) return formatTimestamp(new Date(date.getTime() + n * ms[interval.unit]!), value.slice(20, 26));
  const months = interval.unit === 'month' ? n : interval.unit === 'quarter' ? 3 * n : 12 * n;
  // (Date.UTC reads the years 0–99 as 1900–1999: the year is set after the month is moved)
  const utc = (month: number, day: number) => {
    const d = new Date(Date.UTC(2000, 0, 1, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()));
    d.setUTCFullYear(date.getUTCFullYear(), month, day);
    return d;
  };
  const m = date.getUTCMonth() + months;
  const last = utc(m + 1, 0).getUTCDate();
  const moved = utc(m, Math.min(date.getUTCDate(), last));
  return formatTimestamp(moved, value.slice(20, 26));
}
