/**
 * Handlers of the `event_definitions` tag: event definitions (the list, one by name) and property
 * definitions (the list, one by id), under `/api/projects/{project_id}/` only (as
 * PostHog registers it). They call `EventDefinitionsService` (server/domain/event-definitions.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The event definitions handlers. */
export const eventDefinitionHandlers: HandlersFor<
  'event_definitions_list' | 'event_definitions_by_name_retrieve' | 'property_definitions_list' | 'property_definitions_retrieve'
> = {
  async property_definitions_list({ auth, query, services, url }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.propertyDefinitions.list(projectOf(auth).team, query, url),
    };
  },

  async property_definitions_retrieve({ auth, params, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.propertyDefinitions.retrieve(projectOf(auth).team, String(params.id)),
    };
  },

  async event_definitions_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.list(projectOf(auth).team, query, url) };
  },

  async event_definitions_by_name_retrieve({ auth, query, services }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.byName(projectOf(auth).team, query.name) };
  },
};
