/**
 * Handlers of the `event_definitions` tag: event definitions (the list, one by name or id, create,
 * partial update) and property definitions (the list, one by id, partial update), under `/api/projects/{project_id}/` only (as
 * PostHog registers it). They call `EventDefinitionsService` (server/domain/event-definitions.ts) and
 * `PropertyDefinitionsService` (server/domain/property-definitions.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The event definitions handlers. */
export const eventDefinitionHandlers: HandlersFor<
  | 'event_definitions_list'
  | 'event_definitions_by_name_retrieve'
  | 'event_definitions_create'
  | 'event_definitions_retrieve'
  | 'event_definitions_partial_update'
  | 'property_definitions_list'
  | 'property_definitions_retrieve'
  | 'property_definitions_partial_update'
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

  async property_definitions_partial_update({ auth, params, body, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.propertyDefinitions.update(projectOf(auth).team, auth.user.id, String(params.id), body),
    };
  },

  async event_definitions_create({ auth, body, services }) {
    return {
      status: 201,
      contentType: 'application/json',
      body: await services.eventDefinitions.create(projectOf(auth).team, auth.user.id, body),
    };
  },

  async event_definitions_retrieve({ auth, params, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.eventDefinitions.retrieve(projectOf(auth).team, String(params.id)),
    };
  },

  async event_definitions_partial_update({ auth, params, body, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.eventDefinitions.update(projectOf(auth).team, auth.user.id, String(params.id), body),
    };
  },

  async event_definitions_list({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.list(projectOf(auth).team, query, url) };
  },

  async event_definitions_by_name_retrieve({ auth, query, services }) {
    return { status: 200, contentType: 'application/json', body: await services.eventDefinitions.byName(projectOf(auth).team, query.name) };
  },
};
