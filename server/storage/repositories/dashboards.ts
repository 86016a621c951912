/**
 * Dashboards with their tiles, insights and text cards. Plain objects in and out; timestamps are
 * ISO 8601 UTC strings. Tiles are returned in PostHog's order: by the `sm` layout's `y`, then `x`
 * (posthog/api/dashboards/dashboard.py `get_tiles`), then id.
 */
import { randomInt } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { DashboardTable, Database } from '../schema.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toInt, toIso } from '../values.js';

/** A dashboard without its tiles. */
export interface DashboardRecord {
  id: number;
  team_id: number;
  name: string | null;
  description: string;
  pinned: boolean;
  deleted: boolean;
  creation_mode: string;
  restriction_level: number;
  filters: Record<string, unknown>;
  tags: string[];
  created_by_id: number | null;
  created_at: string;
}

/** A tile as stored: what it points at, its layouts and colour. */
export interface TileRow {
  id: number;
  insight_id: number | null;
  text_id: number | null;
  layouts: Record<string, unknown>;
  color: string | null;
  deleted: boolean;
}

/** A tile with what it holds. */
export interface TileRecord {
  id: number;
  dashboard_id: number;
  layouts: Record<string, unknown>;
  color: string | null;
  insight: {
    id: number;
    short_id: string;
    name: string | null;
    derived_name: null;
    description: string | null;
    query: Record<string, unknown> | null;
    is_sample: boolean;
  } | null;
  text: { id: number; body: string | null } | null;
}

function toDashboard(r: Selectable<DashboardTable>): DashboardRecord {
  return {
    id: r.id,
    team_id: r.team_id,
    name: r.name,
    description: r.description,
    pinned: toBool(r.pinned),
    deleted: toBool(r.deleted),
    creation_mode: r.creation_mode,
    restriction_level: r.restriction_level,
    filters: fromJson<Record<string, unknown>>(r.filters) ?? {},
    tags: fromJson<string[]>(r.tags) ?? [],
    created_by_id: r.created_by_id,
    created_at: toIso(r.created_at),
  };
}

const SHORT_ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** PostHog's insight short id: 8 random base62 characters (posthog/models/utils.py generate_short_id). */
export function generateShortId(): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += SHORT_ID_ALPHABET[randomInt(SHORT_ID_ALPHABET.length)];
  return out;
}

/** `layouts.sm.{y, x}` of a tile, for ordering; missing values sort last. */
function smPosition(layouts: Record<string, unknown>): [number, number] {
  const sm = layouts['sm'];
  const get = (k: string) =>
    sm && typeof sm === 'object' && typeof (sm as Record<string, unknown>)[k] === 'number'
      ? ((sm as Record<string, unknown>)[k] as number)
      : Number.MAX_SAFE_INTEGER;
  return [get('y'), get('x')];
}

/** Repository of dashboards; use inside a transaction for multi-row writes. */
export class DashboardsRepository {
  /** @param db the store, or the transaction the writes run in */
  constructor(readonly db: Kysely<Database>) {}

  /** Creates a dashboard and returns it. */
  async createDashboard(input: Omit<DashboardRecord, 'id' | 'created_at' | 'deleted'>): Promise<DashboardRecord> {
    const r = await this.db
      .insertInto('dashboards')
      .values({
        team_id: input.team_id,
        name: input.name,
        description: input.description,
        pinned: boolValue(input.pinned),
        deleted: boolValue(false),
        creation_mode: input.creation_mode,
        restriction_level: input.restriction_level,
        filters: jsonValue(input.filters),
        tags: jsonValue(input.tags),
        created_by_id: input.created_by_id,
        created_at: nowIso(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toDashboard(r);
  }

  /** Creates a sample insight (as templates do) and returns its id. */
  async createInsight(input: {
    team_id: number;
    name: string | null;
    description: string | null;
    query: Record<string, unknown> | null;
    created_by_id: number | null;
  }): Promise<number> {
    const r = await this.db
      .insertInto('insights')
      .values({
        short_id: generateShortId(),
        team_id: input.team_id,
        name: input.name,
        description: input.description,
        query: input.query === null ? null : jsonValue(input.query),
        is_sample: boolValue(true),
        deleted: boolValue(false),
        created_by_id: input.created_by_id,
        created_at: nowIso(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return r.id;
  }

  /** Creates a text card and returns its id. */
  async createText(input: { team_id: number; body: string | null; created_by_id: number | null }): Promise<number> {
    const r = await this.db
      .insertInto('texts')
      .values({ team_id: input.team_id, body: input.body, created_by_id: input.created_by_id, created_at: nowIso() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return r.id;
  }

  /** Adds a tile to a dashboard. */
  async createTile(input: {
    dashboard_id: number;
    insight_id: number | null;
    text_id: number | null;
    layouts: Record<string, unknown>;
    color: string | null;
  }): Promise<number> {
    const r = await this.db
      .insertInto('dashboard_tiles')
      .values({ ...input, layouts: jsonValue(input.layouts), deleted: boolValue(false), created_at: nowIso() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return r.id;
  }

  /** A project's dashboard by id, deleted ones excluded; `lock` takes a row lock on PostgreSQL. */
  async find(teamId: number, id: number, lock = false): Promise<DashboardRecord | undefined> {
    let q = this.db
      .selectFrom('dashboards')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .where('deleted', '=', boolValue(false));
    if (lock) q = q.forUpdate();
    const r = await q.executeTakeFirst();
    return r && toDashboard(r);
  }

  /** One page of a project's dashboards (deleted hidden), by id, with the total count. */
  async page(teamId: number, page: { limit: number; offset: number }): Promise<{ count: number; results: DashboardRecord[] }> {
    const q = this.db.selectFrom('dashboards').where('team_id', '=', teamId).where('deleted', '=', boolValue(false));
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const rows = await q.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute();
    return { count: toInt(total.n as number | string), results: rows.map(toDashboard) };
  }

  /** The live tiles of a dashboard with their insight or text, in PostHog's order. */
  async tiles(dashboardId: number): Promise<TileRecord[]> {
    const rows = await this.db
      .selectFrom('dashboard_tiles as t')
      .leftJoin('insights as i', 'i.id', 't.insight_id')
      .leftJoin('texts as x', 'x.id', 't.text_id')
      .select([
        't.id',
        't.dashboard_id',
        't.layouts',
        't.color',
        'i.id as insight_id',
        'i.short_id as insight_short_id',
        'i.name as insight_name',
        'i.description as insight_description',
        'i.query as insight_query',
        'i.is_sample as insight_is_sample',
        'x.id as text_id',
        'x.body as text_body',
      ])
      .where('t.dashboard_id', '=', dashboardId)
      .where('t.deleted', '=', boolValue(false))
      .orderBy('t.id')
      .execute();
    const tiles = rows.map((r): TileRecord => ({
      id: r.id,
      dashboard_id: r.dashboard_id,
      layouts: fromJson<Record<string, unknown>>(r.layouts) ?? {},
      color: r.color,
      insight:
        r.insight_id === null || r.insight_id === undefined
          ? null
          : {
              id: r.insight_id,
              short_id: r.insight_short_id ?? '',
              name: r.insight_name ?? null,
              // PostHog's frontend-derived name of an unnamed insight; template insights are named
              derived_name: null,
              description: r.insight_description ?? null,
              query: r.insight_query == null ? null : fromJson<Record<string, unknown>>(r.insight_query),
              is_sample: toBool(r.insight_is_sample),
            },
      text: r.text_id === null || r.text_id === undefined ? null : { id: r.text_id, body: r.text_body ?? null },
    }));
    return tiles.sort((a, b) => {
      const [ay, ax] = smPosition(a.layouts);
      const [by, bx] = smPosition(b.layouts);
      return ay - by || ax - bx || a.id - b.id;
    });
  }

  /** A live tile of a dashboard, or undefined. */
  async findTile(dashboardId: number, tileId: number): Promise<{ id: number } | undefined> {
    return this.db
      .selectFrom('dashboard_tiles')
      .select('id')
      .where('dashboard_id', '=', dashboardId)
      .where('id', '=', tileId)
      .where('deleted', '=', boolValue(false))
      .executeTakeFirst();
  }

  /** Moves a tile to another dashboard. */
  async moveTile(tileId: number, toDashboardId: number): Promise<void> {
    await this.db.updateTable('dashboard_tiles').set({ dashboard_id: toDashboardId }).where('id', '=', tileId).execute();
  }
  /** A project's dashboard by id, deleted or not (restoring one). */
  async findAny(teamId: number, id: number): Promise<DashboardRecord | undefined> {
    const r = await this.db.selectFrom('dashboards').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return r && toDashboard(r);
  }

  /** Writes the fields given to a dashboard and returns it. */
  async update(
    id: number,
    w: Partial<Pick<DashboardRecord, 'name' | 'description' | 'pinned' | 'deleted' | 'restriction_level' | 'filters' | 'tags'>>,
  ): Promise<DashboardRecord> {
    const set: Record<string, unknown> = {};
    if (w.name !== undefined) set.name = w.name;
    if (w.description !== undefined) set.description = w.description;
    if (w.pinned !== undefined) set.pinned = boolValue(w.pinned);
    if (w.deleted !== undefined) set.deleted = boolValue(w.deleted);
    if (w.restriction_level !== undefined) set.restriction_level = w.restriction_level;
    if (w.filters !== undefined) set.filters = jsonValue(w.filters);
    if (w.tags !== undefined) set.tags = jsonValue(w.tags);
    const q = this.db.updateTable('dashboards').where('id', '=', id);
    const r = await (Object.keys(set).length > 0 ? q.set(set) : q.set({ id })).returningAll().executeTakeFirstOrThrow();
    return toDashboard(r);
  }

  /** The tiles of a dashboard as stored (deleted ones too with `includeDeleted`), by id. */
  async tileRows(dashboardId: number, includeDeleted = false): Promise<TileRow[]> {
    let q = this.db
      .selectFrom('dashboard_tiles')
      .select(['id', 'insight_id', 'text_id', 'layouts', 'color', 'deleted'])
      .where('dashboard_id', '=', dashboardId);
    if (!includeDeleted) q = q.where('deleted', '=', boolValue(false));
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => ({
      id: r.id,
      insight_id: r.insight_id,
      text_id: r.text_id,
      layouts: fromJson<Record<string, unknown>>(r.layouts) ?? {},
      color: r.color,
      deleted: toBool(r.deleted),
    }));
  }

  /** Writes a tile's layouts, colour or deleted flag. */
  async updateTile(tileId: number, w: { layouts?: Record<string, unknown>; color?: string | null; deleted?: boolean }): Promise<void> {
    const set: Record<string, unknown> = {};
    if (w.layouts !== undefined) set.layouts = jsonValue(w.layouts);
    if (w.color !== undefined) set.color = w.color;
    if (w.deleted !== undefined) set.deleted = boolValue(w.deleted);
    if (Object.keys(set).length === 0) return;
    await this.db.updateTable('dashboard_tiles').set(set).where('id', '=', tileId).execute();
  }

  /** Writes a text card's body. */
  async updateText(textId: number, body: string): Promise<void> {
    await this.db.updateTable('texts').set({ body }).where('id', '=', textId).execute();
  }

  /** Soft-deletes (or restores) every tile of a dashboard. */
  async setTilesDeleted(dashboardId: number, deleted: boolean): Promise<void> {
    await this.db
      .updateTable('dashboard_tiles')
      .set({ deleted: boolValue(deleted) })
      .where('dashboard_id', '=', dashboardId)
      .execute();
  }

  /** The insights on a dashboard's tiles that no live tile of another live dashboard shows. */
  async insightsOnlyOn(dashboardId: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('dashboard_tiles as t')
      .select('t.insight_id')
      .where('t.dashboard_id', '=', dashboardId)
      .where('t.insight_id', 'is not', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('dashboard_tiles as o')
              .innerJoin('dashboards as d', 'd.id', 'o.dashboard_id')
              .select('o.id')
              .whereRef('o.insight_id', '=', 't.insight_id')
              .where('o.dashboard_id', '!=', dashboardId)
              .where('o.deleted', '=', boolValue(false))
              .where('d.deleted', '=', boolValue(false)),
          ),
        ),
      )
      .execute();
    return [...new Set(rows.map((r) => r.insight_id!))];
  }

  /** Soft-deletes (or restores) insights. */
  async setInsightsDeleted(ids: number[], deleted: boolean): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('insights')
      .set({ deleted: boolValue(deleted) })
      .where('id', 'in', ids)
      .execute();
  }
}
