/**
 * The TrendsQuery runner (PostHog's posthog/hogql_queries/insights/trends/trends_query_runner.py):
 * each series counted per bucket over the date range, with its breakdown, compare period and
 * formulas, answered as PostHog's TrendsQueryResponse.
 *
 * Results: one object per series × breakdown value (PostHog's order: values by total, then the
 * null label, then "other"), every current one first, then, with `compare`, the previous period's
 * in the same order. Each has `data` (one number per bucket), `labels`, `days`, `count` (the sum
 * of `data`; its last value when cumulative), `label` (the event, `All events` for every event;
 * with a breakdown the value, or `<event> - <value>` for several series), `action`, `filter`,
 * `order` (the series' index), and `breakdown_value`, `compare`, `compare_label` where they apply.
 * A whole-range display (`BoldNumber`, `ActionsPie`, `ActionsBarValue`, `ActionsTable`,
 * `WorldMap`) has `aggregated_value` instead, `data: []` and `count: 0`, its interval a day.
 * Formulas replace the series: one object per formula (per breakdown value and period), the first
 * series' object with `label` the formula's `custom_name` or `Formula (<formula>)`, `action: null`,
 * `order` the formula's index. `smoothingIntervals` N averages each bucket with the N-1 before it,
 * rounded down (PostHog's window in trends_query_builder.py).
 *
 * Throws `InsightQueryError` for what it does not run, naming the field.
 */
import type { components } from '../../generated/api.js';
import type { InsightContext, TrendsQueryInput } from './context.js';
import { bucketLabel, dayText, isoText, previousPeriod, resolvedRange, type DateRange, type Interval } from './date-range.js';
import { InsightQueryError } from './errors.js';
import { compileFormula } from './formula.js';
import { BREAKDOWN_VALUES_LIMIT, queryRange } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';
import { seriesMath } from './trends-math.js';
import { BREAKDOWN_OTHER, BREAKDOWN_SEPARATOR, seriesValues, type Breakdown, type SeriesPlan } from './trends-series.js';

/** PostHog's displays that answer one value for the whole range (TrendsDisplay `is_total_value`). */
export const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap']);

/** One series object of the answer (schema `TrendsSeriesResult`). */
export type TrendsResult = components['schemas']['TrendsSeriesResult'];

/** A result with the series and the (period, breakdown value) group it belongs to, for formulas. */
interface Placed {
  obj: TrendsResult;
  series: number;
  group: string;
}

/** A TrendsQuery's answer (schema `TrendsQueryResponse`). */
export interface TrendsAnswer extends CacheFields {
  results: TrendsResult[];
  hasMore: boolean;
  hogql: string;
  resolved_date_range: { date_from: string; date_to: string };
}

/** The breakdown of a TrendsQuery's `breakdownFilter`, or undefined for none. Throws `InsightQueryError` for a type it does not read. */
export function trendsBreakdownOf(q: TrendsQueryInput): Breakdown | undefined {
  const bf = q.breakdownFilter;
  if (!bf) return undefined;
  const limit = bf.breakdown_limit ?? BREAKDOWN_VALUES_LIMIT;
  if (bf.breakdowns && bf.breakdowns.length > 0) {
    const parts = bf.breakdowns.map((b, i) => {
      const type = b.type ?? 'event';
      if (type !== 'event' && type !== 'person')
        throw new InsightQueryError(
          `Breakdown type "${type}" is not supported: break down by an event or a person property.`,
          `breakdownFilter__breakdowns__${i}__type`,
        );
      return { key: b.property, type: type as 'event' | 'person' };
    });
    return { parts, limit, multi: true };
  }
  if (bf.breakdown === undefined || bf.breakdown === null || bf.breakdown === '') return undefined;
  return { parts: [{ key: String(bf.breakdown), type: bf.breakdown_type ?? 'event' }], limit, multi: false };
}

/** A breakdown value as the answer shows it: the text, or for `breakdowns` the list of parts (the other label once per part). */
function shownValue(value: string, breakdown: Breakdown): string | string[] {
  if (!breakdown.multi) return value;
  if (value === BREAKDOWN_OTHER) return breakdown.parts.map(() => BREAKDOWN_OTHER);
  return value.split(BREAKDOWN_SEPARATOR);
}

/** The formulas of `trendsFilter` (`formulaNodes`, else the older `formulas` / `formula`, as PostHog moves them), each with its field. */
function formulasOf(q: TrendsQueryInput): { formula: string; custom_name?: string | null | undefined; attr: string }[] {
  const tf = q.trendsFilter;
  if (!tf) return [];
  if (tf.formulaNodes && tf.formulaNodes.length > 0)
    return tf.formulaNodes
      .map((f, i) => ({ ...f, attr: `trendsFilter__formulaNodes__${i}__formula` }))
      .filter((f) => f.formula.trim() !== '');
  if (tf.formulas && tf.formulas.length > 0)
    return tf.formulas.map((formula, i) => ({ formula, attr: `trendsFilter__formulas__${i}` })).filter((f) => f.formula.trim() !== '');
  if (tf.formula && tf.formula.trim() !== '') return [{ formula: tf.formula, attr: 'trendsFilter__formula' }];
  return [];
}

function smooth(data: number[], n: number): number[] {
  return data.map((_, i) => {
    const part = data.slice(Math.max(0, i - n + 1), i + 1);
    return Math.floor(part.reduce((a, b) => a + b, 0) / part.length);
  });
}

/** The legacy `filter` dict each object carries (PostHog's `_query_to_filter`), nulls left out. */
function filterOf(q: TrendsQueryInput, range: DateRange): Record<string, unknown> {
  const resolved = resolvedRange(range);
  const out: Record<string, unknown> = {
    insight: 'TRENDS',
    properties: q.properties ?? [],
    filter_test_accounts: q.filterTestAccounts ?? false,
    date_from: resolved.date_from,
    date_to: resolved.date_to,
    entity_type: 'events',
    interval: range.interval,
    ...(q.trendsFilter ?? {}),
    ...(q.breakdownFilter ?? {}),
  };
  for (const k of Object.keys(out)) if (out[k] === null || out[k] === undefined) delete out[k];
  return out;
}

/** Runs a TrendsQuery (module doc). */
export async function runTrendsQuery(ctx: InsightContext, q: TrendsQueryInput): Promise<TrendsAnswer> {
  const display = q.trendsFilter?.display ?? 'ActionsLineGraph';
  const totalValue = TOTAL_VALUE_DISPLAYS.has(display);
  const cumulative = display === 'ActionsLineGraphCumulative';
  const interval: Interval = totalValue ? 'day' : (q.interval ?? 'day');
  if (q.compareFilter?.compare_to)
    throw new InsightQueryError('compare_to is not supported: use compare: true for the previous period.', 'compareFilter__compare_to');
  const breakdown = trendsBreakdownOf(q);
  const maths = q.series.map((node, i) => seriesMath(node, i, interval));
  const formulas = await Promise.all(
    formulasOf(q).map(async (f) => ({ ...f, run: await compileFormula(f.formula, q.series.length, f.attr) })),
  );
  const range = await queryRange(ctx, q.dateRange, interval);
  const compare = q.compareFilter?.compare === true;
  const periods: { range: DateRange; label: 'current' | 'previous' | undefined }[] = compare
    ? [
        { range, label: 'current' },
        { range: previousPeriod(range), label: 'previous' },
      ]
    : [{ range, label: undefined }];

  let hasMore = false;
  let hogql = '';
  const results: Placed[] = [];
  for (const period of periods) {
    const filter = filterOf(q, period.range);
    const isoDays = period.range.buckets.map(isoText);
    for (let i = 0; i < q.series.length; i++) {
      const node = q.series[i]!;
      // an action this server does not have: left out, as PostHog leaves out a deleted action
      if (node.kind !== 'EventsNode') continue;
      const plan: SeriesPlan = { node, math: maths[i]!, range: period.range, properties: q.properties, breakdown, totalValue, cumulative };
      const outcome = await seriesValues(ctx, plan);
      hasMore ||= outcome.hasOther;
      hogql ||= outcome.hogql;
      const name = node.event ?? 'All events';
      const action = {
        days: isoDays,
        id: node.event ?? null,
        type: 'events',
        order: i,
        name,
        custom_name: node.custom_name ?? null,
        math: node.math ?? null,
        math_property: node.math_property ?? null,
        math_hogql: node.math_hogql ?? null,
        math_group_type_index: null,
        properties: {},
      };
      for (const row of outcome.rows) {
        const smoothing = q.trendsFilter?.smoothingIntervals ?? 1;
        const data = totalValue ? [] : smoothing > 1 ? smooth(row.values, smoothing) : row.values;
        const shown = row.breakdownValue === undefined || !breakdown ? undefined : shownValue(row.breakdownValue, breakdown);
        const valueLabel = Array.isArray(shown) ? shown.join('::') : shown;
        const label = valueLabel === undefined ? name : q.series.length > 1 ? `${name} - ${valueLabel}` : valueLabel;
        const obj: TrendsResult = {
          data,
          ...(totalValue ? {} : { labels: period.range.buckets.map((b) => bucketLabel(b, period.range)) }),
          days: totalValue ? [] : period.range.buckets.map((b) => dayText(b, interval)),
          count: totalValue ? 0 : cumulative ? (data[data.length - 1] ?? 0) : data.reduce((a, b) => a + b, 0),
          ...(totalValue ? { aggregated_value: row.values[0] ?? 0 } : {}),
          label,
          filter,
          action,
          order: i,
          ...(shown === undefined ? {} : { breakdown_value: shown }),
          ...(period.label === undefined ? {} : { compare: true, compare_label: period.label }),
        };
        results.push({ obj, series: i, group: `${period.label ?? ''}\u0000${row.breakdownValue ?? ''}` });
      }
    }
  }

  let answerResults: TrendsResult[];
  if (formulas.length > 0) {
    answerResults = [];
    const groups = new Map<string, Map<number, TrendsResult>>();
    for (const r of results) {
      let g = groups.get(r.group);
      if (!g) groups.set(r.group, (g = new Map()));
      g.set(r.series, r.obj);
    }
    formulas.forEach((f, fi) => {
      for (const g of groups.values()) {
        const first = [...g.values()][0]!;
        const width = totalValue ? 1 : first.data.length;
        const series = q.series.map((_, s) => {
          const r = g.get(s);
          if (!r) return new Array<number>(width).fill(0);
          return totalValue ? [r.aggregated_value ?? 0] : r.data;
        });
        const computed = Array.from({ length: width }, (_, i) => f.run(series, i));
        const label = f.custom_name ?? `Formula (${f.formula})`;
        answerResults.push({
          ...first,
          label,
          action: null,
          order: fi,
          ...(totalValue
            ? { aggregated_value: computed[0] ?? 0, data: [], count: 0 }
            : { data: computed, count: cumulative ? (computed[computed.length - 1] ?? 0) : computed.reduce((a, b) => a + b, 0) }),
        });
      }
    });
  } else {
    answerResults = results.map((r) => r.obj);
  }
  if (q.breakdownFilter?.breakdown_hide_other_aggregation === true)
    answerResults = answerResults.filter((r) => {
      const v = r.breakdown_value;
      return Array.isArray(v) ? !v.every((p) => p === BREAKDOWN_OTHER) : v !== BREAKDOWN_OTHER;
    });

  return {
    results: answerResults,
    hasMore,
    hogql,
    ...cacheFields(ctx, q),
    resolved_date_range: resolvedRange(range),
  };
}
