/**
 * Timestamps in their canonical text form: fixed-width ISO 8601 UTC with microseconds,
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` (27 characters), so that text order is time order and the
 * microseconds PostHog exports (`2024-01-01T12:00:00.123456+00:00`) survive.
 *
 * The form every layer hands the others: capture and import normalise incoming times to it
 * (`parseIsoTimestamp`), the domain and HogQL compute bounds and constants in it
 * (`formatTimestamp`), and the events store takes and gives it (PostgreSQL keeps it as it is;
 * SQLite as integer microseconds, converted by the events store, which owns that layout). Here in
 * `storage/`, the lowest layer that capture, import, HogQL and the domain may all import.
 * Pure functions of their arguments; nothing here reads the clock or the store.
 */

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Result of parsing: the normalised UTC string, and whether the input carried an offset. */
export interface ParsedTimestamp {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` */
  value: string;
  /** false when the input had no `Z`/offset (it was read as UTC here; callers may re-read it in a timezone) */
  hasOffset: boolean;
  /** false when the input was a date only (`2024-11-20`) */
  hasTime: boolean;
}

/**
 * Parses an ISO 8601 date or date-time (with `T` or a space; seconds, fraction up to 9 digits and
 * offset optional; no offset = `offsetMinutesIfNaive`, default UTC) into the stored form. Returns
 * undefined when it is not a valid date-time (impossible dates such as 2024-02-30, years outside
 * 1–9999 once in UTC). Fractions beyond microseconds are cut.
 */
export function parseIsoTimestamp(input: string, offsetMinutesIfNaive = 0): ParsedTimestamp | undefined {
  const m = ISO.exec(input.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', tz] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = offsetMinutesIfNaive;
  if (tz && tz.toUpperCase() !== 'Z') {
    const sign = tz.startsWith('-') ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return undefined;
    offset = sign * (oh * 60 + om);
  } else if (tz) {
    offset = 0;
  }
  // (Date.UTC reads the years 0–99 as 1900–1999: the year is set on its own)
  const ms = new Date(Date.UTC(2000, month - 1, day, hour, minute, second)).setUTCFullYear(year);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  const micros = (frac + '000000').slice(0, 6);
  const utc = new Date(ms - offset * 60_000);
  if (Number.isNaN(utc.getTime()) || utc.getUTCFullYear() < 1 || utc.getUTCFullYear() > 9999) return undefined;
  return { value: formatTimestamp(utc, micros), hasOffset: tz !== undefined, hasTime: m[4] !== undefined };
}

/** `date` (whole seconds taken from it) with a microsecond fraction, in the stored form. */
export function formatTimestamp(date: Date, micros?: string): string {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = micros ?? iso.slice(20, 23) + '000';
  return `${iso.slice(0, 19)}.${fraction}Z`;
}

/** The stored form of a JS Date (millisecond precision, microseconds 000). */
export function timestampFromDate(date: Date): string {
  return formatTimestamp(date);
}

/** Milliseconds since the epoch of a stored timestamp (microseconds dropped). */
export function timestampToMs(value: string): number {
  return Date.parse(value.slice(0, 23) + 'Z');
}
