/**
 * Handler of the `query` tag: `POST …/query/` runs a HogQLQuery or an EventsQuery on the project
 * through the events reads (`services.events.query`: `QueryService`, server/domain/query.ts and
 * server/hogql/, in a read-pool worker under the time budget, or in-process) and answers its rows.
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The query handler. */
export const queryHandlers: HandlersFor<'environments_query_create'> = {
  async environments_query_create({ auth, body, services }) {
    const answer = await services.events.query(projectOf(auth).team, body.query);
    return { status: 200, contentType: 'application/json', body: answer };
  },
};
