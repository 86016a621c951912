/**
 * Per-person reads the non-trends runners share: HogQL SELECTs over the project's events (through
 * `InsightContext.select`) that answer one row per person and period, or per person and event,
 * each read in one query (up to 10,000,000 rows: an internal read, past the 50,000 a request may
 * ask), so that a runner's per-person logic runs in TypeScript on every store alike.
 *
 * Periods are grouped in HogQL by `toStartOfHour/Day/Week/Month(timestamp)` in the project's
 * timezone, each instant moved by the offset in force at that instant (./zone-buckets.ts), as the
 * trends runner does. Instants are microseconds since the epoch (UTC), the precision events are
 * stored with.
 */
import type { DateTime } from 'luxon';
import type { EventsWindow, InsightContext } from './context.js';
import { answeredKey, bucketKey, type Interval } from './date-range.js';
import { bucketExpr } from './zone-buckets.js';

/** Rows a runner reads at most in one read (10,000,000), before answering with what it has read. */
export const MAX_ROWS = 10_000_000;

/**
 * Every row of `text` (a HogQL SELECT without LIMIT whose ORDER BY is a total order) over
 * `window`, in one query (up to `MAX_ROWS`). Returns the rows and the HogQL that ran.
 */
export async function selectAll(ctx: InsightContext, text: string, window: EventsWindow): Promise<{ rows: unknown[][]; hogql: string }> {
  const answer = await ctx.select(`${text} LIMIT ${MAX_ROWS}`, window, { maxRows: MAX_ROWS });
  return { rows: answer.results, hogql: answer.hogql };
}

/**
 * An instant as the events store answers it (`2024-11-01T10:00:00.000000Z`, or with an offset)
 * in microseconds since the epoch; NaN when it reads as none.
 */
export function micros(value: unknown): number {
  const text = String(value);
  const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?$/.exec(text);
  if (!m) return Number.NaN;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[4] ?? 'Z'}`);
  const fraction = (m[3] ?? '').padEnd(6, '0').slice(0, 6);
  return ms * 1000 + Number(fraction);
}

/** One person's activity in one period. */
export interface PersonPeriod {
  person: string;
  /** the period's index in `buckets` */
  period: number;
  /** matching events in that period */
  events: number;
  /** the extra column's value, when one was asked for */
  extra: unknown;
}

/**
 * The periods in which each person has events of `window`, with their event counts: one row per
 * person and period of `buckets` (period starts in the range's zone; rows in other periods are
 * dropped). `extra` is one more aggregate to answer per row (e.g. `min(person.created_at)`);
 * `where` a HogQL condition the events must meet besides the window's.
 */
export async function personPeriods(
  ctx: InsightContext,
  window: EventsWindow,
  opts: { interval: Interval; zone: string; buckets: DateTime[]; extra?: string; where?: string },
): Promise<{ rows: PersonPeriod[]; hogql: string }> {
  const index = new Map(opts.buckets.map((b, i) => [bucketKey(b, opts.interval), i]));
  const text =
    `SELECT person_id, ${bucketExpr(opts.interval, opts.zone, window.from, window.to)} AS period, count() AS events${opts.extra ? `, ${opts.extra} AS extra` : ''}` +
    ` FROM events${opts.where ? ` WHERE ${opts.where}` : ''} GROUP BY person_id, period ORDER BY person_id, period`;
  const answer = await selectAll(ctx, text, window);
  const rows: PersonPeriod[] = [];
  for (const row of answer.rows) {
    const period = index.get(answeredKey(row[1], opts.interval));
    if (period === undefined || row[0] === null || row[0] === undefined) continue;
    rows.push({ person: String(row[0]), period, events: Number(row[2]), extra: row[3] });
  }
  return { rows, hogql: answer.hogql };
}
