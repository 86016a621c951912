/**
 * PostHog's reading of dates given by users: the events list's `after` / `before`, and the value of
 * an `is_date_exact` / `is_date_after` / `is_date_before` property filter. Results are instants in
 * the stored timestamp form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (server/storage/timestamps.ts).
 *
 * Sources: posthog/api/event.py `parse_timestamp`; posthog/utils.py
 * `relative_date_parse_with_delta_mapping` and `get_delta_mapping_for`; dateutil's
 * `parser.isoparse` (dateutil/parser/isoparser.py); posthog/hogql/property.py `_resolve_date_value`.
 *
 * ## `after` / `before` — {@link parseEventDateParam}
 *
 * Tried in this order, as PostHog does:
 *
 * 1. **ISO 8601 as dateutil's `isoparse` reads it.** Date `YYYY`, `YYYY-MM`, `YYYY-MM-DD`,
 *    `YYYYMMDD`, ISO week `YYYY-Www[-D]` / `YYYYWww[D]`, ordinal `YYYY-DDD` / `YYYYDDD`; then
 *    optionally any single separator character (`T`, a space, …) and a time `hh`, `hh:mm`, `hhmm`,
 *    `hh:mm:ss`, `hhmmss`, with a fraction `.f…` or `,f…` after the seconds (cut to microseconds);
 *    `24:00` is midnight of the next day. An offset `Z`, `z`, `±hh`, `±hhmm` or `±hh:mm` may follow
 *    the time. ASCII only. Without an offset, the wall-clock time is read in the project's
 *    `timezone` (`2024-11-20` in Europe/Paris is 2024-11-19T23:00:00Z).
 * 2. **`%Y-%m-%d` without zero padding** (Python `strptime`): `2024-1-5` (the day may also be
 *    a space and a digit, as strptime allows), read in `timezone`.
 * 3. **A relative date**: the whole text is `-?(\d+)?<unit>(Start|End)?`, counted back from `now`
 *    (the `-` changes nothing: `7d` is also seven days ago). Units: `h` hours, `d` days, `w` weeks,
 *    `m` months, `q` quarters of 13 weeks, `y` years, `M` minutes, `s` seconds. Without a number
 *    nothing is subtracted (`dStart`). The suffix sets fields of the result, after the months and
 *    years are subtracted and before the hours, days and weeks are (dateutil `relativedelta`):
 *    - `h`: `Start` → minute, second, microsecond 0; `End` → 59:59.999999;
 *    - `d`: `Start` → 00:00:00.000000; `End` → 23:59:59.999999;
 *    - `m`: `Start` → day 1; `End` → day 31, or the month's last day — the time of day is kept;
 *    - `y`: `Start` → January 1 (time kept); `End` → day 31 of the *current month* or its last day
 *      (PostHog sets only `day=31` for `yEnd`; it is not December 31);
 *    - `w`, `q`, `M`, `s`: the suffix is accepted and ignored, as in PostHog.
 *
 *    Month and year steps keep the day of the month, clamped to the target month (`-1m` on
 *    March 31 is February 29 or 28). All of this is wall-clock arithmetic in `timezone`, as Python
 *    does with an aware datetime: `-24h` across a daylight-saving change is 23 or 25 real hours.
 *
 * A wall-clock time that a daylight-saving change skips or repeats is read as Python's `fold=0`
 * does: with the offset in force before the change (02:30 on a spring-forward night in
 * Europe/Paris is 01:30Z; 02:30 on the fall-back night is its first occurrence, 00:30Z).
 *
 * Where this departs from PostHog, on purpose: PostHog uses *now* for anything it cannot read
 * (its relative expression is searched anywhere in the text, so `yesterday` matches `y` and
 * `all` matches nothing — both give now); this returns `undefined` so that the caller can answer
 * 400. For the same reason the relative form must be the whole text, and the capitals PostHog's
 * expression accepts without giving them a meaning (`H`, `D`, `W`, `Q`, `Y`: now) are refused, as
 * is a leading `+` (PostHog ignores it and still counts back). Python's `int()` leniency inside ISO
 * components (a sign or spaces within `2024-+1-01`) and a one-digit last time component
 * (`T10:5`) are not reproduced; such texts are refused. Results outside years 1–9999 are refused
 * (PostHog answers 500).
 *
 * ## Property filter values — {@link parseRelativeOrIso}
 *
 * PostHog (`_resolve_date_value`) treats a value as relative only when it starts with
 * `-?[0-9]+[hdwmqysHDWMQY]`, i.e. only with a number: `-7d`, `0dStart`. Such a value goes through
 * `relative_date_parse` (rules above) and is cut to whole seconds (it is rendered with
 * `%Y-%m-%d %H:%M:%S`). Any other value is handed to ClickHouse's `parseDateTime64BestEffort`;
 * here it is read as ISO 8601 (rules 1–2 above, microseconds kept), a subset of what ClickHouse
 * reads. `dStart`, `mStart` and the like (no number) are therefore not relative dates in a filter:
 * in PostHog they compare with NULL and match nothing; here they give `undefined`.
 */
import { IANAZone } from 'luxon';
import { echo } from './echo.js';
import { parseIsoTimestamp } from '../storage/timestamps.js';

/** What relative dates are counted from, and where wall-clock times are read. */
export interface DateParseOptions {
  /** The reference instant ("now"). */
  now: Date;
  /** The project's IANA time zone name (`UTC`, `Europe/Paris`). */
  timezone: string;
}

/**
 * Reads an events list `after` / `before` value: ISO 8601 (no offset = in `opts.timezone`), a
 * non-padded `YYYY-M-D`, or a relative date (`-1d`, `-24h`, `-30M`, `-2w`, `dStart`, `-1mEnd`, …),
 * as described in the module doc (posthog/api/event.py `parse_timestamp`, posthog/utils.py
 * `relative_date_parse`). Returns the instant as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, or `undefined`
 * when the text is none of these (PostHog would use now). Throws `RangeError` when
 * `opts.timezone` is not an IANA zone or `opts.now` is an invalid date.
 */
export function parseEventDateParam(input: string, opts: DateParseOptions): string | undefined {
  const zone = zoneOf(opts);
  const iso = readIso(input);
  if (iso) return toStored(iso.wall, iso.offsetMinutes, zone);
  const wall = relativeWall(input, opts.now, zone);
  return wall ? toStored(wall, undefined, zone) : undefined;
}

/**
 * Reads the value of an `is_date_*` property filter as PostHog does (posthog/hogql/property.py
 * `_resolve_date_value`): a value starting with a number and a unit (`-7d`, `-10M`, `0dStart`) is
 * read by the rules of {@link parseEventDateParam} and cut to whole seconds; any other value must
 * be ISO 8601 (offset-less in `opts.timezone`, microseconds kept). `dStart` and other relative
 * forms without a number give `undefined` (PostHog compares with NULL: no event matches). Returns
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` or `undefined`; throws `RangeError` like parseEventDateParam.
 */
export function parseRelativeOrIso(input: string, opts: DateParseOptions): string | undefined {
  const zone = zoneOf(opts);
  if (!FILTER_RELATIVE_PREFIX.test(input)) {
    const iso = readIso(input);
    return iso ? toStored(iso.wall, iso.offsetMinutes, zone) : undefined;
  }
  const iso = readIso(input);
  let wall: Wall | undefined;
  if (iso) {
    // relative_date_parse reads ISO first; the result is rendered as wall-clock time in the zone
    if (iso.offsetMinutes === undefined) {
      wall = iso.wall;
    } else {
      const stored = toStored(iso.wall, iso.offsetMinutes, zone);
      if (stored === undefined) return undefined;
      wall = wallOf(Date.parse(stored.slice(0, 23) + 'Z'), zone, 0);
    }
  } else {
    wall = relativeWall(input, opts.now, zone);
  }
  return wall ? toStored({ ...wall, micro: 0 }, undefined, zone) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Wall-clock times and the time zone

/** A wall-clock date-time without a zone, to the microsecond. Months are 1–12. */
interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  micro: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** `_resolve_date_value`'s test for a relative filter value (posthog/hogql/property.py). */
const FILTER_RELATIVE_PREFIX = /^-?[0-9]+[hdwmqysHDWMQY]/;

/** The zone of `opts`, checking `opts` (RangeError on an unknown zone or an invalid `now`). */
function zoneOf(opts: DateParseOptions): IANAZone {
  if (Number.isNaN(opts.now.getTime())) throw new RangeError('now is an invalid date');
  if (!IANAZone.isValidZone(opts.timezone)) throw new RangeError(`Unknown time zone: ${echo(opts.timezone)}`);
  return IANAZone.create(opts.timezone);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Milliseconds since the epoch of `wall` read as if it were UTC (microseconds below 1000 dropped). */
function wallMs(wall: Wall): number {
  const d = new Date(0);
  d.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  d.setUTCHours(wall.hour, wall.minute, wall.second, Math.floor(wall.micro / 1000));
  return d.getTime();
}

/** The wall clock a date shows read as UTC, with `subMilliMicros` microseconds added. */
function wallOfDate(d: Date, subMilliMicros: number): Wall {
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    micro: d.getUTCMilliseconds() * 1000 + subMilliMicros,
  };
}

/** The wall clock of the instant `utcMs` in `zone`, with `micro % 1000` microseconds added. */
function wallOf(utcMs: number, zone: IANAZone, subMilliMicros: number): Wall {
  return wallOfDate(new Date(utcMs + zone.offset(utcMs) * MINUTE_MS), subMilliMicros);
}

/**
 * The UTC offset (minutes) of wall-clock `ms` in `zone` under Python's `fold=0`: the offset in force
 * before a nearby change when the time is repeated or skipped, else the only offset that fits.
 */
function offsetAt(ms: number, zone: IANAZone): number {
  const before = zone.offset(ms - DAY_MS);
  const after = zone.offset(ms + DAY_MS);
  const fits = (o: number) => zone.offset(ms - o * MINUTE_MS) === o;
  if (fits(before) || !fits(after)) return before;
  return after;
}

/** `wall` at the given offset, or in `zone` (fold=0) when the offset is undefined, in the stored form. */
function toStored(wall: Wall, offsetMinutes: number | undefined, zone: IANAZone): string | undefined {
  if (wall.year < 1 || wall.year > 9999) return undefined;
  const offset = offsetMinutes ?? offsetAt(wallMs(wall), zone);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const text = `${p(wall.year, 4)}-${p(wall.month)}-${p(wall.day)}T${p(wall.hour)}:${p(wall.minute)}:${p(wall.second)}.${p(wall.micro, 6)}`;
  return parseIsoTimestamp(text, offset)?.value;
}

/** `ms` (wall clock read as UTC) back to a Wall, keeping `micro`'s sub-millisecond part. */
function wallFromMs(ms: number, subMilliMicros: number): Wall | undefined {
  if (!Number.isFinite(ms)) return undefined;
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return undefined;
  const year = d.getUTCFullYear();
  if (year < 1 || year > 9999) return undefined;
  return wallOfDate(d, subMilliMicros);
}

// ---------------------------------------------------------------------------------------------
// Relative dates (posthog/utils.py)

/** The whole-text form this server accepts; PostHog searches `\-?(\d+)?([hdwmqysHDWMQY])(Start|End)?` anywhere. */
const RELATIVE = /^-?([0-9]+)?([hdwmqyMs])(Start|End)?$/;

/** dateutil `relativedelta`: relative parts (subtracted) and absolute parts (set). */
interface Delta {
  years: number;
  months: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  microsecond?: number;
}

/** `get_delta_mapping_for` (posthog/utils.py), without `human_friendly_comparison_periods`. */
function deltaFor(kind: string, number: number | undefined, position: string | undefined): Delta {
  const d: Delta = { years: 0, months: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
  const n = number ?? 0;
  switch (kind) {
    case 'h':
      d.hours = n;
      if (position === 'Start') Object.assign(d, { minute: 0, second: 0, microsecond: 0 });
      else if (position === 'End') Object.assign(d, { minute: 59, second: 59, microsecond: 999_999 });
      break;
    case 'd':
      d.days = n;
      if (position === 'Start') Object.assign(d, { hour: 0, minute: 0, second: 0, microsecond: 0 });
      else if (position === 'End') Object.assign(d, { hour: 23, minute: 59, second: 59, microsecond: 999_999 });
      break;
    case 'w':
      d.days = 7 * n;
      break;
    case 'm':
      d.months = n;
      if (position === 'Start') d.day = 1;
      else if (position === 'End') d.day = 31;
      break;
    case 'M':
      d.minutes = n;
      break;
    case 's':
      d.seconds = n;
      break;
    case 'q':
      d.days = 7 * 13 * n;
      break;
    case 'y':
      d.years = n;
      if (position === 'Start') Object.assign(d, { month: 1, day: 1 });
      else if (position === 'End') d.day = 31;
      break;
  }
  return d;
}

/**
 * `now` in `zone` minus the relative date `input`, as a wall-clock time; undefined when `input`
 * is not a relative date or the result leaves years 1–9999. Applies `dt - relativedelta(...)` as
 * dateutil does: years and months back (day clamped to the month), absolute fields set, then the
 * days, hours, minutes and seconds subtracted on the wall clock.
 */
function relativeWall(input: string, now: Date, zone: IANAZone): Wall | undefined {
  const m = RELATIVE.exec(input);
  if (!m) return undefined;
  const [, digits, kind = '', position] = m;
  const number = digits === undefined ? undefined : Number(digits);
  if (number !== undefined && !Number.isSafeInteger(number)) return undefined;
  const base = wallOf(now.getTime(), zone, 0);
  const d = deltaFor(kind, number, position);

  const monthIndex = (base.year - d.years) * 12 + (d.month ?? base.month) - 1 - d.months;
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex - year * 12 + 1;
  if (year < 1 || year > 9999) return undefined;
  const shifted: Wall = {
    year,
    month,
    day: Math.min(daysInMonth(year, month), d.day ?? base.day),
    hour: d.hour ?? base.hour,
    minute: d.minute ?? base.minute,
    second: d.second ?? base.second,
    micro: d.microsecond ?? base.micro,
  };
  const backMs = (((d.days * 24 + d.hours) * 60 + d.minutes) * 60 + d.seconds) * 1000;
  if (!Number.isSafeInteger(backMs)) return undefined;
  return wallFromMs(wallMs(shifted) - backMs, shifted.micro % 1000);
}

// ---------------------------------------------------------------------------------------------
// ISO 8601 as dateutil's isoparse reads it, then strptime("%Y-%m-%d")

interface IsoResult {
  wall: Wall;
  /** undefined when the text had no offset (read in the project's zone) */
  offsetMinutes: number | undefined;
}

/** Python's `int()` of a slice, ASCII digits only; NaN when the slice is empty or not digits. */
function intOf(text: string, from: number, to: number): number {
  const s = text.slice(from, to);
  return /^[0-9]+$/.test(s) ? Number(s) : NaN;
}

class IsoError extends Error {}

function need(ok: boolean): void {
  if (!ok) throw new IsoError();
}

/** `_parse_isodate_common`: components [y, m, d] (unvalidated) and the position after them. */
function isoDateCommon(s: string): [number[], number] {
  const len = s.length;
  need(len >= 4);
  const year = intOf(s, 0, 4);
  need(!Number.isNaN(year));
  let pos = 4;
  if (pos >= len) return [[year, 1, 1], pos];
  const hasSep = s[pos] === '-';
  if (hasSep) pos += 1;
  need(len - pos >= 2);
  const month = intOf(s, pos, pos + 2);
  need(!Number.isNaN(month));
  pos += 2;
  if (pos >= len) {
    need(hasSep);
    return [[year, month, 1], pos];
  }
  if (hasSep) {
    need(s[pos] === '-');
    pos += 1;
  }
  need(len - pos >= 2);
  const day = intOf(s, pos, pos + 2);
  need(!Number.isNaN(day));
  return [[year, month, day], pos + 2];
}

/** `_parse_isodate_uncommon`: ISO week dates and ordinal dates. */
function isoDateUncommon(s: string): [number[], number] {
  need(s.length >= 4);
  const year = intOf(s, 0, 4);
  need(!Number.isNaN(year) && year >= 1);
  const hasSep = s[4] === '-';
  let pos = 4 + (hasSep ? 1 : 0);
  let ms: number;
  if (s[pos] === 'W') {
    pos += 1;
    const week = intOf(s, pos, pos + 2);
    pos += 2;
    let weekday = 1;
    if (s.length > pos) {
      need((s[pos] === '-') === hasSep);
      pos += hasSep ? 1 : 0;
      weekday = intOf(s, pos, pos + 1);
      pos += 1;
    }
    need(week > 0 && week < 54 && weekday > 0 && weekday < 8);
    const jan4 = wallMs({ year, month: 1, day: 4, hour: 0, minute: 0, second: 0, micro: 0 });
    const isoDay = new Date(jan4).getUTCDay() || 7;
    ms = jan4 - (isoDay - 1) * DAY_MS + ((week - 1) * 7 + (weekday - 1)) * DAY_MS;
  } else {
    need(s.length - pos >= 3);
    const ordinal = intOf(s, pos, pos + 3);
    pos += 3;
    need(ordinal >= 1 && ordinal <= (isLeap(year) ? 366 : 365));
    ms = wallMs({ year, month: 1, day: 1, hour: 0, minute: 0, second: 0, micro: 0 }) + (ordinal - 1) * DAY_MS;
  }
  const date = wallFromMs(ms, 0);
  need(date !== undefined);
  return [[date!.year, date!.month, date!.day], pos];
}

/** `_parse_tzstr`: offset minutes. */
function isoOffset(z: string): number {
  if (z === 'Z' || z === 'z') return 0;
  need(z.length === 3 || z.length === 5 || z.length === 6);
  need(z[0] === '-' || z[0] === '+');
  const sign = z[0] === '-' ? -1 : 1;
  const hours = intOf(z, 1, 3);
  const minutes = z.length === 3 ? 0 : intOf(z, z[3] === ':' ? 4 : 3, z.length);
  need(!Number.isNaN(hours) && !Number.isNaN(minutes));
  if (hours === 0 && minutes === 0) return 0;
  need(minutes <= 59 && hours <= 23);
  return sign * (hours * 60 + minutes);
}

/** `_parse_isotime`: [h, m, s, µs] and the offset, if any. */
function isoTime(t: string): { parts: number[]; offset: number | undefined } {
  const len = t.length;
  need(len >= 2);
  const parts = [0, 0, 0, 0];
  let offset: number | undefined;
  let pos = 0;
  let comp = -1;
  let hasSep = false;
  while (pos < len && comp < 5) {
    comp += 1;
    const c = t[pos] as string;
    if ('-+Zz'.includes(c)) {
      offset = isoOffset(t.slice(pos));
      pos = len;
      break;
    }
    if (comp === 1 && c === ':') {
      hasSep = true;
      pos += 1;
    } else if (comp === 2 && hasSep) {
      need(c === ':');
      pos += 1;
    }
    if (comp < 3) {
      const v = intOf(t, pos, pos + 2);
      need(!Number.isNaN(v) && t.slice(pos, pos + 2).length === 2);
      parts[comp] = v;
      pos += 2;
    }
    if (comp === 3) {
      const frac = /^[.,]([0-9]+)/.exec(t.slice(pos));
      if (!frac) continue;
      const digits = (frac[1] as string).slice(0, 6);
      parts[3] = Number(digits) * 10 ** (6 - digits.length);
      pos += frac[0].length;
    }
  }
  need(pos >= len);
  if (parts[0] === 24) need(parts[1] === 0 && parts[2] === 0 && parts[3] === 0);
  return { parts, offset };
}

/** `isoparser.isoparse` (any single separator character), then `strptime(input, "%Y-%m-%d")`. */
function readIso(input: string): IsoResult | undefined {
  return readDateutilIso(input) ?? readStrptimeDate(input);
}

function readDateutilIso(s: string): IsoResult | undefined {
  // eslint-disable-next-line no-control-regex -- ASCII only, as dateutil's isoparser
  if (/[^\x00-\x7f]/.test(s)) return undefined;
  try {
    let date: number[];
    let pos: number;
    try {
      [date, pos] = isoDateCommon(s);
    } catch {
      [date, pos] = isoDateUncommon(s);
    }
    let time = [0, 0, 0, 0];
    let offset: number | undefined;
    if (s.length > pos) {
      const parsed = isoTime(s.slice(pos + 1));
      time = parsed.parts;
      offset = parsed.offset;
    }
    const [year = 0, month = 0, day = 0] = date;
    const [, minute = 0, second = 0, micro = 0] = time;
    let hour = time[0] ?? 0;
    const nextDay = hour === 24;
    if (nextDay) hour = 0;
    need(year >= 1 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month));
    need(hour <= 23 && minute <= 59 && second <= 59);
    let wall: Wall | undefined = { year, month, day, hour, minute, second, micro };
    if (nextDay) wall = wallFromMs(wallMs(wall) + DAY_MS, micro % 1000);
    return wall ? { wall, offsetMinutes: offset } : undefined;
  } catch (e) {
    if (e instanceof IsoError) return undefined;
    throw e;
  }
}

/** `datetime.strptime(s, "%Y-%m-%d")`: Python's `%m` / `%d` patterns, so `2024-1-5` and `2024-01- 5`. */
const STRPTIME_DATE = /^([0-9]{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12][0-9]|0[1-9]|[1-9]| [1-9])$/;

function readStrptimeDate(s: string): IsoResult | undefined {
  const m = STRPTIME_DATE.exec(s);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number((m[3] as string).trim());
  if (year < 1 || day > daysInMonth(year, month)) return undefined;
  return { wall: { year, month, day, hour: 0, minute: 0, second: 0, micro: 0 }, offsetMinutes: undefined };
}
