/**
 * The events reads as the handlers see them (`EventsReads`), whether they run on the main thread
 * (`inProcessEventsReads`) or in the read pool's worker threads (server/read-pool/, which
 * implements this interface): the same calls, the same answers, the same `ApiError`s.
 *
 * The reads are those whose cost grows with a project's size: the events list (also with HogQL
 * `where`), the list with HogQL `select`, property values, and the query endpoint's HogQL and
 * EventsQuery queries (server/domain/query.ts). One code path builds each of them: the pool's
 * workers call the same `EventsService` and `QueryService` methods as `inProcessEventsReads`.
 */
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { EventsService, type EventListParams, type EventListResult, type EventValuesParams } from './events.js';
import { QueryService, type QueryAnswer, type QueryInput } from './query.js';

/** The answer of values suggestions: a JSON list of names, or CSV text. */
export type EventValuesResult = Awaited<ReturnType<EventsService['values']>>;

/** The answer of the events list with `select`: `{columns, types, results, hasMore}` (see `EventsService.select`). */
export type EventSelectResult = Awaited<ReturnType<EventsService['select']>>;

/** The events reads the handlers call; in-process or in the pool, the same answers. */
export interface EventsReads {
  /**
   * A page of events, `where` included (see `EventsService.list`). Throws `ApiError` 400 (also
   * for a `where` outside the HogQL subset), `QueryTimeoutError`, `ReadPoolBusyError`.
   */
  list(team: Team, params: EventListParams, url: URL): Promise<EventListResult>;
  /** The events list with `select` (see `EventsService.select`). Same errors as `list`. */
  select(team: Team, params: EventListParams): Promise<EventSelectResult>;
  /** Values suggestions (see `EventsService.values`). Same errors as `list`. */
  values(team: Team, params: EventValuesParams, format: 'csv' | 'json' | undefined): Promise<EventValuesResult>;
  /**
   * The query endpoint's query, of any served kind (see `QueryService.run`); `now`
   * (default: the call's time) is HogQL's `now()` and the base of relative dates. Same errors as `list`.
   */
  query(team: Team, query: QueryInput, now?: Date): Promise<QueryAnswer>;
  /** One event by uuid: a keyed read, always on the main thread (see `EventsService.retrieve`). */
  retrieve: EventsService['retrieve'];
  /** Stops the pool's threads (tasks still running are aborted). In-process: nothing to do. */
  close(): Promise<void>;
}

/** The events reads on the main thread, with no time budget of their own (`threads: 0`, tests, a store in memory). */
export function inProcessEventsReads(store: Store): EventsReads {
  const events = new EventsService(store);
  const queries = new QueryService(store);
  return {
    list: (team, params, url) => events.list(team, params, url),
    select: (team, params) => events.select(team, params),
    values: (team, params, format) => events.values(team, params, format),
    query: (team, query, now) => queries.run(team, query, now ?? new Date()),
    retrieve: (team, id, format, includePerson) => events.retrieve(team, id, format, includePerson),
    close: async () => {},
  };
}
