/**
 * The SELECT compiler: PostHog's `SelectQuery` node to one parameterized SQL statement, its column
 * names and HogQL types. The team filter is added here, never taken from the query; only `events`
 * and `persons` can be read, through a derived table of the fields the query names
 * (`(SELECT … AS f0, … FROM events WHERE events.team_id = ?) AS t`, see ./fields.ts).
 *
 * ClickHouse's rules kept: SELECT aliases may be used in WHERE, GROUP BY, HAVING and ORDER BY;
 * every column outside an aggregate must be grouped when the query aggregates; ORDER BY puts NULLs
 * last in both directions; strings order byte by byte; an integer literal as a whole GROUP BY or
 * ORDER BY item is a column's position (`order by 2 desc`, `-1` the last; ./positional.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { EventsTable } from '../storage/events/index.js';
import { asCondition, asValue } from './coerce.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { compileExpr, describe } from './expr.js';
import type { AstNode } from './parser.js';
import { aggregateInGroupBy, positionalIndex } from './positional.js';
import { fail, type DerivedColumn, type Scope, type TableName } from './scope.js';
import { isNumeric, typeName, type Compiled } from './types.js';

/** Rows a query returns by default, and at most (PostHog's DEFAULT_RETURNED_ROWS, MAX_SELECT_RETURNED_ROWS). */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 50_000;

/** What the caller gives besides the AST. */
export interface SelectOptions {
  dialect: HogQLDialect;
  /** the store's events table (the SQL of its fields, its materialized columns, which WHERE may read: `Compiled.materialized`) */
  events: EventsTable;
  teamId: number;
  /** the HogQL text (for error positions) and the request field that holds it */
  source: string;
  attr: string | null;
  now: Date;
  /** conditions added to WHERE (the EventsQuery's own filters), compiled against the derived table's source */
  extraWhere?: ((scope: Scope) => Sql[]) | undefined;
  /** conditions on the table's rows inside the derived table (e.g. the events list's filters on `events`) */
  tableWhere?: Sql[] | undefined;
  /** default LIMIT when the query has none */
  defaultLimit?: number | undefined;
  /** the largest LIMIT (default MAX_LIMIT, PostHog's 50,000): the query runners' internal reads raise it */
  maxLimit?: number | undefined;
}

/** A compiled query: run `sql`, then read each row's values by `columns`. */
export interface CompiledSelect {
  sql: RawBuilder<unknown>;
  /** the column names (an alias, or the expression's text) */
  columns: string[];
  /** ClickHouse type names, as PostHog's `types` */
  types: string[];
  /** the HogQL type of each column (for reading values back) */
  kinds: Compiled['type'][];
  /** the rows asked for (the SQL fetches one more, to know `hasMore`) */
  limit: number;
  offset: number;
  /**
   * For a query that reads materialized columns which hold most values' text (`DerivedColumn.split`):
   * `sql` without the JSON, right while no row of the table needs the JSON, which `probe` (a
   * query of one row at most) tells. ./run.ts asks `probe` before and after `sql`.
   */
  optimistic?: { sql: RawBuilder<unknown>; probe: RawBuilder<unknown> };
}

const UNSUPPORTED: [string, string][] = [
  ['ctes', 'WITH'],
  ['prewhere', 'PREWHERE'],
  ['qualify', 'QUALIFY'],
  ['array_join_op', 'ARRAY JOIN'],
  ['array_join_list', 'ARRAY JOIN'],
  ['window_exprs', 'WINDOW'],
  ['limit_by', 'LIMIT BY'],
  ['limit_with_ties', 'LIMIT … WITH TIES'],
  ['settings', 'SETTINGS'],
  ['view_name', 'a view'],
];

function constantInt(scope: Scope, node: AstNode | null | undefined, what: string): number | undefined {
  if (!node) return undefined;
  if (node.node !== 'Constant' || typeof node.value !== 'number' || !Number.isSafeInteger(node.value) || node.value < 0) {
    return fail(scope, node, `${what} must be a constant non-negative integer`);
  }
  return node.value;
}

/** The table of FROM, and the names that stand for it in field chains. */
function fromTable(scope: Scope, from: AstNode | null | undefined): { table: TableName | null; names: Set<string> } {
  if (!from) return { table: null, names: new Set() };
  const table = from.table as AstNode | undefined;
  if (from.next_join)
    fail(
      scope,
      from.next_join as AstNode,
      "JOIN is not supported: query events or persons (person.properties.<key> reads the event's person)",
    );
  if (from.sample) fail(scope, from, 'SAMPLE is not supported');
  if (from.table_final) fail(scope, from, 'FINAL is not supported');
  if (!table || table.node !== 'Field')
    return fail(
      scope,
      table ?? from,
      table ? `${describe(table)} in FROM is not supported: FROM events or FROM persons` : 'FROM needs a table',
    );
  const chain = table.chain as string[];
  const name = chain.join('.');
  if (name !== 'events' && name !== 'persons') return fail(scope, table, `Unknown table "${name}": this server reads events and persons`);
  const names = new Set<string>([name]);
  if (typeof from.alias === 'string') names.add(from.alias);
  return { table: name, names };
}

/**
 * A WHERE or HAVING condition that may fail for a row (`canFail`: an Int overflow) as one CASE, so
 * that both stores evaluate its parts in the written order, stopping as `and`/`or` allow:
 * PostgreSQL would otherwise split `a and b` and run the cheaper part first, and fail on rows that
 * SQLite never evaluates `b` for. Other conditions are left as they are (their parts can use indexes).
 */
function inOrder(d: HogQLDialect, c: Compiled, cond: Sql): Sql {
  return c.canFail ? sql`(case when ${cond} then ${d.trueSql} else ${d.falseSql} end)` : cond;
}

/** The text of `node` in the source, for a column name. */
function textOf(source: string, node: AstNode): string {
  if (node.start && node.end) return source.slice(node.start.offset, node.end.offset).trim();
  return node.node;
}

/** The names of the derived table's columns (`t.fN`, ./fields.ts) that `parts` read. */
function referencedColumns(parts: readonly (Sql | undefined)[]): Set<string> {
  const names = new Set<string>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    const fragments = (node as { sqlFragments?: unknown }).sqlFragments;
    if (Array.isArray(fragments)) for (const f of fragments) for (const m of String(f).matchAll(/\bt\.(f[0-9]+)\b/g)) names.add(m[1]!);
    for (const v of Object.values(node)) visit(v);
  };
  for (const p of parts) if (p) visit(p.toOperationNode());
  return names;
}

/** Compiles a SELECT node. Throws `HogQLError` for anything outside the subset. */
export function compileSelect(ast: AstNode, options: SelectOptions): CompiledSelect {
  const base: Scope = {
    dialect: options.dialect,
    events: options.events,
    source: options.source,
    attr: options.attr,
    table: null,
    tableNames: new Set(),
    aliases: new Map(),
    expanding: new Set(),
    now: options.now,
    aggAllowed: false,
    inAgg: false,
    columns: new Map(),
  };
  if (ast.node === 'SelectSetQuery') return fail(base, ast, 'UNION, INTERSECT and EXCEPT are not supported');
  if (ast.node !== 'SelectQuery') return fail(base, ast, 'Expected a SELECT query');
  for (const [field, what] of UNSUPPORTED) {
    const v = ast[field];
    if (v !== undefined && v !== null && v !== false && !(Array.isArray(v) && v.length === 0)) fail(base, ast, `${what} is not supported`);
  }
  const from = fromTable(base, ast.select_from as AstNode | null);
  const scope: Scope = { ...base, table: from.table, tableNames: from.names };
  const d = scope.dialect;

  const selectNodes = (ast.select as AstNode[]) ?? [];
  // `*`: the events' columns, as PostHog's EventsQuery answers `*` (here as separate columns)
  const items: { node: AstNode; name: string }[] = [];
  for (const node of selectNodes) {
    if (node.node === 'Field' && (node.chain as unknown[]).length === 1 && (node.chain as unknown[])[0] === '*') {
      if (scope.table === null) fail(scope, node, '`*` needs a FROM clause');
      const cols =
        scope.table === 'events'
          ? ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at']
          : ['id', 'created_at', 'is_identified', 'properties'];
      for (const c of cols) items.push({ node: { node: 'Field', chain: [c], start: node.start, end: node.end }, name: c });
      continue;
    }
    if (node.node === 'Alias') {
      const alias = String(node.alias);
      if (scope.aliases.has(alias)) fail(scope, node, `The alias "${alias}" is defined twice`);
      scope.aliases.set(alias, node.expr as AstNode);
      items.push({ node: node.expr as AstNode, name: alias });
    } else {
      items.push({ node, name: textOf(scope.source, node) });
    }
  }
  if (items.length === 0) fail(scope, ast, 'SELECT needs at least one column');

  scope.aggAllowed = true;
  const selected = items.map((i) => compileExpr(scope, i.node));
  selected.forEach((c, i) => {
    if (c.type === 'Interval') fail(scope, items[i]!.node, 'An interval cannot be a column');
  });

  scope.aggAllowed = false;
  const whereNode = ast.where as AstNode | null;
  scope.inWhere = true;
  const whereExpr = whereNode ? compileExpr(scope, whereNode) : undefined;
  scope.inWhere = false;
  const where = whereNode && whereExpr ? inOrder(d, whereExpr, asCondition(scope, whereExpr, whereNode)) : undefined;
  // a whole item that is an integer literal names a SELECT column by position (./positional.ts)
  const columnAt = (node: AstNode, clause: string) => positionalIndex(node, scope.source, scope.attr, items.length, clause);
  const groupNodes = ((ast.group_by as AstNode[] | null) ?? []).map((g) => {
    const i = columnAt(g, 'GROUP BY');
    if (i === undefined) return g;
    if (selected[i]!.agg) throw aggregateInGroupBy(g, scope.source, scope.attr, items[i]!.name);
    return items[i]!.node;
  });
  const groups = groupNodes.map((g) => compileExpr(scope, g));

  scope.aggAllowed = true;
  const havingNode = ast.having as AstNode | null;
  const havingExpr = havingNode ? compileExpr(scope, havingNode) : undefined;
  const having = havingNode && havingExpr ? inOrder(d, havingExpr, asCondition(scope, havingExpr, havingNode)) : undefined;
  const orderNodes = (ast.order_by as AstNode[] | null) ?? [];
  const orders = orderNodes.map((o) => {
    if (o.node !== 'OrderExpr') return fail(scope, o, 'Unsupported ORDER BY item');
    if (o.with_fill) fail(scope, o, 'WITH FILL is not supported');
    const i = columnAt(o.expr as AstNode, 'ORDER BY');
    return { expr: compileExpr(scope, i === undefined ? (o.expr as AstNode) : items[i]!.node), desc: o.order === 'DESC', node: o };
  });
  const extra = options.extraWhere?.(scope) ?? [];

  const aggregates = groups.length > 0 || selected.some((c) => c.agg) || (havingExpr?.agg ?? false) || orders.some((o) => o.expr.agg);
  if (havingNode && !aggregates) fail(scope, havingNode, 'HAVING needs GROUP BY or an aggregate');
  if (aggregates) {
    const grouped = new Set(groups.map((g) => g.key));
    const check = (c: Compiled, node: AstNode) => {
      if (grouped.has(c.key)) return;
      const loose = c.fields.find((f) => !grouped.has(f));
      if (loose !== undefined) fail(scope, node, `"${textOf(scope.source, node)}" is neither aggregated nor in GROUP BY`);
    };
    selected.forEach((c, i) => check(c, items[i]!.node));
    if (havingExpr && havingNode) check(havingExpr, havingNode);
    orders.forEach((o) => check(o.expr, o.expr === undefined ? o.node : (o.node.expr as AstNode)));
  }

  const limitNode = ast.limit as AstNode | null;
  const offsetNode = ast.offset as AstNode | null;
  const asked = constantInt(scope, limitNode, 'LIMIT') ?? options.defaultLimit ?? DEFAULT_LIMIT;
  const limit = Math.min(asked, options.maxLimit ?? MAX_LIMIT);
  const offset = constantInt(scope, offsetNode, 'OFFSET') ?? 0;

  const position = (c: Compiled) => {
    const i = selected.findIndex((s) => s.key === c.key);
    return i >= 0 ? i + 1 : undefined;
  };
  const distinct = ast.distinct === true;
  const ordered = (c: Compiled) => !isNumeric(c.type) && c.type !== 'Null';
  const bareField = (c: Compiled) => c.fields.length === 1 && c.key === c.fields[0];
  // Text columns that carry the byte-order collation themselves, so that ORDER BY by position
  // orders them as ClickHouse does: all of a DISTINCT's (without GROUP BY), and the computed GROUP BY
  // keys (grouped by position: nothing else in the query can read their fields outside aggregates)
  const collated = new Set<number>();
  selected.forEach((c, i) => {
    if (!ordered(c)) return;
    if (distinct && groups.length === 0) collated.add(i);
    if (!bareField(c) && groups.some((g) => g.key === c.key)) collated.add(i);
  });
  const selectList = sql.join(
    selected.map((c, i) => sql`${collated.has(i) ? d.text(asValue(scope, c)) : asValue(scope, c)} as ${sql.ref(`c${i}`)}`),
  );
  const conditions = [where, ...extra].filter((c): c is Sql => c !== undefined);
  // a stored time, or a day or hour of one, groups and orders by the store's key (`Compiled.timeKey`)
  const keyOf = (c: Compiled) => c.orderKey?.() ?? c.timeKey?.();
  const groupBy = groups.map((g) => {
    const k = keyOf(g);
    if (k) return k;
    const p = position(g);
    return p !== undefined ? sql.raw(String(p)) : asValue(scope, g);
  });
  const orderBy = orders.map((o) => {
    let p = position(o.expr);
    if (distinct && p === undefined) fail(scope, o.node, 'ORDER BY of a SELECT DISTINCT must name one of its columns');
    // text in byte order: by the expression with the collation; in a grouped query only for a bare
    // field (PostgreSQL matches other expressions with the grouped ones by their text, parameters
    // included), else by position; DISTINCT's columns carry the collation themselves
    const byExpression = !distinct && ordered(o.expr) && (!aggregates || bareField(o.expr));
    if (byExpression) p = undefined;
    const k = distinct ? undefined : keyOf(o.expr);
    const target = k ?? (p !== undefined ? sql.raw(String(p)) : ordered(o.expr) ? d.text(asValue(scope, o.expr)) : asValue(scope, o.expr));
    // ClickHouse puts NULLs last in both directions; a column that is never NULL needs no NULLS
    // clause, and writing one would keep PostgreSQL from reading `desc` along an index (its
    // default is NULLS FIRST there): the latest 100 of 5,000,000 events took 4 s instead of ms
    const nulls = !o.expr.nullable && (bareField(o.expr) || k) ? '' : ' nulls last';
    return sql`${target} ${sql.raw(o.desc ? 'desc' : 'asc')}${sql.raw(nulls)}`;
  });

  // a whole properties object that the query groups, orders or de-duplicates by is compared as its
  // canonical text (PostgreSQL would compare jsonb, SQLite the text as stored); a plain column keeps
  // the stored text, which reads back the same on both stores (./run.ts)
  const isJson = (c: Compiled) => c.type === 'JSON';
  if (groups.some(isJson) || orders.some((o) => isJson(o.expr)) || (distinct && selected.some(isJson))) {
    for (const col of scope.columns.values()) if (col.canonical) col.sql = col.canonical;
  }

  let fromSql: Sql = sql``;
  let optimistic: { from: Sql; probe: Sql } | undefined;
  if (scope.table !== null) {
    const table = sql.raw(scope.table);
    // the derived table's columns that the query reads (a field compared through its materialized
    // column instead, ./expr.ts `compareValues`, leaves its own column unread)
    const used = referencedColumns([selectList, ...conditions, ...groupBy, having, ...orderBy]);
    const fieldCols = [...scope.columns.values()].filter((c) => used.has(c.name));
    const columnsOf = (value: (c: DerivedColumn) => Sql) =>
      fieldCols.length > 0 ? sql.join(fieldCols.map((c) => sql`${value(c)} as ${sql.ref(c.name)}`)) : sql`1 as f_`;
    const hints = scope.table === 'events' ? scope.events.hints : [];
    const tableWhere = sql.join([sql`${table}.team_id = ${d.int(options.teamId)}`, ...hints, ...(options.tableWhere ?? [])], sql` and `);
    // the store's own source of `persons`, and the join of the event's person (EventsTable.personsSource, personJoin)
    const events = scope.events;
    const joinsPerson = scope.table === 'events' && scope.readsPerson === true && events.personJoin !== undefined;
    const source =
      scope.table === 'persons' && events.personsSource
        ? sql`${events.personsSource(d.int(options.teamId))} as persons`
        : joinsPerson
          ? sql`${table}${events.personJoin!(d.int(options.teamId))}`
          : table;
    // materialized properties whose column holds most values' text (DerivedColumn.split): the rows
    // where every such column holds read the columns, the others the JSON; ClickHouse then reads
    // the JSON column only for the granules that have such rows (its PREWHERE reads the
    // condition's columns first). Not when another column reads the JSON on every row anyway, nor
    // with the person's join, which each part would compute.
    const splits = joinsPerson || fieldCols.some((c) => c.json) ? [] : fieldCols.flatMap((c) => (c.split ? [c.split.exact] : []));
    if (splits.length > 0) {
      const exact = sql.join(splits, sql` and `);
      fromSql = sql` from (select ${columnsOf((c) => c.split?.fast ?? c.sql)} from ${source} where ${tableWhere} and ${exact}
        union all select ${columnsOf((c) => c.sql)} from ${source} where ${tableWhere} and not (${exact})) as t`;
      // the columns alone, and whether a row needs the JSON (ClickHouse's analysis of the JSON
      // branch alone costs more than the columns' query: docs/performance.md)
      optimistic = {
        from: sql` from (select ${columnsOf((c) => c.split?.fast ?? c.sql)} from ${source} where ${tableWhere}) as t`,
        probe: sql`select 1 as c0 from ${source} where ${tableWhere} and not (${exact}) limit 1`,
      };
    } else fromSql = sql` from (select ${columnsOf((c) => c.sql)} from ${source} where ${tableWhere}) as t`;
  } else if (scope.columns.size > 0) {
    // only the row column (fields without FROM fail earlier): a one-row table
    fromSql = sql` from (select ${sql.join([...scope.columns.values()].map((c) => sql`${c.sql} as ${sql.ref(c.name)}`))}) as t`;
  }
  const statement = (from: Sql) =>
    sql`select ${sql.raw(distinct ? 'distinct ' : '')}${selectList}${from}${conditions.length ? sql` where ${sql.join(conditions, sql` and `)}` : sql``}${groupBy.length ? sql` group by ${sql.join(groupBy)}` : sql``}${having ? sql` having ${having}` : sql``}${orderBy.length ? sql` order by ${sql.join(orderBy)}` : sql``} limit ${d.int(limit + 1)} offset ${d.int(offset)}`;
  return {
    sql: statement(fromSql),
    ...(optimistic ? { optimistic: { sql: statement(optimistic.from), probe: optimistic.probe } } : {}),
    columns: items.map((i) => i.name),
    types: selected.map((c) => typeName(c)),
    kinds: selected.map((c) => c.type),
    limit,
    offset,
  };
}
