/**
 * The StickinessQuery runner (PostHog's posthog/hogql_queries/insights/stickiness_query_runner.py):
 * for each series, how many persons did it in exactly n of the range's periods.
 *
 * It reads one row per person and period with events of the series
 * (`SELECT person_id, <period>, count() … GROUP BY person_id, period`, ./actor-rows.ts) and in
 * TypeScript counts each person's periods that meet `stickinessCriteria` (default: any event;
 * `gte`/`lte`/`exact` compare the period's event count with `value`). `data[n-1]` = persons with
 * exactly n such periods, n = 1 … N (the range's periods); `computedAs: cumulative` makes it n or
 * more. `count` = the persons with at least one (the sum of the non-cumulative data); `days`
 * 1 … N; `labels` `1 day`, `2 days` (`… or more` when cumulative); `label` the event or
 * `All events`; `action` `{order, type, name, id, custom_name}`. `compareFilter.compare` adds the
 * previous period's objects after the current ones (`compare: true`, `compare_label`).
 *
 * Throws `InsightQueryError` for `intervalCount` other than 1, `compare_to`, `math: hogql`, groups
 * and ActionsNode series.
 */
import type { components } from '../../generated/api.js';
import { personPeriods } from './actor-rows.js';
import type { InsightContext } from './context.js';
import { previousPeriod, type DateRange, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { queryRange, requireEventSeries, seriesWindow } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';

/** A StickinessQuery as the contract has it (schema `StickinessQuery`). */
export type StickinessQueryInput = components['schemas']['StickinessQuery'];
type StickinessResult = components['schemas']['StickinessSeriesResult'];

/** A StickinessQuery's answer (schema `StickinessQueryResponse`). */
export interface StickinessAnswer extends CacheFields {
  results: StickinessResult[];
  hogql: string;
}

/** Whether a period with `events` events counts (PostHog's stickinessCriteria). */
function criterionOf(q: StickinessQueryInput): (events: number) => boolean {
  const c = q.stickinessFilter?.stickinessCriteria;
  if (!c) return (events) => events > 0;
  if (c.operator === 'gte') return (events) => events >= c.value;
  if (c.operator === 'lte') return (events) => events > 0 && events <= c.value;
  return (events) => events === c.value;
}

/**
 * Each person's periods of `range` that meet the stickiness criterion for series `node`, and their
 * events in those periods: what the runner counts, and the persons behind a point
 * (./stickiness-actors.ts).
 */
export async function personStickiness(
  ctx: InsightContext,
  q: StickinessQueryInput,
  node: StickinessQueryInput['series'][number],
  range: DateRange,
): Promise<{ persons: Map<string, { periods: number; events: number }>; hogql: string }> {
  const meets = criterionOf(q);
  const answer = await personPeriods(ctx, seriesWindow(node, q.properties, range.from, range.to), {
    interval: range.interval,
    zone: range.zone,
    buckets: range.buckets,
  });
  const persons = new Map<string, { periods: number; events: number }>();
  for (const row of answer.rows) {
    if (!meets(row.events)) continue;
    const p = persons.get(row.person) ?? { periods: 0, events: 0 };
    p.periods += 1;
    p.events += row.events;
    persons.set(row.person, p);
  }
  return { persons, hogql: answer.hogql };
}

/** Checks the fields the runner refuses (module doc). Throws `InsightQueryError`. */
export function refuseStickiness(q: StickinessQueryInput): void {
  requireEventSeries(q.series, {});
  if (q.intervalCount !== undefined && q.intervalCount !== null && q.intervalCount !== 1)
    throw new InsightQueryError('intervalCount other than 1 is not supported.', 'intervalCount');
  if (q.compareFilter?.compare_to)
    throw new InsightQueryError('compare_to is not supported: use compare: true for the previous period.', 'compareFilter__compare_to');
  q.series.forEach((node, i) => {
    if (node.math === 'hogql') throw new InsightQueryError('math "hogql" is not supported for stickiness.', `series__${i}__math`);
  });
}

/** Runs a StickinessQuery (module doc). */
export async function runStickinessQuery(ctx: InsightContext, q: StickinessQueryInput): Promise<StickinessAnswer> {
  refuseStickiness(q);
  const interval: Interval = q.interval ?? 'day';
  const cumulative = q.stickinessFilter?.computedAs === 'cumulative';
  const range = await queryRange(ctx, q.dateRange, interval);
  const periods: { range: DateRange; label: 'current' | 'previous' | undefined }[] =
    q.compareFilter?.compare === true
      ? [
          { range, label: 'current' },
          { range: previousPeriod(range), label: 'previous' },
        ]
      : [{ range, label: undefined }];

  let hogql = '';
  const results: StickinessResult[] = [];
  for (const period of periods) {
    const n = period.range.buckets.length;
    for (let i = 0; i < q.series.length; i++) {
      const node = q.series[i]!;
      const answer = await personStickiness(ctx, q, node, period.range);
      hogql ||= answer.hogql;
      const exact = new Array<number>(n).fill(0);
      for (const { periods: count } of answer.persons.values()) if (count >= 1 && count <= n) exact[count - 1]! += 1;
      const data = cumulative ? exact.map((_, k) => exact.slice(k).reduce((a, b) => a + b, 0)) : exact;
      const name = node.event ?? 'All events';
      results.push({
        count: exact.reduce((a, b) => a + b, 0),
        data,
        days: exact.map((_, k) => k + 1),
        label: name,
        labels: exact.map((_, k) => `${k + 1} ${interval}${k === 0 ? '' : 's'}${cumulative ? ' or more' : ''}`),
        action: { order: i, type: 'events', name, id: node.event ?? null, custom_name: node.custom_name ?? null },
        ...(period.label === undefined ? {} : { compare: true, compare_label: period.label }),
      });
    }
  }
  // PostHog's stickiness answer has no resolved_date_range (stickiness_query_runner.py)
  return { results, hogql, ...cacheFields(ctx, q) };
}
