/**
 * HogQL's SQL for PostgreSQL (`./dialect.ts` says what each function answers). `text()` adds
 * `collate "C"`, which the compiler puts where text is ordered (`<`, ORDER BY, min/max, lower/upper)
 * so that order is byte order, as in ClickHouse, whatever the database's collation; columns and
 * equality keep theirs, so the events' indexes serve `event = …`. Parameters carry their types
 * (PostgreSQL cannot infer `$1 = $2`); numbers are bigint and float8.
 */
import { sql } from 'kysely';
import { jsonText, regexMatch } from '../storage/dialect.js';
import { FLOAT8_OVERFLOW, textToNumber, textToTimestamp, timestampColumnText } from '../storage/text-values.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { floatText, type TextSql } from './text-forms.js';
import type { Interval } from './types.js';

/**
 * jsonb's text without the space it writes after `,` and `:` (strings are matched whole and kept),
 * the compact form SQLite and ClickHouse write: `{"a": [1, "x, y"]}` → `{"a":[1,"x, y"]}`.
 */
const COMPACT = '("(?:[^"\\\\]|\\\\.)*")|([,:]) ';

/** PostgreSQL's interval unit for one of HogQL's. */
function unitOf(interval: Interval): { n: number; unit: string } {
  if (interval.unit === 'week') return { n: interval.n * 7, unit: 'day' };
  if (interval.unit === 'quarter') return { n: interval.n * 3, unit: 'month' };
  return { n: interval.n, unit: interval.unit };
}

/**
 * A timestamp or date written by `to_char` with `format`, NULL outside the years 0001–9999
 * (to_char writes a year BC without its era, and a fifth digit past 9999).
 */
function fromYear1(value: Sql, format: string): Sql {
  return sql`(substring(to_char(${value}, ${sql.lit(`${format} BC`)}) from '^([0-9]{4}-[^ ]*) AD$') collate "C")`;
}

/** The text primitives of ./text-forms.ts. */
const text: TextSql = {
  instr: (t, needle) => sql`strpos(${t}, ${needle})`,
  zeros: (n) => sql`repeat('0', ${n})`,
  double: (literal) => sql.raw(`${literal}::float8`),
  int: (v) => sql`(${v})::bigint`,
  log10: (v) => sql`log(${v})`,
  // float8 input fails beyond the largest double (SQLite reads Infinity, which equals no value)
  readsAs: (digits, exp, a) => {
    const literal = sql`(${digits} || 'e' || cast(${exp} as text))`;
    const top = sql`(length(${digits}) - 1 + ${exp})`;
    return sql`(case when ${top} > 308 then false when ${top} = 308 and ${literal}::numeric >= ${FLOAT8_OVERFLOW}::numeric then false else ${literal}::float8 = ${a} end)`;
  },
  bind: (values, body) => {
    const names = Object.keys(values);
    const refs = Object.fromEntries(names.map((n) => [n, sql.ref(`h_${n}`)]));
    // OFFSET 0 keeps the planner from pulling the subquery up (which would copy each value into every use)
    return sql`(select ${body(refs)} from (select ${sql.join(names.map((n) => sql`${values[n]} as ${sql.ref(`h_${n}`)}`))} offset 0) as h)`;
  },
};

/** jsonb text in the compact form (see COMPACT). */
function compact(jsonbText: Sql): Sql {
  return sql`regexp_replace(${jsonbText}, ${COMPACT}, '\\1\\2', 'g')`;
}

/** The PostgreSQL dialect of HogQL. */
export const postgresDialect: HogQLDialect = {
  name: 'postgres',
  str: (v) => sql`${v}::text`,
  int: (v) => sql`${v}::bigint`,
  float: (v) => sql`${v}::float8`,
  bool: (v) => sql`${v}::boolean`,
  opaque: (v) => sql`(select ${v})`,
  trueSql: sql`true`,
  falseSql: sql`false`,
  boolValue: (c) => sql`((${c})::int)`,
  text: (e) => sql`(${e} collate "C")`,
  // numbers are jsonb's numeric text already; objects and arrays are made compact
  jsonText: (source, key) => {
    if (key.includes('\u0000')) return jsonText('postgres', source, key);
    // through jsonb: HogQL writes objects with jsonb's key order on every store (./dialect.ts)
    const value = sql`((${source})::jsonb -> ${key}::text)`;
    // any other value: jsonb's own text (what the storage's jsonText answers for it), without checking its type again
    return sql`(case when jsonb_typeof(${value}) in ('object', 'array') then ${compact(sql`(${value})::text`)} else ((${source})::jsonb ->> ${key}::text) end)`;
  },
  jsonCanonical: (json) => compact(sql`((${json})::jsonb)::text`),
  jsonWhole: (source) => sql`((${source})::text)`,
  timestampColumn: (c) => timestampColumnText('postgres', c),
  textToFloat: (t) => textToNumber('postgres', t),
  textToInt: (t) => sql`(case when ${t} ~ '^ *-?[0-9]{1,18} *$' then (${t})::bigint end)`,
  floatToInt: (v) =>
    sql`(case when ${v} >= -9223372036854775808.0::float8 and ${v} < 9223372036854775808.0::float8 then trunc(${v})::bigint end)`,
  toFloat: (v) => sql`((${v})::float8)`,
  intToText: (v) => sql`((${v})::bigint::text collate "C")`,
  floatToText: (v) =>
    text.bind(
      { x: sql`(${v})::float8` },
      ({ x }) => sql`((case when ${x} is null then null when ${x} = 0 then '0' else ${floatText(text, x!)} end) collate "C")`,
    ),
  checkInt: (raw) => raw,
  checkFloat: (op, a, b) => (op === '/' ? postgresDialect.divide(a, b) : sql`((${a})::float8 ${sql.raw(op)} (${b})::float8)`),
  bindsChecked: false,
  textToDateTime: (t) => sql`((${textToTimestamp('postgres', t)} || '000Z') collate "C")`,
  startOfWeek: (v) => fromYear1(sql`((substr(${v}, 1, 10))::date - extract(dow from (substr(${v}, 1, 10))::date)::int)`, 'YYYY-MM-DD'),
  addInterval: (v, interval, sign, date) => {
    const { n, unit } = unitOf(interval);
    const step = sql`(${n * sign}::int * ${sql.raw(`interval '1 ${unit}'`)})`;
    const moved = date
      ? fromYear1(sql`((${v})::date + ${step})`, 'YYYY-MM-DD')
      : sql`((${fromYear1(sql`((substr(${v}, 1, 19))::timestamp + ${step})`, 'YYYY-MM-DD"T"HH24:MI:SS')} || substr(${v}, 20)) collate "C")`;
    // months and years can leave PostgreSQL's range (4713 BC – 294276 AD), where it fails: a month
    // outside the years 0001–9999 is NULL before it is computed (days and smaller, at most 100,000
    // weeks, stay within the range from any stored date)
    const months = unit === 'month' ? n * sign : unit === 'year' ? 12 * n * sign : 0;
    if (months === 0) return moved;
    return sql`(case when substr(${v}, 1, 4)::int * 12 + substr(${v}, 6, 2)::int - 1 + ${months}::int between 12 and 119999 then ${moved} end)`;
  },
  byteLength: (t) => sql`octet_length(${t})::bigint`,
  divide: (a, b) => sql`((${a})::float8 / nullif((${b})::float8, 0))`,
  modulo: (a, b) => sql`(${a} % nullif(${b}, 0))`,
  // `~*` rather than a `(?i)` prefix: PostgreSQL takes embedded options only once, at the start
  regexMatch: (t, p, ignoreCase) => (ignoreCase ? sql`(${t} ~* ${p})` : (regexMatch('postgres', t, p) as Sql)),
  // exact in numeric, whatever the order of the rows: a Float as the decimal of its shortest text
  // (float8::numeric would keep 15 digits), the total rounded to a double once
  sum: (v, isFloat) => (isFloat ? sql`coalesce(sum((${v})::float8::text::numeric), 0)::float8` : sql`coalesce(sum(${v}), 0)::bigint`),
  avg: (v, isFloat) => sql`(sum((${v})${sql.raw(isFloat ? '::float8::text::numeric' : '')})::float8 / nullif(count(${v}), 0))`,
};
