/**
 * HogQL's functions in this server's subset, with ClickHouse's meaning as HogQL maps them
 * (posthog/hogql/functions/mapping.py): aggregates count, countIf, uniq, uniqExact, sum, avg, min, max
 * (uniq is exact on SQLite and PostgreSQL, ClickHouse's own `uniq` there: `HogQLDialect.uniq`);
 * toDate, toDateTime, toStartOfHour/Day/Week/Month (week starts on Sunday; Week and Month return
 * a Date), now, today, toIntervalSecond…Year (and `interval N unit`); lower, upper (ASCII, as
 * ClickHouse's), length (UTF-8 bytes), concat (NULL as ''), coalesce, ifNull, if, toString,
 * toInt/toFloat (NULL when the text is not a number, as accurateCastOrNull), match (RE2).
 */
import { sql } from 'kysely';
import { asCondition, asDate, asDateTime, asText, asValue } from './coerce.js';
import type { Sql } from './dialect.js';
import type { AstNode } from './parser.js';
import { rowColumn } from './fields.js';
import { regexCondition } from './patterns.js';
import { bindable, fail, make, sqlNull, storedTime, typeFail, type Scope } from './scope.js';
import { isDateTime, isNumeric, isText, type Compiled, type HogType, type Interval } from './types.js';

type CompileExpr = (scope: Scope, node: AstNode) => Compiled;

const AGGREGATES = new Set(['count', 'countIf', 'uniq', 'uniqExact', 'sum', 'avg', 'min', 'max']);
const INTERVALS: Record<string, Interval['unit']> = {
  toIntervalSecond: 'second',
  toIntervalMinute: 'minute',
  toIntervalHour: 'hour',
  toIntervalDay: 'day',
  toIntervalWeek: 'week',
  toIntervalMonth: 'month',
  toIntervalQuarter: 'quarter',
  toIntervalYear: 'year',
};
/** The other functions of the subset (compiled below). */
const SCALARS = new Set([
  'lower',
  'upper',
  'length',
  'toString',
  'toInt',
  'toFloat',
  'toDateTime',
  'toDate',
  'toStartOfHour',
  'toStartOfDay',
  'toStartOfWeek',
  'toStartOfMonth',
  'concat',
  'coalesce',
  'ifNull',
  'if',
  'match',
]);
/** Comparison functions and the operator each stands for (posthog/hogql/ast.py CompareOperationOp). */
const COMPARISONS: Record<string, string> = {
  equals: '==',
  notEquals: '!=',
  less: '<',
  greater: '>',
  lessOrEquals: '<=',
  greaterOrEquals: '>=',
  like: 'like',
  ilike: 'ilike',
  notLike: 'not like',
  notILike: 'not ilike',
  in: 'in',
  notIn: 'not in',
};
/** Names that ClickHouse also accepts in another case (SQL's own). */
const CASE_INSENSITIVE = new Set(['count', 'sum', 'avg', 'min', 'max', 'lower', 'upper', 'length', 'concat', 'coalesce', 'if']);

function nameOf(raw: string): string {
  return CASE_INSENSITIVE.has(raw.toLowerCase()) ? raw.toLowerCase() : raw;
}

function arity(scope: Scope, node: AstNode, name: string, args: readonly unknown[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    fail(scope, node, `${name}() takes ${want} argument${want === '1' ? '' : 's'}, not ${args.length}`);
  }
}

/** The common type of branches (if, coalesce, ifNull): numbers widen to Float, otherwise types must agree. */
function commonType(scope: Scope, node: AstNode, parts: readonly Compiled[]): HogType {
  const typed = parts.filter((p) => p.type !== 'Null');
  if (typed.length === 0) return 'Null';
  if (typed.every((p) => isNumeric(p.type)))
    return typed.some((p) => p.type === 'Float') ? 'Float' : typed.every((p) => p.type === 'Bool') ? 'Bool' : 'Int';
  if (typed.every((p) => isText(p.type))) return typed.every((p) => p.type === 'UUID') ? 'UUID' : 'String';
  if (typed.every((p) => isDateTime(p.type))) return typed.every((p) => p.type === 'DateTime') ? 'DateTime' : 'DateTime64';
  if (typed.every((p) => p.type === 'Date')) return 'Date';
  return typeFail(scope, node, `The branches have no common type (${typed.map((p) => p.type).join(', ')})`, 'no_common_type');
}

/** A branch as SQL of the common type. */
function branch(scope: Scope, c: Compiled, type: HogType): typeof c.sql {
  if (type === 'Float' && c.type !== 'Float' && c.type !== 'Null') return scope.dialect.toFloat(asValue(scope, c));
  if (type === 'Bool') return c.sql;
  return asValue(scope, c);
}

/** Compiles a `Call` node. Throws `HogQLError` for functions outside the subset or wrong arguments. */
export function compileCall(scope: Scope, node: AstNode, compileExpr: CompileExpr): Compiled {
  const d = scope.dialect;
  // counts as the store's Int where it cannot mix signed and unsigned integers (HogQLDialect.unsigned)
  const u = (count: Sql): Sql => (d.unsigned ? d.unsigned(count) : count);
  const name = nameOf(String(node.name));
  const argNodes = (node.args as AstNode[] | undefined) ?? [];
  if (node.params) return fail(scope, node, `Parametric functions (${name}(…)(…)) are not supported`);
  if (node.filter_expr || node.order_by) return fail(scope, node, `${name}() with FILTER or ORDER BY is not supported`);
  if (node.distinct && name !== 'count')
    return fail(scope, node, `${name}(DISTINCT …) is not supported (count(DISTINCT x), uniq(x) and uniqExact(x) are)`);

  if (AGGREGATES.has(name)) {
    if (!scope.aggAllowed)
      return fail(scope, node, `The aggregate ${name}() is not allowed here (WHERE and GROUP BY run before aggregation: use HAVING)`);
    if (scope.inAgg) return fail(scope, node, `Aggregates cannot be nested (${name}() inside another aggregate)`);
    const star =
      name === 'count' &&
      !node.distinct &&
      argNodes.length === 1 &&
      argNodes[0]!.node === 'Field' &&
      (argNodes[0]!.chain as unknown[]).join('.') === '*';
    if (star)
      return scope.bindAggregates
        ? make(u(sql`count(${rowColumn(scope)})`), 'UInt', false, 'count()', [], { agg: true, fields: [] })
        : make(u(sql`count(*)`), 'UInt', false, 'count()', [], { agg: true, fields: [], unbound: true });
    scope.inAgg = true;
    let args: Compiled[];
    try {
      args = argNodes.map((a) => compileExpr(scope, a));
    } finally {
      scope.inAgg = false;
    }
    const key = `${name}${node.distinct ? 'distinct' : ''}(${args.map((a) => a.key).join(',')})`;
    // an aggregate that reads no column (count(), sum(1)) is `unbound` (see Compiled.unbound); with
    // `bindAggregates` its value reads the row column instead (1 on every row: the same answer)
    const unbound = args.every((a) => a.fields.length === 0);
    const row = unbound && scope.bindAggregates ? rowColumn(scope) : undefined;
    const onRow = (v: Sql) => (row ? sql`(case when ${row} = 1 then ${v} end)` : v);
    const value = (a: Compiled) => onRow(asValue(scope, a));
    const agg = (sqlText: Sql, type: HogType, nullable: boolean) =>
      make(type === 'UInt' ? u(sqlText) : sqlText, type, nullable, key, [], {
        agg: true,
        fields: [],
        ...(unbound && !row ? { unbound } : {}),
        ...(args.some((a) => a.canFail) ? { canFail: true } : {}),
      });
    // an aggregate of NULL (PostgreSQL cannot type `sum(null)`): what ClickHouse answers, without SQL
    // (still an aggregate in the SQL: one row over the whole table, or one per group)
    if (args.length === 1 && args[0]!.type === 'Null' && name !== 'countIf') {
      const rows = row ? sql`count(${row})` : sql`count(*)`;
      if (name === 'count' || name === 'uniq' || name === 'uniqExact') return agg(sql`(${rows} * 0)`, 'UInt', false);
      if (name === 'sum') return agg(sql`(${rows} * 0)`, 'Int', false);
      return agg(sql`(case when ${rows} < 0 then 0 end)`, 'Null', true);
    }
    switch (name) {
      case 'count': {
        arity(scope, node, name, args, 0, 1);
        if (args.length === 0) return agg(row ? sql`count(${row})` : sql`count(*)`, 'UInt', false);
        // a stored time counts its keys: as many rows and distinct values as its texts
        const counted = args[0]!.timeKey ? onRow(args[0]!.timeKey()) : value(args[0]!);
        return agg(node.distinct ? sql`count(distinct ${counted})` : sql`count(${counted})`, 'UInt', false);
      }
      case 'countIf':
        arity(scope, node, name, args, 1);
        return agg(sql`count(case when ${asCondition(scope, args[0]!, argNodes[0])} then ${row ?? sql`1`} end)`, 'UInt', false);
      case 'uniq':
      case 'uniqExact': {
        arity(scope, node, name, args, 1);
        const counted = args[0]!.timeKey ? onRow(args[0]!.timeKey()) : value(args[0]!);
        return agg(d.uniq ? d.uniq(counted, name === 'uniqExact') : sql`count(distinct ${counted})`, 'UInt', false);
      }
      case 'sum':
      case 'avg': {
        arity(scope, node, name, args, 1);
        const a = args[0]!;
        if (!isNumeric(a.type) && a.type !== 'Null')
          return typeFail(scope, argNodes[0], `${name}() needs a number, not ${a.type} (properties are Strings: use toInt() or toFloat())`);
        if (name === 'avg') return agg(d.avg(value(a), a.type === 'Float'), 'Float', true);
        return agg(d.sum(value(a), a.type === 'Float'), a.type === 'Float' ? 'Float' : 'Int', false);
      }
      default: {
        arity(scope, node, name, args, 1);
        const a = args[0]!;
        if (a.type === 'JSON' || a.type === 'Interval') return fail(scope, argNodes[0], `${name}() of ${a.type} is not supported`);
        // a stored time: the least or greatest key, made text once
        if (a.timeKey) return agg(storedTime(scope).text(sql`${sql.raw(name)}(${onRow(a.timeKey())})`), a.type, true);
        const v = isNumeric(a.type) ? value(a) : d.text(onRow(a.sql));
        return agg(sql`${sql.raw(name)}(${v})`, a.type === 'Bool' ? 'Int' : a.type, true);
      }
    }
  }

  if (Object.hasOwn(INTERVALS, name)) {
    arity(scope, node, name, argNodes, 1);
    const a = argNodes[0]!;
    if (a.node !== 'Constant' || typeof a.value !== 'number' || !Number.isInteger(a.value) || Math.abs(a.value) > 100_000) {
      return fail(scope, a, `${name}() needs a constant integer (at most 100000)`);
    }
    const interval: Interval = { n: a.value, unit: INTERVALS[name]! };
    return make(sqlNull, 'Interval', false, `interval(${a.value},${interval.unit})`, [], { constant: { value: interval } });
  }

  if (name === 'now' || name === 'today') {
    arity(scope, node, name, argNodes, 0);
    const iso = scope.now.toISOString();
    const value = name === 'now' ? `${iso.slice(0, 23)}000Z` : iso.slice(0, 10);
    return make(d.str(value), name === 'now' ? 'DateTime' : 'Date', false, `${name}()`, [], { constant: { value } });
  }

  // the functional forms of the operators (`not(x)`, `and(a, b)`, `equals(a, b)`, …), as HogQL prints them
  if (name === 'not') {
    arity(scope, node, name, argNodes, 1);
    return compileExpr(scope, { node: 'Not', expr: argNodes[0], start: node.start, end: node.end });
  }
  if (name === 'and' || name === 'or') {
    arity(scope, node, name, argNodes, 2, 64);
    return compileExpr(scope, { node: name === 'and' ? 'And' : 'Or', exprs: argNodes, start: node.start, end: node.end });
  }
  if (Object.hasOwn(COMPARISONS, name)) {
    arity(scope, node, name, argNodes, 2);
    return compileExpr(scope, {
      node: 'CompareOperation',
      op: COMPARISONS[name],
      left: argNodes[0],
      right: argNodes[1],
      start: node.start,
      end: node.end,
    });
  }

  if (!SCALARS.has(name)) return fail(scope, node, `The function ${String(node.name)}() is not supported in this server's HogQL subset`);
  // a Float made text is bound in a subquery (./text-forms.ts): its aggregates must read a column
  const args = argNodes
    .map((a) => compileExpr(scope, a))
    .map((c, i) => ((name === 'toString' || name === 'concat') && c.type === 'Float' ? bindable(scope, c, argNodes[i], compileExpr) : c));
  const key = `${name}(${args.map((a) => a.key).join(',')})`;
  const one = (type: HogType, nullable: boolean, build: (a: Compiled) => typeof d.trueSql) => {
    arity(scope, node, name, args, 1);
    const a = args[0]!;
    if (a.type === 'Null') return make(sqlNull, 'Null', true, key, args);
    return make(build(a), type, nullable || a.nullable, key, args);
  };
  const needsText = (a: Compiled, at: AstNode | undefined) => {
    if (!isText(a.type)) typeFail(scope, at, `${name}() needs a String, not ${a.type}`);
    return a.sql;
  };
  const needsDate = (a: Compiled, at: AstNode | undefined) => {
    if (!isDateTime(a.type) && a.type !== 'Date' && !isText(a.type))
      typeFail(scope, at, `${name}() needs a DateTime or Date, not ${a.type}`);
    return asDateTime(scope, a, at);
  };
  switch (name) {
    case 'lower':
    case 'upper':
      // ASCII only, as ClickHouse's lower/upper: the byte-order collation keeps PostgreSQL's to ASCII
      return one('String', false, (a) => sql`${sql.raw(name)}(${d.text(needsText(a, argNodes[0]))})`);
    case 'length':
      return one('UInt', false, (a) => d.byteLength(needsText(a, argNodes[0])));
    case 'toString':
      return one('String', false, (a) => asText(scope, a, argNodes[0]));
    case 'toInt':
      return one('Int', true, (a) => {
        if (isText(a.type)) return d.textToInt(a.sql);
        if (a.type === 'Float') return d.floatToInt(a.sql);
        if (isNumeric(a.type)) return asValue(scope, a);
        return fail(scope, argNodes[0], `toInt() of ${a.type} is not supported`);
      });
    case 'toFloat':
      return one('Float', true, (a) => {
        if (isText(a.type)) return d.textToFloat(a.sql);
        if (isNumeric(a.type)) return d.toFloat(asValue(scope, a));
        return fail(scope, argNodes[0], `toFloat() of ${a.type} is not supported`);
      });
    case 'toDateTime':
      return one('DateTime', isText(args[0]?.type ?? 'Null') && !args[0]?.constant, (a) => needsDate(a, argNodes[0]));
    case 'toDate':
      if (args.length === 1 && args[0]!.timeKey) {
        const day = startOfStoredTime(scope, args[0]!, 'day', key, args);
        return make(d.text(sql`substr(${day.sql}, 1, 10)`), 'Date', day.nullable, key, args, { orderKey: day.timeKey! });
      }
      return one('Date', isText(args[0]?.type ?? 'Null') && !args[0]?.constant, (a) => {
        needsDate(a, argNodes[0]);
        return asDate(scope, a, argNodes[0]);
      });
    case 'toStartOfHour':
      if (args.length === 1 && args[0]!.timeKey) return startOfStoredTime(scope, args[0]!, 'hour', key, args);
      return one('DateTime', false, (a) => d.text(sql`(substr(${needsDate(a, argNodes[0])}, 1, 13) || ':00:00.000000Z')`));
    case 'toStartOfDay':
      if (args.length === 1 && args[0]!.timeKey) return startOfStoredTime(scope, args[0]!, 'day', key, args);
      return one('DateTime', false, (a) => d.text(sql`(substr(${needsDate(a, argNodes[0])}, 1, 10) || 'T00:00:00.000000Z')`));
    case 'toStartOfWeek':
      arity(scope, node, name, args, 1, 2);
      if (args.length === 2 && !(args[1]!.constant && args[1]!.constant.value === 0))
        return fail(scope, argNodes[1], 'toStartOfWeek() supports mode 0 only (weeks start on Sunday)');
      if (args[0]!.timeKey && d.timeKeyDates) return startOfTimeKeyDate(scope, args[0]!, 'week', key, args);
      return make(d.startOfWeek(needsDate(args[0]!, argNodes[0])), 'Date', args[0]!.nullable, key, args);
    case 'toStartOfMonth':
      if (args.length === 1 && args[0]!.timeKey && d.timeKeyDates) return startOfTimeKeyDate(scope, args[0]!, 'month', key, args);
      return one('Date', false, (a) => d.text(sql`(substr(${needsDate(a, argNodes[0])}, 1, 7) || '-01')`));
    case 'concat': {
      arity(scope, node, name, args, 2, 64);
      const parts = args.map((a, i) => sql`coalesce(${asText(scope, a, argNodes[i])}, '')`);
      return make(d.text(sql`(${sql.join(parts, sql` || `)})`), 'String', false, key, args);
    }
    case 'coalesce':
    case 'ifNull': {
      arity(scope, node, name, args, name === 'ifNull' ? 2 : 1, name === 'ifNull' ? 2 : 64);
      const type = commonType(scope, node, args);
      const parts = args.filter((a) => a.type !== 'Null').map((a) => branch(scope, a, type));
      if (parts.length === 0) return make(sqlNull, 'Null', true, key, args);
      if (parts.length === 1)
        return make(
          parts[0]!,
          type,
          args.every((a) => a.nullable),
          key,
          args,
        );
      return make(
        sql`coalesce(${sql.join(parts)})`,
        type,
        args.every((a) => a.nullable),
        key,
        args,
      );
    }
    case 'if': {
      arity(scope, node, name, args, 3);
      const [c, a, b] = args as [Compiled, Compiled, Compiled];
      const type = commonType(scope, node, [a, b]);
      const pick = (x: Compiled) => (x.type === 'Null' ? sqlNull : branch(scope, x, type));
      return make(
        sql`(case when ${asCondition(scope, c, argNodes[0])} then ${pick(a)} else ${pick(b)} end)`,
        type,
        a.nullable || b.nullable,
        key,
        args,
      );
    }
    case 'match': {
      arity(scope, node, name, args, 2);
      const p = argNodes[1]!;
      if (p.node !== 'Constant' || typeof p.value !== 'string') return fail(scope, p, 'match() needs a constant pattern');
      return regexCondition(scope, args[0]!, p.value, false, node, key, args);
    }
    default:
      return fail(scope, node, `The function ${String(node.name)}() is not supported in this server's HogQL subset`);
  }
}

/**
 * `toStartOfDay` / `toStartOfHour` of a stored time (`Compiled.timeKey`): the start as the store's
 * key (`StoredTime.startOf`, ../storage/events/index.ts), which the query groups and orders by,
 * and its text, which the store makes once per group rather than once per row.
 */
function startOfStoredTime(scope: Scope, a: Compiled, unit: 'day' | 'hour', key: string, args: Compiled[]): Compiled {
  const time = storedTime(scope);
  const start = () => time.startOf(a.timeKey!(), unit);
  return make(time.text(start()), 'DateTime', a.nullable, key, args, { timeKey: start });
}

/**
 * `toStartOfWeek` / `toStartOfMonth` of a stored time on a dialect that computes dates of its keys
 * (`HogQLDialect.timeKeyDates`): the date as the dialect's value, which the query groups and
 * orders by (`Compiled.orderKey`), and its text, made once per group.
 */
function startOfTimeKeyDate(scope: Scope, a: Compiled, unit: 'week' | 'month', key: string, args: Compiled[]): Compiled {
  const dates = scope.dialect.timeKeyDates!;
  const start = () => dates.startOf(a.timeKey!(), unit);
  return make(scope.dialect.text(dates.text(start())), 'Date', a.nullable, key, args, { orderKey: start });
}
