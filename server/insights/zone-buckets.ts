/**
 * The HogQL expression that names an event's bucket of an insight's range in the project's
 * timezone, exact across daylight-saving changes: each bucket is [its local start, the next local
 * start), as PostHog's buckets are (posthog/hogql_queries/insights/trends/trends_query_builder.py
 * groups by `toStartOfDay(timestamp)` and the like, with HogQL's `timestamp` in the project's
 * timezone; ClickHouse moves each instant by the offset in force at that instant).
 *
 * This server's HogQL reads times in UTC, so the expression moves `timestamp` by the zone's offset
 * itself: one offset for a window without a change (`toStartOfDay(timestamp + toIntervalMinute(60))`),
 * else one branch per stretch of one offset, split at the instants the offset changes
 * (`if(timestamp < '2024-03-31 01:00:00.000', …+60…, …+120…)`). The answer matches `bucketKey`
 * (./date-range.ts): a day, week or month bucket answers its local start date (`YYYY-MM-DD`); an hour
 * bucket answers its start as an instant in UTC (`YYYY-MM-DDTHH:MM`), so that the hour a fall-back
 * night repeats stays two buckets, as ClickHouse's hours (instants an hour apart) are.
 */
import { IANAZone } from 'luxon';
import type { Interval } from './date-range.js';

/** A stretch of one UTC offset: from `start` (ms since the epoch; undefined: from the window's start) on. */
export interface OffsetSpan {
  start: number | undefined;
  /** minutes east of UTC */
  offset: number;
}

/**
 * How far apart the zone's offset is sampled: a change and its undoing less than this apart would
 * not be seen (daylight-saving rules keep them weeks or months apart).
 */
const SAMPLE_MS = 7 * 86_400_000;

/**
 * The zone's offsets over the window [`from`, `to`) (ms), in order: one span when the offset does
 * not change in it. Each change is found by sampling the offset every 7 days and bisecting to the
 * millisecond where it differs, so a span's `start` is the first instant with its offset. `zone`
 * is an IANA name (the project's `timezone`); an unknown one reads as UTC, as luxon does.
 */
export function offsetSpans(zone: string, from: number, to: number): OffsetSpan[] {
  const z = IANAZone.create(zone);
  const offsetAt = (ms: number) => (z.isValid ? z.offset(ms) : 0);
  const last = Math.max(from, to - 1);
  const spans: OffsetSpan[] = [{ start: undefined, offset: offsetAt(from) }];
  let lo = from;
  let loOffset = spans[0]!.offset;
  while (lo < last) {
    const next = Math.min(lo + SAMPLE_MS, last);
    const nextOffset = offsetAt(next);
    if (nextOffset !== loOffset) {
      // the first instant in (lo, next] whose offset is no longer loOffset
      let a = lo;
      let b = next;
      while (b - a > 1) {
        const mid = Math.floor((a + b) / 2);
        if (offsetAt(mid) === loOffset) a = mid;
        else b = mid;
      }
      spans.push({ start: b, offset: offsetAt(b) });
      // a second change inside the same sample step: go on from the first one
      lo = b;
      loOffset = offsetAt(b);
      continue;
    }
    lo = next;
  }
  return spans;
}

/** `timestamp` moved by `minutes` (HogQL). */
function moved(minutes: number): string {
  if (minutes === 0) return 'timestamp';
  return `timestamp ${minutes > 0 ? '+' : '-'} toIntervalMinute(${Math.abs(minutes)})`;
}

/** A constant instant as this server's HogQL reads a DateTime text (UTC, to the millisecond). */
function instantText(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * The HogQL of an event's bucket start for `interval` in `zone` over the window [`from`, `to`)
 * (ms): what ./date-range.ts `answeredKey` reads and `bucketKey` names (module doc). Day, week
 * (Sunday) and month starts are the local dates; an hour's start is its UTC instant, which for a
 * zone whose offsets are whole hours is `toStartOfHour(timestamp)` whatever the offset.
 */
export function bucketExpr(interval: Interval, zone: string, from: number, to: number): string {
  const fn = { hour: 'toStartOfHour', day: 'toStartOfDay', week: 'toStartOfWeek', month: 'toStartOfMonth' }[interval];
  const spans = offsetSpans(zone, from, to);
  // an hour is the same instants in every zone but for the part of the offset under an hour
  const shift = (offset: number) => (interval === 'hour' ? ((offset % 60) + 60) % 60 : offset);
  const merged: OffsetSpan[] = [];
  for (const s of spans) {
    const o = shift(s.offset);
    if (merged.length === 0 || merged[merged.length - 1]!.offset !== o) merged.push({ start: s.start, offset: o });
  }
  const start = (o: number) => {
    const at = `${fn}(${moved(o)})`;
    return interval === 'hour' && o !== 0 ? `${at} - toIntervalMinute(${o})` : at;
  };
  // the spans i..j, as a balanced tree of `if`s: a range of decades holds dozens of changes, and
  // its depth stays that of a few (SQLite refuses an expression deeper than 1,000)
  const tree = (i: number, j: number): string => {
    if (i === j) return start(merged[i]!.offset);
    const mid = Math.ceil((i + j) / 2);
    return `if(timestamp < '${instantText(merged[mid]!.start!)}', ${tree(i, mid - 1)}, ${tree(mid, j)})`;
  };
  return tree(0, merged.length - 1);
}
