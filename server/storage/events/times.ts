/**
 * Event times as the store holds them. On SQLite (migration 0013) an event's `timestamp` and
 * `created_at` are INTEGER microseconds since 1970-01-01T00:00:00Z (negative before it) instead of
 * 27- and 24-character ISO 8601 text: the timestamp is in the row and in the three indexes of the
 * events list, so integers save ~100 bytes an event (docs/performance.md, "Event times as integer
 * microseconds"). PostgreSQL keeps the text (collation "C"; its partitions are ranges of it).
 *
 * - The stored text form is fixed-width ISO 8601 UTC with microseconds,
 *   `2024-11-20T14:03:10.871123Z` (years 0001–9999), which orders as the instants do; the integers
 *   order alike, so every index, `timestamp desc` and the list's cursor keep their rows and order.
 * - Values are bound as BigInt (`eventTimeIn`): microseconds of the accepted years reach ±2.5e17,
 *   past JavaScript's exact integers (2^53, the year 2255). A read never takes the integer into
 *   JavaScript: it selects the text that SQL makes of it (`eventTimeText`).
 * - `eventTimeFromText` is the SQL for the other way, for text known only when the query runs
 *   (HogQL's `now()`, a DateTime computed per row); SQLite evaluates a constant one once.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from '../dialect.js';

/** An events row's `timestamp` / `created_at` as bound: the text (PostgreSQL) or microseconds (SQLite). */
export type StoredEventTime = string | bigint;

/** `YYYY-MM-DD`, optionally `THH:MM:SS`, optionally `.f` to `.ffffff`, then `Z` when there is a time. */
const STORED_FORM = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z)?$/;

/** Microseconds in one second / one day. */
const MICROS_PER_SECOND = 1_000_000;
const MICROS_PER_DAY = 86_400_000_000;

/**
 * Microseconds since 1970-01-01T00:00:00Z of a timestamp in the stored text form (also with 0–5
 * fractional digits, and a bare `YYYY-MM-DD`, which is the start of that day). Throws RangeError
 * for any other text: every caller passes the stored form (filters, cursors, capture and import
 * normalise to it first).
 */
export function eventTimeMicros(text: string): bigint {
  const m = STORED_FORM.exec(text);
  if (!m) throw new RangeError(`not a stored event time: ${JSON.stringify(text)}`);
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads the years 0–99 as 1900–1999
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), 0);
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`not a stored event time: ${JSON.stringify(text)}`);
  return BigInt(ms) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0'));
}

/** `text` (a stored-form timestamp, `eventTimeMicros`) as `dialect` stores and compares it. */
export function eventTimeIn(dialect: DialectName, text: string): StoredEventTime {
  return dialect === 'postgres' ? text : eventTimeMicros(text);
}

/**
 * SQL text, in the stored form, of a stored event time `column` (or of an expression of one, such
 * as `max(events.timestamp)`): on SQLite the microseconds formatted (floor division, so years
 * before 1970 are exact too); the column itself on PostgreSQL. NULL stays NULL.
 */
export function eventTimeText(dialect: DialectName, column: RawBuilder<unknown>): RawBuilder<string> {
  if (dialect === 'postgres') return sql<string>`${column}`;
  const micros = sql.raw(String(MICROS_PER_SECOND));
  const frac = sql`((${column} % ${micros} + ${micros}) % ${micros})`;
  return sql<string>`(strftime('%Y-%m-%dT%H:%M:%S', (${column} - ${frac}) / ${micros}, 'unixepoch') || '.' || printf('%06d', ${frac}) || 'Z')`;
}

/**
 * SQL microseconds (SQLite) of SQL `text` in the stored form, or a bare `YYYY-MM-DD` (the start of
 * that day); NULL for text that is not a date. The text itself on PostgreSQL.
 */
export function eventTimeFromText(dialect: DialectName, text: RawBuilder<unknown>): RawBuilder<unknown> {
  if (dialect === 'postgres') return text;
  return sql`(unixepoch(substr(${text}, 1, 19)) * ${sql.raw(String(MICROS_PER_SECOND))} + coalesce(cast(substr(${text}, 21, 6) as integer), 0))`;
}

/** Microseconds in a UTC day and in an hour: the units `startOfMicros` floors to. */
const MICROS_PER = { day: MICROS_PER_DAY, hour: 3_600_000_000 } as const;

/** A unit `startOfMicros` floors to: `day` or `hour` (UTC). */
export type TimeUnit = keyof typeof MICROS_PER;

/**
 * SQL microseconds of the start of the UTC day or hour of SQL microseconds `micros` (floor, so
 * before 1970 too): what HogQL's `toStartOfDay`, `toDate` and `toStartOfHour` of a stored time
 * group by.
 */
export function startOfMicros(micros: RawBuilder<unknown>, unit: TimeUnit): RawBuilder<unknown> {
  const size = sql.raw(String(MICROS_PER[unit]));
  return sql`(${micros} - ((${micros} % ${size} + ${size}) % ${size}))`;
}
