/**
 * Insights (posthog/models/insight.py `Insight`) and the dashboard tiles that show them. Plain
 * objects in and out; timestamps are ISO 8601 UTC strings. Deleted insights are soft-deleted
 * (`deleted`), as PostHog keeps them; reads leave them out unless asked.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { dialectOf, icontains } from '../dialect.js';
import type { Database, InsightTable } from '../schema.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toInt, toIso } from '../values.js';
import { generateShortId } from './dashboards.js';

/** An insight as stored. */
export interface InsightRecord {
  id: number;
  short_id: string;
  team_id: number;
  name: string | null;
  derived_name: string | null;
  description: string | null;
  query: Record<string, unknown> | null;
  /** PostHog's `order` */
  order: number | null;
  deleted: boolean;
  favorited: boolean;
  saved: boolean;
  tags: string[];
  is_sample: boolean;
  created_by_id: number | null;
  created_at: string;
  last_modified_at: string;
  last_modified_by_id: number | null;
}

/** The fields a create or an update writes. */
export interface InsightWrite {
  name?: string | null;
  derived_name?: string | null;
  description?: string | null;
  query?: Record<string, unknown> | null;
  order?: number | null;
  deleted?: boolean;
  favorited?: boolean;
  saved?: boolean;
  tags?: string[];
}

/** The list's filters (PostHog's `filterset_fields` and `_filter_request`). */
export interface InsightFilters {
  shortId?: string | undefined;
  createdBy?: number | undefined;
  /** true: saved or on a live tile; false: not saved */
  saved?: boolean | undefined;
  favorited?: boolean | undefined;
  /** in the name, derived name, description or a tag, any case */
  search?: string | undefined;
}

/** A tile of an insight (PostHog's `dashboard_tiles` field). */
export interface InsightTileRecord {
  id: number;
  dashboard_id: number;
  deleted: boolean;
}

function toInsight(r: Selectable<InsightTable>): InsightRecord {
  return {
    id: r.id,
    short_id: r.short_id,
    team_id: r.team_id,
    name: r.name,
    derived_name: r.derived_name,
    description: r.description,
    query: r.query === null ? null : fromJson<Record<string, unknown>>(r.query),
    order: r.position,
    deleted: toBool(r.deleted),
    favorited: toBool(r.favorited),
    saved: toBool(r.saved),
    tags: (r.tags === null ? null : fromJson<string[]>(r.tags)) ?? [],
    is_sample: toBool(r.is_sample),
    created_by_id: r.created_by_id,
    created_at: toIso(r.created_at),
    last_modified_at: toIso(r.last_modified_at ?? r.created_at),
    last_modified_by_id: r.last_modified_by_id,
  };
}

/** The columns of a write, in the stored forms. */
function columnsOf(w: InsightWrite): Partial<Record<keyof InsightTable, unknown>> {
  const out: Partial<Record<keyof InsightTable, unknown>> = {};
  if (w.name !== undefined) out.name = w.name;
  if (w.derived_name !== undefined) out.derived_name = w.derived_name;
  if (w.description !== undefined) out.description = w.description;
  if (w.query !== undefined) out.query = w.query === null ? null : jsonValue(w.query);
  if (w.order !== undefined) out.position = w.order;
  if (w.deleted !== undefined) out.deleted = boolValue(w.deleted);
  if (w.favorited !== undefined) out.favorited = boolValue(w.favorited);
  if (w.saved !== undefined) out.saved = boolValue(w.saved);
  if (w.tags !== undefined) out.tags = jsonValue(w.tags);
  return out;
}

/** Repository of insights; use inside a transaction for the writes that touch tiles too. */
export class InsightsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates an insight with a new short id (PostHog's 8 characters of [A-Za-z0-9]) and returns it. */
  async create(teamId: number, userId: number | null, w: InsightWrite): Promise<InsightRecord> {
    const now = nowIso();
    const r = await this.db
      .insertInto('insights')
      .values({
        short_id: generateShortId(),
        team_id: teamId,
        name: null,
        description: null,
        query: null,
        is_sample: boolValue(false),
        deleted: boolValue(false),
        created_by_id: userId,
        created_at: now,
        derived_name: null,
        tags: null,
        position: null,
        last_modified_at: now,
        last_modified_by_id: userId,
        ...(columnsOf(w) as object),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toInsight(r);
  }

  /** A project's insight by id; deleted ones only with `includeDeleted`. */
  async find(teamId: number, id: number, includeDeleted = false): Promise<InsightRecord | undefined> {
    let q = this.db.selectFrom('insights').selectAll().where('team_id', '=', teamId).where('id', '=', id);
    if (!includeDeleted) q = q.where('deleted', '=', boolValue(false));
    const r = await q.executeTakeFirst();
    return r && toInsight(r);
  }

  /** A project's insight by short id; deleted ones only with `includeDeleted`. */
  async findByShortId(teamId: number, shortId: string, includeDeleted = false): Promise<InsightRecord | undefined> {
    let q = this.db.selectFrom('insights').selectAll().where('team_id', '=', teamId).where('short_id', '=', shortId);
    if (!includeDeleted) q = q.where('deleted', '=', boolValue(false));
    const r = await q.executeTakeFirst();
    return r && toInsight(r);
  }

  /**
   * One page of a project's live insights matching `filters`, with the total count: by `order`
   * (insights without one after), then the most recently modified first, then the newest.
   */
  async page(
    teamId: number,
    filters: InsightFilters,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; results: InsightRecord[] }> {
    const dialect = dialectOf(this.db);
    let q = this.db.selectFrom('insights as i').where('i.team_id', '=', teamId).where('i.deleted', '=', boolValue(false));
    if (filters.shortId !== undefined) q = q.where('i.short_id', '=', filters.shortId);
    if (filters.createdBy !== undefined) q = q.where('i.created_by_id', '=', filters.createdBy);
    if (filters.favorited) q = q.where('i.favorited', '=', boolValue(true));
    if (filters.saved === false) q = q.where('i.saved', '=', boolValue(false));
    if (filters.saved === true)
      q = q.where((eb) =>
        eb.or([
          eb('i.saved', '=', boolValue(true)),
          eb.exists(
            eb
              .selectFrom('dashboard_tiles as t')
              .innerJoin('dashboards as d', 'd.id', 't.dashboard_id')
              .select('t.id')
              .whereRef('t.insight_id', '=', 'i.id')
              .where('t.deleted', '=', boolValue(false))
              .where('d.deleted', '=', boolValue(false)),
          ),
        ]),
      );
    if (filters.search !== undefined && filters.search !== '') {
      const needle = filters.search;
      const tagsText = dialect === 'postgres' ? sql`cast(i.tags as text)` : sql`i.tags`;
      q = q.where(
        sql<boolean>`(${icontains(dialect, sql`i.name`, needle)} or ${icontains(dialect, sql`i.derived_name`, needle)} or ${icontains(dialect, sql`i.description`, needle)} or ${icontains(dialect, tagsText, needle)})`,
      );
    }
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const rows = await q
      .selectAll('i')
      .orderBy(sql`case when i.position is null then 1 else 0 end`)
      .orderBy('i.position')
      .orderBy(sql`coalesce(i.last_modified_at, i.created_at)`, 'desc')
      .orderBy('i.id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { count: toInt(total.n as number | string), results: rows.map(toInsight) };
  }

  /** Writes `w` to an insight and marks it modified by `userId` now; returns it (deleted or not). */
  async update(teamId: number, id: number, userId: number | null, w: InsightWrite): Promise<InsightRecord> {
    const r = await this.db
      .updateTable('insights')
      .set({ ...(columnsOf(w) as object), last_modified_at: nowIso(), last_modified_by_id: userId })
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toInsight(r);
  }

  /** The tiles of each insight on dashboards that are not deleted (PostHog's `dashboard_tiles`), by insight id. */
  async tilesOf(insightIds: number[]): Promise<Map<number, InsightTileRecord[]>> {
    const out = new Map<number, InsightTileRecord[]>();
    if (insightIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('dashboard_tiles as t')
      .innerJoin('dashboards as d', 'd.id', 't.dashboard_id')
      .select(['t.id', 't.dashboard_id', 't.deleted', 't.insight_id'])
      .where('t.insight_id', 'in', insightIds)
      .where('d.deleted', '=', boolValue(false))
      .orderBy('t.id')
      .execute();
    for (const r of rows) {
      const list = out.get(r.insight_id!) ?? [];
      list.push({ id: r.id, dashboard_id: r.dashboard_id, deleted: toBool(r.deleted) });
      out.set(r.insight_id!, list);
    }
    return out;
  }

  /** Which of `ids` are live dashboards of the project. */
  async liveDashboards(teamId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('dashboards')
      .select('id')
      .where('team_id', '=', teamId)
      .where('id', 'in', ids)
      .where('deleted', '=', boolValue(false))
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Puts the insight on exactly `dashboardIds` (PostHog's `dashboards` field): a tile on each,
   * undeleting one it had, adding one (empty layouts) where it had none, and soft-deleting its
   * tiles on the other dashboards.
   */
  async setDashboards(insightId: number, dashboardIds: number[]): Promise<void> {
    const tiles = await this.db
      .selectFrom('dashboard_tiles')
      .select(['id', 'dashboard_id', 'deleted'])
      .where('insight_id', '=', insightId)
      .execute();
    const wanted = new Set(dashboardIds);
    for (const t of tiles) {
      const keep = wanted.has(t.dashboard_id);
      if (keep === !toBool(t.deleted)) continue;
      await this.db
        .updateTable('dashboard_tiles')
        .set({ deleted: boolValue(!keep) })
        .where('id', '=', t.id)
        .execute();
    }
    const had = new Set(tiles.map((t) => t.dashboard_id));
    for (const d of dashboardIds) {
      if (had.has(d)) continue;
      await this.db
        .insertInto('dashboard_tiles')
        .values({
          dashboard_id: d,
          insight_id: insightId,
          text_id: null,
          layouts: jsonValue({}),
          color: null,
          deleted: boolValue(false),
          created_at: nowIso(),
        })
        .execute();
    }
  }

  /** Soft-deletes every tile of the insight (PostHog does so when the insight is deleted). */
  async deleteTiles(insightId: number): Promise<void> {
    await this.db
      .updateTable('dashboard_tiles')
      .set({ deleted: boolValue(true) })
      .where('insight_id', '=', insightId)
      .execute();
  }
}
