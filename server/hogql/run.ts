/**
 * Runs a compiled query on the store and reads the answer back as PostHog's HogQL results do:
 * one array per row, values by HogQL type (integers as numbers, DateTime64 as
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ`, DateTime as `YYYY-MM-DDTHH:MM:SSZ`, Date as `YYYY-MM-DD`, a whole
 * properties object as JSON text with its keys sorted, so both stores answer the same text).
 * `hasMore` comes from the one extra row the SQL fetches. A query with an optimistic form
 * (ClickHouse's materialized columns, ./select.ts `CompiledSelect.optimistic`) runs it when its
 * probe finds no row that needs the JSON (`rowsOf`).
 *
 * A statement the store refuses for its data (PostgreSQL SQLSTATE class 22, e.g. an integer out of
 * range; 42, e.g. a grouping PostgreSQL cannot prove; SQLite's SQLITE_ERROR, SQLITE_MISMATCH,
 * SQLITE_RANGE, SQLITE_TOOBIG) is answered as a `HogQLError` (400), never a 500; an Int64 overflow
 * with one detail on both stores (`INTEGER_OVERFLOW_DETAIL`). PostgreSQL's
 * statement timeout (57014, the server's QUERY_TIMEOUT_MS) is a `HogQLError` of kind `timeout`
 * (504 `query_timeout`, ./errors.ts). ClickHouse: the codes of `CLICKHOUSE_DATA_ERRORS` are 400s, its
 * Int64 and Float range checks (./dialect-clickhouse.ts, `throwIf`) the same 400s as the other
 * stores'; its timeout arrives as the store's `QueryTimeoutError` (504), thrown as it is. Values
 * come back as JSONEachRow writes them (64-bit integers as strings), read alike. Other errors
 * (lost connections) are thrown as they are.
 */
import type { Kysely } from 'kysely';
import { StoreRangeError } from '../storage/sqlite-functions.js';
import { setOwn } from '../storage/values.js';
import { CLICKHOUSE_FLOAT_RANGE, CLICKHOUSE_INT_OVERFLOW } from './dialect-clickhouse.js';
import { HogQLError } from './errors.js';
import type { CompiledSelect } from './select.js';
import type { HogType } from './types.js';

/** One query's answer. */
export interface HogQLResult {
  results: unknown[][];
  columns: string[];
  types: string[];
  hasMore: boolean;
  limit: number;
  offset: number;
}

const SQLITE_DATA_ERRORS = new Set(['SQLITE_ERROR', 'SQLITE_MISMATCH', 'SQLITE_RANGE', 'SQLITE_TOOBIG']);

/**
 * ClickHouse's codes for a statement refused for its data or types: CANNOT_PARSE_TEXT (6),
 * CANNOT_PARSE_INPUT_ASSERTION_FAILED (27), CANNOT_PARSE_DATE (38), CANNOT_PARSE_DATETIME (41),
 * ILLEGAL_TYPE_OF_ARGUMENT (43), TYPE_MISMATCH (53), ARGUMENT_OUT_OF_BOUND (69),
 * CANNOT_CONVERT_TYPE (70), CANNOT_PARSE_NUMBER (72), ILLEGAL_DIVISION (153), NOT_AN_AGGREGATE
 * (215), NO_COMMON_TYPE (386), FUNCTION_THROW_IF_VALUE_IS_NON_ZERO (395), DECIMAL_OVERFLOW (407).
 */
const CLICKHOUSE_DATA_ERRORS = new Set(['6', '27', '38', '41', '43', '53', '69', '70', '72', '153', '215', '386', '395', '407']);

/** The ClickHouse error code (`@clickhouse/client`'s `ClickHouseError.code`, a numeric string), if `err` is one. */
function clickhouseCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; type?: unknown } | null;
  return typeof e?.code === 'string' && /^[0-9]+$/.test(e.code) && typeof e.type === 'string' ? e.code : undefined;
}

/** The detail both stores answer for an Int64 overflow (the same 400 on both: see `isIntegerOverflow`). */
export const INTEGER_OVERFLOW_DETAIL =
  'Integer overflow: a result of +, -, * or sum() is outside Int64 (-9223372036854775808 to 9223372036854775807). Convert with toFloat() to compute with larger numbers.';

/**
 * Whether `err` is an Int64 overflow: PostgreSQL's "bigint out of range" (SQLSTATE 22003, also
 * from sum()'s cast back to bigint), or SQLite's "integer overflow" (from sum(), or from the check
 * of `HogQLDialect.checkInt`). ClickHouse wraps around instead; a wrong number with no warning is
 * worse than a clear 400, which both stores can give alike.
 */
export function isIntegerOverflow(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.message !== 'string') return false;
  if (clickhouseCode(err) === '395') return e.message.includes(CLICKHOUSE_INT_OVERFLOW);
  if (e.code === '22003') return /^(bigint|integer|smallint) out of range$/.test(e.message);
  return e.code === 'SQLITE_ERROR' && e.message === 'integer overflow';
}

/** The detail both stores answer for a Float beyond the doubles (see `isFloatOutOfRange`). */
export const FLOAT_RANGE_DETAIL =
  'Float out of range: a result of +, -, *, /, sum() or avg() is beyond Float64 (±1.7976931348623157e308), or a non-zero product or quotient is too small to tell from 0.';

/**
 * Whether `err` is a Float out of the doubles' range: PostgreSQL's float8 arithmetic ("value out
 * of range: overflow" / "underflow", SQLSTATE 22003) or its float8 input of a numeric sum
 * ("… is out of range for type double precision"), or SQLite's `range_error`
 * (../storage/sqlite-functions.ts). ClickHouse answers inf or 0 instead.
 */
export function isFloatOutOfRange(err: unknown): boolean {
  if (err instanceof StoreRangeError) return err.kind !== 'integer overflow';
  const e = err as { code?: unknown; message?: unknown } | null;
  if (clickhouseCode(err) === '395' && typeof e?.message === 'string') return e.message.includes(CLICKHOUSE_FLOAT_RANGE);
  if (e?.code !== '22003' || typeof e.message !== 'string') return false;
  return /^value out of range: (overflow|underflow)$/.test(e.message) || /is out of range for type double precision$/.test(e.message);
}

/** Whether `err` is the store refusing the statement for its data or shape (see the module doc). */
export function isQueryRefused(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (SQLITE_DATA_ERRORS.has(code)) return true;
  const ch = clickhouseCode(err);
  if (ch !== undefined) return CLICKHOUSE_DATA_ERRORS.has(ch);
  const severity = (err as { severity?: unknown }).severity;
  return typeof severity === 'string' && (code.startsWith('22') || code.startsWith('42') || code === '2201B');
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) setOwn(out, k, sortKeys((v as Record<string, unknown>)[k]));
    return out;
  }
  return v;
}

/** A stored value read back as its HogQL type (see the module doc). */
export function readValue(type: HogType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'Int':
    case 'UInt':
    case 'Bool': {
      const n = typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'Float': {
      const n = Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'DateTime':
      return `${String(v).slice(0, 19)}Z`;
    case 'JSON':
      try {
        return JSON.stringify(sortKeys(typeof v === 'string' ? JSON.parse(v) : v));
      } catch {
        return String(v);
      }
    case 'Null':
      return null;
    default:
      return String(v);
  }
}

/**
 * The rows of `query`: with `optimistic` (materialized columns that hold most values' text, on
 * ClickHouse), the query without the JSON when its probe finds no row that needs the JSON, before
 * and after it (events are only added: a row the query read is still there after it, but for a
 * delete that runs meanwhile); else the full query.
 */
async function rowsOf<DB>(db: Kysely<DB>, query: CompiledSelect): Promise<Record<string, unknown>[]> {
  const read = async (statement: CompiledSelect['sql']) => (await statement.execute(db)).rows as Record<string, unknown>[];
  const o = query.optimistic;
  if (o && (await read(o.probe)).length === 0) {
    const rows = await read(o.sql);
    if ((await read(o.probe)).length === 0) return rows;
  }
  return read(query.sql);
}

/** Runs `query` and reads the rows (see the module doc). */
export async function runCompiled<DB>(db: Kysely<DB>, query: CompiledSelect): Promise<HogQLResult> {
  let rows: Record<string, unknown>[];
  try {
    rows = await rowsOf(db, query);
  } catch (err) {
    if (isIntegerOverflow(err)) throw new HogQLError(INTEGER_OVERFLOW_DETAIL, undefined, undefined, 'query');
    if (isFloatOutOfRange(err)) throw new HogQLError(FLOAT_RANGE_DETAIL, undefined, undefined, 'query');
    if (isQueryRefused(err)) {
      // ClickHouse's own name for the error, in lower case, as PostHog's `code_name` answers it
      const type = clickhouseCode(err) !== undefined ? (err as { type?: unknown }).type : undefined;
      const code = typeof type === 'string' && /^[A-Z_]+$/.test(type) ? type.toLowerCase() : 'invalid_input';
      throw new HogQLError(`The query could not run: ${err.message}`, undefined, undefined, 'query', 'invalid', code);
    }
    // PostgreSQL stopped it at the session's statement_timeout (QUERY_TIMEOUT_MS): 504, as the read pool answers
    if ((err as { code?: unknown } | null)?.code === '57014') {
      throw new HogQLError(
        'Query has hit the max execution time before completing and was cancelled. Narrow it: a shorter time range, an event name, fewer or simpler conditions.',
        undefined,
        undefined,
        null,
        'timeout',
      );
    }
    throw err;
  }
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const results = page.map((row) => query.kinds.map((kind, i) => readValue(kind, row[`c${i}`])));
  return { results, columns: query.columns, types: query.types, hasMore, limit: query.limit, offset: query.offset };
}
