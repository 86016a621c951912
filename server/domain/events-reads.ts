/**
 * The events reads as the handlers see them (`EventsReads`), whether they run on the main thread
 * (`inProcessEventsReads`) or in the read pool's worker threads (server/read-pool/, which
 * implements this interface): the same calls, the same answers, the same `ApiError`s.
 */
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { EventsService, type EventListParams, type EventListResult, type EventValuesParams } from './events.js';

/** The answer of values suggestions: a JSON list of names, or CSV text. */
export type EventValuesResult = Awaited<ReturnType<EventsService['values']>>;

/** The events reads the handlers call; in-process or in the pool, the same answers. */
export interface EventsReads {
  /** A page of events (see `EventsService.list`). Throws `ApiError` 400, `QueryTimeoutError`, `ReadPoolBusyError`. */
  list(team: Team, params: EventListParams, url: URL): Promise<EventListResult>;
  /** Values suggestions (see `EventsService.values`). Same errors as `list`. */
  values(team: Team, params: EventValuesParams, format: 'csv' | 'json' | undefined): Promise<EventValuesResult>;
  /** One event by uuid: a keyed read, always on the main thread (see `EventsService.retrieve`). */
  retrieve: EventsService['retrieve'];
  /** Stops the pool's threads (tasks still running are aborted). In-process: nothing to do. */
  close(): Promise<void>;
}

/** The events reads on the main thread, with no time budget of their own (`threads: 0`, tests, a store in memory). */
export function inProcessEventsReads(store: Store): EventsReads {
  const events = new EventsService(store);
  return {
    list: (team, params, url) => events.list(team, params, url),
    values: (team, params, format) => events.values(team, params, format),
    retrieve: (team, id, format) => events.retrieve(team, id, format),
    close: async () => {},
  };
}
