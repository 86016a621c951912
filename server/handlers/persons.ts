/**
 * Handlers of the `persons` tag: the list and retrieve (PostHog's `PersonViewSet`), under
 * `/api/environments/{project_id}/` and, through server/handlers/index.ts, `/api/projects/{project_id}/`.
 * They call `PersonsService` (server/domain/persons.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

type PersonsOperationId = 'environments_persons_list' | 'environments_persons_retrieve';

/** The persons handlers. */
export const personHandlers: HandlersFor<PersonsOperationId> = {
  async environments_persons_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.persons.list(projectOf(auth).team, query, url) };
  },

  async environments_persons_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.persons.retrieve(projectOf(auth).team, String(params.id)) };
  },
};
