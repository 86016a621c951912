/**
 * The persons behind a funnel step (PostHog's FunnelsActorsQuery, funnels/funnel_udf.py and
 * funnel_trends_udf.py `actor_query`), from the same persons and attempts the funnel runner counts
 * (./funnels.ts `funnelModel`):
 *
 * - steps (and time-to-convert) view: `funnelStep` N > 0 the persons whose furthest step is N or
 *   later (1-based: they completed step N); -N those whose furthest step is N-1 (they completed
 *   step N-1 and not N). `funnelStepBreakdown` keeps the persons of one breakdown value as the
 *   funnel answers it (its `breakdown_value`, `Other` for the merged ones).
 * - trends view: `funnelTrendsEntrancePeriodStart` the period whose entrants to keep (an attempt
 *   whose step `funnelFromStep` falls in it), `funnelTrendsDropOff` false those who converted to
 *   `funnelToStep` from there, true those who did not.
 *
 * Throws `InsightQueryError` (fields relative to the FunnelsActorsQuery) with PostHog's messages:
 * a missing, 0 or -1 `funnelStep`, the trends view's two missing fields, an entrance that reads as
 * no date; PostHog answers some of these with a 500.
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import type { ActorRow, InsightContext } from './context.js';
import { intervalStart } from './date-range.js';
import { InsightQueryError, nestedErrors } from './errors.js';
import { bestAttempt, type Attempt } from './funnel-attempts.js';
import { groupByValue } from './funnel-breakdown.js';
import { funnelModel } from './funnels.js';
import { pointDate } from './trends-actors.js';

/** A FunnelsActorsQuery as the contract has it (schema `FunnelsActorsQuery`). */
export type FunnelsPoint = components['schemas']['FunnelsActorsQuery'];

/** The one value a `funnelStepBreakdown` names (a list holds one value per breakdown; funnels break down by one). */
function wantedValue(v: FunnelsPoint['funnelStepBreakdown']): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(String).join('::');
  return String(v);
}

/** The persons of a funnel step (module doc). */
export async function funnelActors(ctx: InsightContext, point: FunnelsPoint): Promise<{ rows: ActorRow[]; hogql: string }> {
  if (point.funnelCustomSteps && point.funnelCustomSteps.length > 0)
    throw new InsightQueryError('funnelCustomSteps is not supported: use funnelStep.', 'funnelCustomSteps');
  const m = await nestedErrors('source', () => funnelModel(ctx, point.source));
  const rows = (people: { person: string }[]): ActorRow[] => people.map((p) => ({ person: p.person }));

  if (m.viz === 'trends') {
    if (point.funnelTrendsDropOff === undefined || point.funnelTrendsDropOff === null)
      throw new InsightQueryError(
        'Actors parameter `funnelTrendsDropOff` must be provided for funnel trends persons!',
        'funnelTrendsDropOff',
      );
    const startText = point.funnelTrendsEntrancePeriodStart;
    if (startText === undefined || startText === null)
      throw new InsightQueryError(
        'Actors parameter `funnelTrendsEntrancePeriodStart` must be provided funnel trends persons!',
        'funnelTrendsEntrancePeriodStart',
      );
    const start = pointDate(startText, m.range.zone);
    if (!start)
      throw new InsightQueryError(
        'Actors parameter `funnelTrendsEntrancePeriodStart` must be a valid relative date string!',
        'funnelTrendsEntrancePeriodStart',
      );
    const period = intervalStart(start, m.interval).toMillis();
    const kept = m.valued.filter(({ attempts }) => {
      // the furthest step of the person's attempts that start in the period
      let furthest = 0;
      for (const a of attempts) {
        const at = intervalStart(DateTime.fromMillis(Math.floor(a.times[0]! / 1000), { zone: m.range.zone }), m.interval).toMillis();
        if (at === period) furthest = Math.max(furthest, a.times.length);
      }
      if (furthest <= m.steps.from) return false;
      return point.funnelTrendsDropOff === true ? furthest <= m.steps.to : furthest > m.steps.to;
    });
    return { rows: rows(kept), hogql: m.hogql };
  }

  const step = point.funnelStep;
  if (step === undefined || step === null) throw new InsightQueryError('Missing funnelStep in actors query', 'funnelStep');
  if (step === 0) throw new InsightQueryError("Funnel steps are 1-indexed, so step 0 doesn't exist", 'funnelStep');
  if (step === -1)
    throw new InsightQueryError(
      'The first valid drop-off argument for funnelStep is -2, as there is no drop-off at the first step',
      'funnelStep',
    );
  if (Math.abs(step) > m.n) throw new InsightQueryError(`The funnel has ${m.n} steps: funnelStep ${step} is outside it.`, 'funnelStep');
  let people = m.valued
    .map((v) => ({ person: v.person, value: v.value, best: bestAttempt(v.attempts) }))
    .filter((v): v is { person: string; value: string; best: Attempt } => v.best !== undefined && v.best.times.length > 0);
  const wanted = wantedValue(point.funnelStepBreakdown);
  if (m.breakdown && wanted !== undefined) {
    const groups = groupByValue(
      people.map((p) => ({ value: p.value, item: p })),
      m.breakdown.limit,
      (p) => p.best.times.length >= m.n,
    );
    people = groups.find(([value]) => value === wanted)?.[1] ?? [];
  }
  const kept = people.filter((p) => (step > 0 ? p.best.times.length >= step : p.best.times.length === -step - 1));
  return { rows: rows(kept), hogql: m.hogql };
}
