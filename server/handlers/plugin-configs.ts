/**
 * Handlers of the `plugin_configs` tag: pipeline destination configs (operations 1–7) and pipeline
 * frontend apps configs (8–10). Thin: each reads its validated input and calls
 * `PluginConfigService` (server/domain/plugin-configs.ts), where PostHog's rules live.
 */
import { DEFAULT_LIMIT } from '../domain/pagination.js';
import type { HandlersFor } from '../http/handler-types.js';
import { callerOf, projectOf } from './context.js';

type PluginConfigOperationId =
  | 'environments_pipeline_destination_configs_partial_update'
  | 'environments_pipeline_destination_configs_destroy'
  | 'environments_pipeline_destination_configs_activity_retrieve'
  | 'environments_pipeline_destination_configs_frontend_retrieve'
  | 'environments_pipeline_destination_configs_job_create'
  | 'environments_pipeline_destination_configs_migrate_create'
  | 'environments_pipeline_destination_configs_rearrange_partial_update'
  | 'environments_pipeline_destination_configs_list'
  | 'environments_pipeline_destination_configs_retrieve'
  | 'environments_pipeline_frontend_apps_configs_list'
  | 'environments_pipeline_frontend_apps_configs_create'
  | 'environments_pipeline_frontend_apps_configs_retrieve';

/**
 * The 10 `plugin_configs` operations: each calls `PluginConfigService` (path ids parsed with `Number()`) and
 * answers 200 (201 for create, 204 for destroy); errors the service throws (`ApiError`) propagate.
 */
export const pluginConfigHandlers: HandlersFor<PluginConfigOperationId> = {
  async environments_pipeline_destination_configs_partial_update({ auth, params, body, services }) {
    const result = await services.pluginConfigs.update(callerOf(auth), 'destination', Number(params.id), body ?? {});
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_destroy({ auth, params, services }) {
    await services.pluginConfigs.destroy(callerOf(auth), Number(params.id));
    return { status: 204 };
  },

  async environments_pipeline_destination_configs_activity_retrieve({ auth, params, query, services, url }) {
    const page = { limit: query.limit ?? 10, page: query.page ?? 1 };
    const result = await services.pluginConfigs.activity(projectOf(auth), Number(params.id), page, url);
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_frontend_retrieve({ auth, params, services }) {
    const source = await services.pluginConfigs.frontend(projectOf(auth), Number(params.id));
    return { status: 200, contentType: 'application/javascript', body: source };
  },

  async environments_pipeline_destination_configs_job_create({ auth, params, body, services }) {
    const result = await services.pluginConfigs.job(callerOf(auth), Number(params.id), body.job);
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_migrate_create({ auth, params, services }) {
    const result = await services.pluginConfigs.migrate(callerOf(auth), Number(params.id));
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_rearrange_partial_update({ auth, body, services }) {
    const result = await services.pluginConfigs.rearrange(callerOf(auth), body?.orders ?? {});
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    const result = await services.pluginConfigs.list(projectOf(auth), 'destination', page, url);
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_destination_configs_retrieve({ auth, params, services }) {
    const result = await services.pluginConfigs.retrieve(projectOf(auth), 'destination', Number(params.id));
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_frontend_apps_configs_list({ auth, query, services, url }) {
    const page = { limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 };
    const result = await services.pluginConfigs.list(projectOf(auth), 'frontend_app', page, url);
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_pipeline_frontend_apps_configs_create({ auth, body, services }) {
    const result = await services.pluginConfigs.create(callerOf(auth), body);
    return { status: 201, contentType: 'application/json', body: result };
  },

  async environments_pipeline_frontend_apps_configs_retrieve({ auth, params, services }) {
    const result = await services.pluginConfigs.retrieve(projectOf(auth), 'frontend_app', Number(params.id));
    return { status: 200, contentType: 'application/json', body: result };
  },
};
