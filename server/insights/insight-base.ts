/**
 * Checks and pieces the funnel, retention, lifecycle and stickiness runners share: the series
 * they can read (EventsNode only: this server stores no actions), the fields they refuse
 * (groups), the date range of a query (./date-range.ts, with the project's first event for
 * `all`), and the events window of one series.
 */
import type { components } from '../../generated/api.js';
import type { EventsWindow, InsightContext, RawProperties, SeriesNode } from './context.js';
import { resolveDateRange, type DateRange, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';

/** Buckets a range may hold (an hour interval over a year is 8,784). */
export const MAX_BUCKETS = 10_000;

/**
 * Refuses what this server cannot read: an ActionsNode series (attr `series__<i>__kind`; PostHog
 * reads the action's steps, and this server stores no actions) and
 * `aggregation_group_type_index` (groups).
 */
export function requireEventSeries(series: SeriesNode[], q: { aggregation_group_type_index?: number | null | undefined }): void {
  series.forEach((node, i) => {
    if (node.kind !== 'EventsNode')
      throw new InsightQueryError(
        'Actions are not supported: this server stores no actions; use an EventsNode with the event name.',
        `series__${i}__kind`,
      );
  });
  if (q.aggregation_group_type_index !== undefined && q.aggregation_group_type_index !== null)
    throw new InsightQueryError('Aggregating by groups is not supported: this server stores no groups.', 'aggregation_group_type_index');
}

/** The events of one series over `[from, to)` (ms), with the query's own property filters. */
export function seriesWindow(node: SeriesNode, properties: RawProperties, from: number, to: number): EventsWindow {
  return { event: node.event ?? undefined, properties: [node.properties as RawProperties, properties], from, to };
}

/** The query's range for `interval` (resolveDateRange with the context's zone, clock and first event). */
export function queryRange(
  ctx: InsightContext,
  dateRange: components['schemas']['InsightDateRange'] | null | undefined,
  interval: Interval,
): Promise<DateRange> {
  return resolveDateRange(dateRange, interval, {
    zone: ctx.team.timezone,
    now: ctx.now,
    parseDate: (t) => ctx.parseDate(t),
    earliest: async () => {
      const answer = await ctx.select('SELECT min(timestamp) FROM events');
      const first = answer.results[0]?.[0];
      return typeof first === 'string' ? Date.parse(first) : undefined;
    },
    maxBuckets: MAX_BUCKETS,
  });
}

/** PostHog's default breakdown limit (posthog/hogql/constants.py BREAKDOWN_VALUES_LIMIT). */
export const BREAKDOWN_VALUES_LIMIT = 25;

/**
 * The one-property breakdown of a query's `breakdownFilter` (an event or person property, and the
 * limit, default 25), or undefined for none: what the funnel and retention runners break down by.
 * Throws `InsightQueryError` for `breakdowns` (several), a non-string property, another type, or a
 * limit that is not a whole number of at least 1.
 */
export function singleBreakdownOf(breakdownFilter: unknown): { key: string; type: 'event' | 'person'; limit: number } | undefined {
  const bf = breakdownFilter as
    { breakdown?: unknown; breakdowns?: unknown[]; breakdown_type?: unknown; breakdown_limit?: unknown } | null | undefined;
  if (!bf) return undefined;
  if ((bf.breakdowns?.length ?? 0) > 0)
    throw new InsightQueryError(
      'Several breakdowns ("breakdowns") are not supported: break down by one property ("breakdown").',
      'breakdownFilter__breakdowns',
    );
  if (bf.breakdown === undefined || bf.breakdown === null || bf.breakdown === '') return undefined;
  if (typeof bf.breakdown !== 'string') throw new InsightQueryError('breakdown must be one property name.', 'breakdownFilter__breakdown');
  const type = bf.breakdown_type ?? 'event';
  if (type !== 'event' && type !== 'person')
    throw new InsightQueryError('Only event and person property breakdowns are supported.', 'breakdownFilter__breakdown_type');
  const limit = bf.breakdown_limit ?? BREAKDOWN_VALUES_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)
    throw new InsightQueryError('breakdown_limit must be a whole number of at least 1.', 'breakdownFilter__breakdown_limit');
  return { key: bf.breakdown, type, limit };
}
