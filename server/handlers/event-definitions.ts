/**
 * Handlers of the `event_definitions` tag: the list and one by name, under `/api/projects/{project_id}/` only (as
 * PostHog registers it). They call `EventDefinitionsService` (server/domain/event-definitions.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The event definitions handlers. */
export const eventDefinitionHandlers: HandlersFor<'event_definitions_list' | 'event_definitions_by_name_retrieve'> = {
  async event_definitions_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.list(projectOf(auth).team, query, url) };
  },

  async event_definitions_by_name_retrieve({ auth, query, services }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.byName(projectOf(auth).team, query.name) };
  },
};
