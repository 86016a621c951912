/**
 * Handlers of the `dashboards` tag: create_from_template_json and move_tile (operations 11–12),
 * and the list and retrieve PostHog also has. They call `DashboardsService`
 * (server/domain/dashboards.ts).
 */
import type { AuthContext } from '../domain/access.js';
import type { DashboardCaller } from '../domain/dashboards.js';
import { DEFAULT_LIMIT } from '../domain/pagination.js';
import type { HandlersFor } from '../http/typed.js';
import { projectOf } from './plugin_configs.js';

type DashboardsOperationId =
  | 'environments_dashboards_list'
  | 'environments_dashboards_retrieve'
  | 'environments_dashboards_move_tile_partial_update'
  | 'environments_dashboards_create_from_template_json_create';

function callerOf(auth: AuthContext): DashboardCaller {
  return { project: projectOf(auth), user: auth.user };
}

/** The dashboards handlers. */
export const dashboardHandlers: HandlersFor<DashboardsOperationId> = {
  async environments_dashboards_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    return { status: 200, contentType: 'application/json', body: await services.dashboards.list(callerOf(auth), page, url) };
  },

  async environments_dashboards_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.dashboards.retrieve(callerOf(auth), Number(params.id)) };
  },

  async environments_dashboards_move_tile_partial_update({ auth, params, body, services }) {
    const result = await services.dashboards.moveTile(callerOf(auth), Number(params.id), body.tile.id, body.toDashboard);
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_dashboards_create_from_template_json_create({ auth, body, services }) {
    return { status: 200, contentType: 'application/json', body: await services.dashboards.createFromTemplateJson(callerOf(auth), body) };
  },
};
