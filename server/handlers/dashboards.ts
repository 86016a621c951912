/**
 * Handlers of the `dashboards` tag: create_from_template_json and move_tile (operations 11–12),
 * and what PostHog also has: list, create, retrieve, partial update (also the soft delete), the
 * tile actions and run_insights. They call `DashboardsService` (server/domain/dashboards.ts) and
 * `DashboardTilesService` (server/domain/dashboard-tiles.ts).
 */
import { DEFAULT_LIMIT } from '../domain/pagination.js';
import { moveTileTarget } from '../domain/dashboards.js';
import type { HandlersFor } from '../http/handler-types.js';
import { projectUserOf } from './context.js';

type DashboardsOperationId =
  | 'environments_dashboards_list'
  | 'environments_dashboards_create'
  | 'environments_dashboards_partial_update'
  | 'environments_dashboards_create_text_tile_create'
  | 'environments_dashboards_update_text_tile_create'
  | 'environments_dashboards_delete_tile_create'
  | 'environments_dashboards_reorder_tiles_create'
  | 'environments_dashboards_copy_tile_create'
  | 'environments_dashboards_run_insights_retrieve'
  | 'environments_dashboards_retrieve'
  | 'environments_dashboards_move_tile_partial_update'
  | 'environments_dashboards_create_from_template_json_create';

/** The dashboards handlers. */
export const dashboardHandlers: HandlersFor<DashboardsOperationId> = {
  async environments_dashboards_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    return { status: 200, contentType: 'application/json', body: await services.dashboards.list(projectUserOf(auth), page, url) };
  },

  async environments_dashboards_retrieve({ auth, params, query, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.dashboards.retrieve(projectUserOf(auth), Number(params.id), query.refresh !== 'force_cache'),
    };
  },

  async environments_dashboards_create({ auth, body, services }) {
    return { status: 201, contentType: 'application/json', body: await services.dashboards.create(projectUserOf(auth), body) };
  },

  async environments_dashboards_partial_update({ auth, params, body, services }) {
    return {
      status: 200,
      contentType: 'application/json',
      body: await services.dashboards.update(projectUserOf(auth), Number(params.id), body),
    };
  },

  async environments_dashboards_create_text_tile_create({ auth, params, body, services }) {
    const tile = await services.dashboardTiles.createTextTile(projectUserOf(auth), Number(params.id), body);
    return { status: 200, contentType: 'application/json', body: tile };
  },

  async environments_dashboards_update_text_tile_create({ auth, params, body, services }) {
    const tile = await services.dashboardTiles.updateTextTile(projectUserOf(auth), Number(params.id), body);
    return { status: 200, contentType: 'application/json', body: tile };
  },

  async environments_dashboards_delete_tile_create({ auth, params, body, services }) {
    await services.dashboardTiles.deleteTile(projectUserOf(auth), Number(params.id), body.tile_id);
    return { status: 204 };
  },

  async environments_dashboards_reorder_tiles_create({ auth, params, body, services }) {
    const d = await services.dashboardTiles.reorderTiles(projectUserOf(auth), Number(params.id), body);
    return { status: 200, contentType: 'application/json', body: d };
  },

  async environments_dashboards_copy_tile_create({ auth, params, body, services }) {
    const d = await services.dashboardTiles.copyTile(projectUserOf(auth), Number(params.id), body);
    return { status: 200, contentType: 'application/json', body: d };
  },

  async environments_dashboards_run_insights_retrieve({ auth, params, query, services }) {
    const answer = await services.dashboardTiles.runInsights(projectUserOf(auth), Number(params.id), query.refresh !== 'force_cache');
    return { status: 200, contentType: 'application/json', body: answer };
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
