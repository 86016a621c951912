/**
 * Text read as a number or a date-time, the same way on both stores, for any text a property may
 * hold: what one store reads, the other reads alike, and what neither can read is NULL (never a
 * statement error, which PostgreSQL's casts would raise for `1e400` or `2024-02-30`).
 *
 * Numbers (`textToNumber`): an optional `-`, digits, an optional fraction and an optional exponent
 * of at most three digits, with spaces around, in at most 1,000 characters. A number beyond the
 * doubles (`1e400`) is NULL; one too small to tell from 0 (`1e-400`) is 0.
 *
 * Date-times (`textToTimestamp`): `YYYY-MM-DD`, optionally `T` or a space and `HH:MM`, `:SS` and a
 * fraction, optionally `Z` or an offset `±HH:MM` / `±HHMM` of at most 14:59 (SQLite's limit; real
 * offsets are −12:00 to +14:00). The date must exist (`2024-02-30` does not), hours 00–23,
 * minutes and seconds 00–59, and the year in UTC 0001–9999. The rule follows
 * ./timestamps.ts `parseIsoTimestamp` (the import's and HogQL constants'), which allows
 * offsets up to 23:59.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from './dialect.js';

const NUMBER = '^ *-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]{1,3})? *$';

/** The smallest decimal that float8 input rounds to infinity: 2^1024 − 2^970, the midpoint above the largest double. */
export const FLOAT8_OVERFLOW =
  '179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792';

/** The largest decimal that float8 input rounds to 0: 2^-1075, half the smallest subnormal double (a tie, rounded to even: 0). */
const FLOAT8_UNDERFLOW = (() => {
  const digits = (5n ** 1075n).toString();
  return `0.${'0'.repeat(1075 - digits.length)}${digits}`;
})();

/**
 * The text read as a number (a double), or NULL when it is not one (see the module doc).
 * PostgreSQL reads a long text or one with an exponent through `numeric` first, to find the
 * values float8 input would refuse.
 */
export function textToNumber(dialect: DialectName, text: RawBuilder<unknown>): RawBuilder<number | null> {
  if (dialect === 'postgres') {
    const n = sql`(${text})::numeric`;
    return sql<number | null>`(case when length(${text}) <= 1000 and ${text} ~ ${NUMBER} then (case
      when length(${text}) <= 300 and strpos(lower(${text}), 'e') = 0 then (${text})::float8
      when abs(${n}) >= ${FLOAT8_OVERFLOW}::numeric then null
      when abs(${n}) <= ${FLOAT8_UNDERFLOW}::numeric then 0::float8
      else (${text})::float8 end) end)`;
  }
  return sql<
    number | null
  >`(case when length(${text}) <= 1000 and ${text} regexp ${NUMBER} then (case when abs(cast(${text} as real)) > 1.7976931348623157e308 then null else cast(${text} as real) end) end)`;
}

const DATE_TIME =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?)?(Z|[+-](0[0-9]|1[0-4]):?[0-5][0-9])?$';

/** PostgreSQL: whether the day of a `DATE_TIME` text exists in its month, and the year is not 0. */
function postgresDayExists(text: RawBuilder<unknown>): RawBuilder<boolean> {
  const y = sql`substr(${text}, 1, 4)::int`;
  const m = sql`substr(${text}, 6, 2)::int`;
  const leap = sql`(case when ${y} % 4 = 0 and (${y} % 100 <> 0 or ${y} % 400 = 0) then 1 else 0 end)`;
  return sql<boolean>`(${y} >= 1 and substr(${text}, 9, 2)::int <= (case when ${m} = 2 then 28 + ${leap} else 30 + (${m} + ${m} / 8) % 2 end))`;
}

/**
 * The text read as a date-time in the stored form's millisecond prefix (`YYYY-MM-DDTHH:MM:SS.mmm`,
 * UTC) for comparison, or NULL when it is not one (see the module doc).
 */
export function textToTimestamp(dialect: DialectName, text: RawBuilder<unknown>): RawBuilder<string | null> {
  if (dialect === 'postgres') {
    // nested CASEs: the day's test reads digits only where the shape was checked; `AD` and four
    // digits: a year outside 0001–9999 once in UTC is NULL
    return sql<string | null>`(case when ${text} ~ ${DATE_TIME} then (case when ${postgresDayExists(text)} then
      substring(to_char((${text})::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS BC') from '^([0-9]{4}-[^ ]*) AD$') end) end)`;
  }
  // SQLite reads an offset with its colon only; `date()` moves a day the month lacks into the next
  // month, so the day exists when the date reads back unchanged; max/nullif: a year 0000 (or before)
  // in UTC is NULL, and strftime answers NULL past 9999
  const withColon = sql`(case when ${text} glob '*[+-][0-9][0-9][0-9][0-9]' then substr(${text}, 1, length(${text}) - 2) || ':' || substr(${text}, -2) else ${text} end)`;
  return sql<string | null>`(case when ${text} glob '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' and ${text} regexp ${DATE_TIME}
    and substr(${text}, 1, 4) <> '0000' and date(substr(${text}, 1, 10)) = substr(${text}, 1, 10)
    then nullif(max(strftime('%Y-%m-%dT%H:%M:%f', ${withColon}), '0000-99'), '0000-99') end)`;
}

/**
 * A timestamp column the store holds natively (`persons.created_at`; `events.created_at` on
 * PostgreSQL) as text in the events' stored form, `YYYY-MM-DDTHH:MM:SS.ffffffZ` UTC: SQLite's
 * text (written with milliseconds, ./values.ts `nowIso`) padded to microseconds; PostgreSQL's
 * timestamptz written by `to_char`, with collation "C" (byte order, as ClickHouse orders text).
 */
export function timestampColumnText(dialect: DialectName, column: RawBuilder<unknown>): RawBuilder<string> {
  if (dialect === 'postgres') return sql<string>`(to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') collate "C")`;
  return sql<string>`(substr(${column}, 1, 23) || '000Z')`;
}

/**
 * ClickHouse: `textToNumber`'s rule (the module doc) as a Float64 or NULL. ClickHouse reads
 * `1e400` as inf, so a number that is not finite is NULL, as on the other stores.
 */
export function clickhouseTextToNumber(text: RawBuilder<unknown>): RawBuilder<number | null> {
  const x = sql`if(length(${text}) <= 1000 and match(${text}, ${NUMBER}), toFloat64OrNull(trimBoth(${text})), NULL)`;
  return sql<number | null>`if(isFinite(ifNull(${x}, 0)), ${x}, NULL)`;
}

/** Milliseconds since the epoch of a UTC instant that `textToTimestamp` would give as `YYYY-MM-DDTHH:MM:SS.mmm` (years 0001–9999). */
export function timestampMillis(isoUtc: string): number {
  return Date.parse(isoUtc.endsWith('Z') ? isoUtc : `${isoUtc}Z`);
}

/** The first and last millisecond `textToTimestamp` reads: 0001-01-01T00:00:00.000Z … 9999-12-31T23:59:59.999Z. */
const FIRST_MS = timestampMillis('0001-01-01T00:00:00.000');
const LAST_MS = timestampMillis('9999-12-31T23:59:59.999');

/**
 * ClickHouse: `textToTimestamp`'s rule (the module doc) as Int64 milliseconds since the epoch
 * (UTC), or NULL. The instant is computed from the text's fields (days from the civil date, then
 * the clock and the offset) rather than by ClickHouse's date types, whose range is 1900–2299.
 * Fractions are cut to milliseconds, as the other stores compare them.
 */
export function clickhouseTextToMillis(text: RawBuilder<unknown>): RawBuilder<number | null> {
  const t = text;
  const y = sql`toInt64OrZero(substr(${t}, 1, 4))`;
  const m = sql`toInt64OrZero(substr(${t}, 6, 2))`;
  const d = sql`toInt64OrZero(substr(${t}, 9, 2))`;
  const leap = sql`(${y} % 4 = 0 and (${y} % 100 != 0 or ${y} % 400 = 0))`;
  const monthLength = sql`if(${m} = 2, 28 + ${leap}, 30 + (${m} + intDiv(${m}, 8)) % 2)`;
  const exists = sql`(match(${t}, ${DATE_TIME}) and ${y} >= 1 and ${d} <= ${monthLength})`;
  // days from 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's days_from_civil)
  const y2 = sql`(${y} - (${m} <= 2))`;
  const era = sql`intDiv(${y2}, 400)`;
  const yoe = sql`(${y2} - ${era} * 400)`;
  const doy = sql`(intDiv(153 * ((${m} + 9) % 12) + 2, 5) + ${d} - 1)`;
  const days = sql`(${era} * 146097 + ${yoe} * 365 + intDiv(${yoe}, 4) - intDiv(${yoe}, 100) + ${doy} - 719468)`;
  const clock = sql`extract(${t}, '^.{10}[T ]([0-9:.]+)')`;
  const off = sql`extract(substr(${t}, 11), '(Z|[+-][0-9]{2}:?[0-9]{2})$')`;
  const offMinutes = sql`if(${off} in ('', 'Z'), 0, if(startsWith(${off}, '-'), -1, 1) * (toInt64OrZero(substr(${off}, 2, 2)) * 60 + toInt64OrZero(right(${off}, 2))))`;
  const seconds = sql`(${days} * 86400 + toInt64OrZero(substr(${clock}, 1, 2)) * 3600 + toInt64OrZero(substr(${clock}, 4, 2)) * 60 + toInt64OrZero(substr(${clock}, 7, 2)) - ${offMinutes} * 60)`;
  const ms = sql`(${seconds} * 1000 + toInt64OrZero(substr(concat(extract(substr(${clock}, 9), '^[0-9]*'), '000'), 1, 3)))`;
  return sql<number | null>`if(${exists} and ${ms} between ${sql.lit(FIRST_MS)} and ${sql.lit(LAST_MS)}, ${ms}, NULL)`;
}

/**
 * A unix timestamp as a property holds it (`1700000000`, `1700000000.5`: 9 or 10 digits of
 * seconds, an optional fraction), the text read as PostHog's date filters read it: ClickHouse's
 * `parseDateTimeBestEffort` takes such digits for seconds since the epoch.
 */
const UNIX_SECONDS = '^[0-9]{9,10}(\\.[0-9]+)?$';

/**
 * The text read as a date-time for PostHog's date operators (`is_date_after`, `is_date_before`,
 * `is_date_exact`): `textToTimestamp`'s form, or a unix timestamp in seconds (`UNIX_SECONDS`) in
 * that same form (`YYYY-MM-DDTHH:MM:SS.mmm` UTC); NULL otherwise.
 */
export function textToFilterTimestamp(dialect: DialectName, text: RawBuilder<unknown>): RawBuilder<string | null> {
  if (dialect === 'postgres')
    return sql<
      string | null
    >`coalesce(${textToTimestamp(dialect, text)}, (case when ${text} ~ ${UNIX_SECONDS} then to_char(to_timestamp((${text})::float8) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') end))`;
  return sql<
    string | null
  >`coalesce(${textToTimestamp(dialect, text)}, (case when ${text} regexp ${UNIX_SECONDS} then strftime('%Y-%m-%dT%H:%M:%f', cast(${text} as real), 'unixepoch') end))`;
}

/** ClickHouse: `textToFilterTimestamp`'s rule as Int64 milliseconds since the epoch, or NULL. */
export function clickhouseTextToFilterMillis(text: RawBuilder<unknown>): RawBuilder<number | null> {
  return sql<
    number | null
  >`coalesce(${clickhouseTextToMillis(text)}, if(match(${text}, ${UNIX_SECONDS}), toInt64(floor(toFloat64OrZero(${text}) * 1000)), NULL))`;
}
