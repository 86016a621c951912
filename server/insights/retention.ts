/**
 * The RetentionQuery runner (PostHog's posthog/hogql_queries/insights/retention_query_runner.py,
 * its range from QueryDateRangeWithIntervals in posthog/hogql_queries/utils/query_date_range.py):
 * cohorts of persons by the period of their target event, and how many of each came back.
 *
 * - The range: `date_to` (default now) moves to the start of the period after the one holding it;
 *   `date_from` to the start of its period, or, absent, `totalIntervals` periods before `date_to`.
 *   One cohort per period from `date_from` to `date_to`, each with `totalIntervals` values.
 * - Cohort i: `retention_recurring` (default) the persons with a target event in period i;
 *   `retention_first_time` those whose first-ever target event (all time, with the filters) is in
 *   period i; `retention_first_ever_occurrence` those whose first-ever target event (without the
 *   entity's own property filters) is in period i and also matches them.
 * - `values[0]` the cohort's size; `values[k]` its persons with a returning event in period i + k
 *   (at least `minimumOccurrences` of them there); `cumulative`: those returning in period k or
 *   later. Counts are floats, as PostHog's; labels `Day 0`, `Week 3` (the period title-cased).
 *
 * Periods are grouped in HogQL (./actor-rows.ts); a first-ever event's period is computed here
 * from its instant in the project's zone. Throws `InsightQueryError` for a breakdown, groups, an
 * action entity and a bad date.
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import { micros, personPeriods, selectAll } from './actor-rows.js';
import type { EventsWindow, InsightContext, RawProperties } from './context.js';
import { intervalStart, isoText, nextInterval, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { MAX_BUCKETS } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';

/** A RetentionQuery as the contract has it (schema `RetentionQuery`). */
export type RetentionQueryInput = components['schemas']['RetentionQuery'];
type Entity = components['schemas']['RetentionEntity'];
type CohortResult = components['schemas']['RetentionCohortResult'];

/** A RetentionQuery's answer (schema `RetentionQueryResponse`). */
export interface RetentionAnswer extends CacheFields {
  results: CohortResult[];
  hogql: string;
}

/**
 * Values per cohort when `totalIntervals` is absent: 8, as PostHog's schema documents it and its
 * CLI sends it (PostHog's runner itself defaults to 7, DEFAULT_TOTAL_INTERVALS).
 */
const DEFAULT_TOTAL_INTERVALS = 8;

/** PostHog's default target and returning entity. */
const DEFAULT_ENTITY: Entity = { id: '$pageview', type: 'events' };

/** The events of an entity over `[from, to)` (ms); `own` false leaves out the entity's property filters. */
function entityWindow(entity: Entity, attr: string, properties: RawProperties, from: number, to: number, own = true): EventsWindow {
  if (entity.type === 'actions')
    throw new InsightQueryError('Actions are not supported: this server stores no actions; use an event entity.', `${attr}__type`);
  const event = entity.id === null || entity.id === undefined ? undefined : String(entity.id);
  return { event, properties: own ? [entity.properties as RawProperties, properties] : [properties], from, to };
}

/** The range's cohort period starts (module doc). */
function cohortStarts(ctx: InsightContext, q: RetentionQueryInput, interval: Interval, total: number): DateTime[] {
  const zone = ctx.team.timezone;
  const toText = q.dateRange?.date_to ?? undefined;
  let to = DateTime.fromJSDate(ctx.now, { zone });
  if (toText !== undefined && toText !== null) {
    const ms = ctx.parseDate(toText);
    if (ms === undefined)
      throw new InsightQueryError(`"${toText}" is not a date: use ISO 8601 or a relative date such as -1d.`, 'dateRange__date_to');
    to = DateTime.fromMillis(ms, { zone });
  }
  const end = nextInterval(intervalStart(to, interval), interval);
  const fromText = q.dateRange?.date_from ?? undefined;
  let from: DateTime;
  if (fromText === undefined || fromText === null) {
    from = end.minus({ [`${interval}s`]: total });
  } else {
    const ms = ctx.parseDate(fromText);
    if (ms === undefined)
      throw new InsightQueryError(`"${fromText}" is not a date: use ISO 8601 or a relative date such as -7d.`, 'dateRange__date_from');
    from = intervalStart(DateTime.fromMillis(ms, { zone }), interval);
  }
  const starts: DateTime[] = [];
  for (let b = from; b.toMillis() < end.toMillis(); b = nextInterval(b, interval)) {
    starts.push(b);
    if (starts.length > MAX_BUCKETS)
      throw new InsightQueryError(
        `The date range holds more than ${MAX_BUCKETS} ${interval} periods: choose a shorter range or a longer period.`,
        'dateRange',
      );
  }
  return starts;
}

/** Each person's first event of `window` (µs). */
async function firstEvents(ctx: InsightContext, window: EventsWindow): Promise<{ first: Map<string, number>; hogql: string }> {
  const answer = await selectAll(
    ctx,
    'SELECT person_id, min(timestamp) AS first FROM events GROUP BY person_id ORDER BY person_id',
    window,
  );
  const first = new Map<string, number>();
  for (const [person, t] of answer.rows) if (person !== null && person !== undefined) first.set(String(person), micros(t));
  return { first, hogql: answer.hogql };
}

/** Runs a RetentionQuery (module doc). */
export async function runRetentionQuery(ctx: InsightContext, q: RetentionQueryInput): Promise<RetentionAnswer> {
  const rf = q.retentionFilter;
  if (q.aggregation_group_type_index !== undefined && q.aggregation_group_type_index !== null)
    throw new InsightQueryError('Aggregating by groups is not supported: this server stores no groups.', 'aggregation_group_type_index');
  const bf = q.breakdownFilter as { breakdown?: unknown; breakdowns?: unknown[] } | null | undefined;
  if (bf && ((bf.breakdown !== undefined && bf.breakdown !== null && bf.breakdown !== '') || (bf.breakdowns?.length ?? 0) > 0))
    throw new InsightQueryError('Retention breakdowns are not supported.', 'breakdownFilter__breakdown');
  const period = rf.period ?? 'Day';
  const interval = period.toLowerCase() as Interval;
  const total = rf.totalIntervals ?? DEFAULT_TOTAL_INTERVALS;
  const type = rf.retentionType ?? 'retention_recurring';
  const minimum = rf.minimumOccurrences ?? 1;
  const target = rf.targetEntity ?? DEFAULT_ENTITY;
  const returning = rf.returningEntity ?? DEFAULT_ENTITY;

  const starts = cohortStarts(ctx, q, interval, total);
  const zone = ctx.team.timezone;
  const from = starts[0]?.toMillis() ?? ctx.now.getTime();
  const to = starts.length > 0 ? nextInterval(starts[starts.length - 1]!, interval).toMillis() : from;
  const index = new Map(starts.map((b, i) => [b.toMillis(), i]));

  // each cohort's persons
  const cohorts = starts.map(() => new Set<string>());
  let hogql: string;
  if (type === 'retention_recurring') {
    const answer = await personPeriods(ctx, entityWindow(target, 'retentionFilter__targetEntity', q.properties, from, to), {
      interval,
      zone,
      buckets: starts,
    });
    hogql = answer.hogql;
    for (const row of answer.rows) cohorts[row.period]!.add(row.person);
  } else {
    const all = entityWindow(target, 'retentionFilter__targetEntity', q.properties, 0, to, type === 'retention_first_time');
    const { first, hogql: text } = await firstEvents(ctx, all);
    hogql = text;
    const matching =
      type === 'retention_first_ever_occurrence'
        ? (await firstEvents(ctx, entityWindow(target, 'retentionFilter__targetEntity', q.properties, 0, to))).first
        : first;
    for (const [person, t] of first) {
      if (matching.get(person) !== t) continue;
      const start = intervalStart(DateTime.fromMillis(Math.floor(t / 1000), { zone }), interval);
      const i = index.get(start.toMillis());
      if (i !== undefined) cohorts[i]!.add(person);
    }
  }

  // each person's return periods
  const returns = new Map<string, Set<number>>();
  const answer = await personPeriods(ctx, entityWindow(returning, 'retentionFilter__returningEntity', q.properties, from, to), {
    interval,
    zone,
    buckets: starts,
  });
  for (const row of answer.rows) {
    if (row.events < minimum) continue;
    let set = returns.get(row.person);
    if (!set) returns.set(row.person, (set = new Set()));
    set.add(row.period);
  }

  const results: CohortResult[] = starts.map((start, i) => {
    const counts = new Array<number>(total).fill(0);
    counts[0] = cohorts[i]!.size;
    for (const person of cohorts[i]!) {
      const periods = returns.get(person);
      if (!periods) continue;
      let last = 0;
      for (let k = 1; k < total; k++)
        if (periods.has(i + k)) {
          last = k;
          if (rf.cumulative !== true) counts[k]! += 1;
        }
      if (rf.cumulative === true) for (let k = 1; k <= last; k++) counts[k]! += 1;
    }
    return {
      values: counts.map((count, k) => ({ count, label: `${period} ${k}` })),
      label: `${period} ${i}`,
      date: isoText(start),
    };
  });
  return { results, hogql, ...cacheFields(ctx, q) };
}
