/**
 * The RetentionQuery runner (PostHog's posthog/hogql_queries/insights/retention_query_runner.py,
 * its range from QueryDateRangeWithIntervals in posthog/hogql_queries/utils/query_date_range.py):
 * cohorts of persons by the period of their target event, and how many of each came back.
 *
 * - The range: `date_to` (default now) moves to the start of the period after the one holding it;
 *   `date_from` to the start of its period (`all`: of the project's first event), or, absent,
 *   `totalIntervals` periods before `date_to`.
 *   One cohort per period from `date_from` to `date_to`, each with `totalIntervals` values.
 * - Cohort i: `retention_recurring` (default) the persons with a target event in period i;
 *   `retention_first_time` those whose first-ever target event (all time, with the filters) is in
 *   period i; `retention_first_ever_occurrence` those whose first-ever target event (without the
 *   entity's own property filters) is in period i and also matches them.
 * - `values[0]` the cohort's size; `values[k]` its persons with a returning event in period i + k
 *   (at least `minimumOccurrences` of them there); `cumulative`: those returning in period k or
 *   later. Counts are floats, as PostHog's; labels `Day 0`, `Week 3` (the period title-cased).
 *
 * - `breakdownFilter` (one event or person property): each cohort member is under the value of
 *   their first target event in the cohort's period (`""` for none), and every cohort is answered
 *   once per value, with `breakdown_value`; values ranked by their persons over all cohorts (then
 *   by value), past `breakdown_limit` (default 25) merged into `$$_posthog_breakdown_other_$$`,
 *   as PostHog's runner does.
 *
 * Periods are grouped in HogQL (./actor-rows.ts); a first-ever event's period, and the periods of
 * a breakdown's events, are computed here from their instants in the project's zone. Throws
 * `InsightQueryError` for groups, an action entity, a bad date, and a breakdown of
 * `retention_first_ever_occurrence`.
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import { micros, personPeriods, selectAll } from './actor-rows.js';
import type { EventsWindow, InsightContext, RawProperties } from './context.js';
import { intervalStart, isoText, nextInterval, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { propertyField } from './hogql-text.js';
import { MAX_BUCKETS, singleBreakdownOf } from './insight-base.js';
import { BREAKDOWN_OTHER } from './trends-series.js';
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

/** The breakdown of `breakdownFilter` (one event or person property), or undefined for none. */
function breakdownOf(q: RetentionQueryInput): { key: string; type: 'event' | 'person'; limit: number } | undefined {
  const found = singleBreakdownOf(q.breakdownFilter);
  if (!found) return undefined;
  const { key, type, limit } = found;
  return { key, type, limit };
}

/** The range's cohort period starts (module doc). */
async function cohortStarts(ctx: InsightContext, q: RetentionQueryInput, interval: Interval, total: number): Promise<DateTime[]> {
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
  } else if (fromText === 'all') {
    // the project's first event (today when it has none), as PostHog reads `all`
    const answer = await ctx.select('SELECT min(timestamp) FROM events');
    const first = answer.results[0]?.[0];
    const ms = typeof first === 'string' ? Date.parse(first) : ctx.now.getTime();
    from = intervalStart(DateTime.fromMillis(ms, { zone }), interval);
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

/** A retention query's cohorts and returns (module doc): what the runner counts, and the persons behind a cohort (./retention-actors.ts). */
export interface RetentionModel {
  /** each cohort period's start */
  starts: DateTime[];
  /** each cohort's persons, with their breakdown value ('' without a breakdown) */
  cohorts: Map<string, string>[];
  /** each person's periods (indexes in `starts`) with a returning event */
  returns: Map<string, Set<number>>;
  /** values per cohort */
  total: number;
  /** the period's name as PostHog titles it (`Day`, `Week`, …) */
  period: string;
  breakdown: { key: string; type: 'event' | 'person'; limit: number } | undefined;
  hogql: string;
}

/** Reads a retention query's cohorts and returns (module doc). Throws `InsightQueryError`. */
export async function retentionModel(ctx: InsightContext, q: RetentionQueryInput): Promise<RetentionModel> {
  const rf = q.retentionFilter;
  if (q.aggregation_group_type_index !== undefined && q.aggregation_group_type_index !== null)
    throw new InsightQueryError('Aggregating by groups is not supported: this server stores no groups.', 'aggregation_group_type_index');
  const breakdown = breakdownOf(q);
  const period = rf.period ?? 'Day';
  const interval = period.toLowerCase() as Interval;
  const total = rf.totalIntervals ?? DEFAULT_TOTAL_INTERVALS;
  const type = rf.retentionType ?? 'retention_recurring';
  const minimum = rf.minimumOccurrences ?? 1;
  const target = rf.targetEntity ?? DEFAULT_ENTITY;
  const returning = rf.returningEntity ?? DEFAULT_ENTITY;

  const starts = await cohortStarts(ctx, q, interval, total);
  const zone = ctx.team.timezone;
  const from = starts[0]?.toMillis() ?? ctx.now.getTime();
  const to = starts.length > 0 ? nextInterval(starts[starts.length - 1]!, interval).toMillis() : from;
  const index = new Map(starts.map((b, i) => [b.toMillis(), i]));

  // each cohort's persons, with their breakdown value ('' without a breakdown)
  const cohorts = starts.map(() => new Map<string, string>());
  let hogql: string;
  const periodOf = (t: number) => index.get(intervalStart(DateTime.fromMillis(Math.floor(t / 1000), { zone }), interval).toMillis());
  if (breakdown) {
    if (type === 'retention_first_ever_occurrence')
      throw new InsightQueryError(
        'Breakdowns of retention_first_ever_occurrence are not supported: use retention_first_time.',
        'breakdownFilter__breakdown',
      );
    // every target event with its value; a cohort member's value is the one of its first event there
    const recurring = type === 'retention_recurring';
    const window = entityWindow(target, 'retentionFilter__targetEntity', q.properties, recurring ? from : 0, to);
    const answer = await selectAll(
      ctx,
      `SELECT person_id, timestamp, uuid, ${propertyField(breakdown.key, breakdown.type)} FROM events ORDER BY person_id, timestamp, uuid`,
      window,
    );
    hogql = answer.hogql;
    const firsts = new Map<string, { t: number; uuid: string; value: string }[]>();
    for (const [person, t, uuid, value] of answer.rows) {
      if (person === null || person === undefined) continue;
      let list = firsts.get(String(person));
      if (!list) firsts.set(String(person), (list = []));
      list.push({ t: micros(t), uuid: String(uuid), value: value === null || value === undefined ? '' : String(value) });
    }
    for (const [person, list] of firsts) {
      list.sort((a, b) => a.t - b.t || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
      for (const e of recurring ? list : list.slice(0, 1)) {
        const i = periodOf(e.t);
        if (i !== undefined && !cohorts[i]!.has(person)) cohorts[i]!.set(person, e.value);
      }
    }
  } else if (type === 'retention_recurring') {
    const answer = await personPeriods(ctx, entityWindow(target, 'retentionFilter__targetEntity', q.properties, from, to), {
      interval,
      zone,
      buckets: starts,
    });
    hogql = answer.hogql;
    for (const row of answer.rows) cohorts[row.period]!.set(row.person, '');
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
      const i = periodOf(t);
      if (i !== undefined) cohorts[i]!.set(person, '');
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
  return { starts, cohorts, returns, total, period, breakdown, hogql };
}

/**
 * A breakdown's labels in the answer's order, and the label of each value: values by their
 * cohorts' total size, then by value; past `limit` merged into the other label.
 */
export function breakdownLabels(cohorts: Map<string, string>[], limit: number): { labels: string[]; labelOf: (value: string) => string } {
  const totals = new Map<string, number>();
  for (const c of cohorts) for (const v of c.values()) totals.set(v, (totals.get(v) ?? 0) + 1);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v]) => v);
  const kept = new Set(ranked.slice(0, limit));
  const labels = [...kept, ...(ranked.length > kept.size ? [BREAKDOWN_OTHER] : [])];
  return { labels, labelOf: (v: string) => (kept.has(v) ? v : BREAKDOWN_OTHER) };
}

/** Runs a RetentionQuery (module doc). */
export async function runRetentionQuery(ctx: InsightContext, q: RetentionQueryInput): Promise<RetentionAnswer> {
  const { starts, cohorts, returns, total, period, breakdown, hogql } = await retentionModel(ctx, q);
  const rf = q.retentionFilter;
  const cohortOf = (i: number, members: string[]): CohortResult => {
    const counts = new Array<number>(total).fill(0);
    counts[0] = members.length;
    for (const person of members) {
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
      date: isoText(starts[i]!),
    };
  };
  let results: CohortResult[];
  if (!breakdown) results = starts.map((_, i) => cohortOf(i, [...cohorts[i]!.keys()]));
  else {
    const { labels, labelOf } = breakdownLabels(cohorts, breakdown.limit);
    results = labels.flatMap((label) =>
      starts.map((_, i) => ({
        ...cohortOf(
          i,
          [...cohorts[i]!.entries()].filter(([, v]) => labelOf(v) === label).map(([p]) => p),
        ),
        breakdown_value: label,
      })),
    );
  }
  return { results, hogql, ...cacheFields(ctx, q) };
}
