/**
 * An insight's date range and its buckets, as PostHog's QueryDateRange reads `dateRange` and
 * `interval` (posthog/hogql_queries/utils/query_date_range.py; labels from posthog/utils.py
 * `format_label_date`), in the project's timezone:
 *
 * - `date_from` default `-7d`. A relative value starts at the start of its day (of its hour for
 *   `h`, as it is for `M` and `s`); `all` starts at the project's first event (today when it has
 *   none). `date_to` default now. Unless `explicitDate`, a day, week or month interval ends at the
 *   end of `date_to`'s day and an hour interval at the end of its hour.
 * - Buckets start at `date_from`'s interval start (midnight; Sunday for weeks, PostHog's default
 *   week start; the 1st for months) and step one interval while they start before the end.
 * - The events read start at `date_from` itself for an explicit date or an hour interval, and at
 *   the start of its interval otherwise (of its day for weeks), as PostHog's filter does.
 * - Across a daylight-saving change each bucket still starts at its local midnight (day, week,
 *   month: calendar steps in the zone) or is one real hour (hour: the two 02:00 hours of a
 *   fall-back night are two buckets, as ClickHouse's `+ toIntervalHour(n)` makes them).
 *
 * Instants are ms since the epoch (UTC); `to` is exclusive (PostHog's inclusive `…23:59:59.999999`
 * is `to` minus one microsecond, which is how `resolved_date_range` shows it).
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import { InsightQueryError } from './errors.js';

/** PostHog's intervals that this server buckets by. */
export type Interval = 'hour' | 'day' | 'week' | 'month';

/** A resolved range and its buckets. */
export interface DateRange {
  interval: Interval;
  zone: string;
  /** the first event read (ms, included) */
  from: number;
  /** the end (ms, excluded) */
  to: number;
  /** each bucket's start, in order */
  buckets: DateTime[];
  /** how `date_from` was given, for the previous period's rule (`compare`) */
  relativeDays: number | undefined;
  explicitDateTo: boolean;
}

/** A relative date as PostHog writes them: `-7d`, `-24h`, `mStart`, `-1y`. */
const RELATIVE = /^-?(\d*)([hdwmqysM])(Start|End)?$/;

/** The start of the interval holding `d` (weeks start on Sunday). */
export function intervalStart(d: DateTime, interval: Interval): DateTime {
  if (interval === 'week') {
    const day = d.startOf('day');
    return day.minus({ days: day.weekday % 7 });
  }
  return d.startOf(interval);
}

/** One interval after `d`. */
export function nextInterval(d: DateTime, interval: Interval): DateTime {
  return d.plus({ [`${interval}s`]: 1 });
}

/**
 * Resolves `dateRange` for `interval`. `parseDate` reads a user's date (ms, or undefined);
 * `earliest` gives the project's first event (ms) for `date_from: "all"`. Throws
 * `InsightQueryError` (attr `dateRange__date_from` / `dateRange__date_to`) for a value that reads as
 * no date, and for a range that would hold more than `maxBuckets` buckets.
 */
export async function resolveDateRange(
  range: components['schemas']['InsightDateRange'] | null | undefined,
  interval: Interval,
  opts: {
    zone: string;
    now: Date;
    parseDate: (text: string) => number | undefined;
    earliest: () => Promise<number | undefined>;
    maxBuckets: number;
  },
): Promise<DateRange> {
  const zone = opts.zone;
  const now = DateTime.fromJSDate(opts.now, { zone });
  const explicit = range?.explicitDate === true;
  const fromText = range?.date_from ?? '-7d';
  let from: DateTime;
  let relativeDays: number | undefined;
  if (fromText === 'all') {
    const first = await opts.earliest();
    from = (first === undefined ? now : DateTime.fromMillis(first, { zone })).startOf('day');
  } else {
    const ms = opts.parseDate(fromText);
    if (ms === undefined)
      throw new InsightQueryError(
        `"${fromText}" is not a date: use ISO 8601, a relative date such as -7d, or "all".`,
        'dateRange__date_from',
      );
    from = DateTime.fromMillis(ms, { zone });
    const rel = RELATIVE.exec(fromText);
    if (rel) {
      from = rel[2] === 'h' || rel[2] === 'M' || rel[2] === 's' ? from.startOf(rel[2] === 'h' ? 'hour' : 'second') : from.startOf('day');
      if (rel[2] === 'd' && !rel[3]) relativeDays = Number(rel[1] || '0');
    }
  }
  const toText = range?.date_to ?? undefined;
  let to: DateTime;
  if (toText !== undefined && toText !== null) {
    const ms = opts.parseDate(toText);
    if (ms === undefined)
      throw new InsightQueryError(`"${toText}" is not a date: use ISO 8601 or a relative date such as -1d.`, 'dateRange__date_to');
    to = DateTime.fromMillis(ms, { zone });
  } else {
    to = now;
  }
  // the end: inclusive in PostHog, the next instant here
  if (!explicit) to = interval === 'hour' ? to.startOf('hour').plus({ hours: 1 }) : to.startOf('day').plus({ days: 1 });
  else to = to.plus({ milliseconds: 1 });
  const first = intervalStart(from, interval);
  const buckets: DateTime[] = [];
  for (let b = first; b.toMillis() < to.toMillis(); b = nextInterval(b, interval)) {
    buckets.push(b);
    if (buckets.length > opts.maxBuckets)
      throw new InsightQueryError(
        `The date range holds more than ${opts.maxBuckets} ${interval} buckets: choose a shorter range or a longer interval.`,
        'dateRange',
      );
  }
  const readFrom = explicit || interval === 'hour' ? from : interval === 'week' ? from.startOf('day') : first;
  return {
    interval,
    zone,
    from: readFrom.toMillis(),
    to: Math.max(to.toMillis(), readFrom.toMillis()),
    buckets,
    relativeDays,
    explicitDateTo: toText !== undefined && toText !== null,
  };
}

/**
 * The range `compare` sets beside `range` (PostHog's QueryPreviousPeriodDateRange): the same
 * length just before it; for a day interval over a relative `-Nd` with N a multiple of 7 and no
 * `date_to`, N days before, so that weekdays line up (PostHog's rule: the 8 buckets of `-7d` are
 * compared with the 8 starting 7 days earlier). The length is counted in wall-clock time of the
 * project's zone, as PostHog's `date_from - (date_to - date_from)` of two aware datetimes is
 * (posthog/utils.py `get_compare_period_dates`): across a daylight-saving change the previous
 * period still starts at a local midnight (a week of days is 7 local days, not 168 hours).
 */
export function previousPeriod(range: DateRange): DateRange {
  const weekAligned =
    range.interval === 'day' &&
    !range.explicitDateTo &&
    range.relativeDays !== undefined &&
    range.relativeDays > 0 &&
    range.relativeDays % 7 === 0;
  // an instant's wall-clock time, as if it were UTC, and back
  const wall = (ms: number) => DateTime.fromMillis(ms, { zone: range.zone }).setZone('UTC', { keepLocalTime: true });
  const length = wall(range.to).toMillis() - wall(range.from).toMillis();
  const shift = (ms: number) =>
    weekAligned
      ? DateTime.fromMillis(ms, { zone: range.zone }).minus({ days: range.relativeDays! })
      : wall(ms).minus({ milliseconds: length }).setZone(range.zone, { keepLocalTime: true });
  const from = shift(range.from);
  const to = shift(range.to);
  const first = intervalStart(from, range.interval);
  const buckets: DateTime[] = [];
  for (let b = first; b.toMillis() < to.toMillis() && buckets.length < range.buckets.length; b = nextInterval(b, range.interval))
    buckets.push(b);
  return { ...range, from: from.toMillis(), to: to.toMillis(), buckets };
}

/**
 * The key of a bucket start as the HogQL bucket expression answers it (./zone-buckets.ts): the
 * local date `YYYY-MM-DD` for days, weeks and months; for hours the start as an instant in UTC,
 * `YYYY-MM-DDTHH:MM` (the two 02:00 hours of a fall-back night are two keys).
 */
export function bucketKey(d: DateTime, interval: Interval): string {
  return interval === 'hour' ? d.toUTC().toFormat("yyyy-MM-dd'T'HH:mm") : d.toFormat('yyyy-MM-dd');
}

/** The bucket key of a value the bucket expression answered (a DateTime text in UTC, or a Date text). */
export function answeredKey(value: unknown, interval: Interval): string {
  const text = String(value);
  return interval === 'hour' ? text.slice(0, 16) : text.slice(0, 10);
}

/** PostHog's `days`: `%Y-%m-%d`, with ` %H:%M:%S` for hours. */
export function dayText(d: DateTime, interval: Interval): string {
  return d.toFormat(interval === 'hour' ? 'yyyy-MM-dd HH:mm:ss' : 'yyyy-MM-dd');
}

/** An instant as PostHog's JSON writes a datetime of the project's zone (`2024-11-24T00:00:00Z`, `…+05:30`). */
export function isoText(d: DateTime): string {
  return (d.toISO({ suppressMilliseconds: true }) ?? '').replace(/\+00:00$/, 'Z');
}

/** The range's ends as `resolved_date_range` shows them (the end inclusive, to the microsecond). */
export function resolvedRange(range: DateRange): { date_from: string; date_to: string } {
  const from = DateTime.fromMillis(range.from, { zone: range.zone });
  const last = DateTime.fromMillis(range.to - 1, { zone: range.zone });
  const lastText = (last.toISO() ?? '').replace(/\.(\d{3})/, '.$1999').replace(/\+00:00$/, 'Z');
  return { date_from: isoText(from), date_to: lastText };
}

/**
 * A bucket's label (`format_label_date`): `1-Jan-2024` for days, `1-Jan 13:00` for hours,
 * `Jan 2024` for months; a week is its span within the range: `1–7 Jan`, `29-Jan – 4-Feb`,
 * `30-Dec-2023 – 5-Jan-2024`, or one day `1-Jan-2024`.
 */
export function bucketLabel(d: DateTime, range: DateRange): string {
  const en = d.setLocale('en-US');
  if (range.interval === 'hour') return en.toFormat('d-LLL HH:mm');
  if (range.interval === 'month') return en.toFormat('LLL yyyy');
  if (range.interval === 'day') return en.toFormat('d-LLL-yyyy');
  const start = DateTime.fromMillis(Math.max(d.toMillis(), range.from), { zone: range.zone }).setLocale('en-US');
  const end = DateTime.fromMillis(Math.min(d.plus({ days: 6 }).toMillis(), range.to - 1), { zone: range.zone }).setLocale('en-US');
  if (start.hasSame(end, 'day')) return start.toFormat('d-LLL-yyyy');
  if (start.hasSame(end, 'month')) return `${start.toFormat('d')}–${end.toFormat('d LLL')}`;
  if (start.hasSame(end, 'year')) return `${start.toFormat('d-LLL')} – ${end.toFormat('d-LLL')}`;
  return `${start.toFormat('d-LLL-yyyy')} – ${end.toFormat('d-LLL-yyyy')}`;
}
