/**
 * Handlers of the `dashboards` tag: create_from_template_json and move_tile (operations 11–12),
 * and the list and retrieve PostHog also has. They call `DashboardsService`
 * (server/domain/dashboards.ts).
 */
import { DEFAULT_LIMIT } from '../domain/pagination.js';
import { moveTileTarget } from '../domain/dashboards.js';
import type { HandlersFor } from '../http/handler-types.js';
import { projectUserOf } from './context.js';

type DashboardsOperationId =
  | 'environments_dashboards_list'
  | 'environments_dashboards_retrieve'
  | 'environments_dashboards_move_tile_partial_update'
  | 'environments_dashboards_create_from_template_json_create';

/** The dashboards handlers. */
export const dashboardHandlers: HandlersFor<DashboardsOperationId> = {
  async environments_dashboards_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    return { status: 200, contentType: 'application/json', body: await services.dashboards.list(projectUserOf(auth), page, url) };
  },

  async environments_dashboards_retrieve({ auth, params, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.dashboards.retrieve(projectUserOf(auth), Number(params.id)),
    };
  },

  async environments_dashboards_move_tile_partial_update({ auth, params, body, services }) {
    const result = await services.dashboards.moveTile(projectUserOf(auth), Number(params.id), body.tile.id, moveTileTarget(body));
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_dashboards_create_from_template_json_create({ auth, body, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.dashboards.createFromTemplateJson(projectUserOf(auth), body),
    };
  },
};
