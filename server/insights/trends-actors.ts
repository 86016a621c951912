/**
 * The persons behind a point of a trends insight (PostHog's
 * posthog/hogql_queries/insights/trends/trends_actors_query_builder.py): the persons with events of
 * one series in one bucket, under one breakdown value, in the current or previous period, each
 * with how many such events they have (`event_count`).
 *
 * - `series` (default 0) picks the series; `compare: previous` the previous period's range.
 * - `day` picks the bucket holding that date (read in the project's timezone, at the query's
 *   interval), and is required, as PostHog requires it; a whole-range display (`BoldNumber`,
 *   `ActionsPie`, …) forbids it and reads the whole range. A cumulative display reads from the
 *   range's start to the bucket's end, and active-user math (`weekly_active`, `monthly_active`)
 *   the 7 / 30 days up to the bucket's end: the persons that bucket's value counts.
 * - With `compare: previous` (and the source's `compareFilter.compare`), `day` is the current
 *   period's bucket, moved back by the distance between the periods, as PostHog moves it.
 * - `breakdown` the breakdown label as the insight answers it (`breakdown_value`, a list for
 *   `breakdowns`), including the null and other labels.
 *
 * One HogQL query: `SELECT person_id, count() … GROUP BY person_id`, the bucket as the events
 * window. Throws `InsightQueryError` naming the field (relative to the InsightActorsQuery) for a
 * series that does not exist, a day that reads as no date, and what the trends runner refuses.
 */
import { DateTime } from 'luxon';
import { selectAll } from './actor-rows.js';
import type { ActorRow, InsightContext, InsightPoint, TrendsQueryInput } from './context.js';
import { intervalStart, nextInterval, previousPeriod, type Interval } from './date-range.js';
import { InsightQueryError, nestedErrors } from './errors.js';
import { queryRange } from './insight-base.js';
import { trendsBreakdownOf, TOTAL_VALUE_DISPLAYS } from './trends.js';
import { seriesMath } from './trends-math.js';
import { BREAKDOWN_OTHER, BREAKDOWN_SEPARATOR, breakdownCondition, type SeriesPlan } from './trends-series.js';

/** A date or date-time of a point (`2024-11-01`, `2024-11-01 10:00:00`, ISO 8601) in `zone`; undefined when it reads as none. */
export function pointDate(text: string, zone: string): DateTime | undefined {
  const iso = DateTime.fromISO(text, { zone });
  if (iso.isValid) return iso;
  const sql = DateTime.fromSQL(text, { zone });
  return sql.isValid ? sql : undefined;
}

/** The label a point's `breakdown` names, joined as the runner joins the parts of `breakdowns`. */
function labelOf(breakdown: NonNullable<InsightPoint['breakdown']>): string {
  if (!Array.isArray(breakdown)) return String(breakdown);
  const parts = breakdown.map(String);
  return parts.every((p) => p === BREAKDOWN_OTHER) ? BREAKDOWN_OTHER : parts.join(BREAKDOWN_SEPARATOR);
}

/** The persons of a trends point (module doc). */
export async function trendsActors(
  ctx: InsightContext,
  point: InsightPoint,
  q: TrendsQueryInput,
): Promise<{ rows: ActorRow[]; hogql: string }> {
  const index = point.series ?? 0;
  const node = q.series[index];
  if (!node) throw new InsightQueryError(`The query has no series ${index}.`, 'series');
  if (node.kind !== 'EventsNode')
    throw new InsightQueryError('Actions are not supported: this server stores no actions.', `source__series__${index}__kind`);
  const display = q.trendsFilter?.display ?? 'ActionsLineGraph';
  const totalValue = TOTAL_VALUE_DISPLAYS.has(display);
  const cumulative = display === 'ActionsLineGraphCumulative';
  const interval: Interval = totalValue ? 'day' : (q.interval ?? 'day');
  const math = await nestedErrors('source', () => seriesMath(node, index, interval));
  const breakdown = await nestedErrors('source', () => trendsBreakdownOf(q));
  const current = await nestedErrors('source', () => queryRange(ctx, q.dateRange, interval));
  const previous = point.compare === 'previous' && q.compareFilter?.compare === true;
  const range = previous ? previousPeriod(current) : current;
  const hasDay = point.day !== undefined && point.day !== null && point.day !== '';
  if (totalValue && hasDay)
    throw new InsightQueryError('A `day` is forbidden for trends actors queries with total value aggregation', 'day');
  if (!totalValue && !hasDay)
    throw new InsightQueryError('A `day` is required for trends actors queries without total value aggregation', 'day');

  let from = range.from;
  let to = range.to;
  if (hasDay) {
    let day = pointDate(String(point.day), range.zone);
    if (!day) throw new InsightQueryError(`"${String(point.day)}" is not a date: use YYYY-MM-DD.`, 'day');
    // the previous period's point is asked by the current period's day (PostHog's rule)
    if (previous) day = day.minus({ milliseconds: current.from - range.from });
    const start = intervalStart(day, interval);
    to = Math.min(nextInterval(start, interval).toMillis(), range.to);
    from = cumulative ? range.from : Math.max(start.toMillis(), range.from);
    if (math.windowDays !== undefined) from = DateTime.fromMillis(to, { zone: range.zone }).minus({ days: math.windowDays }).toMillis();
    if (to <= from) return { rows: [], hogql: '' };
  } else if (math.windowDays !== undefined) {
    from = DateTime.fromMillis(to, { zone: range.zone }).minus({ days: math.windowDays }).toMillis();
  }
  const plan: SeriesPlan = { node, math, range, properties: q.properties, breakdown, totalValue, cumulative };
  const wanted = point.breakdown;
  const where =
    breakdown && wanted !== undefined && wanted !== null && !(Array.isArray(wanted) && wanted.length === 0)
      ? await breakdownCondition(ctx, plan, labelOf(wanted))
      : undefined;
  const answer = await selectAll(
    ctx,
    `SELECT person_id, count() AS event_count FROM events${where ? ` WHERE ${where}` : ''} GROUP BY person_id ORDER BY person_id`,
    { event: node.event ?? undefined, properties: [node.properties, q.properties], from, to },
  );
  const rows: ActorRow[] = [];
  for (const [person, events] of answer.rows)
    if (person !== null && person !== undefined) rows.push({ person: String(person), events: Number(events) });
  return { rows, hogql: answer.hogql };
}
