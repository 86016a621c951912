/**
 * The PathsQuery runner (PostHog's posthog/hogql_queries/insights/paths_query_runner.py): the
 * most common moves from one path item to the next, as edges between positioned nodes.
 *
 * It reads the range's events as `SELECT person_id, timestamp, uuid, event, $current_url,
 * $screen_name … ORDER BY person_id, timestamp, uuid` (one read, ./actor-rows.ts) and, per
 * person in TypeScript, as PostHog's query does:
 * - an event's item is its name, except `$pageview` (its `$current_url`, one trailing `/` removed
 *   unless it is `/`) and `$screen` (its `$screen_name`); `includeEventTypes` (`$pageview`,
 *   `$screen`, `custom_event` = names not starting with `$`; default all) keeps only those
 *   events; `excludeEvents` drops items; `localPathCleaningFilters` `[{regex, alias}]` rewrite
 *   items (RE2 patterns, as ClickHouse's replaceRegexpAll reads them: every match becomes the
 *   alias, taken literally); `pathGroupings` (`*` wildcards) replace an
 *   item by the first pattern it matches;
 * - a person's events split into sessions where 30 minutes or more pass between two events;
 *   consecutive equal items collapse into the first;
 * - `startPoint` starts a session's path at its first such item, `endPoint` ends it at the first
 *   such item after that (sessions without them are left out); then the path keeps its first
 *   `stepLimit` items (default 5; with only `endPoint`, its last ones).
 * Nodes are `<position>_<item>` (1-based). Edges count the moves from one node to the next over
 * every path, `average_conversion_time` the mean milliseconds between them. The answer is the
 * `edgeLimit` (default 50) edges with the highest value (then by source, then target) within
 * `minEdgeWeight` … `maxEdgeWeight`, keeping only those reachable from a `1_` node.
 *
 * Throws `InsightQueryError` for what it does not run (`hogql` paths, `funnelPathsFilter`,
 * groups) and for a regular expression it cannot read.
 */
import { RE2JS } from 're2js';
import type { components } from '../../generated/api.js';
import { micros, selectAll } from './actor-rows.js';
import type { EventsWindow, InsightContext } from './context.js';
import { InsightQueryError } from './errors.js';
import { propertyField } from './hogql-text.js';
import { queryRange } from './insight-base.js';
import { cacheFields, type CacheFields } from './response.js';

/** A PathsQuery as the contract has it (schema `PathsQuery`). */
export type PathsQueryInput = components['schemas']['PathsQuery'];
type PathsEdge = components['schemas']['PathsEdge'];

/** A PathsQuery's answer (schema `PathsQueryResponse`). */
export interface PathsAnswer extends CacheFields {
  results: PathsEdge[];
  hogql: string;
}

/** PostHog's defaults (paths_query_runner.py). */
const DEFAULT_EDGE_LIMIT = 50;
const DEFAULT_STEP_LIMIT = 5;
/** The gap (µs) at which a person's events start a new session: 30 minutes. */
const SESSION_GAP_US = 30 * 60 * 1_000_000;

export interface Item {
  item: string;
  t: number;
}

/** A `*` pattern as a whole-item RE2 expression (linear time whatever the pattern). */
function wildcard(pattern: string): RE2JS {
  return RE2JS.compile(
    `^${pattern
      .split('*')
      .map((p) => RE2JS.quote(p))
      .join('.*')}$`,
  );
}

/** The item rewriter of the filter's cleaning rules, groupings and exclusions (module doc). */
function itemRules(f: NonNullable<PathsQueryInput['pathsFilter']>): (item: string) => string | undefined {
  const cleaning = (f.localPathCleaningFilters ?? []).map((c, i) => {
    try {
      return { regex: RE2JS.compile(c.regex ?? ''), alias: c.alias ?? '' };
    } catch (err) {
      throw new InsightQueryError(
        `"${c.regex}" is not an RE2 regular expression: ${err instanceof Error ? err.message : String(err)}`,
        `pathsFilter__localPathCleaningFilters__${i}__regex`,
      );
    }
  });
  const groupings = (f.pathGroupings ?? []).map((g) => ({ pattern: g, regex: wildcard(g) }));
  const excluded = new Set(f.excludeEvents ?? []);
  return (raw) => {
    let item = raw;
    for (const c of cleaning) item = c.regex.matcher(item).replaceAll(() => c.alias);
    const group = groupings.find((g) => g.regex.matches(item));
    if (group) item = group.pattern;
    return excluded.has(item) || excluded.has(raw) ? undefined : item;
  };
}

/** An event's item, or undefined when `includeEventTypes` leaves it out. */
function itemOf(event: string, url: unknown, screen: unknown, types: Set<string>): string | undefined {
  if (event === '$pageview') {
    if (types.size > 0 && !types.has('$pageview')) return undefined;
    const text = url === null || url === undefined ? '' : String(url);
    return text.length > 1 && text.endsWith('/') ? text.slice(0, -1) : text;
  }
  if (event === '$screen') {
    if (types.size > 0 && !types.has('$screen')) return undefined;
    return screen === null || screen === undefined ? '' : String(screen);
  }
  if (types.size > 0 && !(types.has('custom_event') && !event.startsWith('$'))) return undefined;
  return event;
}

/** A session's path after `startPoint`, `endPoint` and `stepLimit`, or undefined when left out. */
function trim(items: Item[], start: string | undefined, end: string | undefined, limit: number): Item[] | undefined {
  let path = items;
  if (start !== undefined) {
    const at = path.findIndex((i) => i.item === start);
    if (at < 0) return undefined;
    path = path.slice(at);
  }
  if (end !== undefined) {
    const at = path.findIndex((i) => i.item === end);
    if (at < 0) return undefined;
    path = path.slice(0, at + 1);
    return start === undefined ? path.slice(-limit) : path.slice(0, limit);
  }
  return path.slice(0, limit);
}

/**
 * Each person's paths (one per session, after `startPoint`, `endPoint` and `stepLimit`; module
 * doc): what the runner counts, and the persons behind a node or edge (./paths-actors.ts).
 * Throws `InsightQueryError` for what the runner does not run.
 */
export async function personPaths(ctx: InsightContext, q: PathsQueryInput): Promise<{ paths: Map<string, Item[][]>; hogql: string }> {
  const f = q.pathsFilter ?? {};
  if (q.aggregation_group_type_index !== undefined && q.aggregation_group_type_index !== null)
    throw new InsightQueryError('Aggregating by groups is not supported: this server stores no groups.', 'aggregation_group_type_index');
  if (q.funnelPathsFilter) throw new InsightQueryError('Funnel paths (funnelPathsFilter) are not supported.', 'funnelPathsFilter');
  const types = new Set(f.includeEventTypes ?? []);
  if (types.has('hogql') || f.pathsHogQLExpression)
    throw new InsightQueryError(
      'HogQL paths are not supported: use $pageview, $screen or custom_event.',
      types.has('hogql') ? 'pathsFilter__includeEventTypes' : 'pathsFilter__pathsHogQLExpression',
    );
  const rules = itemRules(f);
  const stepLimit = f.stepLimit ?? DEFAULT_STEP_LIMIT;
  const range = await queryRange(ctx, q.dateRange, 'day');
  const window: EventsWindow = {
    event: types.size === 1 && types.has('$pageview') ? '$pageview' : types.size === 1 && types.has('$screen') ? '$screen' : undefined,
    properties: [q.properties],
    from: range.from,
    to: range.to,
  };
  const answer = await selectAll(
    ctx,
    `SELECT person_id, timestamp, uuid, event, ${propertyField('$current_url', 'event')}, ${propertyField('$screen_name', 'event')} FROM events ORDER BY person_id, timestamp, uuid`,
    window,
  );

  // each person's events, ordered by time then uuid (the same on every store)
  const byPerson = new Map<string, { t: number; uuid: string; item: string }[]>();
  for (const [person, timestamp, uuid, event, url, screen] of answer.rows) {
    if (person === null || person === undefined) continue;
    const raw = itemOf(String(event), url, screen, types);
    if (raw === undefined) continue;
    const item = rules(raw);
    if (item === undefined) continue;
    let list = byPerson.get(String(person));
    if (!list) byPerson.set(String(person), (list = []));
    list.push({ t: micros(timestamp), uuid: String(uuid), item });
  }

  const paths = new Map<string, Item[][]>();
  for (const [person, list] of byPerson) {
    list.sort((a, b) => a.t - b.t || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
    const sessions: Item[][] = [];
    let prevT: number | undefined;
    for (const e of list) {
      if (prevT === undefined || e.t - prevT >= SESSION_GAP_US) sessions.push([]);
      const session = sessions[sessions.length - 1]!;
      if (session.length === 0 || session[session.length - 1]!.item !== e.item) session.push({ item: e.item, t: e.t });
      prevT = e.t;
    }
    const kept = sessions
      .map((session) => trim(session, f.startPoint ?? undefined, f.endPoint ?? undefined, stepLimit))
      .filter((path): path is Item[] => path !== undefined);
    if (kept.length > 0) paths.set(person, kept);
  }
  return { paths, hogql: answer.hogql };
}

/** Runs a PathsQuery (module doc). */
export async function runPathsQuery(ctx: InsightContext, q: PathsQueryInput): Promise<PathsAnswer> {
  const f = q.pathsFilter ?? {};
  const edgeLimit = f.edgeLimit ?? DEFAULT_EDGE_LIMIT;
  const { paths, hogql } = await personPaths(ctx, q);
  const edges = new Map<string, { source: string; target: string; value: number; totalUs: number }>();
  for (const sessions of paths.values()) {
    for (const path of sessions) {
      for (let i = 1; i < path.length; i++) {
        const source = `${i}_${path[i - 1]!.item}`;
        const target = `${i + 1}_${path[i]!.item}`;
        const key = `${source}\u0000${target}`;
        const edge = edges.get(key) ?? { source, target, value: 0, totalUs: 0 };
        edge.value += 1;
        edge.totalUs += path[i]!.t - path[i - 1]!.t;
        edges.set(key, edge);
      }
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const ranked = [...edges.values()]
    .filter((e) => (f.minEdgeWeight == null || e.value >= f.minEdgeWeight) && (f.maxEdgeWeight == null || e.value <= f.maxEdgeWeight))
    .sort((a, b) => b.value - a.value || cmp(a.source, b.source) || cmp(a.target, b.target))
    .slice(0, edgeLimit);
  // only edges reachable from a first node: by source position, so each source's reach is known first
  const position = (node: string) => Number(node.slice(0, node.indexOf('_')));
  const reachable = new Set<string>();
  const kept = new Set<(typeof ranked)[number]>();
  for (const e of [...ranked].sort((a, b) => position(a.source) - position(b.source))) {
    if (position(e.source) === 1 || reachable.has(e.source)) {
      kept.add(e);
      reachable.add(e.target);
    }
  }
  const results: PathsEdge[] = ranked
    .filter((e) => kept.has(e))
    .map((e) => ({ source: e.source, target: e.target, value: e.value, average_conversion_time: e.totalUs / e.value / 1000 }));
  // PostHog's paths answer has no resolved_date_range (paths_query_runner.py)
  return { results, hogql, ...cacheFields(ctx, q) };
}
