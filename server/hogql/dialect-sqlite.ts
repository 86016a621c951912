/**
 * HogQL's SQL for SQLite (`./dialect.ts` says what each function answers). JSON through SQLite's
 * JSON1 (`../storage/dialect.ts`), regular expressions through the RE2 `regexp` function the store
 * registers, dates through `strftime` on the stored text form.
 */
import { sql } from 'kysely';
import { jsonText, regexMatch, textToNumber, textToTimestamp } from '../storage/dialect.js';
import type { HogQLDialect, Sql } from './dialect.js';
import type { Interval } from './types.js';

/** Text that reads as an ISO 8601 date or date-time (the same test as PostgreSQL's `textToTimestamp`). */
const ISO_LIKE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?$';

/** SQLite's date modifier for an interval (`+7 days`); weeks and quarters as days and months. */
function modifier(interval: Interval, sign: 1 | -1): string {
  const { unit } = interval;
  let n = interval.n * sign;
  let name: string = unit;
  if (unit === 'week') [n, name] = [n * 7, 'day'];
  if (unit === 'quarter') [n, name] = [n * 3, 'month'];
  return `${n >= 0 ? '+' : ''}${n} ${name}s`;
}

/** The SQLite dialect of HogQL. */
export const sqliteDialect: HogQLDialect = {
  name: 'sqlite',
  str: (v) => sql`${v}`,
  int: (v) => sql`cast(${v} as integer)`,
  float: (v) => sql`cast(${v} as real)`,
  bool: (v) => sql`${v ? 1 : 0}`,
  trueSql: sql`1`,
  falseSql: sql`0`,
  // the RE2 `regexp` function answers a JavaScript number, which SQLite may hold as a REAL 1.0
  boolValue: (c) => sql`cast(${c} as integer)`,
  text: (e) => e,
  jsonText: (source, key) => jsonText('sqlite', source, key),
  jsonWhole: (source) => sql`(${source})`,
  timestampColumn: (c) => sql`(substr(${c}, 1, 23) || '000Z')`,
  textToFloat: (t) => textToNumber('sqlite', t),
  textToInt: (t) => sql`(case when ${t} regexp '^ *-?[0-9]{1,18} *$' then cast(${t} as integer) end)`,
  floatToInt: (v) => sql`cast(${v} as integer)`,
  toFloat: (v) => sql`cast(${v} as real)`,
  numberToText: (v, isFloat) => (isFloat ? sql`(case when ${v} = cast(${v} as integer) and abs(${v}) < 1e15 then cast(cast(${v} as integer) as text) else cast(${v} as text) end)` : sql`cast(cast(${v} as integer) as text)`),
  // only ISO-looking text, as PostgreSQL's (SQLite's strftime also reads numbers as Julian days)
  textToDateTime: (t) => sql`(case when ${t} regexp ${ISO_LIKE} then ${textToTimestamp('sqlite', t)} || '000Z' end)`,
  startOfWeek: (v) => sql`date(substr(${v}, 1, 10), '-' || strftime('%w', substr(${v}, 1, 10)) || ' days')`,
  addInterval: (v, interval, sign, date) =>
    date
      ? sql`date(${v}, ${modifier(interval, sign)})`
      : sql`(strftime('%Y-%m-%dT%H:%M:%S', substr(${v}, 1, 19), ${modifier(interval, sign)}) || substr(${v}, 20))`,
  byteLength: (t) => sql`length(cast(${t} as blob))`,
  divide: (a, b) => sql`(cast(${a} as real) / nullif(${b}, 0))`,
  modulo: (a, b) => sql`(${a} % nullif(${b}, 0))`,
  regexMatch: (t, p, ignoreCase) => regexMatch('sqlite', t, ignoreCase ? `(?i)${p}` : p) as Sql,
  sum: (v, isFloat) => (isFloat ? sql`coalesce(sum(${v}), 0.0)` : sql`coalesce(sum(${v}), 0)`),
  avg: (v) => sql`avg(${v})`,
};
