/**
 * The query endpoint's service (`POST /api/environments/{project_id}/query/`, PostHog's
 * posthog/api/query.py), run on the caller's project, by the query's `kind`:
 * - `HogQLQuery` (one HogQL SELECT) and `EventsQuery` (PostHog's
 *   posthog/hogql_queries/events_query_runner.py: `select`/`where`/`orderBy` expressions over the
 *   events, with `after`, `before`, `event`, `properties`, `limit`, `offset`) through server/hogql/,
 *   answering `{results, columns, types, hasMore, limit, offset, hogql}`;
 * - `TrendsQuery`, `FunnelsQuery`, `RetentionQuery`, `LifecycleQuery`, `StickinessQuery` and `PathsQuery` through
 *   server/insights/ (PostHog's query runners), their HogQL run here with each series' filters as
 *   the events store's conditions, answering PostHog's response of the kind;
 * - `HogQLMetadata`: the text's validity (server/hogql/metadata.ts);
 * - the wrappers `DataTableNode`, `DataVisualizationNode` and `InsightVizNode`: their `source`
 *   (PostHog's process_query_model recurses on `source` the same way).
 * The contract admits no other kind (the validator answers "Unsupported query kind: X").
 * Throws `ApiError` 400 for an invalid query or a bad filter (HogQL's and the runners' errors turned
 * into `ApiError` by `withHogQLErrors`), 504 `query_timeout` when the store's statement timeout
 * stopped it. The request types are the contract's (`QueryRequest`, generated/api.d.ts).
 */
import type { components } from '../../generated/api.js';
import {
  hogqlMetadata,
  runEventsQuery,
  runHogQLQuery,
  MAX_LIMIT,
  DEFAULT_LIMIT,
  type HogQLAnswer,
  type HogQLMetadataAnswer,
} from '../hogql/index.js';
import {
  InsightQueryError,
  runActorsQuery,
  runInsightQuery,
  type ActorsAnswer,
  type EventsWindow,
  type InsightAnswer,
  type InsightContext,
  type RawProperties,
} from '../insights/index.js';
import { formatTimestamp } from '../storage/timestamps.js';
import { InsightsRepository } from '../storage/repositories/insights.js';
import { PersonsRepository } from '../storage/repositories/persons.js';
import { personName } from './persons.js';
import type { Store } from '../storage/db.js';
import { eventsStoreOf, type EventsStore } from '../storage/events/index.js';
import type { Team } from '../storage/repositories/accounts.js';
import { validationError, withHogQLErrors } from './errors.js';
import { parsePropertiesParam } from './event-filters.js';
import { parseEventDateParam } from './relative-dates.js';

/** A `HogQLQuery` body's `query` (schema `HogQLQuery`). */
export type HogQLQueryInput = components['schemas']['HogQLQuery'];

/** An `EventsQuery` body's `query` (schema `EventsQuery`): `after` default `-24h` (`all` for none), `before` default now + 5 s. */
export type EventsQueryInput = components['schemas']['EventsQuery'];

/** A query of any served kind: the `query` of the operation's body (schema `QueryRequest`). */
export type QueryInput = components['schemas']['QueryRequest']['query'];

/** What a query answers: rows, an insight's answer, or a text's metadata. */
export type QueryAnswer = HogQLAnswer | InsightAnswer | HogQLMetadataAnswer | ActorsAnswer;

/** The filters of `window` as one property group (every list and group must hold), or undefined for none. */
function windowProperties(properties: RawProperties[]): Record<string, unknown> | undefined {
  const values = properties
    .filter((p): p is NonNullable<RawProperties> => p !== null && p !== undefined && (!Array.isArray(p) || p.length > 0))
    .map((p) => (Array.isArray(p) ? { type: 'AND', values: p } : p));
  return values.length === 0 ? undefined : { type: 'AND', values };
}

/** Ms added to now for the default `before` (PostHog's EventsQuery: now + 5 s). */
const BEFORE_SLACK_MS = 5_000;

/**
 * Runs the query endpoint's queries on one store. The handlers reach it through `EventsReads.query`
 * (server/domain/events-reads.ts): in a read-pool worker under the time budget, or in-process.
 */
/**
 * An EventsQuery's `properties` without its top-level HogQL filters (`{"type": "hogql", "key":
 * <expression>}`, in a list or an `AND` group), and those filters' expressions. A HogQL filter
 * inside an `OR` group or deeper answers 400: only the top level is read this way.
 */
export function splitHogQLFilters(properties: unknown): { filters: unknown; hogql: string[] } {
  if (properties === undefined || properties === null) return { filters: undefined, hogql: [] };
  const isHogQL = (f: unknown): f is { key: unknown } =>
    typeof f === 'object' && f !== null && !Array.isArray(f) && (f as { type?: unknown }).type === 'hogql';
  const take = (list: unknown[]): { rest: unknown[]; hogql: string[] } => {
    const hogql: string[] = [];
    const rest: unknown[] = [];
    for (const f of list) {
      if (!isHogQL(f)) rest.push(f);
      else if (typeof f.key === 'string' && f.key.trim() !== '') hogql.push(f.key);
      else throw validationError('A HogQL property filter needs its expression as a non-empty string "key".', 'query__properties');
    }
    return { rest, hogql };
  };
  const nested = (v: unknown): boolean => JSON.stringify(v ?? null).includes('"type":"hogql"');
  let out: { filters: unknown; hogql: string[] };
  if (Array.isArray(properties)) {
    const { rest, hogql } = take(properties);
    out = { filters: rest.length ? rest : undefined, hogql };
  } else if (typeof properties === 'object' && (properties as { type?: unknown }).type === 'AND') {
    const group = properties as { type: string; values?: unknown };
    const { rest, hogql } = take(Array.isArray(group.values) ? group.values : []);
    out = { filters: rest.length ? { ...group, values: rest } : undefined, hogql };
  } else out = { filters: properties, hogql: [] };
  if (nested(out.filters))
    throw validationError(
      'HogQL property filters are read at the top level of properties only, not inside an OR group.',
      'query__properties',
    );
  return out;
}

export class QueryService {
  private readonly events: EventsStore;
  private readonly persons: PersonsRepository;

  constructor(private readonly store: Store) {
    this.events = eventsStoreOf(store);
    this.persons = new PersonsRepository(store.db);
  }

  /**
   * Runs `query` for `team`; `attr` is the request field that holds it (errors name fields under it).
   * Throws `ApiError` (PostHog's shape): 400 for an invalid query, 504 `query_timeout`.
   */
  async run(team: Team, query: QueryInput, now: Date = new Date(), attr = 'query'): Promise<QueryAnswer> {
    switch (query.kind) {
      case 'DataTableNode':
      case 'DataVisualizationNode':
      case 'InsightVizNode':
        return this.run(team, query.source, now, `${attr}__source`);
      case 'HogQLMetadata': {
        const table = this.events.table(await this.events.materializedColumns());
        const source =
          query.sourceQuery?.kind === 'HogQLQuery' && typeof query.sourceQuery.query === 'string' ? query.sourceQuery.query : undefined;
        return hogqlMetadata(table, team.id, query.language, query.query, now, source);
      }
      case 'SavedInsightNode': {
        const insight = await new InsightsRepository(this.store.db).findByShortId(team.id, query.shortId);
        if (!insight || insight.query === null || insight.query === undefined)
          throw validationError(
            insight ? `The insight ${query.shortId} has no query to run.` : `No insight with short_id "${query.shortId}" in this project.`,
            `${attr}__shortId`,
          );
        return this.run(team, insight.query as QueryInput, now, attr);
      }
      case 'TrendsQuery':
      case 'FunnelsQuery':
      case 'RetentionQuery':
      case 'LifecycleQuery':
      case 'StickinessQuery':
      case 'PathsQuery':
      case 'ActorsQuery': {
        const ctx = this.insightContext(team, now);
        // a runner's field names are the query's: nested under the body's `query` (and a wrapper's `source`)
        return withHogQLErrors(
          () =>
            (query.kind === 'ActorsQuery' ? runActorsQuery(ctx, query) : runInsightQuery(ctx, query)).catch(
              (err: unknown): Promise<QueryAnswer> => {
                throw err instanceof InsightQueryError ? new InsightQueryError(err.detail, err.attr ? `${attr}__${err.attr}` : attr) : err;
              },
            ),
          attr,
        );
      }
      default:
        return this.runRows(team, query, now);
    }
  }

  /** The context the query runners read events through (server/insights/context.ts). */
  private insightContext(team: Team, now: Date): InsightContext {
    const opts = { now, timezone: team.timezone };
    // the store's materialized columns, read once for all the runner's queries (a per-bucket
    // runner sends dozens)
    let materializedOnce: ReturnType<EventsStore['materializedColumns']> | undefined;
    return {
      team: { id: team.id, timezone: team.timezone },
      now,
      persons: async (uuids) =>
        (await this.persons.findByUuids(team.id, uuids)).map((p) => ({
          id: p.uuid,
          properties: p.properties,
          is_identified: p.is_identified,
          created_at: p.created_at,
          distinct_ids: p.distinct_ids,
          display_name: personName(p),
        })),
      parseDate: (text) => {
        const stored = parseEventDateParam(text, opts);
        return stored === undefined ? undefined : Date.parse(stored.slice(0, 23) + 'Z');
      },
      select: async (text: string, window?: EventsWindow, limits?: { maxRows?: number }) => {
        const materialized = await (materializedOnce ??= this.events.materializedColumns());
        let tableWhere;
        if (window) {
          const group = windowProperties(window.properties);
          const properties = group ? parsePropertiesParam(JSON.stringify(group), opts) : undefined;
          // the window's ends, inclusive from and exclusive to, as the filters' exclusive bounds (1 µs apart)
          const after = formatTimestamp(
            new Date(window.from - 1),
            `${String(new Date(window.from - 1).getUTCMilliseconds()).padStart(3, '0')}999`,
          );
          const before = formatTimestamp(new Date(window.to));
          tableWhere = this.events.conditions({ teamId: team.id, after, before, event: window.event, properties, materialized });
        }
        const answer = await runHogQLQuery(
          this.events.db,
          this.events.table(materialized),
          team.id,
          text,
          now,
          tableWhere,
          limits?.maxRows,
        );
        return { results: answer.results, hasMore: answer.hasMore, hogql: answer.hogql };
      },
    };
  }

  /** A HogQLQuery's or an EventsQuery's rows. */
  private async runRows(team: Team, query: HogQLQueryInput | EventsQueryInput, now: Date): Promise<HogQLAnswer> {
    if (query.kind === 'HogQLQuery') {
      if (query.values && Object.keys(query.values).length > 0)
        throw validationError('Placeholders ("values") are not supported: write the values into the query.', 'query__values');
      const table = this.events.table(await this.events.materializedColumns());
      return withHogQLErrors(() => runHogQLQuery(this.events.db, table, team.id, query.query, now));
    }
    const opts = { now, timezone: team.timezone };
    const after = query.after ?? '-24h';
    let since: string | undefined;
    if (after !== 'all') {
      since = parseEventDateParam(after, opts);
      if (since === undefined)
        throw validationError(`"${after}" is not a date: use ISO 8601, a relative date such as -24h or -7d, or "all".`, 'query__after');
    }
    let before: string | undefined;
    if (query.before !== undefined) {
      before = parseEventDateParam(query.before, opts);
      if (before === undefined)
        throw validationError(`"${query.before}" is not a date: use ISO 8601 or a relative date such as -1h.`, 'query__before');
    } else {
      before = new Date(now.getTime() + BEFORE_SLACK_MS).toISOString().replace('Z', '000Z');
    }
    const event = typeof query.event === 'string' && query.event !== '' ? query.event : undefined;
    // `{"type": "hogql", "key": "<expression>"}` filters at the top level are HogQL conditions,
    // as PostHog's property_to_expr reads them: they join the query's own WHERE
    const { filters, hogql } = splitHogQLFilters(query.properties);
    const properties = filters !== undefined ? parsePropertiesParam(JSON.stringify(filters), opts) : undefined;
    // the events filters as conditions on the events rows (the store writes them), read before the query's own WHERE
    const materialized = await this.events.materializedColumns();
    const conditions = this.events.conditions({ teamId: team.id, before, after: since, event, properties, materialized });
    const limit = Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
    // a `person` column is the event's distinct_id, then its person (PostHog's events_query_runner.py)
    const personColumns = query.select.flatMap((text, i) => (text.split('--')[0]!.trim() === 'person' ? [i] : []));
    const select = query.select.map((text, i) => (personColumns.includes(i) ? 'distinct_id' : text));
    const where = hogql.length ? [...(query.where ?? []), ...hogql] : query.where;
    const parts = { select, where, orderBy: query.orderBy, limit, offset: query.offset, postHogOrder: true };
    // an EventsQuery's expressions are fields of the body: an error that names none names `query`, as PostHog's attr does
    const answer = await withHogQLErrors(
      () => runEventsQuery(this.events.db, this.events.table(materialized), team.id, parts, conditions, now),
      'query',
    );
    if (personColumns.length === 0 || answer.results.length === 0) return answer;
    return { ...answer, columns: [...query.select], results: await this.withPersons(team, answer.results, personColumns) };
  }

  /**
   * Rows whose `columns` hold distinct ids with those cells replaced by the person, as PostHog's
   * EventsQuery answers a `person` column: `{uuid, created_at, properties, distinct_id}`, or
   * `{distinct_id}` for a distinct id without a person.
   */
  private async withPersons(team: Team, rows: unknown[][], columns: number[]): Promise<unknown[][]> {
    const ids = [...new Set(rows.flatMap((r) => columns.map((c) => String(r[c]))))];
    const byId = await this.persons.findByDistinctIds(team.id, ids);
    return rows.map((r) => {
      const row = [...r];
      for (const c of columns) {
        const distinctId = String(r[c]);
        const p = byId.get(distinctId);
        row[c] = p
          ? { uuid: p.uuid, created_at: p.created_at, properties: p.properties, distinct_id: distinctId }
          : { distinct_id: distinctId };
      }
      return row;
    });
  }
}
