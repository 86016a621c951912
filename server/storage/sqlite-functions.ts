/**
 * The SQL functions every SQLite connection of the store registers (the server's, the read pool's,
 * the CLI's), for what SQLite has no built-in for:
 * - `regexp(pattern, text)` (what `text REGEXP pattern` calls): RE2 semantics (re2js), linear in
 *   the text whatever the pattern, as ClickHouse's `match()`;
 * - `icontains(text, needle)`: case-insensitive containment beyond ASCII (LIKE folds ASCII only);
 * - `exact_sum_int(x)` and `exact_sum_float(x)`: the aggregates HogQL's `sum()` and `avg()` compile
 *   to, exact and independent of the order rows are read in, so that SQLite answers what
 *   PostgreSQL's `numeric` sums answer (../hogql/dialect-postgres.ts): Ints are added as BigInts
 *   (Int64 overflow only if the total leaves Int64, PostgreSQL's `sum(bigint)`); Floats are added
 *   as the exact decimals of their shortest text (`String(x)`, which is PostgreSQL's `float8::text`
 *   too), and the total is rounded to a double once, as PostgreSQL's `numeric::float8`;
 * - `range_error(kind, value)`: fails the statement with `StoreRangeError` (the Float checks of
 *   ../hogql/dialect-sqlite.ts raise PostgreSQL's float8 overflow and underflow this way).
 */
import type SQLite from 'better-sqlite3';
import type { RE2JS } from 're2js';
import { compileRe2 } from './dialect.js';

/** Compiled patterns of the `regexp` SQL function, by source (patterns repeat across rows). */
const REGEXP_CACHE_SIZE = 256;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A number out of its type's range, raised by the functions of this module: `integer overflow`
 * (an Int sum outside Int64) or `overflow` / `underflow` (a Float beyond ±1.7976931348623157e308,
 * or a non-zero result too small for a double). `code` is SQLite's generic error code, so that
 * callers that refuse a statement for its data treat it as they treat SQLite's own.
 */
export class StoreRangeError extends Error {
  readonly code = 'SQLITE_ERROR';
  constructor(readonly kind: 'integer overflow' | 'overflow' | 'underflow') {
    super(kind === 'integer overflow' ? 'integer overflow' : `value out of range: ${kind}`);
    this.name = 'StoreRangeError';
  }
}

/** An exact decimal: `mantissa × 10^exponent`; `seen` once a non-NULL value was added. */
interface DecimalSum {
  mantissa: bigint;
  exponent: number;
  seen: boolean;
  /** whether a value was not an integer (a Float), so the total is a Float */
  float: boolean;
}

/** The exact decimal of a double's shortest text (`String(x)`: `-1.5e-7`, `123.456`, `1e+21`). */
function decimalOf(x: number): [bigint, number] {
  const text = String(x);
  const e = text.indexOf('e');
  const mant = e < 0 ? text : text.slice(0, e);
  const exp = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mant.indexOf('.');
  if (dot < 0) return [BigInt(mant), exp];
  return [BigInt(mant.slice(0, dot) + mant.slice(dot + 1)), exp - (mant.length - dot - 1)];
}

function add(acc: DecimalSum, value: unknown): DecimalSum {
  if (value === null || value === undefined) return acc;
  let m: bigint;
  let e = 0;
  if (typeof value === 'bigint') m = value;
  else if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new StoreRangeError('overflow');
    [m, e] = decimalOf(value);
    acc.float = true;
  } else return acc;
  acc.seen = true;
  if (m === 0n) return acc;
  if (acc.mantissa === 0n) {
    acc.mantissa = m;
    acc.exponent = e;
  } else if (e >= acc.exponent) {
    acc.mantissa += m * 10n ** BigInt(e - acc.exponent);
  } else {
    acc.mantissa = acc.mantissa * 10n ** BigInt(acc.exponent - e) + m;
    acc.exponent = e;
  }
  return acc;
}

/** The total rounded once to a double; StoreRangeError beyond the doubles (as PostgreSQL's float8 input). */
function toDouble(acc: DecimalSum): number | null {
  if (!acc.seen) return null;
  if (acc.mantissa === 0n) return 0;
  const x = Number(`${acc.mantissa}e${acc.exponent}`);
  if (!Number.isFinite(x)) throw new StoreRangeError('overflow');
  if (x === 0) throw new StoreRangeError('underflow');
  return x;
}

/** The total as an Int64 (a BigInt); StoreRangeError outside Int64. A Float among the values makes it a Float. */
function toInt(acc: DecimalSum): bigint | number | null {
  if (!acc.seen) return null;
  if (acc.float) return toDouble(acc);
  const total = acc.exponent >= 0 ? acc.mantissa * 10n ** BigInt(acc.exponent) : acc.mantissa;
  if (total < INT64_MIN || total > INT64_MAX) throw new StoreRangeError('integer overflow');
  return total;
}

const start = (): DecimalSum => ({ mantissa: 0n, exponent: 0, seen: false, float: false });

/** Registers this module's functions (see the module doc) on one connection. */
export function registerSqliteFunctions(sqlite: SQLite.Database): void {
  const cache = new Map<string, RE2JS | null>();
  // NULL text never matches; a pattern RE2 cannot compile matches nothing (callers validate
  // patterns first with `compileRe2` and answer 400)
  sqlite.function('regexp', { deterministic: true }, (pattern: unknown, text: unknown) => {
    if (text === null || text === undefined || typeof pattern !== 'string') return 0;
    let re = cache.get(pattern);
    if (re === undefined) {
      re = compileRe2(pattern);
      if (cache.size >= REGEXP_CACHE_SIZE) cache.clear();
      cache.set(pattern, re);
    }
    return re !== null && re.test(String(text)) ? 1 : 0;
  });
  sqlite.function('icontains', { deterministic: true }, (text: unknown, needle: unknown) =>
    text === null || text === undefined || typeof needle !== 'string'
      ? 0
      : String(text).toLowerCase().includes(needle.toLowerCase())
        ? 1
        : 0,
  );
  sqlite.aggregate('exact_sum_int', { start, step: add, result: toInt, safeIntegers: true, deterministic: true });
  sqlite.aggregate('exact_sum_float', { start, step: add, result: toDouble, safeIntegers: true, deterministic: true });
  sqlite.function('range_error', { deterministic: true }, (kind: unknown, _value: unknown) => {
    throw new StoreRangeError(kind === 'underflow' ? 'underflow' : 'overflow');
  });
}
