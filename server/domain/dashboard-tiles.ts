/**
 * The tile actions of a dashboard, as PostHog's dashboards API and its MCP tools call them
 * (posthog/api/dashboards/dashboard.py and its generated OpenAPI clients): `create_text_tile`,
 * `update_text_tile`, `delete_tile`, `reorder_tiles`, `copy_tile`, and `run_insights` (every insight
 * tile's result). Each checks that the dashboard is a live dashboard of the project (404) and, for
 * the writes, that the caller may edit it (403, server/domain/dashboards.ts `assertCanEdit`). Writes
 * run in one transaction. No HTTP here.
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import { DashboardsRepository, type DashboardRecord, type TileRow } from '../storage/repositories/dashboards.js';
import { assertCanEdit, tileToWire, withResult, type DashboardCaller, type DashboardsService, type DashboardWire } from './dashboards.js';
import { notFound, validationError } from './errors.js';
import type { EventsReads } from './events-reads.js';

type Schemas = components['schemas'];
type TileWire = Schemas['DashboardTile'];

/** A grid position of one breakpoint. */
interface Cell {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The grid's width at `sm` (PostHog's dashboards have 12 columns). */
const COLUMNS = 12;
/** A new tile's size at `sm` (PostHog's default: half the width, 5 rows). */
const DEFAULT_CELL = { w: 6, h: 5 };

function cellOf(layouts: Record<string, unknown>, key: 'sm' | 'xs'): Cell | undefined {
  const c = layouts[key] as Partial<Cell> | undefined;
  if (!c || typeof c !== 'object') return undefined;
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
  return { x: num(c.x, 0), y: num(c.y, 0), w: num(c.w, DEFAULT_CELL.w), h: num(c.h, DEFAULT_CELL.h) };
}

/** Layouts below every tile of `tiles`, PostHog's default size. */
function layoutsBelow(tiles: TileRow[]): Record<string, unknown> {
  const bottom = (key: 'sm' | 'xs') => Math.max(0, ...tiles.map((t) => cellOf(t.layouts, key)).map((c) => (c ? c.y + c.h : 0)));
  return { sm: { x: 0, y: bottom('sm'), ...DEFAULT_CELL }, xs: { x: 0, y: bottom('xs'), w: 1, h: DEFAULT_CELL.h } };
}

/**
 * The `sm` cells of tiles in order for a `reorder_tiles` layout: `two_column` two per row (6 × 5),
 * `full_width` one per row (12 × 5), `preserve` each tile's own size, filling rows of 12 columns.
 */
function arrange(tiles: TileRow[], layout: 'preserve' | 'two_column' | 'full_width'): Cell[] {
  if (layout === 'two_column') return tiles.map((_, i) => ({ x: (i % 2) * 6, y: Math.floor(i / 2) * 5, w: 6, h: 5 }));
  if (layout === 'full_width') return tiles.map((_, i) => ({ x: 0, y: i * 5, w: COLUMNS, h: 5 }));
  const out: Cell[] = [];
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const t of tiles) {
    const own = cellOf(t.layouts, 'sm') ?? { x: 0, y: 0, ...DEFAULT_CELL };
    const w = Math.min(Math.max(1, own.w), COLUMNS);
    if (x + w > COLUMNS) {
      y += rowHeight;
      x = 0;
      rowHeight = 0;
    }
    out.push({ x, y, w, h: own.h });
    x += w;
    rowHeight = Math.max(rowHeight, own.h);
  }
  return out;
}

/** The tile actions over one store. */
export class DashboardTilesService {
  constructor(
    private readonly store: Store,
    private readonly dashboards: DashboardsService,
    private readonly events: EventsReads,
  ) {}

  /** Runs `work` on a live dashboard of the project that the caller may edit, in one transaction. */
  private edit<T>(caller: DashboardCaller, id: number, work: (repo: DashboardsRepository, d: DashboardRecord) => Promise<T>): Promise<T> {
    return this.store.db.transaction().execute(async (trx) => {
      const repo = new DashboardsRepository(trx);
      const d = await repo.find(caller.project.team.id, id, this.store.dialect === 'postgres');
      if (!d) throw notFound();
      assertCanEdit(d, caller);
      return work(repo, d);
    });
  }

  /** The wire form of one tile of `dashboardId`, its `order` its place in the dashboard. */
  private static async tileWire(repo: DashboardsRepository, dashboardId: number, tileId: number): Promise<TileWire> {
    const tiles = await repo.tiles(dashboardId);
    const at = tiles.findIndex((t) => t.id === tileId);
    return tileToWire(tiles[at]!, at);
  }

  /** Adds a text tile (default layouts: below the others) and answers it. */
  async createTextTile(caller: DashboardCaller, id: number, body: Schemas['DashboardTextTileCreate']): Promise<TileWire> {
    return this.edit(caller, id, async (repo, d) => {
      const textId = await repo.createText({ team_id: d.team_id, body: body.body, created_by_id: caller.user.id });
      const layouts = body.layouts ?? layoutsBelow(await repo.tileRows(d.id));
      const tileId = await repo.createTile({ dashboard_id: d.id, insight_id: null, text_id: textId, layouts, color: body.color ?? null });
      return DashboardTilesService.tileWire(repo, d.id, tileId);
    });
  }

  /** Changes a text tile's body, layouts or colour; 400 `tile_id` when it is not a live text tile of the dashboard. */
  async updateTextTile(caller: DashboardCaller, id: number, body: Schemas['DashboardTextTileUpdate']): Promise<TileWire> {
    return this.edit(caller, id, async (repo, d) => {
      const tile = (await repo.tileRows(d.id)).find((t) => t.id === body.tile_id);
      if (!tile || tile.text_id === null)
        throw validationError(`Tile ${body.tile_id} is not a text tile of dashboard ${d.id}.`, 'tile_id', 'does_not_exist');
      if (body.body !== undefined) await repo.updateText(tile.text_id, body.body);
      await repo.updateTile(tile.id, {
        ...(body.layouts !== undefined ? { layouts: body.layouts } : {}),
        ...(body.color !== undefined ? { color: body.color } : {}),
      });
      return DashboardTilesService.tileWire(repo, d.id, tile.id);
    });
  }

  /** Soft-deletes one tile of the dashboard; 400 `tile_id` when it is not on it. */
  async deleteTile(caller: DashboardCaller, id: number, tileId: number): Promise<void> {
    await this.edit(caller, id, async (repo, d) => {
      if (!(await repo.tileRows(d.id)).some((t) => t.id === tileId))
        throw validationError(`Tile ${tileId} is not on dashboard ${d.id}.`, 'tile_id', 'does_not_exist');
      await repo.updateTile(tileId, { deleted: true });
    });
  }

  /** Lays the tiles out in `tile_order` (see `arrange`); 404 for ids not on the dashboard, 400 for duplicates (PostHog's answers). */
  async reorderTiles(caller: DashboardCaller, id: number, body: Schemas['DashboardReorderTiles']): Promise<DashboardWire> {
    return this.edit(caller, id, async (repo, d) => {
      if (new Set(body.tile_order).size !== body.tile_order.length)
        throw validationError('tile_order must not contain duplicate ids.', 'tile_order');
      const tiles = (await repo.tiles(d.id)).map((t) => ({ id: t.id, layouts: t.layouts }));
      const rows = new Map((await repo.tileRows(d.id)).map((t) => [t.id, t]));
      const missing = body.tile_order.filter((t) => !rows.has(t));
      if (missing.length > 0) throw notFound(`Tile IDs not found on this dashboard: [${missing.join(', ')}]`);
      const ordered = [
        ...body.tile_order.map((t) => rows.get(t)!),
        ...tiles.filter((t) => !body.tile_order.includes(t.id)).map((t) => rows.get(t.id)!),
      ];
      const cells = arrange(ordered, body.layout ?? 'preserve');
      for (let i = 0; i < ordered.length; i++) {
        const t = ordered[i]!;
        await repo.updateTile(t.id, { layouts: { ...t.layouts, sm: cells[i], xs: { x: 0, y: i * 5, w: 1, h: cells[i]!.h } } });
      }
      return this.dashboards.full(d, caller, repo.db);
    });
  }

  /**
   * Copies tile `tileId` of dashboard `fromDashboardId` onto dashboard `id` (PostHog's rules: another
   * dashboard, the tile on it, its insight or text not already on the destination: each a 400).
   */
  async copyTile(caller: DashboardCaller, id: number, body: Schemas['DashboardCopyTile']): Promise<DashboardWire> {
    return this.edit(caller, id, async (repo, d) => {
      if (body.fromDashboardId === d.id) throw validationError('Cannot copy a tile to the same dashboard.', 'fromDashboardId');
      const source = await repo.find(caller.project.team.id, body.fromDashboardId);
      if (!source)
        throw validationError(`Dashboard ${body.fromDashboardId} does not exist in this project.`, 'fromDashboardId', 'does_not_exist');
      const tile = (await repo.tileRows(source.id)).find((t) => t.id === body.tileId);
      if (!tile) throw validationError(`Tile ${body.tileId} is not on dashboard ${source.id}.`, 'tileId', 'does_not_exist');
      const here = await repo.tileRows(d.id);
      if (tile.insight_id !== null && here.some((t) => t.insight_id === tile.insight_id))
        throw validationError('This insight is already on the destination dashboard.', 'tileId');
      if (tile.text_id !== null && here.some((t) => t.text_id === tile.text_id))
        throw validationError('This text is already on the destination dashboard.', 'tileId');
      await repo.createTile({
        dashboard_id: d.id,
        insight_id: tile.insight_id,
        text_id: tile.text_id,
        layouts: tile.layouts,
        color: tile.color,
      });
      return this.dashboards.full(d, caller, repo.db);
    });
  }

  /** Every insight tile's result, in the tiles' order; `compute` false leaves them null (`force_cache`). */
  async runInsights(caller: DashboardCaller, id: number, compute: boolean): Promise<Schemas['DashboardRunInsights']> {
    const repo = new DashboardsRepository(this.store.db);
    const d = await repo.find(caller.project.team.id, id);
    if (!d) throw notFound();
    const results: Schemas['DashboardRunInsights']['results'] = [];
    const tiles = (await repo.tiles(d.id)).map(tileToWire);
    for (const tile of tiles) {
      if (!tile.insight) continue;
      if (compute) await withResult(this.events, caller, tile);
      const { id: insightId, short_id, name, derived_name } = tile.insight;
      results.push({
        id: tile.id,
        insight: { id: insightId, short_id, name, derived_name, result: compute ? tile.insight.result : null },
        ...(tile.error ? { error: tile.error } : {}),
      });
    }
    return { results };
  }
}
