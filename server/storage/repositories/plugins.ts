/**
 * Plugins installed in an organization (PostHog posthog/models/plugin.py `Plugin`). Plugins are
 * identified by `url` within an organization; installing the same url twice updates it in place.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database, PluginTable } from '../schema.js';
import { cachedLoad } from '../cached-loads.js';
import { UnchangedStoreCache, type ChangeCounter } from '../unchanged-cache.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toIso } from '../values.js';

/** Capabilities as the plugin server reports them: `{methods?, jobs?, scheduled_tasks?}`. */
export interface PluginCapabilities {
  methods?: string[];
  jobs?: string[];
  scheduled_tasks?: string[];
  [k: string]: unknown;
}

/** A plugin as read (posthog/models/plugin.py `Plugin`): booleans and JSON decoded, timestamps ISO 8601 UTC strings. */
export interface Plugin {
  id: number;
  organization_id: string;
  plugin_type: string;
  name: string;
  description: string;
  url: string;
  icon: string | null;
  /** a list of `{key, name, type, default, required, secret, …}` (or PostHog's older dict form) */
  config_schema: unknown;
  tag: string | null;
  latest_tag: string | null;
  is_global: boolean;
  capabilities: PluginCapabilities;
  metrics: Record<string, unknown>;
  public_jobs: Record<string, unknown>;
  frontend_source: string | null;
  created_at: string;
  updated_at: string;
}

/** What installing needs; everything else is set by the store. */
export type PluginInput = Omit<Plugin, 'id' | 'created_at' | 'updated_at'>;

/** Maps a plugins row (possibly prefixed columns already renamed) to a Plugin. */
export function toPlugin(r: Selectable<PluginTable>): Plugin {
  return {
    id: r.id,
    organization_id: r.organization_id,
    plugin_type: r.plugin_type,
    name: r.name,
    description: r.description,
    url: r.url,
    icon: r.icon,
    config_schema: fromJson(r.config_schema),
    tag: r.tag,
    latest_tag: r.latest_tag,
    is_global: toBool(r.is_global),
    capabilities: fromJson<PluginCapabilities>(r.capabilities) ?? {},
    metrics: fromJson<Record<string, unknown>>(r.metrics) ?? {},
    public_jobs: fromJson<Record<string, unknown>>(r.public_jobs) ?? {},
    frontend_source: r.frontend_source,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** Repository of plugins; every method runs on the given Kysely instance (or transaction). */
export class PluginsRepository {
  /**
   * `changeCounter`: the store's (`Store.changeCounter`, SQLite only). With it, the decoded plugins
   * `listForOrganization` keeps are also dropped whenever the plugins table may have changed, so a
   * write that leaves `updated_at` alone (hand-written SQL, another tool) is seen too.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changeCounter?: ChangeCounter,
  ) {}

  /** The decoded plugins this repository's store keeps (see `listForOrganization`). */
  private decoded(): DecodedPlugins {
    if (!this.changeCounter) return decodedShared;
    let kept = decodedByStore.get(this.changeCounter);
    if (!kept) {
      kept = new UnchangedStoreCache(this.changeCounter, PLUGIN_ROWS, { max: DECODED_MAX });
      decodedByStore.set(this.changeCounter, kept);
    }
    return kept;
  }

  /** Installs a plugin in its organization, or updates the one with the same url. */
  async install(input: PluginInput): Promise<{ plugin: Plugin; created: boolean }> {
    const now = nowIso();
    const values = {
      organization_id: input.organization_id,
      plugin_type: input.plugin_type,
      name: input.name,
      description: input.description,
      url: input.url,
      icon: input.icon,
      config_schema: jsonValue(input.config_schema),
      tag: input.tag,
      latest_tag: input.latest_tag,
      is_global: boolValue(input.is_global),
      capabilities: jsonValue(input.capabilities),
      metrics: jsonValue(input.metrics),
      public_jobs: jsonValue(input.public_jobs),
      frontend_source: input.frontend_source,
      updated_at: now,
    };
    const existing = await this.db
      .selectFrom('plugins')
      .select('id')
      .where('organization_id', '=', input.organization_id)
      .where('url', '=', input.url)
      .executeTakeFirst();
    if (existing) {
      const r = await this.db.updateTable('plugins').set(values).where('id', '=', existing.id).returningAll().executeTakeFirstOrThrow();
      return { plugin: toPlugin(r), created: false };
    }
    const r = await this.db
      .insertInto('plugins')
      .values({ ...values, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { plugin: toPlugin(r), created: true };
  }

  /** The plugin with this id (any organization, global or not), or undefined. */
  async find(id: number): Promise<Plugin | undefined> {
    const r = await this.db.selectFrom('plugins').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toPlugin(r);
  }

  /**
   * Plugins usable by an organization: its own and global ones, by id. Every request on plugin
   * configs reads this list, so decoded plugins are kept per process (`DecodedPlugins`, at most
   * `DECODED_MAX`), keyed by id, organization (a random UUID, so two stores never share a key) and
   * `updated_at` (which `install` moves on every change): the query reads only those three columns
   * and fetches, and decodes, the full rows of plugins not seen before. With the store's
   * `changeCounter` (SQLite), everything kept is dropped when the plugins table may have changed.
   */
  async listForOrganization(organizationId: string): Promise<Plugin[]> {
    const heads = await this.db
      .selectFrom('plugins')
      .select(['id', 'organization_id', 'updated_at'])
      .where((eb) => eb.or([eb('organization_id', '=', organizationId), eb('is_global', '=', boolValue(true))]))
      .orderBy('id')
      .execute();
    // With the store's counter, its own kept plugins, emptied when the plugins table may have
    // changed; the mark is read after the heads, so that a write the heads already show is never
    // answered from what was decoded before it.
    const decoded = this.decoded();
    const mark = decoded.current();
    // updated_at as read (text on SQLite, a Date on PostgreSQL), not re-formatted: parsing it was
    // ~1.5 µs a plugin on every uncached read
    const keyOf = (r: { id: number; organization_id: string; updated_at: Parameters<typeof toIso>[0] }) =>
      `${r.id}|${r.organization_id}|${r.updated_at instanceof Date ? r.updated_at.getTime() : r.updated_at}`;
    // what this call answers is collected here, not read back from the kept entries, which another
    // call may empty while this one awaits its second query
    const byId = new Map<number, Plugin>();
    const missing: number[] = [];
    for (const h of heads) {
      const kept = decoded.peek(keyOf(h));
      if (kept) byId.set(h.id, kept);
      else missing.push(h.id);
    }
    if (missing.length) {
      const rows = (await decoded.load(this.db, missing)) ?? [];
      // rows read while the plugins table changed are answered but not kept
      const keep = decoded.unchangedSince(mark);
      for (const r of rows) {
        const plugin = deepFreeze(toPlugin(r));
        if (keep) decoded.keep(keyOf(r), plugin);
        // a plugin changed between the two queries is answered as its newer row
        byId.set(r.id, plugin);
      }
    }
    // a plugin deleted between the two queries is left out
    return heads.map((h) => byId.get(h.id)).filter((p): p is Plugin => p !== undefined);
  }
}

/**
 * The full rows of the plugins `ids` (the second query of `listForOrganization`, whose decoded
 * plugins are kept by `id|organization_id|updated_at` while the plugins table is unchanged).
 */
export const PLUGIN_ROWS = cachedLoad({
  name: 'decoded plugins',
  reads: ['plugins'],
  load: (db: Kysely<Database>, ids: number[]) => db.selectFrom('plugins').selectAll().where('id', 'in', ids).execute(),
});

/** Decoded plugins by `id|organization_id|updated_at` (see `listForOrganization`). */
type DecodedPlugins = UnchangedStoreCache<Kysely<Database>, number[], void, Selectable<PluginTable>[], Plugin>;
const DECODED_MAX = 10_000;
/** Per store, by its change counter (SQLite). */
const decodedByStore = new WeakMap<ChangeCounter, DecodedPlugins>();
/** Stores without a change counter (PostgreSQL): shared, keyed by `updated_at` only, never dropped for a change. */
const decodedShared: DecodedPlugins = new UnchangedStoreCache(undefined, PLUGIN_ROWS, { max: DECODED_MAX });

/** Freezes a decoded plugin and its JSON values, so that no caller can change the shared copy. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
