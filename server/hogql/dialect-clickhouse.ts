/**
 * HogQL's SQL for ClickHouse (`./dialect.ts` says what each function answers): the same answers
 * as SQLite and PostgreSQL (test/hogql/clickhouse.test.ts), where ClickHouse's own functions answer
 * otherwise:
 * - Int64 arithmetic wraps around in ClickHouse: each `+ - *` is computed in Int128 and fails with
 *   `throwIf` outside Int64 (`intOp`), as do Int sums; a Float result beyond the doubles (ClickHouse:
 *   inf) or a product that underflows to 0 fails the same way (`checkFloat`). `./run.ts` turns both
 *   into the other stores' 400s by the messages below. `throwIf(cond)` is written with the
 *   condition as its argument, never in an `if` branch: lambdas evaluate every branch.
 * - Float sums add the exact decimals of each value's shortest text (`toString`), as integers
 *   (Int256) scaled to the group's largest value (70 digits below its first), rounded to a double
 *   once by parsing the decimal (`precise_float_parsing`, set on every read: `READ_SETTINGS` of
 *   ../storage/clickhouse/kysely-dialect.ts).
 * - A Float's text: ClickHouse's `toString` writes JavaScript's shortest digits and notation but
 *   for the `+` of a positive exponent (`1e21`), which is added. (Beyond 1e21 and below 1e-6 the other
 *   stores' ./text-forms.ts may differ from JavaScript in the 17th digit; ClickHouse does not.)
 * - JSON: a text without a plain key's quoted form (`PLAIN_KEY`) has no such key: NULL without a
 *   parse. ClickHouse re-serializes what JSONExtractRaw returns (numbers as doubles), which is the
 *   text JavaScript wrote for every property this server stored; numbers are then written in
 *   PostgreSQL's plain form (`plainNumber`) and objects rebuilt with keys in jsonb's order
 *   (`canonical`, to `JSON_DEPTH` levels).
 * - Dates: DateTime64 covers only 1900–2299, so dates (text, years 0001–9999) are computed with
 *   integer day numbers (Hinnant's days-from-civil and back).
 * - Counts are Int64 (`unsigned`): ClickHouse finds no common type of UInt64 and Int64.
 * - A materialized property is read from its `mat_` column where the column holds the property's
 *   text (`materializedExact`, ../storage/events/clickhouse/table.ts), from the JSON elsewhere.
 * - `uniq(x)` is ClickHouse's `uniq`, as PostHog prints it (the other stores count exactly: the
 *   same answer up to 65,536 distinct values, hash collisions aside), `uniqExact(x)` its `uniqExact`.
 * Values are bound in lambdas (`bind`: `arrayMap((x, y) -> body, [x], [y])[1]`) so that the SQL
 * grows linearly with the expression.
 */
import { sql } from 'kysely';
import { chParam } from '../storage/clickhouse/kysely-dialect.js';
import type { HogQLDialect, Sql } from './dialect.js';
import type { Interval } from './types.js';

/** The messages `./run.ts` maps to the other stores' 400s. */
export const CLICKHOUSE_INT_OVERFLOW = 'envapi: integer overflow';
export const CLICKHOUSE_FLOAT_RANGE = 'envapi: float out of range';

let seq = 0;

/** `body` over `values`, each computed once (a lambda over one-element arrays). */
function bind(values: Record<string, Sql>, body: (refs: Record<string, Sql>) => Sql): Sql {
  const n = ++seq;
  const names = Object.keys(values);
  const refs = Object.fromEntries(names.map((k) => [k, sql.raw(`h${n}_${k}`)]));
  const params = sql.raw(names.map((k) => `h${n}_${k}`).join(', '));
  return sql`arrayMap((${params}) -> ${body(refs)}, ${sql.join(names.map((k) => sql`[${values[k]}]`))})[1]`;
}

/** ⌊a / b⌋ for b > 0 (intDiv truncates toward zero). */
function floorDiv(a: Sql, b: number): Sql {
  return sql`intDiv(${a} - if(${a} < 0, ${sql.raw(String(b - 1))}, 0), ${sql.raw(String(b))})`;
}

/** Days since 1970-01-01 of a civil date (Int64 parts; Hinnant's days_from_civil). */
function daysFromCivil(y: Sql, m: Sql, d: Sql): Sql {
  return bind({ y: sql`(${y} - if(${m} <= 2, 1, 0))`, m, d }, ({ y, m, d }) =>
    bind({ era: floorDiv(y!, 400), y: y!, m: m!, d: d! }, ({ era, y, m, d }) => {
      const yoe = sql`(${y} - ${era} * 400)`;
      const doy = sql`(intDiv(153 * (${m} + if(${m} > 2, -3, 9)) + 2, 5) + ${d} - 1)`;
      return sql`(${era} * 146097 + ${yoe} * 365 + intDiv(${yoe}, 4) - intDiv(${yoe}, 100) + ${doy} - 719468)`;
    }),
  );
}

/** `YYYY-MM-DD` of a day number, NULL outside the years 0001–9999 (Hinnant's civil_from_days). */
function civilText(days: Sql): Sql {
  return bind({ z: sql`(${days} + 719468)` }, ({ z }) =>
    bind({ era: floorDiv(z!, 146097), z: z! }, ({ era, z }) =>
      bind({ doe: sql`(${z} - ${era} * 146097)`, era: era! }, ({ doe, era }) =>
        bind(
          { yoe: sql`intDiv(${doe} - intDiv(${doe}, 1460) + intDiv(${doe}, 36524) - intDiv(${doe}, 146096), 365)`, doe: doe!, era: era! },
          ({ yoe, doe, era }) =>
            bind(
              { doy: sql`(${doe} - (365 * ${yoe} + intDiv(${yoe}, 4) - intDiv(${yoe}, 100)))`, yoe: yoe!, era: era! },
              ({ doy, yoe, era }) =>
                bind({ mp: sql`intDiv(5 * ${doy} + 2, 153)`, doy: doy!, yoe: yoe!, era: era! }, ({ mp, doy, yoe, era }) =>
                  bind(
                    {
                      y: sql`(${yoe} + ${era} * 400 + if(${mp} >= 10, 1, 0))`,
                      m: sql`if(${mp} < 10, ${mp} + 3, ${mp} - 9)`,
                      d: sql`(${doy} - intDiv(153 * ${mp} + 2, 5) + 1)`,
                    },
                    ({ y, m, d }) =>
                      sql`if(${y} between 1 and 9999, concat(leftPad(toString(${y}), 4, '0'), '-', leftPad(toString(${m}), 2, '0'), '-', leftPad(toString(${d}), 2, '0')), NULL)`,
                  ),
                ),
            ),
        ),
      ),
    ),
  );
}

/** `HH:MM:SS` of a second of the day (0–86399). */
function clockText(sod: Sql): Sql {
  const two = (v: Sql) => sql`leftPad(toString(${v}), 2, '0')`;
  return sql`concat(${two(sql`intDiv(${sod}, 3600)`)}, ':', ${two(sql`intDiv(${sod} % 3600, 60)`)}, ':', ${two(sql`(${sod} % 60)`)})`;
}

/** The days in month `m` of year `y`. */
function monthLength(y: Sql, m: Sql): Sql {
  const leap = sql`if(${y} % 4 = 0 and (${y} % 100 != 0 or ${y} % 400 = 0), 1, 0)`;
  return sql`if(${m} = 2, 28 + ${leap}, 30 + (${m} + intDiv(${m}, 8)) % 2)`;
}

/** The year, month and day of a text that begins `YYYY-MM-DD` (0 where they are not digits). */
function ymd(v: Sql, body: (r: Record<string, Sql>) => Sql): Sql {
  return bind(
    {
      y: sql`toInt64OrZero(substr(${v}, 1, 4))`,
      m: sql`toInt64OrZero(substr(${v}, 6, 2))`,
      d: sql`toInt64OrZero(substr(${v}, 9, 2))`,
    },
    body,
  );
}

/** Seconds since 1970 of a stored-form text (`YYYY-MM-DDTHH:MM:SS…`). */
function secondsOf(v: Sql): Sql {
  return ymd(
    v,
    ({ y, m, d }) =>
      sql`(${daysFromCivil(y!, m!, d!)} * 86400 + toInt64OrZero(substr(${v}, 12, 2)) * 3600 + toInt64OrZero(substr(${v}, 15, 2)) * 60 + toInt64OrZero(substr(${v}, 18, 2)))`,
  );
}

/** A second count as `YYYY-MM-DDTHH:MM:SS`, NULL outside the years 0001–9999. */
function secondsText(secs: Sql): Sql {
  return bind({ s: secs }, ({ s }) =>
    bind(
      { day: floorDiv(s!, 86400), s: s! },
      ({ day, s }) => sql`concat(${civilText(day!)}, 'T', ${clockText(sql`(${s} - ${day} * 86400)`)})`,
    ),
  );
}

const SECONDS: Partial<Record<Interval['unit'], number>> = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 };

const DATE_TIME =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?)?(Z|[+-](0[0-9]|1[0-4]):?[0-5][0-9])?$';
const NUMBER = '^ *-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]{1,3})? *$';

/** A JSON number literal in PostgreSQL's numeric form (no exponent; ./text-forms.ts `plainNumber`), robust to any text. */
function plainNumber(literal: Sql): Sql {
  return bind({ b: sql`trimLeft(${literal}, '-')`, neg: sql`startsWith(${literal}, '-')`, l: literal }, ({ b, neg, l }) =>
    bind(
      {
        m: sql`splitByChar('e', lower(${b}))[1]`,
        ex: sql`toInt64OrZero(replaceAll(splitByChar('e', lower(${b}))[2], '+', ''))`,
        neg: neg!,
        l: l!,
      },
      ({ m, ex, neg, l }) =>
        bind(
          {
            ip: sql`splitByChar('.', ${m})[1]`,
            fp: sql`if(position(${m}, '.') > 0, splitByChar('.', ${m})[2], '')`,
            ex: ex!,
            neg: neg!,
            l: l!,
          },
          ({ ip, fp, ex, neg, l }) =>
            bind(
              {
                digits: sql`trimLeft(concat(${ip}, ${fp}), '0')`,
                all: sql`length(concat(${ip}, ${fp}))`,
                ip: ip!,
                ex: ex!,
                neg: neg!,
                l: l!,
              },
              ({ digits, all, ip, ex, neg, l }) =>
                bind(
                  {
                    p: sql`(toInt64(length(${ip})) + ${ex} - (toInt64(${all}) - toInt64(length(${digits}))))`,
                    k: sql`toInt64(length(${digits}))`,
                    digits: digits!,
                    neg: neg!,
                    l: l!,
                  },
                  ({ p, k, digits, neg, l }) => {
                    const body = sql`multiIf(${digits} = '', '0',
                      ${p} >= ${k}, concat(${digits}, repeat('0', toUInt64(greatest(${p} - ${k}, 0)))),
                      ${p} > 0, concat(substr(${digits}, 1, greatest(${p}, 0)), '.', substr(${digits}, greatest(${p}, 0) + 1)),
                      concat('0.', repeat('0', toUInt64(least(greatest(-${p}, 0), 400))), ${digits}))`;
                    return sql`if(position(lower(${l}), 'e') = 0, ${l}, concat(if(${neg} and ${digits} != '', '-', ''), ${body}))`;
                  },
                ),
            ),
        ),
    ),
  );
}

/** `s` as a JSON string literal (quote, backslash and the common control characters escaped). */
function jsonQuote(s: Sql): Sql {
  let out = sql`replaceAll(replaceAll(${s}, '\\\\', '\\\\\\\\'), '"', '\\\\"')`;
  for (const [c, e] of [
    ['\\n', '\\\\n'],
    ['\\r', '\\\\r'],
    ['\\t', '\\\\t'],
    ['\\b', '\\\\b'],
    ['\\f', '\\\\f'],
  ] as const)
    out = sql`replaceAll(${out}, ${sql.raw(`'${c}'`)}, ${sql.raw(`'${e}'`)})`;
  return sql`concat('"', ${out}, '"')`;
}

/**
 * Keys that every JSON writer writes as they are (no escapes: JSON.stringify, SQLite's json(),
 * serde, Python's json; Go escapes `<>&`, PHP `/`), so that a JSON text without `"key"` has no
 * such key (`jsonText`'s shortcut).
 */
const PLAIN_KEY = /^[A-Za-z0-9_$.:@ -]*$/;

/** Nesting levels `canonical` rebuilds; deeper values keep ClickHouse's compact text. */
const JSON_DEPTH = 4;

/**
 * JSON text (any value) in the canonical form of `HogQLDialect.jsonText`. An object's members
 * (keys in jsonb's order, each labelled `"key":`) and an array's items (unlabelled) are one list
 * of (label, value), so each level holds one copy of the next: the SQL grows linearly with
 * `JSON_DEPTH` (ClickHouse's analysis of the query takes time in proportion to its size).
 */
function canonical(json: Sql, depth = JSON_DEPTH): Sql {
  if (depth === 0) return json;
  return bind({ j: json }, ({ j }) => {
    const n = ++seq;
    const [kv, v, m] = [`kv${n}`, `v${n}`, `m${n}`].map((x) => sql.raw(x)) as [Sql, Sql, Sql];
    const object = sql`JSONType(${j}) = 'Object'`;
    const members = sql`if(${object}, arrayMap(${kv} -> (concat(${jsonQuote(sql`tupleElement(${kv}, 1)`)}, ':'), tupleElement(${kv}, 2)),
      arraySort(${kv} -> (length(tupleElement(${kv}, 1)), tupleElement(${kv}, 1)), JSONExtractKeysAndValuesRaw(${j}))),
      arrayMap(${v} -> ('', ${v}), JSONExtractArrayRaw(${j})))`;
    const inner = sql`arrayStringConcat(arrayMap(${m} -> concat(tupleElement(${m}, 1), ${canonical(sql`tupleElement(${m}, 2)`, depth - 1)}), ${members}), ',')`;
    return sql`multiIf(JSONType(${j}) in ('Object', 'Array'), concat(if(${object}, '{', '['), ${inner}, if(${object}, '}', ']')),
      JSONType(${j}) = 'String', ${jsonQuote(sql`JSONExtractString(${j})`)}, JSONType(${j}) in ('Int64', 'UInt64', 'Double'), ${plainNumber(j!)}, ${j})`;
  });
}

/**
 * Whether the value of a `mat_` column (`v`: PostHog's nullable column, `JSONExtract(properties,
 * key, 'Nullable(String)')`, ../storage/clickhouse/schema.ts `materializedColumnDdl`;
 * ../storage/events/clickhouse/table.ts) is the property's HogQL text: a string's value as it is
 * (`''`, `'null'` and escapes decoded, as `JSONExtractString` gives them), `true` / `false`. Not
 * exact: NULL (a missing property or JSON null: read from the JSON, which says which), an object
 * or an array (`{`, `[`: HogQL writes them canonically), and anything that begins as a number does
 * (a first byte `-` or a digit): the column writes a JSON number as ClickHouse formats a Float64
 * (`1.50` → `1.5`, `-0` → `0`) where HogQL keeps the literal, and a string such as `"1.5"` cannot
 * be told from it there. Byte tests only, the cheapest ClickHouse has.
 */
function materializedExact(v: Sql): Sql {
  const b = sql`reinterpretAsUInt8(${v})`;
  return sql`multiIf(${v} is null, 0, ${b} = 123 or ${b} = 91 or ${b} = 45 or (${b} >= 48 and ${b} <= 57), 0, 1)`;
}

/** The exact sum of a Float column as a Float64 (module doc); 0 over no rows. */
function exactFloatSum(value: Sql): Sql {
  const n = ++seq;
  const [s, t, e] = [`s${n}`, `t${n}`, `e${n}`].map((x) => sql.raw(x)) as [Sql, Sql, Sql];
  // each value as (digits as Int256 with its sign, exponent of its last digit, exponent past its first)
  const parts = sql`arrayMap(${s} -> arrayMap(${e} -> (toInt256OrZero(replaceAll(tupleElement(${e}, 1), '.', '')) * if(startsWith(${s}, '-'), -1, 1),
      tupleElement(${e}, 2) - toInt64(if(position(tupleElement(${e}, 1), '.') > 0, length(tupleElement(${e}, 1)) - position(tupleElement(${e}, 1), '.'), 0)),
      tupleElement(${e}, 2) - toInt64(if(position(tupleElement(${e}, 1), '.') > 0, length(tupleElement(${e}, 1)) - position(tupleElement(${e}, 1), '.'), 0)) + toInt64(length(replaceAll(tupleElement(${e}, 1), '.', '')))),
      [(splitByChar('e', trimLeft(${s}, '-'))[1], toInt64OrZero(replaceAll(splitByChar('e', trimLeft(${s}, '-'))[2], '+', '')))])[1],
    arrayMap(${t} -> toString(${t}), groupArray(${value})))`;
  const pow10 = (k: Sql) => sql`toInt256(concat('1', repeat('0', toUInt64(least(greatest(${k}, 0), 75)))))`;
  return bind({ a: parts }, ({ a }) =>
    bind(
      {
        a: a!,
        b: sql`greatest(arrayMin(arrayMap(${t} -> tupleElement(${t}, 2), ${a})), arrayMax(arrayMap(${t} -> tupleElement(${t}, 3), ${a})) - 70)`,
      },
      ({ a, b }) => {
        const term = sql`if(tupleElement(${t}, 2) >= ${b}, tupleElement(${t}, 1) * ${pow10(sql`tupleElement(${t}, 2) - ${b}`)},
        if(${b} - tupleElement(${t}, 2) > 40, toInt256(0), intDiv(tupleElement(${t}, 1), ${pow10(sql`${b} - tupleElement(${t}, 2)`)})))`;
        return bind(
          { x: sql`if(empty(${a}), 0., toFloat64(concat(toString(arraySum(arrayMap(${t} -> ${term}, ${a}))), 'e', toString(${b}))))` },
          ({ x }) => sql`(${x} * (1 - throwIf(not isFinite(${x}), ${CLICKHOUSE_FLOAT_RANGE})))`,
        );
      },
    ),
  );
}

/** The ClickHouse dialect of HogQL. */
export const clickhouseDialect: HogQLDialect = {
  name: 'clickhouse',
  str: (v) => sql`${v}`,
  int: (v) => sql`${chParam(v, 'Int64')}`,
  // as text: chDB refuses to bind a JavaScript number beyond 2^53 (1e21)
  float: (v) => sql`${chParam(String(v), 'Float64')}`,
  bool: (v) => sql.raw(v ? 'true' : 'false'),
  opaque: (v) => v,
  trueSql: sql`1`,
  falseSql: sql`0`,
  boolValue: (c) => sql`toUInt8(${c})`,
  text: (e) => e,
  // (a NULL source, an event without a person, has no keys: JSON functions take no Nullable arrays)
  jsonText: (source, key) => {
    const read = bind({ j: sql`ifNull(${source}, '')` }, ({ j }) =>
      bind({ t: sql`JSONType(${j}, ${key})`, raw: sql`JSONExtractRaw(${j}, ${key})`, j: j! }, ({ t, raw, j }) => {
        return sql`multiIf(${t} = 'String', JSONExtractString(${j}, ${key}), ${t} = 'Null', NULL, ${t} = 'Bool', ${raw},
        ${t} in ('Int64', 'UInt64', 'Double'), ${plainNumber(raw!)}, ${canonical(raw!)})`;
      }),
    );
    // a text without the quoted key has no such key (NULL), found without parsing the JSON
    return PLAIN_KEY.test(key) ? sql`if(position(ifNull(${source}, ''), ${JSON.stringify(key)}) = 0, NULL, ${read})` : read;
  },
  jsonCanonical: (json) => canonical(json),
  materializedExact,
  jsonWhole: (source) => source,
  timestampColumn: (c) => sql`formatDateTime(${c}, '%Y-%m-%dT%H:%i:%S.%fZ')`,
  textToFloat: (t) =>
    bind(
      { x: sql`if(length(${t}) <= 1000 and match(${t}, ${NUMBER}), toFloat64OrNull(trimBoth(${t})), NULL)` },
      ({ x }) => sql`if(isFinite(${x}), ${x}, NULL)`,
    ),
  textToInt: (t) => sql`if(match(${t}, '^ *-?[0-9]{1,18} *$'), toInt64OrNull(trimBoth(${t})), NULL)`,
  floatToInt: (v) =>
    bind(
      { x: v },
      ({ x }) => sql`if(${x} >= -9223372036854775808. and ${x} < 9223372036854775808., toInt64(if(isFinite(${x}), ${x}, 0)), NULL)`,
    ),
  toFloat: (v) => sql`toFloat64(${v})`,
  intToText: (v) => sql`toString(${v})`,
  floatToText: (v) =>
    bind({ x: sql`toFloat64(${v})` }, ({ x }) => sql`if(${x} = 0, '0', replaceRegexpOne(toString(${x}), 'e([0-9])', 'e+\\1'))`),
  bindsChecked: false,
  checkInt: (raw) => raw,
  intOp: (op, a, b) =>
    bind(
      { r: sql`(toInt128(${a}) ${sql.raw(op)} toInt128(${b}))` },
      ({ r }) =>
        sql`(toInt64(${r}) + throwIf(ifNull(${r} > 9223372036854775807 or ${r} < -9223372036854775808, 0), ${CLICKHOUSE_INT_OVERFLOW}))`,
    ),
  unsigned: (v) => sql`toInt64(${v})`,
  uniq: (v, exact) => (exact ? sql`uniqExact(${v})` : sql`uniq(${v})`),
  checkFloat: (op, a, b) =>
    bind({ a: sql`toFloat64(${a})`, b: sql`toFloat64(${b})` }, ({ a, b }) => {
      const r = op === '/' ? sql`(${a} / nullIf(${b}, 0))` : sql`(${a} ${sql.raw(op)} ${b})`;
      const under = op === '*' ? sql` or (${r} = 0 and ${a} != 0 and ${b} != 0)` : op === '/' ? sql` or (${r} = 0 and ${a} != 0)` : sql``;
      return bind({ r }, ({ r }) => sql`(${r} * (1 - throwIf(ifNull(not isFinite(${r})${under}, 0), ${CLICKHOUSE_FLOAT_RANGE})))`);
    }),
  textToDateTime: (text) =>
    bind({ t: text }, ({ t }) =>
      bind(
        {
          ok: sql`match(${t}, ${DATE_TIME})`,
          clock: sql`extract(${t}, '^.{10}[T ]([0-9:.]+)')`,
          off: sql`extract(substr(${t}, 11), '(Z|[+-][0-9]{2}:?[0-9]{2})$')`,
          t: t!,
        },
        ({ ok, clock, off, t }) =>
          ymd(t!, ({ y, m, d }) => {
            const exists = sql`(${ok} and ${y} >= 1 and ${d} <= ${monthLength(y!, m!)})`;
            const offMinutes = sql`if(${off} in ('', 'Z'), 0, if(startsWith(${off}, '-'), -1, 1) * (toInt64OrZero(substr(${off}, 2, 2)) * 60 + toInt64OrZero(right(${off}, 2))))`;
            const secs = sql`(${daysFromCivil(y!, m!, d!)} * 86400 + toInt64OrZero(substr(${clock}, 1, 2)) * 3600 + toInt64OrZero(substr(${clock}, 4, 2)) * 60 + toInt64OrZero(substr(${clock}, 7, 2)) - ${offMinutes} * 60)`;
            const ms = sql`substr(concat(extract(substr(${clock}, 9), '^[0-9]*'), '000'), 1, 3)`;
            return sql`if(${exists}, concat(${secondsText(secs)}, '.', ${ms}, '000Z'), NULL)`;
          }),
      ),
    ),
  timeKeyDates: {
    // Date32 (years 0001–9999; toStartOfWeek and toStartOfMonth answer a Date, 1970–2149, unless
    // enable_extended_results_for_datetime_functions is set)
    startOf: (key, unit) => {
      const d = sql`subtractDays(toDate32(${key}), ${unit === 'week' ? sql`toDayOfWeek(${key}) % 7` : sql`toDayOfMonth(${key}) - 1`})`;
      // (day -719162 is 0001-01-01; toDate32 of a text clamps to 1900)
      return unit === 'week' ? sql`if(toInt32(${d}) < -719162, NULL, ${d})` : d;
    },
    text: (date) => sql`toString(${date})`,
  },
  startOfWeek: (v) =>
    ymd(v, ({ y, m, d }) =>
      bind({ days: daysFromCivil(y!, m!, d!) }, ({ days }) => civilText(sql`(${days} - ((((${days} + 4) % 7) + 7) % 7))`)),
    ),
  addInterval: (v, interval, sign, date) => {
    const n = interval.n * sign;
    const perUnit = SECONDS[interval.unit];
    if (perUnit !== undefined) {
      if (date) return ymd(v, ({ y, m, d }) => civilText(sql`(${daysFromCivil(y!, m!, d!)} + ${sql.raw(String(n * (perUnit / 86400)))})`));
      return bind(
        { v },
        ({ v }) => sql`concat(${secondsText(sql`(${secondsOf(v!)} + ${sql.raw(String(n * perUnit))})`)}, substr(${v}, 20))`,
      );
    }
    const months = interval.unit === 'month' ? n : interval.unit === 'quarter' ? 3 * n : 12 * n;
    return bind({ v }, ({ v }) =>
      ymd(v!, ({ y, m, d }) =>
        bind({ total: sql`(${y} * 12 + ${m} - 1 + ${sql.raw(String(months))})`, d: d! }, ({ total, d }) =>
          bind({ ny: floorDiv(total!, 12), total: total!, d: d! }, ({ ny, total, d }) =>
            bind({ ny: ny!, nm: sql`(${total} - ${ny} * 12 + 1)`, d: d! }, ({ ny, nm, d }) => {
              const day = civilText(daysFromCivil(ny!, nm!, sql`least(${d}, ${monthLength(ny!, nm!)})`));
              return date ? day : sql`concat(${day}, substr(${v}, 11))`;
            }),
          ),
        ),
      ),
    );
  },
  byteLength: (t) => sql`toInt64(length(${t}))`,
  divide: (a, b) => sql`(toFloat64(${a}) / nullIf(toFloat64(${b}), 0))`,
  modulo: (a, b) => sql`(${a} % nullIf(${b}, 0))`,
  regexMatch: (t, p, ignoreCase) => sql`match(${t}, ${ignoreCase ? `(?i)${p}` : p})`,
  sum: (v, isFloat) =>
    isFloat
      ? exactFloatSum(v)
      : bind(
          { s: sql`coalesce(sum(toInt128(${v})), toInt128(0))` },
          ({ s }) => sql`(toInt64(${s}) + throwIf(${s} > 9223372036854775807 or ${s} < -9223372036854775808, ${CLICKHOUSE_INT_OVERFLOW}))`,
        ),
  avg: (v, isFloat) =>
    isFloat ? sql`(${exactFloatSum(v)} / nullIf(count(${v}), 0))` : sql`(toFloat64(sum(toInt128(${v}))) / nullIf(count(${v}), 0))`,
};
