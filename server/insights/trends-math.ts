/**
 * A trends series' `math` as the HogQL aggregate each bucket computes (PostHog's
 * posthog/hogql_queries/insights/trends/aggregation_operations.py):
 *
 * - `total` (or none): `count()` of the matching events;
 * - `dau`: distinct persons, `count(distinct person_id)` (exact on every store);
 * - `weekly_active` / `monthly_active`: distinct persons in the 7 / 30 days up to each bucket's end
 *   (`window`); at a week (for weekly) or month interval PostHog turns them into `dau`
 *   (insights/utils/utils.py `convert_active_user_math_based_on_interval`), and so does this;
 * - `unique_session`: distinct `$session_id`s;
 * - `sum`, `avg`, `min`, `max`: of `math_property` read as a Float (from the person with
 *   `math_property_type: person_properties`); a bucket without events is 0, as PostHog's `ifNull`
 *   makes it; without `math_property`, `count()`, as PostHog falls back;
 * - `hogql`: the aggregate `math_hogql`, as written.
 *
 * PostHog's other values (the quantiles, the per-actor counts, groups, first-time users) answer
 * 400 naming the value.
 */
import type { SeriesNode } from './context.js';
import type { Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { propertyField } from './hogql-text.js';

/** How a series is aggregated. */
export interface SeriesMath {
  /** the HogQL aggregate of one bucket */
  aggregate: string;
  /** for active-user math: the days up to each bucket's end whose distinct persons it counts */
  windowDays?: 7 | 30 | undefined;
  /** whether buckets add up (their sum is the whole range's value): `count()` and `sum()` */
  additive: boolean;
}

/** The math of series `index` at `interval`. Throws `InsightQueryError` (attr `series__<index>__math`) for math this server does not run. */
export function seriesMath(node: SeriesNode, index: number, interval: Interval): SeriesMath {
  const attr = `series__${index}__math`;
  const math = node.math ?? 'total';
  switch (math) {
    case 'total':
      return { aggregate: 'count()', additive: true };
    case 'dau':
      return { aggregate: 'count(distinct person_id)', additive: false };
    case 'weekly_active':
      if (interval === 'week' || interval === 'month') return { aggregate: 'count(distinct person_id)', additive: false };
      return { aggregate: 'count(distinct person_id)', windowDays: 7, additive: false };
    case 'monthly_active':
      if (interval === 'month') return { aggregate: 'count(distinct person_id)', additive: false };
      return { aggregate: 'count(distinct person_id)', windowDays: 30, additive: false };
    case 'unique_session':
      return { aggregate: `count(distinct ${propertyField('$session_id', 'event')})`, additive: false };
    case 'sum':
    case 'avg':
    case 'min':
    case 'max': {
      const key = node.math_property;
      if (key === undefined || key === null || key === '') return { aggregate: 'count()', additive: true };
      const field = propertyField(key, node.math_property_type === 'person_properties' ? 'person' : 'event');
      return { aggregate: `${math}(toFloat(${field}))`, additive: math === 'sum' };
    }
    case 'hogql': {
      const expr = node.math_hogql;
      if (expr === undefined || expr === null || expr.trim() === '')
        throw new InsightQueryError(
          'math "hogql" needs math_hogql: an aggregate such as sum(toFloat(properties.price)).',
          `series__${index}__math_hogql`,
        );
      return { aggregate: expr, additive: false };
    }
    default:
      throw new InsightQueryError(
        `math "${String(math)}" is not supported: use total, dau, weekly_active, monthly_active, unique_session, sum, avg, min, max or hogql.`,
        attr,
      );
  }
}
