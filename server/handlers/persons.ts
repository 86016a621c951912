/**
 * Handlers of the `persons` tag: the list and retrieve, property values, a person's cohorts,
 * setting and removing a person's properties, bulk delete (PostHog's `PersonViewSet`), under
 * `/api/environments/{project_id}/` and, through server/handlers/index.ts, `/api/projects/{project_id}/`.
 * They call `PersonsService` (server/domain/persons.ts) and `PersonActionsService`
 * (server/domain/person-actions.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

type PersonsOperationId =
  | 'environments_persons_list'
  | 'environments_persons_retrieve'
  | 'environments_persons_values_retrieve'
  | 'environments_persons_cohorts_retrieve'
  | 'environments_persons_update_property_create'
  | 'environments_persons_delete_property_create'
  | 'environments_persons_bulk_delete_create';

/** The persons handlers. */
export const personHandlers: HandlersFor<PersonsOperationId> = {
  async environments_persons_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.persons.list(projectOf(auth).team, query, url) };
  },

  async environments_persons_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.persons.retrieve(projectOf(auth).team, String(params.id)) };
  },

  async environments_persons_values_retrieve({ auth, query, services }) {
    const body = await services.personActions.values(projectOf(auth).team, query.key, query.value);
    return { status: 200, contentType: 'application/json', body };
  },

  async environments_persons_cohorts_retrieve({ auth, query, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.personActions.cohorts(projectOf(auth).team, query.person_id),
    };
  },

  async environments_persons_update_property_create({ auth, params, body, services }) {
    await services.personActions.updateProperty(
      projectOf(auth).team,
      String(params.id),
      (body ?? {}) as { key?: unknown; value?: unknown },
    );
    return { status: 202 };
  },

  async environments_persons_delete_property_create({ auth, params, body, services }) {
    const result = await services.personActions.deleteProperty(projectOf(auth).team, String(params.id), body ?? {});
    return { status: 201, contentType: 'application/json', body: result };
  },

  async environments_persons_bulk_delete_create({ auth, body, services }) {
    return {
      status: 202,
      contentType: 'application/json',
      body: await services.personActions.bulkDelete(projectOf(auth).team, body ?? {}),
    };
  },
};
