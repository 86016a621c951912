/**
 * A funnel's breakdown (`breakdownFilter` of a FunnelsQuery, steps and trends views): each person is counted
 * under one value of the property, and each value gets its own funnel. Which value
 * (`funnelsFilter.breakdownAttributionType`, PostHog's attribution in
 * posthog/hogql_queries/insights/funnels/base.py):
 * - `first_touch` (default): the first non-empty value on the person's step events, by time;
 * - `last_touch`: the last one;
 * - `step`: the first one on events of step `breakdownAttributionValue`.
 * A person property (`breakdown_type: person`) is the same on every event. A person without a
 * value is under `""`. Values are ranked by the persons who did step 0, then those who finished,
 * then by value; past `breakdown_limit` (default 25) they merge into `Other`, as PostHog's
 * funnels name it. Pure: no I/O. Throws `InsightQueryError` for what it does not run
 * (`all_events` attribution, several breakdowns, other breakdown types).
 */
import type { components } from '../../generated/api.js';
import { InsightQueryError } from './errors.js';
import { singleBreakdownOf } from './insight-base.js';
import type { StepEvent } from './funnel-attempts.js';

type FunnelsQueryInput = components['schemas']['FunnelsQuery'];

/** The label funnels give the merged values (PostHog's funnels: `Other`). */
export const FUNNEL_BREAKDOWN_OTHER = 'Other';

/** A funnel breakdown as the runner reads it. */
export interface FunnelBreakdown {
  key: string;
  type: 'event' | 'person';
  limit: number;
  /** the person's value from their sorted step events */
  valueOf: (events: StepEvent[]) => string;
}

/** The breakdown of `q`, or undefined for none (module doc). */
export function funnelBreakdownOf(q: FunnelsQueryInput, steps: number): FunnelBreakdown | undefined {
  const found = singleBreakdownOf(q.breakdownFilter);
  if (!found) return undefined;
  const { key, type, limit } = found;
  const attribution = q.funnelsFilter?.breakdownAttributionType ?? 'first_touch';
  const present = (e: StepEvent) => e.value !== null && e.value !== undefined && e.value !== '';
  let valueOf: (events: StepEvent[]) => string;
  if (attribution === 'first_touch') valueOf = (events) => events.find(present)?.value ?? '';
  else if (attribution === 'last_touch') valueOf = (events) => [...events].reverse().find(present)?.value ?? '';
  else if (attribution === 'step') {
    const step = q.funnelsFilter?.breakdownAttributionValue ?? 0;
    if (!Number.isInteger(step) || step < 0 || step > steps - 1)
      throw new InsightQueryError(
        `breakdownAttributionValue must be a step from 0 to ${steps - 1}.`,
        'funnelsFilter__breakdownAttributionValue',
      );
    valueOf = (events) => events.find((e) => e.steps.has(step) && present(e))?.value ?? '';
  } else
    throw new InsightQueryError(
      'breakdownAttributionType "all_events" is not supported: use first_touch, last_touch or step.',
      'funnelsFilter__breakdownAttributionType',
    );
  return { key, type, limit, valueOf };
}

/**
 * Items (a person's best attempt, or their attempts) grouped by value, in PostHog's order (module
 * doc): `[value, items]` pairs, values past the limit merged into `Other`; `finished` tells
 * whether an item's person did every step.
 */
export function groupByValue<T>(items: { value: string; item: T }[], limit: number, finished: (item: T) => boolean): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const { value, item } of items) {
    let g = groups.get(value);
    if (!g) groups.set(value, (g = []));
    g.push(item);
  }
  const done = (g: T[]) => g.filter(finished).length;
  const ranked = [...groups.entries()].sort(
    (a, b) => b[1].length - a[1].length || done(b[1]) - done(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  if (ranked.length <= limit) return ranked;
  const kept = ranked.slice(0, limit);
  const other = ranked.slice(limit).flatMap(([, g]) => g);
  const existing = kept.find(([v]) => v === FUNNEL_BREAKDOWN_OTHER);
  if (existing) existing[1].push(...other);
  else kept.push([FUNNEL_BREAKDOWN_OTHER, other]);
  return kept;
}
