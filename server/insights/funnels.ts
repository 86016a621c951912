/**
 * The FunnelsQuery runner (PostHog's posthog/hogql_queries/insights/funnels/funnels_query_runner.py
 * with funnel.py, funnel_strict.py, funnel_unordered.py, funnel_trends.py and
 * funnel_time_to_convert.py): which persons did the steps in order within the conversion window.
 *
 * It reads, for each distinct step filter, every matching event of the range as
 * `SELECT person_id, timestamp, uuid … ORDER BY person_id, timestamp, uuid` (one read, ./actor-rows.ts), joins
 * them per person in TypeScript, and computes each person's attempts (./funnel-attempts.ts). Then:
 *
 * - `steps`: (with a breakdown, one such list per value, ./funnel-breakdown.ts, each step with
 *   `breakdown` and `breakdown_value`) one object per step `{action_id, name, custom_name, order, people: [], count, type,
 *   average_conversion_time, median_conversion_time}`; `count` the persons whose furthest step is
 *   this one or later; the times in seconds from the step before, over the persons who reached the
 *   step (each person's first attempt that reached their furthest step), null on step 0. `[]`
 *   when nobody did step 0 (PostHog's empty answer).
 * - `trends`: `[{count, data, days, labels}]` (with a breakdown, one per value, with
 *   `breakdown_value`), `data[k]` = round(100 × persons of period k who
 *   reached `funnelToStep` / those who reached `funnelFromStep`, 2), 0 for a period nobody
 *   entered; a person's period is that of the attempt's step-0 event.
 * - `time_to_convert`: `{average_conversion_time, bins}` of the seconds from `funnelFromStep` to
 *   `funnelToStep`.
 *
 * Exclusions (`funnelsFilter.exclusions`, each an EventsNode with `funnelFromStep` and
 * `funnelToStep`): an attempt that reached the exclusion's to-step with an exclusion event strictly
 * between its from-step and to-step does not count; the person counts at their best other attempt
 * (PostHog's `exclusion = 0` condition on each attempt, funnel.py).
 *
 * Throws `InsightQueryError` for fewer than two steps, out-of-range steps or exclusion ranges, a
 * bad window, and what it does not run (breakdowns of the time-to-convert view, groups, actions,
 * `funnelAggregateByHogQL`).
 */
import { DateTime } from 'luxon';
import type { components } from '../../generated/api.js';
import { micros, selectAll } from './actor-rows.js';
import type { InsightContext } from './context.js';
import { bucketLabel, dayText, intervalStart, resolvedRange, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { attemptsOf, bestAttempt, median, sortEvents, type Attempt, type FunnelOrder, type StepEvent } from './funnel-attempts.js';
import { funnelBreakdownOf, groupByValue, type FunnelBreakdown } from './funnel-breakdown.js';
import { propertyField } from './hogql-text.js';
import { queryRange, requireEventSeries, seriesWindow } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';

/** A FunnelsQuery as the contract has it (schema `FunnelsQuery`). */
export type FunnelsQueryInput = components['schemas']['FunnelsQuery'];
type StepResult = components['schemas']['FunnelStepResult'];
type TrendsResult = components['schemas']['FunnelTrendsResult'];
type TimeToConvertResult = components['schemas']['FunnelTimeToConvertResult'];

/** A FunnelsQuery's answer (schema `FunnelsQueryResponse`). */
export interface FunnelsAnswer extends CacheFields {
  results: StepResult[] | StepResult[][] | TrendsResult[] | TimeToConvertResult;
  isUdf: false;
  hogql: string;
  resolved_date_range: { date_from: string; date_to: string };
}

/** PostHog's default conversion window (funnelWindowInterval, funnelWindowIntervalUnit). */
const DEFAULT_WINDOW = 14;
const DEFAULT_WINDOW_UNIT = 'day';

/** PostHog's bin limits for time to convert (funnel_time_to_convert.py). */
const MAX_BINS = 90;
const MAX_AUTO_BINS = 60;

/** Seconds per microsecond. */
const US = 1_000_000;

/** The conversion window's end (µs) for a start (µs), in the project's zone. */
function deadlineOf(q: FunnelsQueryInput, zone: string): (t: number) => number {
  const n = q.funnelsFilter?.funnelWindowInterval ?? DEFAULT_WINDOW;
  const unit = q.funnelsFilter?.funnelWindowIntervalUnit ?? DEFAULT_WINDOW_UNIT;
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new InsightQueryError('funnelWindowInterval must be a whole number from 1 to 100000.', 'funnelsFilter__funnelWindowInterval');
  return (t) => {
    const ms = Math.floor(t / 1000);
    const end = DateTime.fromMillis(ms, { zone }).plus({ [`${unit}s`]: n });
    return end.toMillis() * 1000 + (t - ms * 1000);
  };
}

/** Refuses the fields this runner does not run (module doc). */
function refuseUnsupported(q: FunnelsQueryInput): void {
  requireEventSeries(q.series, q);
  const f = q.funnelsFilter;
  if (f?.funnelAggregateByHogQL && f.funnelAggregateByHogQL !== 'person_id')
    throw new InsightQueryError('funnelAggregateByHogQL is not supported: funnels count persons.', 'funnelsFilter__funnelAggregateByHogQL');
}

/** An exclusion as the runner reads it. */
interface Exclusion {
  node: FunnelsQueryInput['series'][number];
  from: number;
  to: number;
}

/** The exclusions of `funnelsFilter`, checked (PostHog's messages for a bad range). */
function exclusionsOf(q: FunnelsQueryInput): Exclusion[] {
  const n = q.series.length;
  return (q.funnelsFilter?.exclusions ?? []).map((raw, i) => {
    const attr = `funnelsFilter__exclusions__${i}`;
    const e = raw as FunnelsQueryInput['series'][number] & { funnelFromStep?: unknown; funnelToStep?: unknown };
    if (e.kind === 'ActionsNode')
      throw new InsightQueryError(
        'Actions are not supported: this server stores no actions; use an EventsNode with the event name.',
        `${attr}__kind`,
      );
    const from = e.funnelFromStep ?? 0;
    const to = e.funnelToStep ?? n - 1;
    if (!Number.isInteger(from) || !Number.isInteger(to))
      throw new InsightQueryError('Exclusion steps must be whole numbers.', `${attr}__funnelFromStep`);
    const [a, b] = [from as number, to as number];
    if (b <= a) throw new InsightQueryError('Exclusion event range is invalid. End of range should be greater than start.', attr);
    if (a < 0 || b > n - 1) throw new InsightQueryError(`Exclusion event range is invalid. Steps must be between 0 and ${n - 1}.`, attr);
    for (let s = a; s <= b; s++) {
      const step = q.series[s]!;
      if ((step.event ?? null) === (e.event ?? null) && JSON.stringify(step.properties ?? []) === JSON.stringify(e.properties ?? []))
        throw new InsightQueryError("Exclusion steps cannot contain an event that's part of funnel steps.", attr);
    }
    return { node: e, from: a, to: b };
  });
}

/** Whether an attempt has an exclusion event strictly between the exclusion's steps (µs instants, sorted). */
function excluded(a: Attempt, exclusions: Exclusion[], times: number[][]): boolean {
  return exclusions.some((e, i) => {
    if (a.times.length <= e.to) return false;
    const lo = a.times[e.from]!;
    const hi = a.times[e.to]!;
    return times[i]!.some((t) => t > lo && t < hi);
  });
}

/** Each person's exclusion events (µs), one sorted list per exclusion. */
async function exclusionTimes(ctx: InsightContext, q: FunnelsQueryInput, exclusions: Exclusion[], from: number, to: number) {
  const out = new Map<string, number[][]>();
  for (const [i, e] of exclusions.entries()) {
    const window = seriesWindow(e.node, q.properties, from, to);
    const answer = await selectAll(ctx, 'SELECT person_id, timestamp FROM events ORDER BY person_id, timestamp', window);
    for (const [person, timestamp] of answer.rows) {
      if (person === null || person === undefined) continue;
      let lists = out.get(String(person));
      if (!lists) out.set(String(person), (lists = exclusions.map(() => [])));
      lists[i]!.push(micros(timestamp));
    }
  }
  return out;
}

/** The from and to steps of the trends and time-to-convert views (PostHog's bounds and messages). */
function stepRange(q: FunnelsQueryInput, n: number): { from: number; to: number } {
  const from = q.funnelsFilter?.funnelFromStep ?? 0;
  const to = q.funnelsFilter?.funnelToStep ?? n - 1;
  if (from < 0 || from > n - 2)
    throw new InsightQueryError(`funnelFromStep is out of bounds. It must be between 0 and ${n - 2}.`, 'funnelsFilter__funnelFromStep');
  if (to < 1 || to > n - 1)
    throw new InsightQueryError(`funnelToStep is out of bounds. It must be between 1 and ${n - 1}.`, 'funnelsFilter__funnelToStep');
  if (to <= from)
    throw new InsightQueryError(
      'Funnel step range is invalid. funnelToStep should be greater than funnelFromStep.',
      'funnelsFilter__funnelToStep',
    );
  return { from, to };
}

/** Every person's events that match a step, sorted, and the HogQL of the first step's query. */
async function personEvents(ctx: InsightContext, q: FunnelsQueryInput, from: number, to: number, breakdown: FunnelBreakdown | undefined) {
  const byPerson = new Map<string, Map<string, StepEvent>>();
  const read = new Map<string, number[]>();
  q.series.forEach((node, i) => {
    const key = JSON.stringify([node.event ?? null, node.properties ?? null]);
    read.set(key, [...(read.get(key) ?? []), i]);
  });
  let hogql = '';
  for (const steps of read.values()) {
    const window = seriesWindow(q.series[steps[0]!]!, q.properties, from, to);
    const value = breakdown ? `, ${propertyField(breakdown.key, breakdown.type)} AS breakdown_value` : '';
    const answer = await selectAll(
      ctx,
      `SELECT person_id, timestamp, uuid${value} FROM events ORDER BY person_id, timestamp, uuid`,
      window,
    );
    hogql ||= answer.hogql;
    for (const [person, timestamp, uuid, bv] of answer.rows) {
      if (person === null || person === undefined) continue;
      let events = byPerson.get(String(person));
      if (!events) byPerson.set(String(person), (events = new Map()));
      const id = String(uuid);
      let ev = events.get(id);
      if (!ev)
        events.set(
          id,
          (ev = {
            t: micros(timestamp),
            uuid: id,
            steps: new Set(),
            ...(breakdown ? { value: bv === null || bv === undefined ? null : String(bv) } : {}),
          }),
        );
      for (const s of steps) ev.steps.add(s);
    }
  }
  const out = new Map<string, StepEvent[]>();
  for (const [person, events] of byPerson) out.set(person, sortEvents([...events.values()]));
  return { persons: out, hogql };
}

function stepsResult(q: FunnelsQueryInput, order: FunnelOrder, best: Attempt[], breakdownValue?: string): StepResult[] {
  if (best.length === 0) return [];
  return q.series.map((node, i) => {
    const reached = best.filter((a) => a.times.length > i);
    const seconds = i === 0 ? [] : reached.map((a) => (a.times[i]! - a.times[i - 1]!) / US);
    const name = order === 'unordered' ? `Completed ${i + 1} step${i === 0 ? '' : 's'}` : (node.event ?? 'All events');
    return {
      action_id: order === 'unordered' ? null : (node.event ?? null),
      name,
      custom_name: order === 'unordered' ? null : (node.custom_name ?? null),
      order: i,
      people: [],
      count: reached.length,
      type: 'events',
      average_conversion_time: seconds.length === 0 ? null : seconds.reduce((a, b) => a + b, 0) / seconds.length,
      median_conversion_time: median(seconds),
      ...(breakdownValue === undefined ? {} : { breakdown: breakdownValue, breakdown_value: breakdownValue }),
    };
  });
}

function timeToConvert(q: FunnelsQueryInput, best: Attempt[], from: number, to: number): TimeToConvertResult {
  const samples = best.filter((a) => a.times.length > to).map((a) => (a.times[to]! - a.times[from]!) / US);
  if (samples.length === 0) return { average_conversion_time: null, bins: [] };
  const asked = q.funnelsFilter?.binCount;
  const bins =
    asked !== undefined && asked !== null
      ? Math.min(Math.max(Math.floor(asked), 1), MAX_BINS)
      : Math.min(Math.max(Math.ceil(Math.cbrt(samples.length)), 1), MAX_AUTO_BINS);
  const min = Math.floor(Math.min(...samples));
  const max = Math.ceil(Math.max(...samples));
  const width = Math.max(Math.ceil((max - min) / bins), 1);
  const counts = new Array<number>(bins).fill(0);
  for (const s of samples) counts[Math.min(Math.floor((s - min) / width), bins - 1)]! += 1;
  const average = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    average_conversion_time: Math.round(average * 100) / 100,
    bins: counts.map((c, i) => [min + i * width, c]),
  };
}

/**
 * A funnel's persons and their attempts (module doc): what the runner counts, and the persons
 * behind a step (./funnel-actors.ts). Throws `InsightQueryError` as the runner does.
 */
export async function funnelModel(ctx: InsightContext, q: FunnelsQueryInput) {
  const n = q.series.length;
  if (n < 2) throw new InsightQueryError('Funnels require at least two steps before calculating.', 'series');
  refuseUnsupported(q);
  const viz = q.funnelsFilter?.funnelVizType ?? 'steps';
  const order: FunnelOrder = q.funnelsFilter?.funnelOrderType ?? 'ordered';
  const interval: Interval = q.interval ?? 'day';
  const deadline = deadlineOf(q, ctx.team.timezone);
  const steps = viz === 'steps' ? { from: 0, to: n - 1 } : stepRange(q, n);
  const range = await queryRange(ctx, q.dateRange, interval);
  const exclusions = exclusionsOf(q);
  const breakdown = funnelBreakdownOf(q, n);
  if (breakdown && viz === 'time_to_convert')
    throw new InsightQueryError('Funnel breakdowns are not supported in the time_to_convert view.', 'breakdownFilter__breakdown');
  const { persons, hogql } = await personEvents(ctx, q, range.from, range.to, breakdown);
  const excludedTimes =
    exclusions.length > 0 ? await exclusionTimes(ctx, q, exclusions, range.from, range.to) : new Map<string, number[][]>();
  const attempts = [...persons.entries()].map(([person, events]) => {
    const all = attemptsOf(events, n, order, deadline);
    const times = excludedTimes.get(person);
    return times ? all.filter((a) => !excluded(a, exclusions, times)) : all;
  });

  // each person's attempts with their breakdown value ('' without a breakdown)
  const valued = [...persons.entries()].map(([person, events], i) => ({
    person,
    value: breakdown ? breakdown.valueOf(events) : '',
    attempts: attempts[i]!,
  }));
  return { n, viz, order, interval, steps, range, breakdown, attempts, valued, hogql };
}

/** Runs a FunnelsQuery (module doc). */
export async function runFunnelsQuery(ctx: InsightContext, q: FunnelsQueryInput): Promise<FunnelsAnswer> {
  const { n, viz, order, interval, steps, range, breakdown, attempts, valued, hogql } = await funnelModel(ctx, q);
  let results: FunnelsAnswer['results'];
  if (viz === 'trends') {
    const trendsOf = (people: Attempt[][], breakdownValue?: string): TrendsResult => {
      const index = new Map(range.buckets.map((b, i) => [b.toMillis(), i]));
      const entered = range.buckets.map(() => 0);
      const converted = range.buckets.map(() => 0);
      for (const person of people) {
        // the furthest step of the person's attempts that start in each period
        const furthest = new Map<number, number>();
        for (const a of person) {
          const start = intervalStart(DateTime.fromMillis(Math.floor(a.times[0]! / 1000), { zone: range.zone }), interval);
          const k = index.get(start.toMillis());
          if (k === undefined) continue;
          furthest.set(k, Math.max(furthest.get(k) ?? 0, a.times.length));
        }
        for (const [k, reached] of furthest) {
          if (reached > steps.from) entered[k]! += 1;
          if (reached > steps.to) converted[k]! += 1;
        }
      }
      return {
        count: range.buckets.length,
        data: entered.map((e, k) => (e === 0 ? 0 : Math.round((converted[k]! / e) * 10000) / 100)),
        days: range.buckets.map((b) => dayText(b, interval)),
        labels: range.buckets.map((b) => bucketLabel(b, range)),
        ...(breakdownValue === undefined ? {} : { breakdown_value: breakdownValue }),
      };
    };
    results = breakdown
      ? groupByValue(
          valued.filter((v) => v.attempts.length > 0).map((v) => ({ value: v.value, item: v.attempts })),
          breakdown.limit,
          (person) => (bestAttempt(person)?.times.length ?? 0) >= n,
        ).map(([value, people]) => trendsOf(people, value))
      : [trendsOf(attempts)];
  } else {
    const best = attempts.map(bestAttempt).filter((a): a is Attempt => a !== undefined && a.times.length > 0);
    if (breakdown) {
      const bestValued = valued
        .map((v) => ({ value: v.value, item: bestAttempt(v.attempts) }))
        .filter((v): v is { value: string; item: Attempt } => v.item !== undefined && v.item.times.length > 0);
      results = groupByValue(bestValued, breakdown.limit, (a) => a.times.length >= n).map(([value, group]) =>
        stepsResult(q, order, group, value),
      );
    } else results = viz === 'time_to_convert' ? timeToConvert(q, best, steps.from, steps.to) : stepsResult(q, order, best);
  }
  return {
    results,
    isUdf: false,
    hogql,
    ...cacheFields(ctx, q),
    resolved_date_range: resolvedRange(range),
  };
}
