/**
 * The LifecycleQuery runner (PostHog's posthog/hogql_queries/insights/lifecycle_query_runner.py):
 * for each period of the range, how many persons of the first series were new, returning,
 * resurrecting, or went dormant.
 *
 * It reads one row per person and period with events, from one period before the range to its
 * end (`SELECT person_id, <period>, count(), min(person.created_at) … GROUP BY person_id, period`,
 * events with `$process_person_profile` false left out, as PostHog), and in TypeScript, over each
 * person's active periods in order (PostHog's rule, in lifecycle_query_runner.py's arrays):
 * - the first one is `new` when it is the period of the person's `created_at`, else
 *   `resurrecting`;
 * - a later one is `returning` when the period before is active too, else `resurrecting`;
 * - the period after an active one that is not active itself is `dormant` (counted negative).
 * Only periods inside the range are counted; every (period, status) is filled (0).
 *
 * Answers four objects, `new`, `returning`, `resurrecting`, `dormant`: `{action, data, count,
 * labels, days, label: "<event> - <status>", status}`. Throws `InsightQueryError` for groups and
 * an ActionsNode series.
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import { micros, personPeriods } from './actor-rows.js';
import type { InsightContext } from './context.js';
import { bucketLabel, dayText, intervalStart, resolvedRange, type Interval } from './date-range.js';
import { propertyField } from './hogql-text.js';
import { queryRange, requireEventSeries, seriesWindow } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';

/** A LifecycleQuery as the contract has it (schema `LifecycleQuery`). */
export type LifecycleQueryInput = components['schemas']['LifecycleQuery'];
type LifecycleResult = components['schemas']['LifecycleSeriesResult'];

/** A LifecycleQuery's answer (schema `LifecycleQueryResponse`). */
export interface LifecycleAnswer extends CacheFields {
  results: LifecycleResult[];
  hogql: string;
  resolved_date_range: { date_from: string; date_to: string };
}

/** PostHog's statuses, in its answer's order. */
const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
/** A lifecycle status. */
export type Status = (typeof STATUSES)[number];

/** One person's status in one period of the range. */
export interface LifecycleStatus {
  person: string;
  /** the period's index in the range's buckets */
  period: number;
  status: Status;
}

/**
 * Every person's status in each period of the range (module doc), dormant ones included, with the
 * range and the HogQL of the read: what the runner counts, and the persons behind a point
 * (./lifecycle-actors.ts). Throws `InsightQueryError` for groups and an ActionsNode series.
 */
export async function lifecycleStatuses(
  ctx: InsightContext,
  q: LifecycleQueryInput,
): Promise<{ statuses: LifecycleStatus[]; range: Awaited<ReturnType<typeof queryRange>>; hogql: string }> {
  requireEventSeries(q.series.slice(0, 1), q);
  const node = q.series[0]!;
  const interval: Interval = q.interval ?? 'day';
  const range = await queryRange(ctx, q.dateRange, interval);
  const zone = range.zone;
  // the period before the range, then the range's periods: index 1 is the range's first
  const before = range.buckets[0]!.minus({ [`${interval}s`]: 1 });
  const periods = [before, ...range.buckets];
  const answer = await personPeriods(ctx, seriesWindow(node, q.properties, before.toMillis(), range.to), {
    interval,
    zone,
    buckets: periods,
    extra: 'min(person.created_at)',
    where: `ifNull(${propertyField('$process_person_profile', 'event')}, '') != 'false'`,
  });

  const active = new Map<string, { periods: number[]; created: unknown }>();
  for (const row of answer.rows) {
    let p = active.get(row.person);
    if (!p) active.set(row.person, (p = { periods: [], created: row.extra }));
    p.periods.push(row.period);
  }
  const statuses: LifecycleStatus[] = [];
  const add = (person: string, status: Status, period: number) => {
    if (period >= 1 && period <= range.buckets.length) statuses.push({ person, period: period - 1, status });
  };
  for (const [person, { periods: list, created }] of active) {
    list.sort((a, b) => a - b);
    const createdUs = micros(created);
    const createdStart = Number.isNaN(createdUs)
      ? undefined
      : intervalStart(DateTime.fromMillis(Math.floor(createdUs / 1000), { zone }), interval).toMillis();
    const set = new Set(list);
    list.forEach((period, j) => {
      const status: Status =
        j === 0
          ? createdStart === periods[period]!.toMillis()
            ? 'new'
            : 'resurrecting'
          : list[j - 1] === period - 1
            ? 'returning'
            : 'resurrecting';
      add(person, status, period);
      if (!set.has(period + 1)) add(person, 'dormant', period + 1);
    });
  }
  return { statuses, range, hogql: answer.hogql };
}

/** Runs a LifecycleQuery (module doc). */
export async function runLifecycleQuery(ctx: InsightContext, q: LifecycleQueryInput): Promise<LifecycleAnswer> {
  const { statuses, range, hogql } = await lifecycleStatuses(ctx, q);
  const node = q.series[0]!;
  const interval: Interval = q.interval ?? 'day';
  const counts: Record<Status, number[]> = {
    new: range.buckets.map(() => 0),
    returning: range.buckets.map(() => 0),
    resurrecting: range.buckets.map(() => 0),
    dormant: range.buckets.map(() => 0),
  };
  for (const { status, period } of statuses) counts[status][period]! += status === 'dormant' ? -1 : 1;

  const name = node.event ?? 'All events';
  const action = { id: node.event ?? null, name, type: 'events', order: 0, math: 'total', custom_name: node.custom_name ?? null };
  const labels = range.buckets.map((b) => bucketLabel(b, range));
  const days = range.buckets.map((b) => dayText(b, interval));
  const results: LifecycleResult[] = STATUSES.map((status) => ({
    action,
    data: counts[status],
    count: counts[status].reduce((a, b) => a + b, 0),
    labels,
    days,
    label: `${name} - ${status}`,
    status,
  }));
  return { results, hogql, ...cacheFields(ctx, q), resolved_date_range: resolvedRange(range) };
}
