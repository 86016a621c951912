/**
 * HogQL's SQL for SQLite (`./dialect.ts` says what each function answers). JSON through SQLite's
 * JSON1 (`../storage/dialect.ts`), dates through `strftime` on the stored text form. Besides
 * SQLite's built-in functions, only those every connection of the store registers
 * (../storage/sqlite-functions.ts: RE2 `regexp`, the exact sums, `range_error`) are used, so that
 * every connection (the read pool's too) runs the same SQL.
 */
import { sql } from 'kysely';
import { regexMatch } from '../storage/dialect.js';
import { textToNumber, textToTimestamp, timestampColumnText } from '../storage/text-values.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { floatText, plainNumber, type TextSql } from './text-forms.js';
import type { Interval } from './types.js';

/** A date or date-time text, NULL when its year is 0000 or earlier (SQLite writes them; PostgreSQL has no year 0). */
function fromYear1(x: Sql): Sql {
  return sql`nullif(max(${x}, '0000-99'), '0000-99')`;
}

/** Fails the statement with SQLite's own "integer overflow" (abs() of the smallest Int64). */
const OVERFLOW = sql`abs(-9223372036854775807 - 1)`;

/** SQLite's date modifier for an interval (`+7 days`); weeks and quarters as days and months. */
function modifier(interval: Interval, sign: 1 | -1): string {
  const { unit } = interval;
  let n = interval.n * sign;
  let name: string = unit;
  if (unit === 'week') [n, name] = [n * 7, 'day'];
  if (unit === 'quarter') [n, name] = [n * 3, 'month'];
  return `${n >= 0 ? '+' : ''}${n} ${name}s`;
}

/** The text primitives of ./text-forms.ts. */
const text: TextSql = {
  instr: (t, needle) => sql`instr(${t}, ${needle})`,
  zeros: (n) => sql`replace(hex(zeroblob(${n})), '00', '0')`,
  double: (literal) => sql.raw(literal),
  int: (v) => sql`cast(${v} as integer)`,
  log10: (v) => sql`log10(${v})`,
  readsAs: (digits, exp, a) => sql`(cast(${digits} || 'e' || cast(${exp} as text) as real) = ${a})`,
  bind: (values, body) => {
    const names = Object.keys(values);
    const refs = Object.fromEntries(names.map((n) => [n, sql.ref(`h_${n}`)]));
    // a subquery without FROM is never flattened: each value is computed once
    return sql`(select ${body(refs)} from (select ${sql.join(names.map((n) => sql`${values[n]} as ${sql.ref(`h_${n}`)}`))}) as h)`;
  },
};

/** SQLite's JSON path for one top-level key, and whether the key needs json_each instead (as ../storage/dialect.ts). */
function pathOf(key: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are what SQLite's JSON paths cannot quote
  return /["\\\u0000-\u001f\u007f]/.test(key) ? undefined : `$."${key}"`;
}

/**
 * JSON text (an object or array) in the canonical form (`HogQLDialect.jsonText`): every value is
 * visited (a recursive CTE over json_each), given a sort key that puts object keys in jsonb's order
 * (byte length, then bytes) and array items in their order, and written as one token; containers
 * close after their last descendant (sort key + `~`).
 */
function canonical(json: Sql): Sql {
  const seg = sql`(case when n.type = 'object' then printf('%010d', length(cast(e.key as blob))) || hex(e.key) else printf('%010d', e.key) end)`;
  const number = plainNumber(text, sql.ref('v'));
  return sql`(with recursive n(sk, psk, lbl, type, v) as (
    select '', null, '', json_type(${json}), ${json}
    union all
    select n.sk || ${seg}, n.sk, (case when n.type = 'object' then json_quote(e.key) || ':' else '' end), e.type,
      (case when e.type = 'text' then json_quote(e.value) else n.v -> e.fullkey end)
    from n, json_each(n.v) e where n.type in ('object', 'array')
  ) select group_concat(tok, '' order by k) from (
    select sk as k, (case when row_number() over (partition by psk order by sk) > 1 then ',' else '' end) || lbl
      || (case when type in ('integer', 'real') then ${number} when type = 'object' then '{' when type = 'array' then '[' else v end) as tok from n
    union all
    select sk || '~', (case type when 'object' then '}' else ']' end) from n where type in ('object', 'array')
  ))`;
}

/** A number, object or array value (its JSON text, its json_type) in the canonical text of `HogQLDialect.jsonText`. */
function jsonValue(json: Sql, type: Sql): Sql {
  return sql`(case when ${type} in ('integer', 'real') then ${plainNumber(text, json)} else ${canonical(json)} end)`;
}

/** The SQLite dialect of HogQL. */
export const sqliteDialect: HogQLDialect = {
  name: 'sqlite',
  str: (v) => sql`${v}`,
  int: (v) => sql`cast(${v} as integer)`,
  float: (v) => sql`cast(${v} as real)`,
  bool: (v) => sql`${v ? 1 : 0}`,
  opaque: (v) => v,
  trueSql: sql`1`,
  falseSql: sql`0`,
  // the RE2 `regexp` function answers a JavaScript number, which SQLite may hold as a REAL 1.0
  boolValue: (c) => sql`cast(${c} as integer)`,
  text: (e) => e,
  jsonText: (source, key) => {
    const path = pathOf(key);
    // a key SQLite's path cannot quote: found through json_each, as ../storage/dialect.ts reads it
    if (path === undefined) {
      return sql`(select (case e.type when 'text' then e.value when 'null' then null when 'true' then 'true' when 'false' then 'false' else ${jsonValue(sql`(${source} -> e.fullkey)`, sql`e.type`)} end) from json_each(${source}) e where e.key = ${key})`;
    }
    const type = sql`json_type(${source}, ${path})`;
    // (an integer's literal has no exponent: it is the text as it is)
    return sql`(case coalesce(${type}, 'null') when 'text' then json_extract(${source}, ${path}) when 'integer' then (${source} -> ${path}) when 'null' then null when 'true' then 'true' when 'false' then 'false' else ${jsonValue(sql`(${source} -> ${path})`, type)} end)`;
  },
  jsonCanonical: (json) => canonical(json),
  // json(): events.properties is stored as JSONB (storage/events/property-sets.ts `eventPropertiesIn`); the text
  // of persons.properties and of older events comes back as it is
  jsonWhole: (source) => sql`json(${source})`,
  timestampColumn: (c) => timestampColumnText('sqlite', c),
  textToFloat: (t) => textToNumber('sqlite', t),
  textToInt: (t) => sql`(case when ${t} regexp '^ *-?[0-9]{1,18} *$' then cast(${t} as integer) end)`,
  // SQLite's cast saturates at Int64's ends: out of range is NULL instead, as on PostgreSQL
  floatToInt: (v) => sql`(case when ${v} >= -9223372036854775808.0 and ${v} < 9223372036854775808.0 then cast(${v} as integer) end)`,
  toFloat: (v) => sql`cast(${v} as real)`,
  intToText: (v) => sql`cast(cast(${v} as integer) as text)`,
  floatToText: (v) =>
    text.bind({ x: v }, ({ x }) => sql`(case when ${x} is null then null when ${x} = 0 then '0' else ${floatText(text, x!)} end)`),
  bindsChecked: true,
  // the error's argument is the value, so that SQLite cannot run it as a constant once per statement
  checkFloat: (op, a, b) =>
    text.bind({ a, b }, ({ a, b }) => {
      const r = op === '/' ? sql`(cast(${a} as real) / nullif(${b}, 0))` : sql`(cast(${a} as real) ${sql.raw(op)} ${b})`;
      const under = op === '*' ? sql`${a} != 0 and ${b} != 0` : op === '/' ? sql`${a} != 0` : undefined;
      return sql`(case when abs(${r}) > 1.7976931348623157e308 then range_error('overflow', ${r})${under ? sql` when ${r} = 0 and ${under} then range_error('underflow', ${r})` : sql``} else ${r} end)`;
    }),
  checkInt: (raw) => text.bind({ v: raw }, ({ v }) => sql`(case when typeof(${v}) = 'real' then ${OVERFLOW} else ${v} end)`),
  textToDateTime: (t) => sql`(${textToTimestamp('sqlite', t)} || '000Z')`,
  startOfWeek: (v) => fromYear1(sql`date(substr(${v}, 1, 10), '-' || strftime('%w', substr(${v}, 1, 10)) || ' days')`),
  // 'floor': a day the month does not have (Jan 31 + 1 month) is the month's last, not a day of the next
  // (past 9999, SQLite's date functions answer NULL)
  addInterval: (v, interval, sign, date) =>
    date
      ? fromYear1(sql`date(${v}, ${modifier(interval, sign)}, 'floor')`)
      : sql`(${fromYear1(sql`strftime('%Y-%m-%dT%H:%M:%S', substr(${v}, 1, 19), ${modifier(interval, sign)}, 'floor')`)} || substr(${v}, 20))`,
  byteLength: (t) => sql`length(cast(${t} as blob))`,
  divide: (a, b) => sql`(cast(${a} as real) / nullif(${b}, 0))`,
  modulo: (a, b) => sql`(${a} % nullif(${b}, 0))`,
  regexMatch: (t, p, ignoreCase) => regexMatch('sqlite', t, ignoreCase ? `(?i)${p}` : p) as Sql,
  // exact, whatever the order of the rows (../storage/sqlite-functions.ts), as PostgreSQL's numeric sums
  sum: (v, isFloat) => (isFloat ? sql`coalesce(exact_sum_float(${v}), 0.0)` : sql`coalesce(exact_sum_int(${v}), 0)`),
  avg: (v) => sql`(exact_sum_float(${v}) / nullif(count(${v}), 0))`,
};
