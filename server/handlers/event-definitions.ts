/**
 * Handlers of the `event_definitions` tag: the list, under `/api/projects/{project_id}/` only (as
 * PostHog registers it). They call `EventDefinitionsService` (server/domain/event-definitions.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The event definitions handlers. */
export const eventDefinitionHandlers: HandlersFor<'event_definitions_list'> = {
  async event_definitions_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.list(projectOf(auth).team, query, url) };
  },
};
