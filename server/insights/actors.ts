/**
 * The ActorsQuery runner (PostHog's posthog/hogql_queries/actors_query_runner.py with an
 * InsightActorsQuery or FunnelsActorsQuery source, insights/insight_actors_query_runner.py): the
 * persons behind one point of an insight, one row per person, page by page.
 *
 * The source's persons come from the kind's own model (./trends-actors.ts, ./funnel-actors.ts,
 * ./point-actors.ts), each with what the kind gives: `event_count` (trends, paths, stickiness) or
 * `appearances` (retention). Then, as PostHog's runner:
 * - `select` columns: `actor` / `person` (the person: `{id, properties, is_identified, created_at,
 *   distinct_ids}`, `id` the uuid; a person deleted since is `{id, distinct_ids: []}` and counted
 *   in `missing_actors_count`), `id` / `actor_id` / `person_id` (the uuid), `person.$delete` (1),
 *   `person_display_name` (`{display_name, id}`), `event_count`, `matched_recordings` (`[]`: this
 *   server stores no recordings), `created_at`, `is_identified`, `properties.<key>` /
 *   `person.properties.<key>`, and for retention `appearances` and `<period>_<k>` (1 when the person
 *   came back k periods after the cohort's, else 0); ` -- label` after a column is a comment.
 *   Default `["person", "id", "person.$delete"]`. A column the source does not give answers 400.
 * - `orderBy`: columns as above (or `length(appearances)`, or `person` for the display name), each
 *   `ASC` (default) or `DESC`; without it, `created_at DESC` when selected, else the uuid ascending.
 *   The uuid breaks every tie, so pages never overlap.
 * - `search` keeps the persons whose email, name, uuid or a distinct id contains it (any case).
 * - `limit` (default 100, at most 50,000) and `offset`; `hasMore` says whether more follow.
 *
 * Throws `InsightQueryError` naming the field (relative to the ActorsQuery). `properties` and
 * `fixedProperties` (person filters on the actors) answer 400: filter the source instead.
 */
import type { components } from '../../generated/api.js';
import type { ActorPerson, ActorRow, InsightContext } from './context.js';
import { InsightQueryError, nestedErrors } from './errors.js';
import { funnelActors } from './funnel-actors.js';
import { lifecycleActors, pathsActors, retentionActors, stickinessActors } from './point-actors.js';
import { cacheFields } from './response.js';
import { trendsActors } from './trends-actors.js';

/** An ActorsQuery as the contract has it (schema `ActorsQuery`). */
export type ActorsQueryInput = components['schemas']['ActorsQuery'];
export type { ActorRow, InsightPoint } from './context.js';
/** An ActorsQuery's answer (schema `ActorsQueryResponse`). */
export type ActorsAnswer = components['schemas']['ActorsQueryResponse'];

/** PostHog's default and largest page (DEFAULT_RETURNED_ROWS, MAX_SELECT_RETURNED_ROWS). */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 50_000;

/** What a column reads from a person's row. */
interface Column {
  type: string;
  /** whether it needs the person record (for ordering or searching every row) */
  person: boolean;
  value: (row: ActorRow, p: ActorPerson | undefined) => unknown;
}

/** The source's persons, and which columns it gives. */
async function sourceActors(
  ctx: InsightContext,
  source: ActorsQueryInput['source'],
): Promise<{ rows: ActorRow[]; hogql: string; gives: { events: boolean; period?: string } }> {
  if (source.kind === 'FunnelsActorsQuery') return { ...(await funnelActors(ctx, source)), gives: { events: false } };
  const q = source.source;
  switch (q.kind) {
    case 'TrendsQuery':
      return { ...(await trendsActors(ctx, source, q)), gives: { events: true } };
    case 'LifecycleQuery':
      return { ...(await lifecycleActors(ctx, source, q)), gives: { events: false } };
    case 'StickinessQuery':
      return { ...(await stickinessActors(ctx, source, q)), gives: { events: true } };
    case 'RetentionQuery':
      return {
        ...(await retentionActors(ctx, source, q)),
        gives: { events: false, period: (q.retentionFilter.period ?? 'Day').toLowerCase() },
      };
    default:
      return { ...(await pathsActors(ctx, q)), gives: { events: true } };
  }
}

/** A column's text without its ` -- label` comment. */
function bare(text: string): string {
  const at = text.indexOf(' --');
  return (at >= 0 ? text.slice(0, at) : text).trim();
}

/** The column `text` names, or undefined when the source does not give it. */
function columnOf(text: string, gives: { events: boolean; period?: string }): Column | undefined {
  const name = bare(text);
  const personObject = (row: ActorRow, p: ActorPerson | undefined) =>
    p
      ? { id: p.id, properties: p.properties, is_identified: p.is_identified, created_at: p.created_at, distinct_ids: p.distinct_ids }
      : { id: row.person, distinct_ids: [] };
  switch (name) {
    case 'actor':
    case 'person':
      return { type: 'UUID', person: false, value: personObject };
    case 'id':
    case 'actor_id':
    case 'person_id':
      return { type: 'UUID', person: false, value: (row) => row.person };
    case 'person.$delete':
      return { type: 'UInt8', person: false, value: () => 1 };
    case 'person_display_name':
      return {
        type: 'Tuple(String, UUID)',
        person: true,
        value: (row, p) => ({ display_name: p?.display_name ?? row.person, id: row.person }),
      };
    case 'matched_recordings':
      return { type: "Array(Tuple(DateTime64(6, 'UTC'), UUID, String, String))", person: false, value: () => [] };
    case 'created_at':
      return { type: "DateTime64(6, 'UTC')", person: true, value: (_, p) => p?.created_at ?? null };
    case 'is_identified':
      return { type: 'Bool', person: true, value: (_, p) => (p ? (p.is_identified ? 1 : 0) : null) };
    case 'event_count':
      return gives.events ? { type: 'UInt64', person: false, value: (row) => row.events ?? 0 } : undefined;
    case 'appearances':
      return gives.period ? { type: 'Array(Int64)', person: false, value: (row) => row.appearances ?? [] } : undefined;
    case 'length(appearances)':
      return gives.period ? { type: 'UInt64', person: false, value: (row) => row.appearances?.length ?? 0 } : undefined;
  }
  const prop = /^(?:person\.)?properties\.(.+)$/.exec(name);
  if (prop) {
    const key = prop[1]!.replace(/^`(.*)`$/, '$1');
    return {
      type: 'Nullable(String)',
      person: true,
      value: (_, p) => {
        const v = p?.properties[key];
        return v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
      },
    };
  }
  const returned = /^(hour|day|week|month)_(\d+)$/.exec(name);
  if (returned && gives.period === returned[1]) {
    const k = Number(returned[2]);
    return { type: 'UInt8', person: false, value: (row) => (row.appearances?.includes(k) ? 1 : 0) };
  }
  return undefined;
}

/** Orders two cell values: numbers by value, text by code unit, null last. */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = typeof a === 'string' ? a : JSON.stringify(a);
  const y = typeof b === 'string' ? b : JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Runs an ActorsQuery (module doc). */
export async function runActorsQuery(ctx: InsightContext, q: ActorsQueryInput): Promise<ActorsAnswer> {
  for (const field of ['properties', 'fixedProperties'] as const) {
    const v = (q as Record<string, unknown>)[field];
    if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && Object.keys(v).length === 0))
      throw new InsightQueryError(`Person filters on the actors ("${field}") are not supported: filter the source query instead.`, field);
  }
  const found = await nestedErrors('source', () => sourceActors(ctx, q.source));
  const select = q.select && q.select.length > 0 ? q.select : ['person', 'id', 'person.$delete'];
  const columns = select.map((text, i) => {
    const c = columnOf(text, found.gives);
    if (!c) throw new InsightQueryError(`Unknown column "${text}" for a ${sourceKind(q.source)} source.`, `select__${i}`);
    return c;
  });
  const orderBy =
    q.orderBy && q.orderBy.length > 0 ? q.orderBy : select.some((s) => bare(s) === 'created_at') ? ['created_at DESC'] : ['id ASC'];
  const order = orderBy.map((text, i) => {
    const m = /^(.*?)(?:\s+(ASC|DESC))?$/i.exec(text.trim())!;
    const name = bare(m[1]!);
    const c = name === 'person' ? columnOf('person_display_name', found.gives) : columnOf(name, found.gives);
    if (!c) throw new InsightQueryError(`Cannot order by "${text}": it is not a column of the actors.`, `orderBy__${i}`);
    const value = name === 'person' ? (row: ActorRow, p: ActorPerson | undefined) => p?.display_name ?? row.person : c.value;
    return { value, person: c.person || name === 'person', desc: (m[2] ?? '').toUpperCase() === 'DESC' };
  });

  const search = typeof q.search === 'string' ? q.search.trim().toLowerCase() : '';
  // the person records of every row, when ordering or searching reads them; else only the page's
  const everyone = search !== '' || order.some((o) => o.person);
  const persons = new Map<string, ActorPerson>();
  const load = async (uuids: string[]) => {
    for (const p of await ctx.persons(uuids.filter((u) => !persons.has(u)))) persons.set(p.id, p);
  };
  let rows = found.rows;
  if (everyone) await load(rows.map((r) => r.person));
  if (search !== '')
    rows = rows.filter((r) => {
      const p = persons.get(r.person);
      const texts = [r.person, ...(p?.distinct_ids ?? []), p?.properties['email'], p?.properties['name']];
      return texts.some((t) => typeof t === 'string' && t.toLowerCase().includes(search));
    });
  rows = [...rows].sort((a, b) => {
    for (const o of order) {
      const d = compare(o.value(a, persons.get(a.person)), o.value(b, persons.get(b.person)));
      if (d !== 0) return o.desc ? -d : d;
    }
    return compare(a.person, b.person);
  });

  const limit = Math.min(q.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  const offset = q.offset ?? 0;
  const page = rows.slice(offset, offset + limit);
  if (!everyone) await load(page.map((r) => r.person));
  return {
    results: page.map((row) => columns.map((c) => c.value(row, persons.get(row.person)))),
    columns: select,
    types: columns.map((c) => c.type),
    hasMore: rows.length > offset + limit,
    limit,
    offset,
    missing_actors_count: page.filter((r) => !persons.has(r.person)).length,
    hogql: found.hogql,
    ...cacheFields(ctx, q),
  };
}

/** The kind of insight a source reads, for messages. */
function sourceKind(source: ActorsQueryInput['source']): string {
  return source.kind === 'FunnelsActorsQuery' ? 'FunnelsQuery' : source.source.kind;
}
