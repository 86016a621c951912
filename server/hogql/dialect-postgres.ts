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

/** The smallest decimal that float8 input refuses as too large (2^1024 − 2^970, the midpoint above the largest double). */
const FLOAT8_OVERFLOW =
  '179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792';

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
    const value = sql`(${source} -> ${key}::text)`;
    return sql`(case when jsonb_typeof(${value}) in ('object', 'array') then ${compact(sql`(${value})::text`)} else ${jsonText('postgres', source, key)} end)`;
  },
  jsonCanonical: (json) => compact(sql`((${json})::jsonb)::text`),
  jsonWhole: (source) => sql`((${source})::text)`,
  timestampColumn: (c) => sql`(to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') collate "C")`,
  textToFloat: (t) => textToNumber('postgres', t),
  textToInt: (t) => sql`(case when ${t} ~ '^ *-?[0-9]{1,18} *$' then (${t})::bigint end)`,
  floatToInt: (v) => sql`(case when ${v} >= -9223372036854775808.0::float8 and ${v} < 9223372036854775808.0::float8 then trunc(${v})::bigint end)`,
  toFloat: (v) => sql`((${v})::float8)`,
  intToText: (v) => sql`((${v})::bigint::text collate "C")`,
  floatToText: (v) => text.bind({ x: sql`(${v})::float8` }, ({ x }) => sql`((case when ${x} is null then null when ${x} = 0 then '0' else ${floatText(text, x!)} end) collate "C")`),
  checkInt: (raw) => raw,
  checkIntBinds: false,
  textToDateTime: (t) => sql`((${textToTimestamp('postgres', t)} || '000Z') collate "C")`,
  startOfWeek: (v) => sql`(to_char((substr(${v}, 1, 10))::date - extract(dow from (substr(${v}, 1, 10))::date)::int, 'YYYY-MM-DD') collate "C")`,
  addInterval: (v, interval, sign, date) => {
    const { n, unit } = unitOf(interval);
    const step = sql`(${n * sign}::int * ${sql.raw(`interval '1 ${unit}'`)})`;
    return date
      ? sql`(to_char((${v})::date + ${step}, 'YYYY-MM-DD') collate "C")`
      : sql`((to_char((substr(${v}, 1, 19))::timestamp + ${step}, 'YYYY-MM-DD"T"HH24:MI:SS') || substr(${v}, 20)) collate "C")`;
  },
  byteLength: (t) => sql`octet_length(${t})::bigint`,
  divide: (a, b) => sql`((${a})::float8 / nullif((${b})::float8, 0))`,
  modulo: (a, b) => sql`(${a} % nullif(${b}, 0))`,
  // `~*` rather than a `(?i)` prefix: PostgreSQL takes embedded options only once, at the start
  regexMatch: (t, p, ignoreCase) => (ignoreCase ? sql`(${t} ~* ${p})` : (regexMatch('postgres', t, p) as Sql)),
  sum: (v, isFloat) => (isFloat ? sql`coalesce(sum(${v}), 0)::float8` : sql`coalesce(sum(${v}), 0)::bigint`),
  avg: (v) => sql`avg((${v})::float8)`,
};
