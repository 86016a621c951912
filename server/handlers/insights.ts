/**
 * Handlers of the `insights` tag: list, create, retrieve and partial update (which also soft
 * deletes), through `InsightsService` (server/domain/insights.ts).
 */
import { queryBool, refreshComputes } from '../domain/insights.js';
import { DEFAULT_LIMIT } from '../domain/pagination.js';
import type { HandlersFor } from '../http/handler-types.js';
import { projectUserOf } from './context.js';

type InsightsOperationId =
  'environments_insights_list' | 'environments_insights_create' | 'environments_insights_retrieve' | 'environments_insights_partial_update';

/** The insights handlers. */
export const insightHandlers: HandlersFor<InsightsOperationId> = {
  async environments_insights_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    const filters = {
      shortId: query.short_id,
      createdBy: query.created_by,
      saved: queryBool(query.saved),
      favorited: query.favorited === undefined ? undefined : true,
      search: query.search,
    };
    const body = await services.insights.list(projectUserOf(auth), filters, page, url, refreshComputes(query.refresh));
    return { status: 200, contentType: 'application/json', body };
  },

  async environments_insights_create({ auth, body, query, services }) {
    const insight = await services.insights.create(projectUserOf(auth), body, refreshComputes(query.refresh));
    return { status: 201, contentType: 'application/json', body: insight };
  },

  async environments_insights_retrieve({ auth, params, query, services }) {
    const insight = await services.insights.retrieve(projectUserOf(auth), params.id, refreshComputes(query.refresh));
    return { status: 200, contentType: 'application/json', body: insight };
  },

  async environments_insights_partial_update({ auth, params, body, query, services }) {
    const insight = await services.insights.update(projectUserOf(auth), params.id, body, refreshComputes(query.refresh));
    return { status: 200, contentType: 'application/json', body: insight };
  },
};
