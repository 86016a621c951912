/**
 * Pipeline plugin configs: the rules of PostHog's PluginConfigViewSet and its two pipeline
 * subclasses (posthog/api/plugin.py), on our storage. No HTTP here: methods take the caller's
 * `ProjectAccess` and plain input, return wire-shaped plain objects (built in plugin-config-wire.ts),
 * and throw `ApiError` (domain/errors.ts).
 *
 * - Destinations: configs whose plugin's `capabilities.methods` has onEvent or composeWebhook;
 *   frontend apps: configs whose plugin's capabilities have neither `methods` nor `scheduled_tasks`.
 * - Lists hide deleted configs and are ordered by (order, plugin id); retrieve/update see deleted ones.
 * - An organization whose plugins_access_level is below CONFIG (3) sees no configs, and its writes
 *   answer 400 "Plugin configuration is not available for the current organization!".
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { validationError, notFound } from './errors.js';
import { JsonText } from './json-text.js';
import type { Store } from '../storage/db.js';
import { cachedLoad } from '../storage/cached-loads.js';
import { UnchangedStoreCache } from '../storage/unchanged-cache.js';
import type { Database } from '../storage/schema.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { ActivityLogRepository, type ActivityChange } from '../storage/repositories/activity-log.js';
import { PluginsRepository, type Plugin } from '../storage/repositories/plugins.js';
import {
  PluginConfigsRepository,
  type HogFunctionRecord,
  type PluginConfigChanges,
  type PluginConfigJob,
  type PluginConfigRecord,
} from '../storage/repositories/plugin-configs.js';
import type { components } from '../../generated/api.js';
import type { ProjectAccess } from './access.js';
import { limitOffsetLinks, pageLinks } from './pagination.js';
import { findCatalogPlugin, type PublicJob } from './plugin-catalog.js';
import {
  activityToWire,
  pluginConfigToWire,
  schemaOf,
  secretKeys,
  type HogFunctionMigrationWire,
  type PaginatedPluginConfigWire,
  type PluginConfigJobWire,
  type PluginConfigWire,
} from './plugin-config-wire.js';
import {
  PluginJobError,
  SECRET_FIELD_VALUE,
  isDestination,
  isFrontendApp,
  mergeConfigUpdate,
  validatePluginJobPayload,
} from './plugin-jobs.js';

/** The two pipeline views over plugin configs. */
export type PluginConfigKind = 'destination' | 'frontend_app';

/** PostHog's plugin access levels (posthog/plugins/access.py): CONFIG lets an organization configure plugins. */
const PLUGINS_ACCESS_LEVEL_CONFIG = 3;
const NOT_AVAILABLE = 'Plugin configuration is not available for the current organization!';
/** Body of `frontend` when the plugin has no frontend source (posthog/api/plugin.py `frontend`). */
export const NO_FRONTEND_SOURCE = 'export function getFrontendApp () { return {"no_frontend": true} }';
/** Activity scope of plugin config entries (PostHog logs order changes under "Plugin"). */
const SCOPE = 'PluginConfig';

type Schemas = components['schemas'];
/** Body of create (schema `PluginConfigRequest`): writable fields. */
export type PluginConfigCreateInput = Schemas['PluginConfigRequest'];
/** Body of PATCH (schema `PatchedPluginConfig`): every field optional; `plugin` is ignored. */
export type PluginConfigPatchInput = Schemas['PatchedPluginConfig'];

/** The caller as the rules need it. */
export interface Caller {
  project: ProjectAccess;
  userId: number;
  isStaff: boolean;
}

/** What a kept answer answers: one config of a kind (`id`), or one page of a kind's list (`page`, `url`). */
type AnswerQuery = { kind: PluginConfigKind; id: number } | { kind: PluginConfigKind; page: { limit: number; offset: number }; url: URL };
/** A kept answer: `retrieve`'s or `list`'s, serialized. */
type Answer = JsonText<PluginConfigWire | PaginatedPluginConfigWire>;

/**
 * An organization's plugins of one kind (`'any'`: all), by id, as plugin configs keep them while
 * the plugins table is unchanged (on SQLite: `Store.changeCounter`).
 */
const PLUGINS_OF_KIND = cachedLoad({
  name: 'plugins of an organization by kind',
  reads: ['plugins'],
  load: async (plugins: PluginsRepository, organizationId: string, kind: PluginConfigKind | 'any') => {
    const all = await plugins.listForOrganization(organizationId);
    const keep = all.filter(
      (p) => kind === 'any' || (kind === 'destination' ? isDestination(p.capabilities) : isFrontendApp(p.capabilities)),
    );
    return new Map(keep.map((p) => [p.id, p]));
  },
});

/** Plugin config operations of one store. */
export class PluginConfigService {
  /**
   * `retrieve` and `list` answers, serialized, as they are kept while the tables they come from are
   * unchanged: the configs, the plugins, the organization (name in `plugin_info`, plugins access
   * level) and the team (the project's id); the project's team and organization come with the
   * caller's `ProjectAccess`. They depend only on stored rows, never on who asks.
   */
  static readonly ANSWERS = cachedLoad({
    name: 'plugin config answers',
    reads: ['plugin_configs', 'plugins', 'organizations', 'teams'],
    readsThroughArgument: ['teams', 'organizations'],
    load: (service: PluginConfigService, project: ProjectAccess, query: AnswerQuery): Promise<Answer> =>
      service.buildAnswer(project, query),
  });

  /** An organization's plugins of one kind, while the plugins table is unchanged (on SQLite: `Store.changeCounter`). */
  private readonly pluginsByKind: UnchangedStoreCache<PluginsRepository, string, PluginConfigKind | 'any', Map<number, Plugin>> | undefined;
  /**
   * Answers of `retrieve` and `list` (`ANSWERS`), kept on SQLite (`Store.changeCounter`): a keyed
   * GET then costs no query and no JSON encoding (docs/performance.md).
   */
  private readonly answers: UnchangedStoreCache<PluginConfigService, ProjectAccess, AnswerQuery, Answer> | undefined;
  /** The plugins repository on the store (outside transactions), the context of `pluginsByKind`. */
  private readonly plugins: PluginsRepository;

  constructor(private readonly store: Store) {
    this.plugins = new PluginsRepository(store.db, store.changeCounter);
    this.pluginsByKind = store.changeCounter && new UnchangedStoreCache(store.changeCounter, PLUGINS_OF_KIND, { max: 1_000 });
    this.answers = store.changeCounter && new UnchangedStoreCache(store.changeCounter, PluginConfigService.ANSWERS, { max: 10_000 });
  }

  /** The answer to `query`, kept under `key` in `answers` while `ANSWER_READS` are unchanged (on SQLite). */
  private async answer<T>(key: string, project: ProjectAccess, query: AnswerQuery): Promise<JsonText<T>> {
    const kept = this.answers && (await this.answers.get(key, this, project, query));
    return (kept ?? (await this.buildAnswer(project, query))) as JsonText<T>;
  }

  /** `ANSWERS`' load: the config or the page `query` names, serialized. */
  private async buildAnswer(project: ProjectAccess, query: AnswerQuery): Promise<Answer> {
    const wire =
      'id' in query
        ? await this.retrieveWire(project, query.kind, query.id)
        : await this.listPage(project, query.kind, query.page, query.url);
    return new JsonText(Buffer.from(JSON.stringify(wire), 'utf8'));
  }

  private repos(db: Kysely<Database> = this.store.db) {
    return {
      configs: new PluginConfigsRepository(db),
      plugins: new PluginsRepository(db, this.store.changeCounter),
      activity: new ActivityLogRepository(db),
      accounts: new AccountsRepository(db),
    };
  }

  /**
   * Plugins of the organization of one kind, by id (shared: callers must not change the map). Read
   * through `db` inside a transaction; outside one, kept while the plugins table is unchanged.
   */
  private async pluginsOfKind(project: ProjectAccess, kind: PluginConfigKind | 'any', db?: Kysely<Database>): Promise<Map<number, Plugin>> {
    const organizationId = project.organization.id;
    if (db !== undefined) return (await PLUGINS_OF_KIND.load(this.repos(db).plugins, organizationId, kind))!;
    if (!this.pluginsByKind) return (await PLUGINS_OF_KIND.load(this.plugins, organizationId, kind))!;
    return (await this.pluginsByKind.get(`${organizationId}:${kind}`, this.plugins, organizationId, kind))!;
  }

  private canConfigure(project: ProjectAccess): boolean {
    return project.organization.plugins_access_level >= PLUGINS_ACCESS_LEVEL_CONFIG;
  }

  /**
   * One page of a kind's configs, `{count, next, previous, results}` with absolute links, serialized
   * (kept on SQLite while `ANSWER_READS` are unchanged, by project, kind, page and request URL).
   */
  async list(
    project: ProjectAccess,
    kind: PluginConfigKind,
    page: { limit: number; offset: number },
    url: URL,
  ): Promise<JsonText<PaginatedPluginConfigWire>> {
    return this.answer(`list:${project.team.id}:${kind}:${page.limit}:${page.offset}:${url.href}`, project, { kind, page, url });
  }

  private async listPage(
    project: ProjectAccess,
    kind: PluginConfigKind,
    page: { limit: number; offset: number },
    url: URL,
  ): Promise<PaginatedPluginConfigWire> {
    const plugins = this.canConfigure(project) ? await this.pluginsOfKind(project, kind) : new Map<number, Plugin>();
    const { count, results } = await this.repos().configs.page(project.team.id, [...plugins.keys()], page);
    const links = limitOffsetLinks(url, page.limit, page.offset, count);
    return {
      count,
      next: links.next,
      previous: links.previous,
      results: await Promise.all(results.map((r) => pluginConfigToWire(r, plugins.get(r.plugin_id), project, false, this.store.db))),
    };
  }

  /** The config `id` of a kind in the caller's project, with its plugin; 404 "Not found." otherwise. */
  private async getObject(project: ProjectAccess, kind: PluginConfigKind | 'any', id: number, db?: Kysely<Database>) {
    if (!this.canConfigure(project)) throw notFound();
    const plugins = await this.pluginsOfKind(project, kind, db);
    const record = await this.repos(db).configs.findForUpdate(
      project.team.id,
      id,
      [...plugins.keys()],
      this.store.dialect === 'postgres' && db !== undefined,
    );
    const plugin = record && plugins.get(record.plugin_id);
    if (!record || !plugin) throw notFound();
    return { record, plugin };
  }

  /**
   * One config of a kind, with `plugin_info`, serialized (kept on SQLite while `ANSWER_READS` are unchanged).
   * Throws 404 "Not found." as `getObject`.
   */
  async retrieve(project: ProjectAccess, kind: PluginConfigKind, id: number): Promise<JsonText<PluginConfigWire>> {
    return this.answer(`retrieve:${project.team.id}:${kind}:${id}`, project, { kind, id });
  }

  private async retrieveWire(project: ProjectAccess, kind: PluginConfigKind, id: number): Promise<PluginConfigWire> {
    const { record, plugin } = await this.getObject(project, kind, id);
    return pluginConfigToWire(record, plugin, project, true, this.store.db);
  }

  /**
   * Creates a config: 400 `does_not_exist` on `plugin` for an unknown plugin or one the
   * organization cannot use (any kind, as PostHog does not check it). Always a new config (PostHog
   * 2025; early-2024 PostHog updated an existing config of the same plugin instead). `deleted: true`
   * forces `enabled: false`. Logs "enabled" or "disabled". Answers the config with `plugin_info`.
   */
  async create(caller: Caller, input: PluginConfigCreateInput): Promise<PluginConfigWire> {
    const { project } = caller;
    if (!this.canConfigure(project)) throw validationError(NOT_AVAILABLE);
    return this.store.db.transaction().execute(async (trx) => {
      const r = this.repos(trx);
      const plugins = await this.pluginsOfKind(project, 'any', trx);
      const plugin = plugins.get(input.plugin);
      if (!plugin) throw validationError(`Invalid pk "${input.plugin}" - object does not exist.`, 'plugin', 'does_not_exist');
      const enabled = input.deleted ? false : (input.enabled ?? false);
      const record = await r.configs.create({
        team_id: project.team.id,
        plugin_id: plugin.id,
        enabled,
        order: input.order,
        config: input.config ?? {},
        web_token: randomBytes(24).toString('base64url'),
        name: input.name ?? null,
        description: input.description ?? null,
        deleted: input.deleted ?? false,
      });
      await this.log(r.activity, caller, record, plugin, enabled ? 'enabled' : 'disabled', null);
      return pluginConfigToWire(record, plugin, project, true, trx);
    });
  }

  /**
   * Writes changes and records who made them: "config_updated" with the changed config keys
   * (secrets masked; PostHog's rule), "updated" with changes of order, name, description or deleted
   * (our addition, so that every change is attributed), and "enabled"/"disabled" on a flip.
   */
  private async applyChanges(
    r: ReturnType<PluginConfigService['repos']>,
    caller: Caller,
    before: PluginConfigRecord,
    plugin: Plugin,
    input: PluginConfigPatchInput,
  ): Promise<PluginConfigRecord> {
    const changes: PluginConfigChanges = {};
    if (input.enabled !== undefined) changes.enabled = input.enabled;
    if (input.order !== undefined) changes.order = input.order;
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (input.deleted !== undefined && input.deleted !== null) changes.deleted = input.deleted;
    if (input.deleted) changes.enabled = false;
    if (input.config !== undefined) changes.config = mergeConfigUpdate(before.config, input.config, schemaOf(plugin));
    const after = await r.configs.update(before.id, changes);

    const secrets = secretKeys(plugin);
    const fieldChanges: ActivityChange[] = [];
    for (const field of ['order', 'name', 'description', 'deleted'] as const) {
      if (changes[field] !== undefined && before[field] !== after[field]) {
        fieldChanges.push({ type: 'PluginConfig', action: 'changed', field, before: before[field], after: after[field] });
      }
    }
    const configChanges: ActivityChange[] = [];
    if (changes.config) {
      const keys = new Set([...Object.keys(before.config), ...Object.keys(after.config)]);
      for (const key of [...keys].sort()) {
        const b = before.config[key];
        const a = after.config[key];
        if (JSON.stringify(b) === JSON.stringify(a)) continue;
        const mask = (v: unknown) => (secrets.has(key) && v ? SECRET_FIELD_VALUE : v);
        configChanges.push({
          type: 'PluginConfig',
          action: b === undefined ? 'created' : a === undefined ? 'deleted' : 'changed',
          field: key,
          before: mask(b),
          after: mask(a),
        });
      }
    }
    if (configChanges.length) await this.log(r.activity, caller, after, plugin, 'config_updated', { changes: configChanges });
    if (fieldChanges.length) await this.log(r.activity, caller, after, plugin, 'updated', { changes: fieldChanges });
    if (before.enabled !== after.enabled) await this.log(r.activity, caller, after, plugin, after.enabled ? 'enabled' : 'disabled', null);
    return after;
  }

  private async log(
    activity: ActivityLogRepository,
    caller: Caller,
    record: PluginConfigRecord,
    plugin: Plugin,
    kind: string,
    extra: { changes?: ActivityChange[]; trigger?: { job_type: string; job_id: string; payload: Record<string, unknown> } } | null,
  ): Promise<void> {
    await activity.log({
      team_id: caller.project.team.id,
      organization_id: caller.project.organization.id,
      user_id: caller.userId,
      scope: SCOPE,
      item_id: String(record.id),
      activity: kind,
      detail: { name: plugin.name, changes: extra?.changes ?? null, trigger: extra?.trigger ?? null },
    });
  }

  /**
   * PATCH: `plugin` is never changed; `deleted: true` forces `enabled: false`; `config` replaces the
   * stored config, except that secret keys omitted, null or sent back masked keep their stored value. Runs in one transaction (row locked on PostgreSQL).
   */
  async update(caller: Caller, kind: PluginConfigKind, id: number, input: PluginConfigPatchInput): Promise<PluginConfigWire> {
    return this.store.db.transaction().execute(async (trx) => {
      const { record, plugin } = await this.getObject(caller.project, kind, id, trx);
      const after = await this.applyChanges(this.repos(trx), caller, record, plugin, input);
      return pluginConfigToWire(after, plugin, caller.project, true, trx);
    });
  }

  /**
   * DELETE: soft-deletes (deleted and disabled) any config of the project, whatever its kind (PostHog
   * looks it up by team and id only); deleting again answers 204 again. PostHog only disables the
   * config and answers 500 for an unknown id; we answer 404 and hide the config from lists.
   */
  async destroy(caller: Caller, id: number): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      const { record, plugin } = await this.getObject(caller.project, 'any', id, trx);
      await this.applyChanges(this.repos(trx), caller, record, plugin, { deleted: true });
    });
  }

  /**
   * Rearrange: `orders` maps config ids to orders; the project's enabled configs named in it get
   * their new order in one transaction, each change logged as PostHog does ("order_changed" under
   * scope "Plugin"); unknown ids are ignored. Answers every enabled config of the project ordered by
   * (order, plugin id), without plugin_info.
   */
  async rearrange(caller: Caller, orders: Record<string, number>): Promise<PluginConfigWire[]> {
    const { project } = caller;
    if (!this.canConfigure(project)) throw validationError(NOT_AVAILABLE);
    return this.store.db.transaction().execute(async (trx) => {
      const r = this.repos(trx);
      const plugins = await this.pluginsOfKind(project, 'any', trx);
      for (const config of await r.configs.listEnabled(project.team.id)) {
        const wanted = orders[String(config.id)];
        if (wanted === undefined || wanted === config.order) continue;
        await r.configs.update(config.id, { order: wanted });
        await r.activity.log({
          team_id: project.team.id,
          organization_id: project.organization.id,
          user_id: caller.userId,
          scope: 'Plugin',
          item_id: String(config.plugin_id),
          activity: 'order_changed',
          detail: {
            name: plugins.get(config.plugin_id)?.name ?? null,
            changes: [{ type: 'Plugin', action: 'changed', field: 'order', before: config.order, after: wanted }],
          },
        });
      }
      const enabled = await r.configs.listEnabled(project.team.id);
      return Promise.all(enabled.map((c) => pluginConfigToWire(c, plugins.get(c.plugin_id), project, false, this.store.db)));
    });
  }

  /**
   * Job: validates `{type, payload, operation}` against the plugin's public jobs with PostHog's
   * messages (posthog/models/plugin.py validate_plugin_job_payload), records the job durably and
   * logs "job_triggered", in one transaction. Answers the job record.
   */
  async job(
    caller: Caller,
    id: number,
    job: { type?: string; payload?: Record<string, unknown>; operation?: string },
  ): Promise<PluginConfigJobWire> {
    const { project } = caller;
    if (!this.canConfigure(project)) throw validationError(NOT_AVAILABLE);
    return this.store.db.transaction().execute(async (trx) => {
      const { record, plugin } = await this.getObject(project, 'destination', id, trx);
      if (!job.type) throw validationError('The job type must be specified!');
      const payload = job.payload ?? {};
      const operation = job.operation ?? 'start';
      try {
        validatePluginJobPayload(plugin.public_jobs as Record<string, PublicJob>, job.type, payload, caller.isStaff);
      } catch (err) {
        if (err instanceof PluginJobError) throw validationError(err.message);
        throw err;
      }
      const r = this.repos(trx);
      const saved: PluginConfigJob = await r.configs.insertJob({
        team_id: project.team.id,
        plugin_config_id: record.id,
        type: job.type,
        payload,
        operation,
        created_by_id: caller.userId,
      });
      await this.log(r.activity, caller, record, plugin, 'job_triggered', {
        trigger: { job_type: saved.type, job_id: saved.id, payload },
      });
      return {
        job_id: saved.id,
        type: saved.type,
        payload: saved.payload,
        operation: saved.operation,
        plugin_config_id: record.id,
        created_at: saved.created_at,
      };
    });
  }

  /**
   * Migrate: 400 "No migration available for this plugin" unless the plugin's url has a migrator
   * (PostHog's HOG_FUNCTION_MIGRATORS); otherwise creates the destination function from the
   * config (enabled when the config was), disables the config, and answers the function with
   * secret inputs masked.
   */
  async migrate(caller: Caller, id: number): Promise<HogFunctionMigrationWire> {
    return this.store.db.transaction().execute(async (trx) => {
      const { record, plugin } = await this.getObject(caller.project, 'destination', id, trx);
      const migrator = findCatalogPlugin(plugin.url)?.migrator;
      if (!migrator) throw validationError('No migration available for this plugin');
      const r = this.repos(trx);
      const inputs: Record<string, unknown> = {};
      for (const [configKey, inputName] of Object.entries(migrator.inputs)) {
        if (record.config[configKey] !== undefined) inputs[inputName] = { value: record.config[configKey] };
      }
      const fn: HogFunctionRecord = await r.configs.insertHogFunction({
        team_id: caller.project.team.id,
        type: 'destination',
        name: record.name || migrator.name,
        description: record.description || migrator.description,
        template_id: migrator.template_id,
        enabled: record.enabled,
        inputs,
        filters: {},
        plugin_config_id: record.id,
        created_by_id: caller.userId,
      });
      if (record.enabled) await this.applyChanges(r, caller, record, plugin, { enabled: false });
      const secrets = secretKeys(plugin);
      const masked: Record<string, unknown> = {};
      for (const [configKey, inputName] of Object.entries(migrator.inputs)) {
        if (inputs[inputName] !== undefined) {
          masked[inputName] = secrets.has(configKey) ? { secret: true } : inputs[inputName];
        }
      }
      return {
        id: fn.id,
        type: 'destination',
        name: fn.name,
        description: fn.description,
        template_id: fn.template_id,
        enabled: fn.enabled,
        inputs: masked,
        filters: fn.filters,
        created_at: fn.created_at,
        plugin_config_id: record.id,
      };
    });
  }

  /** The config's frontend JavaScript, or PostHog's `no_frontend` stub. */
  async frontend(project: ProjectAccess, id: number): Promise<string> {
    const { plugin } = await this.getObject(project, 'destination', id);
    return plugin.frontend_source ?? NO_FRONTEND_SOURCE;
  }

  /** One page (1-based) of the config's change log, newest first: `{results, next, previous, total_count}`. */
  async activity(project: ProjectAccess, id: number, page: { limit: number; page: number }, url: URL) {
    const { record } = await this.getObject(project, 'destination', id);
    const { total, results } = await this.repos().activity.page(project.team.id, SCOPE, String(record.id), page);
    const links = pageLinks(url, page.limit, page.page, total);
    return { results: results.map(activityToWire), next: links.next, previous: links.previous, total_count: total };
  }
}

/**
 * The tables a kept `retrieve` or `list` answer is built from (`PluginConfigService.ANSWERS.reads`):
 * the configs, the plugins, the organization and the team.
 */
export const ANSWER_READS: readonly string[] = PluginConfigService.ANSWERS.reads;
