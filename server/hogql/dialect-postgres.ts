/**
 * HogQL's SQL for PostgreSQL (`./dialect.ts` says what each function answers). `text()` adds
 * `collate "C"`, which the compiler puts where text is ordered (`<`, ORDER BY, min/max, lower/upper)
 * so that order is byte order, as in ClickHouse, whatever the database's collation; columns and
 * equality keep theirs, so the events' indexes serve `event = …`. Parameters carry their types
 * (PostgreSQL cannot infer `$1 = $2`); numbers are bigint and float8.
 */
import { sql } from 'kysely';
import { jsonText, regexMatch, textToNumber, textToTimestamp } from '../storage/dialect.js';
import type { HogQLDialect, Sql } from './dialect.js';
import type { Interval } from './types.js';

/** PostgreSQL's interval unit for one of HogQL's. */
function unitOf(interval: Interval): { n: number; unit: string } {
  if (interval.unit === 'week') return { n: interval.n * 7, unit: 'day' };
  if (interval.unit === 'quarter') return { n: interval.n * 3, unit: 'month' };
  return { n: interval.n, unit: interval.unit };
}

/** The PostgreSQL dialect of HogQL. */
export const postgresDialect: HogQLDialect = {
  name: 'postgres',
  str: (v) => sql`${v}::text`,
  int: (v) => sql`${v}::bigint`,
  float: (v) => sql`${v}::float8`,
  bool: (v) => sql`${v}::boolean`,
  trueSql: sql`true`,
  falseSql: sql`false`,
  boolValue: (c) => sql`((${c})::int)`,
  text: (e) => sql`(${e} collate "C")`,
  jsonText: (source, key) => jsonText('postgres', source, key),
  jsonWhole: (source) => sql`((${source})::text)`,
  timestampColumn: (c) => sql`(to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') collate "C")`,
  textToFloat: (t) => textToNumber('postgres', t),
  textToInt: (t) => sql`(case when ${t} ~ '^ *-?[0-9]{1,18} *$' then (${t})::bigint end)`,
  floatToInt: (v) => sql`(case when abs(${v}) < 9.2e18 then trunc(${v})::bigint end)`,
  toFloat: (v) => sql`((${v})::float8)`,
  numberToText: (v) => sql`((${v})::text collate "C")`,
  textToDateTime: (t) => sql`((${textToTimestamp('postgres', t)} || '000Z') collate "C")`,
  startOfWeek: (v) => sql`(to_char((substr(${v}, 1, 10))::date - extract(dow from (substr(${v}, 1, 10))::date)::int, 'YYYY-MM-DD') collate "C")`,
  addInterval: (v, interval, sign, date) => {
    const { n, unit } = unitOf(interval);
    const step = sql`(${n * sign}::int * ${sql.raw(`interval '1 ${unit}'`)})`;
    return date
      ? sql`(to_char((${v})::date + ${step}, 'YYYY-MM-DD') collate "C")`
      : sql`((to_char((substr(${v}, 1, 19))::timestamp + ${step}, 'YYYY-MM-DD"T"HH24:MI:SS') || substr(${v}, 20)) collate "C")`;
  },
  byteLength: (t) => sql`octet_length(${t})`,
  divide: (a, b) => sql`((${a})::float8 / nullif((${b})::float8, 0))`,
  modulo: (a, b) => sql`(${a} % nullif(${b}, 0))`,
  // `~*` rather than a `(?i)` prefix: PostgreSQL takes embedded options only once, at the start
  regexMatch: (t, p, ignoreCase) => (ignoreCase ? sql`(${t} ~* ${p})` : (regexMatch('postgres', t, p) as Sql)),
  sum: (v, isFloat) => (isFloat ? sql`coalesce(sum(${v}), 0)::float8` : sql`coalesce(sum(${v}), 0)::bigint`),
  avg: (v) => sql`avg((${v})::float8)`,
};
