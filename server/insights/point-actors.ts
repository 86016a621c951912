/**
 * The persons behind a point of a lifecycle, stickiness, retention or paths insight (PostHog's
 * `to_actors_query` of lifecycle_query_runner.py, stickiness_query_runner.py,
 * retention_query_runner.py and paths_query_runner.py), from the same per-person model each
 * runner counts, so a point's persons are exactly the ones its number counts:
 *
 * - lifecycle: `day` (the period holding it; absent, every period) and `status` (absent, every
 *   status), dormant persons included;
 * - stickiness: `day` N, the persons active in exactly N periods (N or more when cumulative;
 *   absent, at least one), of series `series` (absent, every series, as PostHog unions them),
 *   in the current or `compare: previous` period;
 * - retention: `interval` the cohort's index (absent, every cohort, each person at their first),
 *   `breakdown` its value; each person with `appearances`, the periods after the cohort's in which
 *   they came back (0, the cohort's own, always);
 * - paths: the persons whose session paths pass `pathsFilter.pathStartKey` (a node followed by
 *   another), `pathEndKey` (a node), both (the edge), or end at `pathDropoffKey` (which wins over
 *   the others); none of them, every person with a path. Their `event_count` is the path nodes
 *   that matched.
 *
 * Throws `InsightQueryError` (fields relative to the InsightActorsQuery) for a day that reads as no
 * date and a series that does not exist; the runners' own errors under `source`.
 */
import type { ActorRow, InsightContext, InsightPoint } from './context.js';
import { bucketKey, intervalStart, previousPeriod, type Interval } from './date-range.js';
import { InsightQueryError, nestedErrors } from './errors.js';
import { queryRange } from './insight-base.js';
import { lifecycleStatuses, type LifecycleQueryInput } from './lifecycle.js';
import { personPaths, type PathsQueryInput } from './paths.js';
import { breakdownLabels, retentionModel, type RetentionQueryInput } from './retention.js';
import { personStickiness, refuseStickiness, type StickinessQueryInput } from './stickiness.js';
import { pointDate } from './trends-actors.js';

type Found = { rows: ActorRow[]; hogql: string };

/** The persons of a lifecycle point (module doc). */
export async function lifecycleActors(ctx: InsightContext, point: InsightPoint, q: LifecycleQueryInput): Promise<Found> {
  const { statuses, range, hogql } = await nestedErrors('source', () => lifecycleStatuses(ctx, q));
  let period: number | undefined;
  if (point.day !== undefined && point.day !== null) {
    const day = pointDate(String(point.day), range.zone);
    if (!day) throw new InsightQueryError(`"${String(point.day)}" is not a date: use YYYY-MM-DD.`, 'day');
    const key = bucketKey(intervalStart(day, range.interval), range.interval);
    period = range.buckets.findIndex((b) => bucketKey(b, range.interval) === key);
    if (period < 0) return { rows: [], hogql };
  }
  const seen = new Set<string>();
  for (const s of statuses)
    if ((period === undefined || s.period === period) && (point.status === undefined || point.status === null || s.status === point.status))
      seen.add(s.person);
  return { rows: [...seen].map((person) => ({ person })), hogql };
}

/** The persons of a stickiness point (module doc). */
export async function stickinessActors(ctx: InsightContext, point: InsightPoint, q: StickinessQueryInput): Promise<Found> {
  await nestedErrors('source', () => refuseStickiness(q));
  const n = point.day === undefined || point.day === null ? undefined : Number(point.day);
  if (n !== undefined && (!Number.isInteger(n) || n < 1))
    throw new InsightQueryError('day must be the number of intervals (a whole number of at least 1).', 'day');
  const series = point.series === undefined || point.series === null ? q.series.map((_, i) => i) : [point.series];
  for (const i of series) if (!q.series[i]) throw new InsightQueryError(`The query has no series ${i}.`, 'series');
  const interval: Interval = q.interval ?? 'day';
  let range = await nestedErrors('source', () => queryRange(ctx, q.dateRange, interval));
  if (point.compare === 'previous') range = previousPeriod(range);
  const cumulative = q.stickinessFilter?.computedAs === 'cumulative';
  const events = new Map<string, number>();
  let hogql = '';
  for (const i of series) {
    const answer = await personStickiness(ctx, q, q.series[i]!, range);
    hogql ||= answer.hogql;
    for (const [person, p] of answer.persons) {
      const counts = n === undefined ? p.periods >= 1 : cumulative ? p.periods >= n : p.periods === n;
      if (counts) events.set(person, (events.get(person) ?? 0) + p.events);
    }
  }
  return { rows: [...events].map(([person, e]) => ({ person, events: e })), hogql };
}

/** The persons of a retention cohort (module doc). */
export async function retentionActors(ctx: InsightContext, point: InsightPoint, q: RetentionQueryInput): Promise<Found> {
  const m = await nestedErrors('source', () => retentionModel(ctx, q));
  const index = point.interval ?? undefined;
  if (index !== undefined && index >= m.starts.length)
    throw new InsightQueryError(`The query has ${m.starts.length} cohorts: interval ${index} is outside them.`, 'interval');
  const wanted = point.breakdown;
  const label =
    wanted === undefined || wanted === null || (Array.isArray(wanted) && wanted.length === 0)
      ? undefined
      : Array.isArray(wanted)
        ? wanted.map(String).join('::')
        : String(wanted);
  const labelOf = m.breakdown && label !== undefined ? breakdownLabels(m.cohorts, m.breakdown.limit).labelOf : undefined;
  const rows: ActorRow[] = [];
  const seen = new Set<string>();
  const cohorts = index === undefined ? m.cohorts.map((_, i) => i) : [index];
  for (const i of cohorts) {
    for (const [person, value] of m.cohorts[i]!) {
      if (seen.has(person) || (labelOf && labelOf(value) !== label)) continue;
      seen.add(person);
      const back = m.returns.get(person);
      const appearances = [0];
      for (let k = 1; k < m.total; k++) if (back?.has(i + k)) appearances.push(k);
      rows.push({ person, appearances });
    }
  }
  return { rows, hogql: m.hogql };
}

/** The persons of a paths node or edge (module doc). */
export async function pathsActors(ctx: InsightContext, q: PathsQueryInput): Promise<Found> {
  const { paths, hogql } = await nestedErrors('source', () => personPaths(ctx, q));
  const f = q.pathsFilter ?? {};
  const start = f.pathStartKey ?? undefined;
  const end = f.pathEndKey ?? undefined;
  const dropoff = f.pathDropoffKey ?? undefined;
  const rows: ActorRow[] = [];
  for (const [person, sessions] of paths) {
    let matched = 0;
    for (const path of sessions) {
      const keys = path.map((item, i) => `${i + 1}_${item.item}`);
      if (dropoff !== undefined) {
        if (keys[keys.length - 1] === dropoff) matched += 1;
      } else if (start !== undefined && end !== undefined) {
        for (let i = 1; i < keys.length; i++) if (keys[i - 1] === start && keys[i] === end) matched += 1;
      } else if (start !== undefined) {
        for (let i = 1; i < keys.length; i++) if (keys[i - 1] === start) matched += 1;
      } else if (end !== undefined) {
        for (const k of keys) if (k === end) matched += 1;
      } else matched += keys.length;
    }
    if (matched > 0) rows.push({ person, events: matched });
  }
  return { rows, hogql };
}
