/**
 * Plugin configs of a team (PostHog posthog/models/plugin.py `PluginConfig`), their jobs, and the
 * destination functions `migrate` creates. Lists are ordered by (order, plugin_id), as PostHog's
 * PluginConfigViewSet orders them.
 */
import { v7 as uuid7 } from 'uuid';
import type { Kysely, Selectable } from 'kysely';
import type { Database, PluginConfigTable } from '../schema.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toInt, toIso } from '../values.js';

/** A plugin config as read (posthog/models/plugin.py `PluginConfig`): booleans and `config` decoded, timestamps ISO 8601 UTC strings. */
export interface PluginConfigRecord {
  id: number;
  team_id: number;
  plugin_id: number;
  enabled: boolean;
  order: number;
  config: Record<string, unknown>;
  web_token: string | null;
  name: string | null;
  description: string | null;
  deleted: boolean;
  created_at: string;
  updated_at: string;
}

/**
 * A job triggered on a plugin config: `id` is the job id (a time-ordered UUID), `status` 'queued' when created,
 * `created_at` an ISO 8601 UTC string.
 */
export interface PluginConfigJob {
  id: string;
  team_id: number;
  plugin_config_id: number;
  type: string;
  payload: Record<string, unknown>;
  operation: string;
  status: string;
  created_by_id: number | null;
  created_at: string;
}

/**
 * A destination function created by `migrate` (posthog/models/hog_functions/hog_function.py `HogFunction`):
 * `id` a time-ordered UUID, `created_at` an ISO 8601 UTC string.
 */
export interface HogFunctionRecord {
  id: string;
  team_id: number;
  type: string;
  name: string;
  description: string;
  template_id: string;
  enabled: boolean;
  inputs: Record<string, unknown>;
  filters: Record<string, unknown>;
  plugin_config_id: number | null;
  created_by_id: number | null;
  created_at: string;
}

function toRecord(r: Selectable<PluginConfigTable>): PluginConfigRecord {
  return {
    id: r.id,
    team_id: r.team_id,
    plugin_id: r.plugin_id,
    enabled: toBool(r.enabled),
    order: r.order,
    config: fromJson<Record<string, unknown>>(r.config) ?? {},
    web_token: r.web_token,
    name: r.name,
    description: r.description,
    deleted: toBool(r.deleted),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** Fields a write may change. */
export type PluginConfigChanges = Partial<Pick<PluginConfigRecord, 'enabled' | 'order' | 'config' | 'name' | 'description' | 'deleted'>>;

/**
 * Repository of plugin configs, their jobs and destination functions; every method runs on the given Kysely
 * instance (or transaction).
 */
export class PluginConfigsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * One page of a team's configs whose plugin is in `pluginIds`, deleted ones hidden,
   * ordered by (order, plugin_id, id), with the total count.
   */
  async page(
    teamId: number,
    pluginIds: number[],
    page: { limit: number; offset: number },
  ): Promise<{ count: number; results: PluginConfigRecord[] }> {
    if (pluginIds.length === 0) return { count: 0, results: [] };
    const q = this.db
      .selectFrom('plugin_configs')
      .where('team_id', '=', teamId)
      .where('plugin_id', 'in', pluginIds)
      .where('deleted', '=', boolValue(false));
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const rows = await q.selectAll().orderBy('order').orderBy('plugin_id').orderBy('id').limit(page.limit).offset(page.offset).execute();
    return { count: toInt(total.n as number | string), results: rows.map(toRecord) };
  }

  /** A team's config by id, optionally only when its plugin is in `pluginIds`. Deleted ones included. */
  async find(teamId: number, id: number, pluginIds?: number[]): Promise<PluginConfigRecord | undefined> {
    if (pluginIds && pluginIds.length === 0) return undefined;
    let q = this.db.selectFrom('plugin_configs').selectAll().where('team_id', '=', teamId).where('id', '=', id);
    if (pluginIds) q = q.where('plugin_id', 'in', pluginIds);
    const r = await q.executeTakeFirst();
    return r && toRecord(r);
  }

  /** A config locked for update where the dialect supports it (PostgreSQL); plain read on SQLite. */
  async findForUpdate(teamId: number, id: number, pluginIds: number[], lock: boolean): Promise<PluginConfigRecord | undefined> {
    if (pluginIds.length === 0) return undefined;
    let q = this.db
      .selectFrom('plugin_configs')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .where('plugin_id', 'in', pluginIds);
    if (lock) q = q.forUpdate();
    const r = await q.executeTakeFirst();
    return r && toRecord(r);
  }

  /**
   * Inserts a config with `created_at` = `updated_at` = now and returns the stored row.
   * Throws the driver's foreign-key error when the team or plugin does not exist.
   */
  async create(input: Omit<PluginConfigRecord, 'id' | 'created_at' | 'updated_at'>): Promise<PluginConfigRecord> {
    const now = nowIso();
    const r = await this.db
      .insertInto('plugin_configs')
      .values({
        team_id: input.team_id,
        plugin_id: input.plugin_id,
        enabled: boolValue(input.enabled),
        order: input.order,
        config: jsonValue(input.config),
        web_token: input.web_token,
        name: input.name,
        description: input.description,
        deleted: boolValue(input.deleted),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(r);
  }

  /** Applies changes and bumps updated_at; returns the row as it now is. */
  async update(id: number, changes: PluginConfigChanges): Promise<PluginConfigRecord> {
    const set: Record<string, unknown> = { updated_at: nowIso() };
    if (changes.enabled !== undefined) set.enabled = boolValue(changes.enabled);
    if (changes.deleted !== undefined) set.deleted = boolValue(changes.deleted);
    if (changes.order !== undefined) set.order = changes.order;
    if (changes.config !== undefined) set.config = jsonValue(changes.config);
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    const r = await this.db.updateTable('plugin_configs').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    return toRecord(r);
  }

  /** Every enabled config of a team, deleted ones excluded, ordered by (order, plugin_id, id). */
  async listEnabled(teamId: number): Promise<PluginConfigRecord[]> {
    const rows = await this.db
      .selectFrom('plugin_configs')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('enabled', '=', boolValue(true))
      .where('deleted', '=', boolValue(false))
      .orderBy('order')
      .orderBy('plugin_id')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Records a job with a time-ordered id, status 'queued' and `created_at` now; returns it.
   * Throws the driver's foreign-key error when the team, config or user does not exist.
   */
  async insertJob(input: Omit<PluginConfigJob, 'id' | 'created_at' | 'status'>): Promise<PluginConfigJob> {
    const job: PluginConfigJob = { ...input, id: uuid7(), status: 'queued', created_at: nowIso() };
    await this.db
      .insertInto('plugin_config_jobs')
      .values({ ...job, payload: jsonValue(job.payload) })
      .execute();
    return job;
  }

  /** The job with this id (any team), or undefined. */
  async findJob(id: string): Promise<PluginConfigJob | undefined> {
    const r = await this.db.selectFrom('plugin_config_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { ...r, payload: fromJson<Record<string, unknown>>(r.payload), created_at: toIso(r.created_at) };
  }

  /**
   * Inserts a destination function with a time-ordered id and `created_at` now; returns it.
   * Throws the driver's foreign-key error when the team, config or user does not exist.
   */
  async insertHogFunction(input: Omit<HogFunctionRecord, 'id' | 'created_at'>): Promise<HogFunctionRecord> {
    const fn: HogFunctionRecord = { ...input, id: uuid7(), created_at: nowIso() };
    await this.db
      .insertInto('hog_functions')
      .values({ ...fn, enabled: boolValue(fn.enabled), inputs: jsonValue(fn.inputs), filters: jsonValue(fn.filters) })
      .execute();
    return fn;
  }
}
