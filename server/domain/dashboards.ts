/**
 * Dashboards: creating one from a dashboard template given as JSON, moving a tile between two
 * dashboards, and reading dashboards. Rules from posthog/api/dashboards/dashboard.py
 * (`create_from_template_json`, `move_tile`), posthog/helpers/dashboard_templates.py
 * (`create_from_template`) and posthog/api/dashboards/dashboard_template_json_schema_parser.py,
 * with the fixes the spec describes (openapi.yaml, tag `dashboards`). No HTTP here.
 *
 * Who may edit (posthog/models/dashboard.py `Dashboard.RestrictionLevel`, simplified: this server
 * has no per-dashboard collaborators): restriction level 21 — everyone with access to the project;
 * 37 — the dashboard's creator and project administrators (effective level 8 or more). Others get
 * 403 "You don't have edit permissions for this dashboard.".
 */
import type { components } from '../../generated/api.js';
import { ApiError, notFound, permissionDenied, validationError } from './errors.js';
import { templateSchemaProblem, type DashboardTemplate } from './template-schema.js';
import type { Kysely } from 'kysely';
import type { Store } from '../storage/db.js';
import type { Database } from '../storage/schema.js';
import { AccountsRepository, OrganizationLevel, type User } from '../storage/repositories/accounts.js';
import { DashboardsRepository, type DashboardRecord, type TileRecord } from '../storage/repositories/dashboards.js';
import type { ProjectAccess } from './access.js';
import { clip } from './echo.js';
import type { EventsReads } from './events-reads.js';
import { computeInsightResult } from './insights.js';
import { limitOffsetLinks } from './pagination.js';
import { userBasic } from './user-basic.js';

type Schemas = components['schemas'];
/** A dashboard with its tiles (schema `Dashboard`). */
export type DashboardWire = Schemas['Dashboard'];
/** A dashboard in lists, without tiles (schema `DashboardBasic`). */
export type DashboardBasicWire = Schemas['DashboardBasic'];
/** The body of create_from_template_json (schema `DashboardCreateFromTemplateJSONRequest`). */
export type CreateFromTemplateInput = Schemas['DashboardCreateFromTemplateJSONRequest'];
/** The create's body (schema `DashboardRequest`). */
export type DashboardInput = Schemas['DashboardRequest'];
/** The partial update's body (schema `PatchedDashboard`). */
export type PatchedDashboardInput = Schemas['PatchedDashboard'];
/** A dashboard template that passed the schema (./template-schema.ts). */
export type { DashboardTemplate } from './template-schema.js';

/** Restriction levels (posthog/models/dashboard.py). */
export const RestrictionLevel = { EVERYONE_IN_PROJECT_CAN_EDIT: 21, ONLY_COLLABORATORS_CAN_EDIT: 37 } as const;
/** Privilege levels: what the caller may do with a dashboard. */
const PrivilegeLevel = { CAN_VIEW: 21, CAN_EDIT: 37 } as const;

/**
 * Validates a template against PostHog's template JSON schema (./template-schema.ts); throws 400
 * `invalid_input` with `attr` null and python-jsonschema's text of the best error as `detail`, as
 * PostHog's template parser answers.
 */
export function assertValidTemplate(template: unknown): asserts template is DashboardTemplate {
  const problem = templateSchemaProblem(template);
  if (problem !== undefined) throw validationError(problem);
}

/** The caller as the dashboard rules need it. */
export interface DashboardCaller {
  project: ProjectAccess;
  user: User;
}

function canEdit(d: DashboardRecord, caller: DashboardCaller): boolean {
  if (d.restriction_level <= RestrictionLevel.EVERYONE_IN_PROJECT_CAN_EDIT) return true;
  return d.created_by_id === caller.user.id || (caller.project.level ?? 0) >= OrganizationLevel.ADMIN;
}

/** Throws 403 unless the caller may edit the dashboard. */
export function assertCanEdit(d: DashboardRecord, caller: DashboardCaller): void {
  if (!canEdit(d, caller)) throw permissionDenied("You don't have edit permissions for this dashboard.");
}

/**
 * A tile as the API answers it, `order` its position, with PostHog's 2026 tile fields
 * (posthog/api/dashboards/dashboard.py `DashboardTileSerializer`) at what a tile this server can
 * make holds: no button (`button_tile` null), no filter overrides (`{}`), `show_description` and
 * `transparent_background` unset (null), nothing cached (`is_cached` false, `last_refresh` null
 * until `withResult` computes the insight).
 */
export function tileToWire(t: TileRecord, order: number): Schemas['DashboardTile'] {
  return {
    id: t.id,
    layouts: t.layouts,
    color: t.color,
    insight: t.insight,
    text: t.text,
    order,
    button_tile: null,
    filters_overrides: {},
    is_cached: false,
    last_refresh: null,
    show_description: null,
    transparent_background: null,
  };
}

/**
 * Puts the result of an insight tile's query on its insight (`result`, `last_refresh`,
 * `is_cached`); a query that cannot run (a 400) leaves `result` null and sets the tile's `error`,
 * as PostHog shows a tile it cannot compute. Other errors (a timeout) are thrown.
 */
export async function withResult(events: EventsReads, caller: DashboardCaller, tile: Schemas['DashboardTile']): Promise<void> {
  if (!tile.insight) return;
  try {
    const computed = await computeInsightResult(events, caller.project.team, tile.insight.query);
    Object.assign(tile.insight, { result: computed.result, last_refresh: computed.last_refresh, is_cached: false });
    Object.assign(tile, { last_refresh: computed.last_refresh });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 400) throw err;
    Object.assign(tile.insight, { result: null, last_refresh: null, is_cached: false });
    tile.error = { type: err.body.type, message: err.body.detail };
  }
}

/** Dashboard operations of one store. */
export class DashboardsService {
  constructor(
    private readonly store: Store,
    private readonly events?: EventsReads,
  ) {}

  /**
   * The list form of a dashboard. `db` must be the transaction when called inside one (SQLite has
   * one connection: a query outside the transaction would wait for it forever).
   */
  private async basic(
    d: DashboardRecord,
    caller: DashboardCaller,
    users: Map<number, User | undefined>,
    db: Kysely<Database> = this.store.db,
  ): Promise<DashboardBasicWire> {
    let creator: User | undefined;
    if (d.created_by_id !== null) {
      if (!users.has(d.created_by_id)) users.set(d.created_by_id, await new AccountsRepository(db).findUserById(d.created_by_id));
      creator = users.get(d.created_by_id);
    }
    return {
      id: d.id,
      name: d.name,
      description: d.description,
      pinned: d.pinned,
      created_at: d.created_at,
      created_by: creator ? userBasic(creator) : null,
      deleted: d.deleted,
      creation_mode: d.creation_mode as DashboardWire['creation_mode'],
      restriction_level: d.restriction_level as DashboardWire['restriction_level'],
      effective_restriction_level: d.restriction_level as DashboardWire['effective_restriction_level'],
      effective_privilege_level: canEdit(d, caller) ? PrivilegeLevel.CAN_EDIT : PrivilegeLevel.CAN_VIEW,
      filters: d.filters,
      tags: d.tags,
    };
  }

  /**
   * The full form with tiles, read through `db` (the transaction when inside one); with `compute`,
   * each insight tile's result (a query that cannot run: `result` null and the tile's `error`).
   */
  async full(d: DashboardRecord, caller: DashboardCaller, db: Kysely<Database>, compute = false): Promise<DashboardWire> {
    const tiles = (await new DashboardsRepository(db).tiles(d.id)).map(tileToWire);
    if (compute && this.events) for (const tile of tiles) await withResult(this.events, caller, tile);
    return { ...(await this.basic(d, caller, new Map(), db)), tiles };
  }

  /** One page of the project's dashboards (deleted hidden), without tiles. */
  async list(caller: DashboardCaller, page: { limit: number; offset: number }, url: URL) {
    const { count, results } = await new DashboardsRepository(this.store.db).page(caller.project.team.id, page);
    const users = new Map<number, User | undefined>();
    const items: DashboardBasicWire[] = [];
    for (const d of results) items.push(await this.basic(d, caller, users));
    return { count, ...limitOffsetLinks(url, page.limit, page.offset, count), results: items };
  }

  /** One dashboard with its tiles, their insights' results computed unless `compute` is false; 404 when unknown, deleted or of another project. */
  async retrieve(caller: DashboardCaller, id: number, compute = true): Promise<DashboardWire> {
    const d = await new DashboardsRepository(this.store.db).find(caller.project.team.id, id);
    if (!d) throw notFound();
    return this.full(d, caller, this.store.db, compute);
  }

  /**
   * Creates a dashboard: empty, or a copy of `use_dashboard`'s tiles (the same insights and texts,
   * `creation_mode` `duplicate`). 400 for `use_template` (no built-in templates here: PostHog's
   * "Invalid template provided" for an unknown key), for both together, and for an unknown
   * `use_dashboard`.
   */
  async create(caller: DashboardCaller, body: DashboardInput): Promise<DashboardWire> {
    if (body.use_template !== undefined && body.use_template !== '' && body.use_dashboard !== undefined && body.use_dashboard !== null)
      throw validationError('`use_template` and `use_dashboard` cannot be used together.', null);
    if (body.use_template !== undefined && body.use_template !== '')
      throw validationError(`Invalid template provided: ${clip(body.use_template)}`, 'use_template');
    const teamId = caller.project.team.id;
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DashboardsRepository(trx);
      const source =
        body.use_dashboard === undefined || body.use_dashboard === null ? undefined : await repo.find(teamId, body.use_dashboard);
      if (body.use_dashboard !== undefined && body.use_dashboard !== null && !source)
        throw validationError(`Dashboard ${body.use_dashboard} does not exist in this project.`, 'use_dashboard', 'does_not_exist');
      const dashboard = await repo.createDashboard({
        team_id: teamId,
        name: body.name ?? source?.name ?? null,
        description: body.description ?? source?.description ?? '',
        pinned: body.pinned ?? false,
        creation_mode: source ? 'duplicate' : 'default',
        restriction_level: body.restriction_level ?? RestrictionLevel.EVERYONE_IN_PROJECT_CAN_EDIT,
        filters: body.filters ?? source?.filters ?? {},
        tags: body.tags ? [...new Set(body.tags)] : (source?.tags ?? []),
        created_by_id: caller.user.id,
      });
      if (source)
        for (const t of await repo.tileRows(source.id))
          await repo.createTile({
            dashboard_id: dashboard.id,
            insight_id: t.insight_id,
            text_id: t.text_id,
            layouts: t.layouts,
            color: t.color,
          });
      return this.full(dashboard, caller, trx);
    });
  }

  /**
   * Changes a dashboard (see the operation's description): its fields, its tiles' layouts, colours
   * and deletion, and its own deletion (with its tiles, and with `delete_insights` the insights on
   * no other dashboard) or restoration. 404 for an unknown dashboard (a deleted one only restores),
   * 403 without the edit right (and for `restriction_level` unless the creator or an administrator),
   * 400 `tiles` for a tile not on it.
   */
  async update(caller: DashboardCaller, id: number, body: PatchedDashboardInput): Promise<DashboardWire> {
    const teamId = caller.project.team.id;
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DashboardsRepository(trx);
      const d = body.deleted === false ? await repo.findAny(teamId, id) : await repo.find(teamId, id);
      if (!d) throw notFound();
      assertCanEdit(d, caller);
      if (body.restriction_level !== undefined && body.restriction_level !== d.restriction_level) {
        const may = d.created_by_id === caller.user.id || (caller.project.level ?? 0) >= OrganizationLevel.ADMIN;
        if (!may)
          throw permissionDenied(
            "Only the dashboard owner and project admins have the restriction rights required to change the dashboard's restriction level.",
          );
      }
      if (body.tiles) {
        const mine = new Map((await repo.tileRows(d.id)).map((t) => [t.id, t]));
        for (const tile of body.tiles) {
          if (!mine.has(tile.id)) throw validationError(`Tile ${tile.id} is not on dashboard ${d.id}.`, 'tiles', 'does_not_exist');
          await repo.updateTile(tile.id, {
            ...(tile.layouts !== undefined ? { layouts: tile.layouts } : {}),
            ...(tile.color !== undefined ? { color: tile.color } : {}),
            ...(tile.deleted !== undefined ? { deleted: tile.deleted } : {}),
          });
        }
      }
      if (body.deleted === true && !d.deleted) {
        if (body.delete_insights === true) await repo.setInsightsDeleted(await repo.insightsOnlyOn(d.id), true);
        await repo.setTilesDeleted(d.id, true);
      } else if (body.deleted === false && d.deleted) {
        await repo.setTilesDeleted(d.id, false);
      }
      const updated = await repo.update(d.id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.pinned !== undefined ? { pinned: body.pinned } : {}),
        ...(body.tags !== undefined ? { tags: [...new Set(body.tags)] } : {}),
        ...(body.filters !== undefined && Object.keys(body.filters).length > 0 ? { filters: body.filters } : {}),
        ...(body.restriction_level !== undefined ? { restriction_level: body.restriction_level } : {}),
        ...(body.deleted !== undefined ? { deleted: body.deleted } : {}),
      });
      return this.full(updated, caller, trx);
    });
  }

  /**
   * Creates a dashboard from a template in one transaction: the dashboard, then for each tile in
   * order an insight (`is_sample`) or a text and its tile. Siblings of `template` override it.
   */
  async createFromTemplateJson(caller: DashboardCaller, input: CreateFromTemplateInput): Promise<DashboardWire> {
    const template: unknown = input.template;
    assertValidTemplate(template);
    const teamId = caller.project.team.id;
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DashboardsRepository(trx);
      const dashboard = await repo.createDashboard({
        team_id: teamId,
        name: input.name ?? template.template_name,
        description: input.description ?? template.dashboard_description,
        pinned: input.pinned ?? false,
        creation_mode: 'default',
        // PostHog's action never reads a top-level restriction_level (posthog/api/dashboards/dashboard.py)
        restriction_level: RestrictionLevel.EVERYONE_IN_PROJECT_CAN_EDIT,
        filters: template.dashboard_filters,
        tags: input.tags ?? template.tags ?? [],
        created_by_id: caller.user.id,
      });
      for (const tile of template.tiles) {
        const layouts = tile.layouts ?? {};
        const color = tile.color ?? null;
        if (tile.type === 'INSIGHT') {
          const insightId = await repo.createInsight({
            team_id: teamId,
            name: tile.name ?? null,
            description: tile.description ?? null,
            query: tile.query ?? null,
            created_by_id: caller.user.id,
          });
          await repo.createTile({ dashboard_id: dashboard.id, insight_id: insightId, text_id: null, layouts, color });
        } else {
          const textId = await repo.createText({ team_id: teamId, body: tile.body ?? null, created_by_id: caller.user.id });
          await repo.createTile({ dashboard_id: dashboard.id, insight_id: null, text_id: textId, layouts, color });
        }
      }
      return this.full(dashboard, caller, trx);
    });
  }

  /**
   * Moves tile `tileId` from dashboard `id` to the `target` dashboard (see `moveTileTarget`) in one
   * transaction and answers the source dashboard as it now is. 404 for an unknown source or
   * target (a target of another project included); 400 `does_not_exist` on `tile__id`; 403 when
   * the caller cannot edit either dashboard.
   */
  async moveTile(caller: DashboardCaller, id: number, tileId: number, target: MoveTileTarget): Promise<DashboardWire> {
    const toDashboard = target.id;
    const teamId = caller.project.team.id;
    const lock = this.store.dialect === 'postgres';
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DashboardsRepository(trx);
      const source = await repo.find(teamId, id, lock);
      if (!source) throw notFound();
      assertCanEdit(source, caller);
      if (!(await repo.findTile(source.id, tileId)))
        throw validationError(`Tile ${tileId} is not on dashboard ${source.id}.`, 'tile__id', 'does_not_exist');
      const targetDashboard = toDashboard === source.id ? source : await repo.find(teamId, toDashboard, lock);
      // PostHog answers 404 for a target outside the project (its test_dashboard.py moves a tile to another organization's dashboard)
      if (!targetDashboard) throw notFound(`Dashboard ${toDashboard} does not exist in this project.`);
      assertCanEdit(targetDashboard, caller);
      if (targetDashboard.id !== source.id) await repo.moveTile(tileId, targetDashboard.id);
      return this.full(source, caller, trx);
    });
  }
}

/** The dashboard a tile moves to, and the body field that named it (for errors). */
export interface MoveTileTarget {
  id: number;
  attr: 'to_dashboard' | 'toDashboard';
}

/**
 * The target of `move_tile` from its body: `to_dashboard` (PostHog's current serializer,
 * posthog/api/dashboards/dashboard.py) or `toDashboard` (its older view, which read request.data).
 * Throws `ApiError` 400 `required` on `toDashboard` when neither is sent, and 400 `invalid` on
 * `to_dashboard` when both are sent and name different dashboards.
 */
export function moveTileTarget(body: { to_dashboard?: number; toDashboard?: number }): MoveTileTarget {
  const { to_dashboard: current, toDashboard: older } = body;
  if (current !== undefined && older !== undefined && current !== older) {
    throw validationError(
      `to_dashboard (${current}) and toDashboard (${older}) name different dashboards; send one of them.`,
      'to_dashboard',
      'invalid',
    );
  }
  const target: MoveTileTarget | undefined =
    current !== undefined ? { id: current, attr: 'to_dashboard' } : older !== undefined ? { id: older, attr: 'toDashboard' } : undefined;
  if (!target) throw validationError('This field is required.', 'toDashboard', 'required');
  // no dashboard has an id below 1: a bad value, not an unknown dashboard
  if (target.id < 1) throw validationError(`Invalid pk "${target.id}" - object does not exist.`, target.attr, 'does_not_exist');
  return target;
}
