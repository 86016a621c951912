/**
 * The query endpoint's service (`POST /api/environments/{project_id}/query/`, PostHog's
 * posthog/api/query.py): a `HogQLQuery` (one HogQL SELECT) or an `EventsQuery` (PostHog's
 * posthog/hogql_queries/events_query_runner.py: `select`/`where`/`orderBy` expressions over the
 * events, with `after`, `before`, `event`, `properties`, `limit`, `offset`), run on the caller's
 * project through server/hogql/. Answers `{results, columns, types, hasMore, limit, offset, hogql}`;
 * throws `ApiError` 400 for a query outside the subset or a bad filter (HogQL's own errors turned
 * into `ApiError` by `withHogQLErrors`), 504 `query_timeout` when the store's statement timeout
 * stopped it. The request types are the contract's (`QueryRequest`, generated/api.d.ts).
 */
import type { components } from '../../generated/api.js';
import { runEventsQuery, runHogQLQuery, MAX_LIMIT, DEFAULT_LIMIT, type HogQLAnswer } from '../hogql/index.js';
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

/** Either kind of query: the `query` of the operation's body (schema `QueryRequest`). */
export type QueryInput = components['schemas']['QueryRequest']['query'];

/** Ms added to now for the default `before` (PostHog's EventsQuery: now + 5 s). */
const BEFORE_SLACK_MS = 5_000;

/**
 * Runs the query endpoint's queries on one store. The handlers reach it through `EventsReads.query`
 * (server/domain/events-reads.ts): in a read-pool worker under the time budget, or in-process.
 */
export class QueryService {
  private readonly events: EventsStore;

  constructor(private readonly store: Store) {
    this.events = eventsStoreOf(store);
  }

  /** Runs `query` for `team`. Throws `ApiError` (PostHog's shape): 400 for an invalid query, 504 `query_timeout`. */
  async run(team: Team, query: QueryInput, now: Date = new Date()): Promise<HogQLAnswer> {
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
    const properties =
      query.properties !== undefined && query.properties !== null
        ? parsePropertiesParam(JSON.stringify(query.properties), opts)
        : undefined;
    // the events filters as conditions on the events rows (the store writes them), read before the query's own WHERE
    const materialized = await this.events.materializedColumns();
    const conditions = this.events.conditions({ teamId: team.id, before, after: since, event, properties, materialized });
    const limit = Math.min(query.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
    const parts = { select: query.select, where: query.where, orderBy: query.orderBy, limit, offset: query.offset };
    // an EventsQuery's expressions are fields of the body: an error that names none names `query`, as PostHog's attr does
    return withHogQLErrors(() => runEventsQuery(this.events.db, this.events.table(materialized), team.id, parts, conditions, now), 'query');
  }
}
