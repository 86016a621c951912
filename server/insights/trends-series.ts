/**
 * The numbers of one trends series over one period: HogQL queries over the project's events
 * (through `InsightContext.select`), one value per bucket, per breakdown value.
 *
 * - Buckets are grouped in HogQL by `toStartOfHour/Day/Week/Month(timestamp)` in the project's
 *   timezone, each event moved by the offset in force at its instant (./zone-buckets.ts): across
 *   a daylight-saving change every bucket is [its local start, the next local start).
 * - A breakdown (PostHog's breakdown.py) ranks the values by the sum of their buckets over the
 *   period, descending, then by value; events without the property (or with `""`) are
 *   `$$_posthog_breakdown_null_$$`, ranked after every value; past `limit` values are merged
 *   into `$$_posthog_breakdown_other_$$`, the bucket-wise sum of their values, as PostHog's. One
 *   query groups by bucket and value; when that grid holds more rows than a query returns, a
 *   ranking query picks the values first (ranked by the whole period's aggregate) and the other
 *   label is then the aggregate over the remaining events. Active-user math ranks that way too.
 * - Active-user math (`windowDays`) and a cumulative display of math whose buckets do not add up
 *   run one query per bucket over that bucket's window (the 7 / 30 days up to its end; or from the
 *   period's start to its end), so each value is the distinct count of its own window.
 */
import { DateTime } from 'luxon';
import type { EventsWindow, InsightContext, SeriesNode, RawProperties } from './context.js';
import { answeredKey, bucketKey, nextInterval, type DateRange } from './date-range.js';
import { hogqlString, propertyField, withWindow } from './hogql-text.js';
import type { SeriesMath } from './trends-math.js';
import { bucketExpr } from './zone-buckets.js';

/** PostHog's breakdown labels (posthog/hogql_queries/insights/trends/breakdown.py). */
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';

/** Rows a runner's query may return (PostHog's MAX_SELECT_RETURNED_ROWS). */
const ROWS = 50_000;

/** A breakdown as the runner reads `breakdownFilter`: one property (`breakdown`), or up to three (`breakdowns`, `multi`). */
export interface Breakdown {
  parts: { key: string; type: 'event' | 'person' }[];
  limit: number;
  /** `breakdowns`: each value is the parts joined by `BREAKDOWN_SEPARATOR`, a missing part the null label */
  multi: boolean;
}

/** Joins the parts of a multiple breakdown's value in HogQL (a character no property name or value of interest holds). */
export const BREAKDOWN_SEPARATOR = '\u001f';

/** What one series computes over one period. */
export interface SeriesPlan {
  node: SeriesNode;
  math: SeriesMath;
  range: DateRange;
  /** property filters of the whole query, besides the series' own */
  properties: RawProperties;
  breakdown: Breakdown | undefined;
  /** one value for the whole period instead of one per bucket */
  totalValue: boolean;
  /** a cumulative display: each bucket counts from the period's start */
  cumulative: boolean;
}

/** A series' numbers for one breakdown value (undefined without a breakdown). */
export interface SeriesValues {
  breakdownValue: string | undefined;
  /** one per bucket, or one for a whole-period display */
  values: number[];
}

/** The numbers of a plan, breakdown values in PostHog's order; `other` true when some were merged. */
export interface SeriesOutcome {
  rows: SeriesValues[];
  hasOther: boolean;
  hogql: string;
}

function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value !== '') return Number(value);
  return 0;
}

function windowOf(plan: SeriesPlan, from: number, to: number): EventsWindow {
  const event = plan.node.kind === 'EventsNode' ? (plan.node.event ?? undefined) : undefined;
  return { event, properties: [plan.node.properties as RawProperties, plan.properties], from, to };
}

/**
 * The breakdown key expression: the value, the null label for none or `""`, and the other label
 * for a value outside `kept` (when `merged`).
 */
function keyExpr(value: string, kept: string[], nullKept: boolean, merged: boolean): string {
  const nullLabel = hogqlString(nullKept || !merged ? BREAKDOWN_NULL : BREAKDOWN_OTHER);
  const rest =
    merged && kept.length > 0
      ? `if(${value} in (${kept.map(hogqlString).join(', ')}), ${value}, ${hogqlString(BREAKDOWN_OTHER)})`
      : merged
        ? hogqlString(BREAKDOWN_OTHER)
        : value;
  return `if(ifNull(${value}, '') = '', ${nullLabel}, ${rest})`;
}

/** The HogQL of a breakdown's value: the property, or for `breakdowns` its parts joined (a missing part the null label). */
function breakdownValue(breakdown: Breakdown): string {
  if (!breakdown.multi) return propertyField(breakdown.parts[0]!.key, breakdown.parts[0]!.type);
  const parts = breakdown.parts.map((p) => {
    const field = propertyField(p.key, p.type);
    return `if(ifNull(${field}, '') = '', ${hogqlString(BREAKDOWN_NULL)}, ${field})`;
  });
  return parts.length === 1 ? parts[0]! : `concat(${parts.join(`, ${hogqlString(BREAKDOWN_SEPARATOR)}, `)})`;
}

/**
 * PostHog's ranking of breakdown values by their totals: descending, then by value; the null label
 * after every value, inside the limit; the rest merged into the other label.
 */
function rank(totals: Map<string, number>, nullTotal: number | undefined, limit: number) {
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v]) => v);
  const kept = ranked.slice(0, limit);
  const nullKept = nullTotal !== undefined && kept.length < limit;
  const hasOther = ranked.length > kept.length || (nullTotal !== undefined && !nullKept);
  const order = [...kept, ...(nullKept ? [BREAKDOWN_NULL] : []), ...(hasOther ? [BREAKDOWN_OTHER] : [])];
  return { kept, nullKept, hasOther, order };
}

/**
 * A breakdown in one query: every (bucket, value) of the period, ranked by the sum of each value's
 * buckets (PostHog ranks by that sum, `arraySum`), the other label the bucket-wise sum of the values
 * past the limit, as PostHog's. Undefined when the grid holds more rows than a query returns (a
 * breakdown of very many values), for the caller's two-query path.
 */
async function breakdownGrid(
  ctx: InsightContext,
  plan: SeriesPlan,
  whole: EventsWindow,
  bucket: string,
  index: Map<string, number>,
  width: number,
): Promise<SeriesOutcome | undefined> {
  const value = breakdownValue(plan.breakdown!);
  const agg = plan.math.aggregate;
  const text = plan.totalValue
    ? `SELECT ${value} AS breakdown_value, ${agg} AS value FROM events GROUP BY breakdown_value LIMIT ${ROWS}`
    : `SELECT ${bucket} AS bucket, ${value} AS breakdown_value, ${agg} AS value FROM events GROUP BY bucket, breakdown_value LIMIT ${ROWS}`;
  const grid = await ctx.select(text, whole);
  if (grid.hasMore) return undefined;
  const byValue = new Map<string | null, number[]>();
  for (const row of grid.results) {
    const [at, bv, v] = plan.totalValue ? [0, row[0], row[1]] : [index.get(answeredKey(row[0], plan.range.interval)), row[1], row[2]];
    if (at === undefined) continue;
    const k = bv === null || bv === undefined || bv === '' ? null : String(bv);
    let arr = byValue.get(k);
    if (!arr) byValue.set(k, (arr = new Array<number>(width).fill(0)));
    arr[at]! += numberOf(v);
  }
  const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
  const totals = new Map<string, number>();
  for (const [k, arr] of byValue) if (k !== null) totals.set(k, sum(arr));
  const nullRow = byValue.get(null);
  const r = rank(totals, nullRow ? sum(nullRow) : undefined, plan.breakdown!.limit);
  const keptSet = new Set(r.kept);
  const other = new Array<number>(width).fill(0);
  for (const [k, arr] of byValue) {
    const merged = k === null ? !r.nullKept : !keptSet.has(k);
    if (merged) for (let i = 0; i < width; i++) other[i]! += arr[i]!;
  }
  // (a value may itself read as a label: a missing part of `breakdowns` is the null label's text)
  const rows = [
    ...r.kept.map((bv) => ({ breakdownValue: bv, values: [...byValue.get(bv)!] })),
    ...(r.nullKept ? [{ breakdownValue: BREAKDOWN_NULL, values: [...nullRow!] }] : []),
    ...(r.hasOther ? [{ breakdownValue: BREAKDOWN_OTHER, values: other }] : []),
  ];
  if (plan.cumulative && !plan.totalValue)
    for (const row of rows) for (let i = 1; i < row.values.length; i++) row.values[i]! += row.values[i - 1]!;
  return { rows, hasOther: r.hasOther, hogql: withWindow(grid.hogql, whole) };
}

/**
 * The breakdown's values ranked over `whole` by the plan's aggregate (PostHog's order), and the
 * HogQL key expression that names each event's label: its value, the null label, or the other
 * label for a value past the limit.
 */
async function rankedBreakdownKey(
  ctx: InsightContext,
  plan: SeriesPlan,
  whole: EventsWindow,
): Promise<{ key: string; order: string[]; hasOther: boolean; hogql: string }> {
  const value = breakdownValue(plan.breakdown!);
  const ranking = await ctx.select(
    `SELECT ${value} AS breakdown_value, ${plan.math.aggregate} AS value FROM events GROUP BY breakdown_value ORDER BY value DESC, breakdown_value LIMIT ${ROWS}`,
    whole,
  );
  const totals = new Map<string, number>();
  let nullTotal: number | undefined;
  for (const [v, total] of ranking.results) {
    if (v === null || v === undefined || v === '') nullTotal = (nullTotal ?? 0) + numberOf(total);
    else totals.set(String(v), numberOf(total));
  }
  const r = rank(totals, nullTotal, plan.breakdown!.limit);
  return {
    key: keyExpr(value, r.kept, r.nullKept, r.hasOther),
    order: r.order,
    hasOther: r.hasOther,
    hogql: withWindow(ranking.hogql, whole),
  };
}

/**
 * The HogQL condition that an event of the plan's period falls under breakdown label `label` (a
 * value as the answer's `breakdown_value` joins it, or the null or other label): for the persons
 * behind one breakdown value (./trends-actors.ts). The other label needs the ranking over the
 * whole period, one query.
 */
export async function breakdownCondition(ctx: InsightContext, plan: SeriesPlan, label: string): Promise<string> {
  const breakdown = plan.breakdown!;
  if (label === BREAKDOWN_OTHER) {
    const { key } = await rankedBreakdownKey(ctx, plan, windowOf(plan, plan.range.from, plan.range.to));
    return `${key} = ${hogqlString(BREAKDOWN_OTHER)}`;
  }
  const value = breakdownValue(breakdown);
  if (breakdown.multi) return `${value} = ${hogqlString(label)}`;
  return label === BREAKDOWN_NULL ? `ifNull(${value}, '') = ''` : `${value} = ${hogqlString(label)}`;
}

/** Computes a plan's numbers (module doc). */
export async function seriesValues(ctx: InsightContext, plan: SeriesPlan): Promise<SeriesOutcome> {
  const { range, math, breakdown } = plan;
  const whole = windowOf(plan, range.from, range.to);
  const bucket = bucketExpr(range.interval, range.zone, range.from, range.to);
  const keys = range.buckets.map((b) => bucketKey(b, range.interval));
  const index = new Map(keys.map((k, i) => [k, i]));
  const width = plan.totalValue ? 1 : keys.length;

  const perBucket = math.windowDays !== undefined || (plan.cumulative && !math.additive);
  if (breakdown && !perBucket) {
    const grid = await breakdownGrid(ctx, plan, whole, bucket, index, width);
    if (grid) return grid;
  }

  // the breakdown's ranking over the whole period
  let key: string | undefined;
  let order: string[] = [];
  let hasOther = false;
  let firstHogql: string | undefined;
  if (breakdown) ({ key, order, hasOther, hogql: firstHogql } = await rankedBreakdownKey(ctx, plan, whole));
  const rows = new Map<string | undefined, number[]>();
  const rowOf = (bv: string | undefined) => {
    let r = rows.get(bv);
    if (!r) rows.set(bv, (r = new Array<number>(width).fill(0)));
    return r;
  };
  const groupBy = key ? ', breakdown_value' : '';
  const keySelect = key ? `${key} AS breakdown_value, ` : '';

  if (!perBucket) {
    const text = plan.totalValue
      ? `SELECT ${keySelect}${math.aggregate} AS value FROM events${key ? ' GROUP BY breakdown_value' : ''} LIMIT ${ROWS}`
      : `SELECT ${bucket} AS bucket, ${keySelect}${math.aggregate} AS value FROM events GROUP BY bucket${groupBy} LIMIT ${ROWS}`;
    const answer = await ctx.select(text, whole);
    firstHogql ??= withWindow(answer.hogql, whole);
    for (const row of answer.results) {
      const [at, bv, v] = plan.totalValue
        ? [0, key ? row[0] : undefined, row[key ? 1 : 0]]
        : [index.get(answeredKey(row[0], range.interval)), key ? row[1] : undefined, row[key ? 2 : 1]];
      if (at === undefined) continue;
      rowOf(bv === undefined ? undefined : String(bv))[at] = numberOf(v);
    }
    if (plan.cumulative && !plan.totalValue) for (const r of rows.values()) for (let i = 1; i < r.length; i++) r[i]! += r[i - 1]!;
  } else {
    // one query per bucket, over that bucket's window (module doc)
    const ends = plan.totalValue ? [range.to] : range.buckets.map((b) => Math.min(nextInterval(b, range.interval).toMillis(), range.to));
    for (let i = 0; i < ends.length; i++) {
      const end = ends[i]!;
      const start =
        math.windowDays !== undefined
          ? DateTime.fromMillis(end, { zone: range.zone }).minus({ days: math.windowDays }).toMillis()
          : range.from;
      const text = `SELECT ${keySelect}${math.aggregate} AS value FROM events${key ? ' GROUP BY breakdown_value' : ''} LIMIT ${ROWS}`;
      const window = windowOf(plan, start, end);
      const answer = await ctx.select(text, window);
      firstHogql ??= withWindow(answer.hogql, window);
      for (const row of answer.results) rowOf(key ? String(row[0]) : undefined)[i] = numberOf(row[key ? 1 : 0]);
    }
  }
  const outcome: SeriesValues[] = breakdown
    ? order.map((bv) => ({ breakdownValue: bv, values: rows.get(bv) ?? new Array<number>(width).fill(0) }))
    : [{ breakdownValue: undefined, values: rows.get(undefined) ?? new Array<number>(width).fill(0) }];
  return { rows: outcome, hasOther, hogql: firstHogql ?? '' };
}
