/**
 * Handlers of the `events` tag (operations 13–15): read the validated query, call `EventsService`
 * (server/domain/events.ts) through the events reads (`services.events`, in the read pool or
 * in-process), answer JSON or CSV as `format` asks. A list with `select` answers HogQL columns
 * (`EventsReads.select`); `where` filters the ordinary list.
 */
import type { HandlersFor } from '../http/handler-types.js';
import { valuesPropertyParams } from '../domain/events.js';
import { projectOf } from './context.js';

type EventsOperationId = 'environments_events_list' | 'environments_events_retrieve' | 'environments_events_values_retrieve';

/** The three events handlers. */
export const eventHandlers: HandlersFor<EventsOperationId> = {
  async environments_events_list({ auth, query, services, url }) {
    // with select: HogQL columns over the events (server/domain/events.ts `select`); with where
    // alone: the ordinary list, filtered. Both run where the list runs (the read pool, under the time budget)
    if (query.select !== undefined) {
      return { status: 200, contentType: 'application/json', body: await services.events.select(projectOf(auth).team, query) };
    }
    const result = await services.events.list(projectOf(auth).team, query, url);
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body }
      : { status: 200, contentType: 'application/json', body: result.body };
  },

  async environments_events_retrieve({ auth, params, query, services }) {
    const result = await services.events.retrieve(projectOf(auth).team, String(params.id), query.format, query.include_person);
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body }
      : { status: 200, contentType: 'application/json', body: result.body };
  },

  async environments_events_values_retrieve({ auth, query, services }) {
    const params = { ...query, property_filters: valuesPropertyParams(query as Record<string, unknown>) };
    const result = await services.events.values(projectOf(auth).team, params, query.format);
    const headers = { 'Cache-Control': 'max-age=10' };
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body, headers }
      : { status: 200, contentType: 'application/json', body: result.body, headers };
  },
};
