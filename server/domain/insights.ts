/**
 * Insights: saved queries of a project (posthog/api/insight.py `InsightViewSet`,
 * `InsightSerializer`). List with PostHog's filters, create, retrieve by id or `short_id`, update,
 * and soft delete by `deleted: true` (PostHog's viewset forbids DELETE). `dashboards` writes tiles.
 * `result` is computed through the query endpoint's kinds (`EventsReads.query`: the read pool, under
 * its time budget) when `refresh` asks, as PostHog computes it for those values; without it PostHog
 * reads its cache, which this server does not have, so `result` is null (PostHog's cache miss).
 * Throws `ApiError`: 404 for an unknown, deleted or foreign insight, 400 for an unknown dashboard
 * or a query the contract does not run. No HTTP here.
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import { AccountsRepository, type Team, type User } from '../storage/repositories/accounts.js';
import {
  InsightsRepository,
  type InsightFilters,
  type InsightRecord,
  type InsightTileRecord,
  type InsightWrite,
} from '../storage/repositories/insights.js';
import type { ProjectAccess } from './access.js';
import { notFound, validationError } from './errors.js';
import type { EventsReads } from './events-reads.js';
import { limitOffsetLinks } from './pagination.js';
import type { QueryInput } from './query.js';
import { assertRunnableQuery } from './query-schema.js';
import { userBasic } from './user-basic.js';

type Schemas = components['schemas'];
/** An insight as the API answers it (schema `Insight`). */
export type InsightWire = Schemas['Insight'];
/** The body of a create or an update (schema `InsightWriteFields`). */
export type InsightInput = Schemas['InsightWriteFields'];

/** The caller: the project and the key's user. */
export interface InsightCaller {
  project: ProjectAccess;
  user: User;
}

/** `refresh` values that compute (posthog/utils.py `refresh_requested_by_client`, query_runner.py's execution modes). */
const COMPUTING = new Set([
  '',
  'true',
  '1',
  'yes',
  'blocking',
  'force_blocking',
  'async',
  'lazy_async',
  'force_async',
  'async_except_on_cache_miss',
]);

/** Whether `refresh` asks for `result` to be computed (see the `InsightRefresh` parameter). */
export function refreshComputes(refresh: string | undefined): boolean {
  return refresh !== undefined && COMPUTING.has(refresh.toLowerCase());
}

/** PostHog's `str_to_bool` of a query value: true for `true`, `1`, `yes`, `on`, `t`, `y` (any case). */
export function queryBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  return ['true', '1', 'yes', 'on', 't', 'y'].includes(value.toLowerCase());
}

/** The computed part of an insight (null when not computed). */
export type Computed = Pick<
  InsightWire,
  'result' | 'hasMore' | 'columns' | 'types' | 'hogql' | 'last_refresh' | 'next_allowed_client_refresh' | 'is_cached' | 'timezone'
>;

const NOT_COMPUTED: Computed = {
  result: null,
  hasMore: null,
  columns: null,
  types: null,
  hogql: null,
  last_refresh: null,
  next_allowed_client_refresh: null,
  is_cached: false,
  timezone: null,
};

/**
 * The query's answer in an insight's fields (`result`, and `columns`/`types` for rows), computed
 * now. Throws `ApiError` 400 for a query the contract does not run (`assertRunnableQuery`), and what
 * the query endpoint throws (400, 504).
 */
export async function computeInsightResult(events: EventsReads, team: Team, query: Record<string, unknown> | null): Promise<Computed> {
  if (query === null) return NOT_COMPUTED;
  assertRunnableQuery(query);
  const answer = (await events.query(team, query as QueryInput)) as unknown as Record<string, unknown>;
  const rows = Array.isArray(answer.columns);
  return {
    result: answer.results ?? null,
    hasMore: typeof answer.hasMore === 'boolean' ? answer.hasMore : null,
    columns: rows ? (answer.columns as string[]) : null,
    types: rows ? (answer.types as unknown[]) : null,
    hogql: typeof answer.hogql === 'string' ? answer.hogql : null,
    last_refresh: typeof answer.last_refresh === 'string' ? answer.last_refresh : new Date().toISOString(),
    next_allowed_client_refresh: typeof answer.next_allowed_client_refresh === 'string' ? answer.next_allowed_client_refresh : null,
    is_cached: false,
    timezone: team.timezone,
  };
}

/** Insight operations over one store. */
export class InsightsService {
  constructor(
    private readonly store: Store,
    private readonly events: EventsReads,
  ) {}

  /** `id` as the path gives it: the integer id, or the short id. 404 when it names no live insight of the project. */
  private async find(caller: InsightCaller, id: string, includeDeleted = false): Promise<InsightRecord> {
    const repo = new InsightsRepository(this.store.db);
    const team = caller.project.team.id;
    let found: InsightRecord | undefined;
    if (/^[1-9][0-9]{0,9}$/.test(id) && Number(id) <= 2147483647) found = await repo.find(team, Number(id), includeDeleted);
    if (!found && /^[A-Za-z0-9]{1,12}$/.test(id)) found = await repo.findByShortId(team, id, includeDeleted);
    if (!found) throw notFound();
    return found;
  }

  /** The wire form. */
  private async wire(
    caller: InsightCaller,
    r: InsightRecord,
    tiles: InsightTileRecord[],
    users: Map<number, User | undefined>,
    refresh: boolean,
  ): Promise<InsightWire> {
    const userOf = async (id: number | null) => {
      if (id === null) return null;
      if (!users.has(id)) users.set(id, await new AccountsRepository(this.store.db).findUserById(id));
      const u = users.get(id);
      return u ? userBasic(u) : null;
    };
    const computed = refresh && !r.deleted ? await computeInsightResult(this.events, caller.project.team, r.query) : NOT_COMPUTED;
    return {
      id: r.id,
      short_id: r.short_id,
      name: r.name,
      derived_name: r.derived_name,
      description: r.description,
      query: r.query,
      filters: {},
      order: r.order,
      deleted: r.deleted,
      dashboards: [...new Set(tiles.filter((t) => !t.deleted).map((t) => t.dashboard_id))],
      dashboard_tiles: tiles.map((t) => ({ id: t.id, dashboard_id: t.dashboard_id, deleted: t.deleted })),
      ...computed,
      cache_target_age: null,
      query_status: null,
      created_at: r.created_at,
      created_by: await userOf(r.created_by_id),
      last_modified_at: r.last_modified_at,
      last_modified_by: await userOf(r.last_modified_by_id),
      is_sample: r.is_sample,
      tags: r.tags,
      favorited: r.favorited,
      saved: r.saved,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      user_access_level: 'editor',
      alerts: [],
      last_viewed_at: null,
    };
  }

  private async one(caller: InsightCaller, r: InsightRecord, refresh: boolean): Promise<InsightWire> {
    const tiles = (await new InsightsRepository(this.store.db).tilesOf([r.id])).get(r.id) ?? [];
    return this.wire(caller, r, tiles, new Map(), refresh);
  }

  /** One page of the project's insights (see `InsightsRepository.page` for the filters and order). */
  async list(caller: InsightCaller, filters: InsightFilters, page: { limit: number; offset: number }, url: URL, refresh: boolean) {
    const repo = new InsightsRepository(this.store.db);
    const { count, results } = await repo.page(caller.project.team.id, filters, page);
    const tiles = await repo.tilesOf(results.map((r) => r.id));
    const users = new Map<number, User | undefined>();
    const items: InsightWire[] = [];
    for (const r of results) items.push(await this.wire(caller, r, tiles.get(r.id) ?? [], users, refresh));
    return { count, ...limitOffsetLinks(url, page.limit, page.offset, count), results: items };
  }

  /** The write of a body: its fields (a null `tags` as none). */
  private static writeOf(body: InsightInput): InsightWrite {
    const w: InsightWrite = {};
    if (body.name !== undefined) w.name = body.name;
    if (body.derived_name !== undefined) w.derived_name = body.derived_name;
    if (body.description !== undefined) w.description = body.description;
    if (body.query !== undefined) w.query = body.query as Record<string, unknown> | null;
    if (body.order !== undefined) w.order = body.order;
    if (body.deleted !== undefined) w.deleted = body.deleted;
    if (body.favorited !== undefined) w.favorited = body.favorited;
    if (body.saved !== undefined) w.saved = body.saved;
    if (body.tags !== undefined) w.tags = [...new Set(body.tags)];
    return w;
  }

  /** 400 `dashboards` unless every id is a live dashboard of the project. */
  private static async assertDashboards(repo: InsightsRepository, teamId: number, ids: number[]): Promise<void> {
    const live = await repo.liveDashboards(teamId, ids);
    const missing = ids.find((d) => !live.has(d));
    if (missing !== undefined) throw validationError(`Dashboard ${missing} does not exist in this project.`, 'dashboards');
  }

  /** Creates an insight (and its tiles, in one transaction). */
  async create(caller: InsightCaller, body: InsightInput, refresh: boolean): Promise<InsightWire> {
    const created = await this.store.db.transaction().execute(async (trx) => {
      const repo = new InsightsRepository(trx);
      const dashboards = [...new Set(body.dashboards ?? [])];
      await InsightsService.assertDashboards(repo, caller.project.team.id, dashboards);
      const r = await repo.create(caller.project.team.id, caller.user.id, InsightsService.writeOf(body));
      if (dashboards.length > 0) await repo.setDashboards(r.id, dashboards);
      return r;
    });
    return this.one(caller, created, refresh);
  }

  /** One insight by id or short id. */
  async retrieve(caller: InsightCaller, id: string, refresh: boolean): Promise<InsightWire> {
    return this.one(caller, await this.find(caller, id), refresh);
  }

  /**
   * Updates the fields given; `deleted: true` soft-deletes the insight and its tiles, `deleted:
   * false` restores a deleted one (PostHog's queryset admits deleted insights for that PATCH only).
   */
  async update(caller: InsightCaller, id: string, body: InsightInput, refresh: boolean): Promise<InsightWire> {
    const current = await this.find(caller, id, body.deleted === false);
    const updated = await this.store.db.transaction().execute(async (trx) => {
      const repo = new InsightsRepository(trx);
      if (body.dashboards !== undefined) {
        const dashboards = [...new Set(body.dashboards)];
        await InsightsService.assertDashboards(repo, caller.project.team.id, dashboards);
        await repo.setDashboards(current.id, dashboards);
      }
      const r = await repo.update(caller.project.team.id, current.id, caller.user.id, InsightsService.writeOf(body));
      if (body.deleted === true) await repo.deleteTiles(current.id);
      return r;
    });
    return this.one(caller, updated, refresh);
  }
}
