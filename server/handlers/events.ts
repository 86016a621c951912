/**
 * Handlers of the `events` tag (operations 13–15): read the validated query, call `EventsService`
 * (server/domain/events.ts), answer JSON or CSV as `format` asks. A list with `select` or `where`
 * goes to the query service (HogQL, server/domain/query.ts).
 */
import type { HandlersFor } from '../http/typed.js';
import { projectOf } from './context.js';

type EventsOperationId = 'environments_events_list' | 'environments_events_retrieve' | 'environments_events_values_retrieve';

/** The three events handlers. */
export const eventHandlers: HandlersFor<EventsOperationId> = {
  async environments_events_list({ auth, query, services, url }) {
    // with select or where: HogQL over the events (server/domain/query.ts), on the main thread
    if (query.select !== undefined || query.where !== undefined) {
      const answer = await services.query.eventsList(projectOf(auth).team, query, url);
      if (answer.format === 'select') return { status: 200, contentType: 'application/json', body: answer.body };
      return answer.format === 'csv' ? { status: 200, contentType: 'text/csv', body: answer.body } : { status: 200, contentType: 'application/json', body: answer.body };
    }
    const result = await services.events.list(projectOf(auth).team, query, url);
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body }
      : { status: 200, contentType: 'application/json', body: result.body };
  },

  async environments_events_retrieve({ auth, params, query, services }) {
    const result = await services.events.retrieve(projectOf(auth).team, String(params.id), query.format);
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body }
      : { status: 200, contentType: 'application/json', body: result.body };
  },

  async environments_events_values_retrieve({ auth, query, services }) {
    const result = await services.events.values(projectOf(auth).team, query, query.format);
    const headers = { 'Cache-Control': 'max-age=10' };
    return result.format === 'csv'
      ? { status: 200, contentType: 'text/csv', body: result.body, headers }
      : { status: 200, contentType: 'application/json', body: result.body, headers };
  },
};
