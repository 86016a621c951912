/**
 * How a plugin config leaves the server: the wire shapes of server/domain/plugin-configs.ts's
 * answers (PostHog's PluginConfigSerializer, PluginSerializer and ActivityLogSerializer in
 * posthog/api/plugin.py and posthog/api/activity_log.py, as `openapi.yaml` declares them) and
 * the functions that build them from stored rows: secrets masked, `error` and
 * `delivery_rate_24h` always null, name and description falling back to the plugin's.
 */
import type { Kysely } from 'kysely';
import type { components } from '../../generated/api.js';
import type { Database } from '../storage/schema.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import type { ActivityEntry } from '../storage/repositories/activity-log.js';
import type { Plugin } from '../storage/repositories/plugins.js';
import type { PluginConfigRecord } from '../storage/repositories/plugin-configs.js';
import type { ProjectAccess } from './access.js';
import { findCatalogPlugin, type ConfigSchemaField } from './plugin-catalog.js';
import { maskSecretConfig, secretFieldKeys } from './plugin-jobs.js';

type Schemas = components['schemas'];
/** `plugin_info` of a config: PostHog's PluginSerializer fields (schema `Plugin`). */
export type PluginInfo = Schemas['Plugin'];
/** A plugin config as it leaves the server (schema `PluginConfig`, PostHog's PluginConfigSerializer). */
export type PluginConfigWire = Schemas['PluginConfig'];
/** A page of plugin configs (schema `PaginatedPluginConfigList`). */
export type PaginatedPluginConfigWire = Schemas['PaginatedPluginConfigList'];

/** One activity entry on the wire (schema `ActivityLog`, PostHog's ActivityLogSerializer). */
export type ActivityLogWire = Schemas['ActivityLog'];
/** The job record `job` answers with (schema `PluginConfigJobResult`). */
export type PluginConfigJobWire = Schemas['PluginConfigJobResult'];
/** The destination function `migrate` creates (schema `HogFunctionMigration`). */
export type HogFunctionMigrationWire = Schemas['HogFunctionMigration'];

/** The plugin's `config_schema` as the secret rules read it (a list or a map of fields; `[]` when it is neither). */
export function schemaOf(plugin: Plugin): ConfigSchemaField[] | Record<string, ConfigSchemaField> {
  const s = plugin.config_schema;
  return (Array.isArray(s) || (s && typeof s === 'object') ? s : []) as ConfigSchemaField[] | Record<string, ConfigSchemaField>;
}

/** The keys of the plugin's secret config fields. */
export function secretKeys(plugin: Plugin): Set<string> {
  return new Set(secretFieldKeys(schemaOf(plugin)));
}

/**
 * `plugin_info` of a config whose plugin is `plugin` (PostHog's PluginSerializer), also the rows of
 * an organization's plugin lists: the plugin's organization name is `organization`'s, or read through `db` when the plugin belongs to another
 * organization (a global plugin). `db` must be the transaction when called inside one (SQLite has
 * one connection).
 */
export async function pluginInfo(plugin: Plugin, organization: { id: string; name: string }, db: Kysely<Database>): Promise<PluginInfo> {
  let organizationName = organization.name;
  if (plugin.organization_id !== organization.id) {
    organizationName = (await new AccountsRepository(db).findOrganization(plugin.organization_id))?.name ?? '';
  }
  return {
    id: plugin.id,
    plugin_type: plugin.plugin_type as PluginInfo['plugin_type'],
    name: plugin.name,
    description: plugin.description,
    url: plugin.url,
    icon: plugin.icon,
    config_schema: plugin.config_schema as PluginInfo['config_schema'],
    tag: plugin.tag,
    latest_tag: plugin.latest_tag,
    is_global: plugin.is_global,
    organization_id: plugin.organization_id,
    organization_name: organizationName,
    capabilities: plugin.capabilities,
    metrics: plugin.metrics,
    public_jobs: plugin.public_jobs as PluginInfo['public_jobs'],
    hog_function_migration_available: Boolean(findCatalogPlugin(plugin.url)?.migrator),
  };
}

/**
 * The wire form: secrets masked, `error` always null, name/description falling back to the
 * plugin's, `plugin_info` only when `withInfo` (PostHog: every action but list and rearrange), read
 * through `db` as `pluginInfo`.
 */
export async function pluginConfigToWire(
  record: PluginConfigRecord,
  plugin: Plugin | undefined,
  project: ProjectAccess,
  withInfo: boolean,
  db: Kysely<Database>,
): Promise<PluginConfigWire> {
  return {
    id: record.id,
    plugin: record.plugin_id,
    enabled: record.enabled,
    order: record.order,
    config: plugin ? maskSecretConfig(record.config, schemaOf(plugin)) : record.config,
    error: null,
    team_id: record.team_id,
    plugin_info: withInfo && plugin ? await pluginInfo(plugin, project.organization, db) : null,
    delivery_rate_24h: null,
    created_at: record.created_at,
    updated_at: record.updated_at,
    name: record.name || plugin?.name || null,
    description: record.description || plugin?.description || null,
    deleted: record.deleted,
  };
}

/** PostHog's ActivityLogSerializer shape; system entries get `{first_name: "System", email: null, is_system: true}`. */
export function activityToWire(e: ActivityEntry): ActivityLogWire {
  return {
    id: e.id,
    user: e.user ? { first_name: e.user.first_name, email: e.user.email } : { first_name: 'System', email: null, is_system: true },
    activity: e.activity,
    scope: e.scope,
    item_id: e.item_id,
    detail: {
      id: e.detail.id ?? null,
      changes:
        e.detail.changes?.map((c) => ({
          type: c.type,
          action: c.action,
          field: c.field ?? null,
          before: c.before ?? null,
          after: c.after ?? null,
        })) ?? null,
      merge: null,
      trigger: e.detail.trigger ?? null,
      name: e.detail.name ?? null,
      short_id: e.detail.short_id ?? null,
      type: e.detail.type ?? null,
    },
    created_at: e.created_at,
  };
}
