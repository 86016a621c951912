/**
 * PostHog's EventsQuery (posthog/hogql_queries/events_query_runner.py; the 2023 events list's
 * `select`/`where`, posthog/models/event/query_event_list.py) as one HogQL SELECT over events:
 * - `select`: HogQL expressions; when any aggregates, the others are grouped;
 * - `where`: HogQL expressions, all must pass; one with an aggregate applies after aggregation (HAVING);
 * - `orderBy`: `expr [ASC|DESC]`, an integer literal naming a `select` column by position (`*` is
 *   one column, ordered by its uuid; ./positional.ts); default `count()` DESC when selected, else
 *   the first aggregate DESC, ties by the grouped columns ascending; without aggregates
 *   `timestamp` DESC, `uuid` DESC, except for the query endpoint's EventsQuery (`postHogOrder`),
 *   which orders by the first column ascending when `timestamp` is not selected (PostHog's
 *   events_query_runner.py; for `*` the uuid), ties by `timestamp` DESC, `uuid` DESC;
 * - `after`/`before` (exclusive; ISO or relative `-24h`), `event`, `properties`, and the caller's
 *   other filters apply to the events before anything else;
 * - `*` is one column holding the event as an object (uuid, event, properties parsed, timestamp,
 *   team_id, distinct_id, elements_chain, created_at).
 * Error positions: the expressions count as consecutive lines, `select` first, then `where`, then
 * `orderBy` (line 1 = the first select expression).
 */
import { sql } from 'kysely';
import type { EventsTable } from '../storage/events/index.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { asCondition } from './coerce.js';
import { compileExpr } from './expr.js';
import type { Scope } from './scope.js';
import { parseExpr } from './parser.js';
import type { AstNode } from './parser.js';
import { HogQLError } from './errors.js';
import { positionalIndex } from './positional.js';
import { compileSelect, type CompiledSelect, type SelectOptions } from './select.js';

const AGGREGATES = new Set(['count', 'countIf', 'uniq', 'uniqExact', 'sum', 'avg', 'min', 'max', 'COUNT', 'SUM', 'AVG', 'MIN', 'MAX']);
/** The fields `*` stands for, in PostHog's order. */
export const STAR_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'team_id', 'distinct_id', 'elements_chain', 'created_at'] as const;

/** Whether the expression contains an aggregate call. */
export function hasAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasAggregate);
  if (node === null || typeof node !== 'object') return false;
  const n = node as AstNode;
  if (n.node === 'Call' && AGGREGATES.has(String(n.name))) return true;
  return Object.entries(n).some(([k, v]) => k !== 'start' && k !== 'end' && hasAggregate(v));
}

function shift(node: unknown, by: number): void {
  if (Array.isArray(node)) return node.forEach((n) => shift(n, by));
  if (node === null || typeof node !== 'object') return;
  const n = node as AstNode;
  for (const [k, v] of Object.entries(n)) {
    if ((k === 'start' || k === 'end') && v && typeof v === 'object') (v as { offset: number }).offset += by;
    else shift(v, by);
  }
}

/** The EventsQuery's HogQL parts. */
export interface EventsQueryParts {
  select: readonly string[];
  where?: readonly string[] | undefined;
  orderBy?: readonly string[] | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  /**
   * the query endpoint's EventsQuery: without `orderBy` or aggregates, `timestamp` DESC only when
   * `timestamp` is selected, else the first column ascending (PostHog's events_query_runner.py);
   * otherwise (the events list's 2023 `select`) newest first
   */
  postHogOrder?: boolean | undefined;
}

/** A compiled EventsQuery, with where `*` sits (its fields are folded into one object column after reading). */
export interface CompiledEventsQuery extends CompiledSelect {
  /** index of the first of STAR_FIELDS' columns, when `*` was selected */
  star: number | undefined;
  /** the HogQL text the parts make */
  hogql: string;
}

/**
 * Parses and compiles an EventsQuery. `tableWhere` are the events filters (time range, event,
 * properties) on the `events` rows. Throws `HogQLError` (400) for a syntax error or anything
 * outside the subset.
 */
export async function compileEventsQuery(
  parts: EventsQueryParts,
  options: Omit<SelectOptions, 'source' | 'attr'> & { tableWhere: Sql[] },
): Promise<CompiledEventsQuery> {
  if (parts.select.length === 0) throw new HogQLError('select needs at least one expression', undefined, undefined, 'select');
  const pieces: { text: string; attr: string; kind: 'select' | 'where' | 'order' }[] = [
    ...parts.select.map((text) => ({ text, attr: 'select', kind: 'select' as const })),
    ...(parts.where ?? []).map((text) => ({ text, attr: 'where', kind: 'where' as const })),
    ...(parts.orderBy ?? []).map((text) => ({ text, attr: 'orderBy', kind: 'order' as const })),
  ];
  if (pieces.some((p) => p.text.includes('\n'))) {
    for (const p of pieces) p.text = p.text.replace(/\r?\n/g, ' ');
  }
  const source = pieces.map((p) => p.text).join('\n');
  const select: AstNode[] = [];
  const where: AstNode[] = [];
  const having: AstNode[] = [];
  const orderBy: AstNode[] = [];
  let star: number | undefined;
  // each `select` expression's AST, `*` as PostHog's one column (a tuple that begins with the uuid)
  const outputs: AstNode[] = [];
  let base = 0;
  for (const piece of pieces) {
    if (piece.kind === 'select' && piece.text.trim() === '*') {
      star = select.length;
      for (const f of STAR_FIELDS) select.push({ node: 'Field', chain: [f] });
      outputs.push({ node: 'Field', chain: [STAR_FIELDS[0]] });
    } else if (piece.kind === 'order') {
      const m = /^(.*?)(?:\s+(asc|desc))?\s*$/is.exec(piece.text)!;
      let expr = await parseOrThrow(m[1]!, piece.attr, source, base);
      // `2 DESC` names the second column of `select` (./positional.ts)
      const at = positionalIndex(expr, source, piece.attr, outputs.length, 'orderBy');
      if (at !== undefined) expr = asExpression(outputs[at]!);
      orderBy.push({ node: 'OrderExpr', expr, order: (m[2] ?? 'asc').toUpperCase(), start: expr.start, end: expr.end });
    } else {
      const expr = await parseOrThrow(piece.text, piece.attr, source, base);
      if (piece.kind === 'select') {
        select.push(expr);
        outputs.push(expr);
      } else (hasAggregate(expr) ? having : where).push(expr);
    }
    base += piece.text.length + 1;
  }
  const aggregated = select.some(hasAggregate);
  if (star !== undefined && aggregated)
    throw new HogQLError('"*" cannot be selected together with aggregates', undefined, undefined, 'select');
  // the grouped columns, and the default order's, are expressions, never positions (a constant `5` selected)
  const groupBy = aggregated ? select.filter((s) => !hasAggregate(s)).map(asExpression) : [];
  if (orderBy.length === 0) {
    const count = select.find((s) => s.node === 'Call' && s.name === 'count' && (s.args as unknown[]).length === 0);
    const firstAgg = select.find(hasAggregate);
    if (count) orderBy.push({ node: 'OrderExpr', expr: count, order: 'DESC' });
    else if (firstAgg) orderBy.push({ node: 'OrderExpr', expr: firstAgg, order: 'DESC' });
    // ties in a stable order, the same on both stores: the groups ascending, or the newest uuid first
    if (aggregated) for (const g of groupBy) orderBy.push({ node: 'OrderExpr', expr: g, order: 'ASC' });
    else {
      // PostHog: `timestamp` DESC when it is selected, else the first column ascending (for `*`,
      // whose tuple begins with the uuid, the uuid); ties newest first, the same on every store
      const timestampSelected = parts.select.some((t) => t.split('--')[0]!.trim() === 'timestamp');
      if (parts.postHogOrder && !timestampSelected) orderBy.push({ node: 'OrderExpr', expr: asExpression(select[0]!), order: 'ASC' });
      for (const f of ['timestamp', 'uuid']) orderBy.push({ node: 'OrderExpr', expr: { node: 'Field', chain: [f] }, order: 'DESC' });
    }
  }
  const and = (exprs: AstNode[]) => (exprs.length === 0 ? null : exprs.length === 1 ? exprs[0]! : { node: 'And', exprs });
  const ast: AstNode = {
    node: 'SelectQuery',
    select,
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: and(where),
    having: and(having),
    group_by: groupBy.length ? groupBy : null,
    order_by: orderBy,
    limit: parts.limit !== undefined ? { node: 'Constant', value: parts.limit } : null,
    offset: parts.offset !== undefined ? { node: 'Constant', value: parts.offset } : null,
  };
  let compiled: CompiledSelect;
  try {
    compiled = compileSelect(ast, { ...options, source, attr: null });
  } catch (err) {
    // each expression is one line of `source`: the line names the parameter that holds it
    if (err instanceof HogQLError && err.line !== undefined && err.attr === null) err.attr = pieces[err.line - 1]?.attr ?? null;
    throw err;
  }
  const hogql = `SELECT ${parts.select.join(', ')} FROM events${where.length + having.length ? ` WHERE ${(parts.where ?? []).join(' AND ')}` : ''}`;
  if (star === undefined) return { ...compiled, star, hogql };
  const columns = [...compiled.columns];
  const types = [...compiled.types];
  columns.splice(star, STAR_FIELDS.length, '*');
  // PostHog types the column as the tuple of its fields' ClickHouse types (events_query_runner.py)
  types.splice(star, STAR_FIELDS.length, `Tuple(${compiled.types.slice(star, star + STAR_FIELDS.length).join(', ')})`);
  return { ...compiled, columns, types, kinds: compiled.kinds, star, hogql };
}

/**
 * `node` as an item of the GROUP BY or ORDER BY the EventsQuery writes itself: an integer constant
 * without its place in the text, which compileSelect would otherwise read as a column's position.
 */
function asExpression(node: AstNode): AstNode {
  if (node.node !== 'Constant') return node;
  const copy = { ...node };
  delete copy.start;
  delete copy.end;
  return copy;
}

async function parseOrThrow(text: string, attr: string, source: string, base: number): Promise<AstNode> {
  let node: AstNode;
  try {
    node = await parseExpr(text, attr);
  } catch (err) {
    if (err instanceof HogQLError) {
      throw new HogQLError(
        `${err.detail.replace(/ \(line \d+, column \d+\)$/, '')} in "${text}"`,
        source,
        base + (err.column ?? 1) - 1,
        attr,
      );
    }
    throw err;
  }
  shift(node, base);
  return node;
}

/** Folds the `*` columns of a row into one object (after `readValue`). */
export function foldStar(row: unknown[], star: number | undefined): unknown[] {
  if (star === undefined) return row;
  const values = row.slice(star, star + STAR_FIELDS.length);
  const obj: Record<string, unknown> = {};
  STAR_FIELDS.forEach((f, i) => {
    obj[f] = f === 'properties' && typeof values[i] === 'string' ? JSON.parse(values[i] as string) : values[i];
  });
  return [...row.slice(0, star), obj, ...row.slice(star + STAR_FIELDS.length)];
}

/**
 * The events list's `where` without `select`: HogQL conditions on the `events` rows, all of which
 * must pass, as one SQL condition for the list's own query. Aggregates are refused (they need
 * `select`). Throws `HogQLError` (400, `attr` `where`).
 */
export async function compileEventsWhere(where: readonly string[], dialect: HogQLDialect, events: EventsTable, now: Date): Promise<Sql> {
  const texts = where.map((w) => w.replace(/\r?\n/g, ' '));
  const source = texts.join('\n');
  const scope: Scope = {
    dialect,
    events,
    source,
    attr: 'where',
    table: 'events',
    tableNames: new Set(['events']),
    aliases: new Map(),
    expanding: new Set(),
    now,
    aggAllowed: false,
    inAgg: false,
    columns: new Map(),
    inline: true,
    inWhere: true,
  };
  const parts: Sql[] = [];
  let canFail = false;
  let base = 0;
  for (const text of texts) {
    const node = await parseOrThrow(text, 'where', source, base);
    const c = compileExpr(scope, node);
    canFail ||= c.canFail === true;
    parts.push(asCondition(scope, c, node));
    base += text.length + 1;
  }
  if (parts.length === 0) return dialect.trueSql;
  const all = sql`(${sql.join(parts, sql` and `)})`;
  // one that may fail for a row (an Int overflow) runs in the written order, as ./select.ts's WHERE
  return canFail ? sql`(case when ${all} then ${dialect.trueSql} else ${dialect.falseSql} end)` : all;
}
