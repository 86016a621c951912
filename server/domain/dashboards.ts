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
import { Ajv, type ValidateFunction } from 'ajv';
import type { components } from '../../generated/api.js';
import { ApiError, notFound, permissionDenied, schemaProblemBody, validationError } from './errors.js';
import type { Kysely } from 'kysely';
import type { Store } from '../storage/db.js';
import type { Database } from '../storage/schema.js';
import { AccountsRepository, OrganizationLevel, type User } from '../storage/repositories/accounts.js';
import { DashboardsRepository, type DashboardRecord, type TileRecord } from '../storage/repositories/dashboards.js';
import type { ProjectAccess } from './access.js';
import { limitOffsetLinks } from './pagination.js';
import { userBasic } from './user-basic.js';

type Schemas = components['schemas'];
/** A dashboard with its tiles (schema `Dashboard`). */
export type DashboardWire = Schemas['Dashboard'];
/** A dashboard in lists, without tiles (schema `DashboardBasic`). */
export type DashboardBasicWire = Schemas['DashboardBasic'];
/** The body of create_from_template_json (schema `DashboardCreateFromTemplateJSONRequest`). */
export type CreateFromTemplateInput = Schemas['DashboardCreateFromTemplateJSONRequest'];
/** A dashboard template (schema `DashboardTemplate`). */
export type DashboardTemplate = Schemas['DashboardTemplate'];

/** Restriction levels (posthog/models/dashboard.py). */
export const RestrictionLevel = { EVERYONE_IN_PROJECT_CAN_EDIT: 21, ONLY_COLLABORATORS_CAN_EDIT: 37 } as const;
/** Privilege levels: what the caller may do with a dashboard. */
const PrivilegeLevel = { CAN_VIEW: 21, CAN_EDIT: 37 } as const;

/**
 * PostHog's dashboard template JSON schema (posthog/api/dashboards/dashboard_template_schema.json),
 * with tile `type` limited to the kinds this server creates (INSIGHT, TEXT) and `id` also accepted
 * as an integer (it is not used).
 */
export const DASHBOARD_TEMPLATE_JSON_SCHEMA = {
  type: 'object',
  required: ['template_name', 'dashboard_description', 'dashboard_filters', 'tiles'],
  properties: {
    // PostHog: string only; an integer id is accepted and ignored too (openapi.yaml, DashboardTemplate)
    id: { type: ['string', 'integer'] },
    template_name: { type: 'string' },
    team_id: { type: ['number', 'null'] },
    created_at: { type: 'string' },
    image_url: { type: ['string', 'null'] },
    dashboard_description: { type: 'string' },
    dashboard_filters: { type: 'object' },
    tiles: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { enum: ['INSIGHT', 'TEXT'] },
          name: { type: ['string', 'null'] },
          description: { type: ['string', 'null'] },
          query: { type: ['object', 'null'] },
          layouts: { type: 'object' },
          color: { type: ['string', 'null'] },
          body: { type: ['string', 'null'] },
        },
      },
    },
    variables: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        required: ['id', 'name', 'type', 'default', 'description', 'required'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          type: { enum: ['event'] },
          default: { type: 'object' },
          description: { type: 'string' },
          required: { type: 'boolean' },
        },
      },
    },
    tags: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** The compiled template schema, built on first use (compiling at import cost ~60 ms of every cold start). */
let compiledTemplateSchema: ValidateFunction | undefined;
function templateValidator(): ValidateFunction {
  return (compiledTemplateSchema ??= new Ajv({ allErrors: false, strict: false }).compile(DASHBOARD_TEMPLATE_JSON_SCHEMA));
}

/**
 * Validates a template against PostHog's JSON schema; throws 400 naming the first problem with
 * `attr` `template__<path>` (e.g. `template__tiles__0__type`).
 */
export function assertValidTemplate(template: unknown): asserts template is DashboardTemplate {
  const validateTemplate = templateValidator();
  if (validateTemplate(template)) return;
  const e = validateTemplate.errors?.[0];
  if (!e) throw validationError('The template is not valid.', 'template');
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  const path = `/body/template${e.instancePath}${missing ? `/${missing}` : ''}`;
  throw new ApiError(
    400,
    schemaProblemBody({ path, message: e.message ?? 'is invalid', errorCode: `${e.keyword}.openapi.validation` }, { body: { template } }),
  );
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

function assertCanEdit(d: DashboardRecord, caller: DashboardCaller): void {
  if (!canEdit(d, caller)) throw permissionDenied("You don't have edit permissions for this dashboard.");
}

function tileToWire(t: TileRecord, order: number): Schemas['DashboardTile'] {
  return { id: t.id, layouts: t.layouts, color: t.color, insight: t.insight, text: t.text, order };
}

/** Dashboard operations of one store. */
export class DashboardsService {
  constructor(private readonly store: Store) {}

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

  /** The full form with tiles, read through `db` (the transaction when inside one). */
  private async full(d: DashboardRecord, caller: DashboardCaller, db: Kysely<Database>): Promise<DashboardWire> {
    const tiles = await new DashboardsRepository(db).tiles(d.id);
    return { ...(await this.basic(d, caller, new Map(), db)), tiles: tiles.map(tileToWire) };
  }

  /** One page of the project's dashboards (deleted hidden), without tiles. */
  async list(caller: DashboardCaller, page: { limit: number; offset: number }, url: URL) {
    const { count, results } = await new DashboardsRepository(this.store.db).page(caller.project.team.id, page);
    const users = new Map<number, User | undefined>();
    const items: DashboardBasicWire[] = [];
    for (const d of results) items.push(await this.basic(d, caller, users));
    return { count, ...limitOffsetLinks(url, page.limit, page.offset, count), results: items };
  }

  /** One dashboard with its tiles; 404 when unknown, deleted or of another project. */
  async retrieve(caller: DashboardCaller, id: number): Promise<DashboardWire> {
    const d = await new DashboardsRepository(this.store.db).find(caller.project.team.id, id);
    if (!d) throw notFound();
    return this.full(d, caller, this.store.db);
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
        restriction_level: input.restriction_level ?? RestrictionLevel.EVERYONE_IN_PROJECT_CAN_EDIT,
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
   * transaction and answers the source dashboard as it now is. 404 for an unknown source; 400
   * `does_not_exist` on `tile__id` / the target's field; 403 when the caller cannot edit either
   * dashboard.
   */
  async moveTile(caller: DashboardCaller, id: number, tileId: number, target: MoveTileTarget): Promise<DashboardWire> {
    const { id: toDashboard, attr } = target;
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
      if (!targetDashboard) throw validationError(`Dashboard ${toDashboard} does not exist in this project.`, attr, 'does_not_exist');
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
  if (current !== undefined) return { id: current, attr: 'to_dashboard' };
  if (older !== undefined) return { id: older, attr: 'toDashboard' };
  throw validationError('This field is required.', 'toDashboard', 'required');
}
