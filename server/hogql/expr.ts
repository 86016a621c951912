/**
 * The expression compiler: one node of PostHog's HogQL AST (`posthog/hogql/ast.py`) to SQL of the
 * store's dialect, with HogQL's rules (posthog/hogql/printer.py):
 * - comparisons are two-valued: `=`, `<`, `like`, `=~`, `in` are false when a side is NULL, `!=`,
 *   `not like`, `!~`, `not in` are true; `x = NULL` is `x IS NULL`;
 * - a String compared with a number is read as a number (NULL when it is not one); a DateTime
 *   compared with a String reads the String as a DateTime (constants at compile time, UTC);
 * - `like` is case-sensitive, `ilike` is not; `=~`/`match` are unanchored RE2 searches;
 * - `/` is float division (NULL when dividing by 0); DateTime ± interval moves the time.
 * Anything else is a `HogQLError` naming the construct and its position.
 */
import { sql } from 'kysely';
import { asCondition, asDate, asDateTime, asValue, condition, shiftTimestamp } from './coerce.js';
import type { Sql } from './dialect.js';
import { tableField } from './fields.js';
import { compileCall } from './functions.js';
import type { AstNode } from './parser.js';
import { likeToRegex, regexCondition } from './patterns.js';
import { bindable, constant, fail, make, sqlNull, storedTime, typeFail, type Scope } from './scope.js';
import { isDateTime, isNumeric, isText, type Compiled, type Interval } from './types.js';

/** Compiles one expression node. Throws `HogQLError` for anything outside the subset. */
export function compileExpr(scope: Scope, node: AstNode): Compiled {
  switch (node.node) {
    case 'Constant':
      if (node.value_type === 'number') return fail(scope, node, `The number ${String(node.value)} is out of range`);
      return constant(scope, node.value, node);
    case 'Field':
      return compileField(scope, node.chain as unknown[], node);
    case 'ArrayAccess':
      return compileArrayAccess(scope, node);
    case 'Alias':
      return compileExpr(scope, node.expr as AstNode);
    case 'And':
    case 'Or': {
      const parts = (node.exprs as AstNode[]).map((e) => compileExpr(scope, e));
      const conds = parts.map((p, i) => asCondition(scope, p, (node.exprs as AstNode[])[i]));
      const joined = sql.join(conds, node.node === 'And' ? sql` and ` : sql` or `);
      return condition(sql`(${joined})`, `${node.node}(${parts.map((p) => p.key).join(',')})`, parts);
    }
    case 'Not': {
      const inner = compileExpr(scope, node.expr as AstNode);
      return condition(sql`(not ${asCondition(scope, inner, node.expr as AstNode)})`, `not(${inner.key})`, [inner]);
    }
    case 'CompareOperation':
      return compileCompare(scope, node);
    case 'BetweenExpr': {
      const [x, lo, hi] = [node.expr, node.low, node.high].map((e) => compileExpr(scope, e as AstNode)) as [Compiled, Compiled, Compiled];
      const ge = compareValues(scope, '>=', x, lo, node);
      const le = compareValues(scope, '<=', x, hi, node);
      const both = condition(sql`(${ge.sql} and ${le.sql})`, `between(${x.key},${lo.key},${hi.key})`, [x, lo, hi]);
      return node.negated ? condition(sql`(not ${both.sql})`, `not(${both.key})`, [both]) : both;
    }
    case 'ArithmeticOperation':
      return compileArithmetic(scope, node);
    case 'Call':
      return compileCall(scope, node, compileExpr);
    default:
      return fail(scope, node, `${describe(node)} is not supported in this server's HogQL subset`);
  }
}

/** A human name for an AST node kind (`SelectQuery` → "A subquery"). */
export function describe(node: AstNode): string {
  const names: Record<string, string> = {
    SelectQuery: 'A subquery',
    SelectSetQuery: 'UNION',
    Lambda: 'A lambda',
    Array: 'An array',
    Tuple: 'A tuple',
    Dict: 'A dictionary',
    Placeholder: 'A placeholder',
    WindowFunction: 'A window function',
    TupleAccess: 'Tuple access',
    ArrayAccess: 'Array access',
    HogQLXTag: 'A HogQLX tag',
  };
  return names[node.node] ?? `The expression ${node.node}`;
}

function compileField(scope: Scope, rawChain: unknown[], node: AstNode): Compiled {
  if (!rawChain.every((p) => typeof p === 'string')) return fail(scope, node, 'Numeric field access is not supported');
  let chain = rawChain as string[];
  if (chain.length === 1 && scope.aliases.has(chain[0]!) && !scope.expanding.has(chain[0]!)) {
    const alias = chain[0]!;
    scope.expanding.add(alias);
    try {
      return compileExpr(scope, scope.aliases.get(alias)!);
    } finally {
      scope.expanding.delete(alias);
    }
  }
  if (chain.length > 1 && scope.tableNames.has(chain[0]!)) chain = chain.slice(1);
  if (chain.includes('*')) return fail(scope, node, '`*` is only allowed alone in the SELECT list');
  return tableField(scope, chain, node);
}

function compileArrayAccess(scope: Scope, node: AstNode): Compiled {
  const array = node.array as AstNode;
  const property = node.property as AstNode;
  if (array.node !== 'Field' || property.node !== 'Constant' || typeof property.value !== 'string') {
    return fail(scope, node, "Array access is only supported as properties['key'] or person.properties['key']");
  }
  let chain = array.chain as string[];
  if (chain.length > 1 && scope.tableNames.has(chain[0]!)) chain = chain.slice(1);
  const head = chain.join('.');
  if (head !== 'properties' && head !== 'person.properties')
    return fail(scope, node, "Array access is only supported as properties['key'] or person.properties['key']");
  return tableField(scope, [...chain, property.value], node);
}

type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** `l op r` with HogQL's coercions and two-valued NULL rule. */
export function compareValues(scope: Scope, op: CompareOp | '>=' | '<=', l: Compiled, r: Compiled, node: AstNode): Compiled {
  const d = scope.dialect;
  const key = `cmp${op}(${l.key},${r.key})`;
  if (l.type === 'Null' || r.type === 'Null') {
    const other = l.type === 'Null' ? r : l;
    if (op === '==') return condition(other.type === 'Null' ? d.trueSql : sql`(${asValue(scope, other)} is null)`, key, [l, r]);
    if (op === '!=') return condition(other.type === 'Null' ? d.falseSql : sql`(${asValue(scope, other)} is not null)`, key, [l, r]);
    return condition(d.falseSql, key, [l, r]);
  }
  // a column stored in another form, compared with a constant that has that form: the stored column
  if (op === '==' || op === '!=') {
    const stored =
      l.storedEquals && typeof r.constant?.value === 'string'
        ? l.storedEquals(r.constant.value)
        : r.storedEquals && typeof l.constant?.value === 'string'
          ? r.storedEquals(l.constant.value)
          : undefined;
    if (stored) return condition(op === '==' ? stored : sql`(not ${stored})`, key, [l, r]);
  }
  const times = compareTimes(scope, op, l, r, node, key);
  if (times) return times;
  // in WHERE, a property compared with a constant its materialized column writes alike reads the
  // column (the same rows; the column's index can serve them)
  if ((op === '==' || op === '!=') && scope.inWhere) {
    let column: Compiled | undefined;
    if (l.materialized && columnWritesAlike(r)) column = l = { ...l.materialized(), key: l.key };
    else if (r.materialized && columnWritesAlike(l)) column = r = { ...r.materialized(), key: r.key };
    // NULL only where the column is: said without coalesce(), which would hide the column from its index
    if (column) {
      const raw = sql`(${l.sql} ${sql.raw(op === '==' ? '=' : '<>')} ${r.sql})`;
      return condition(op === '==' ? sql`(${raw} and ${column.sql} is not null)` : sql`(${raw} or ${column.sql} is null)`, key, [l, r]);
    }
  }
  let [a, b] = comparable(scope, l, r, node);
  const numeric = isNumeric(l.type) || isNumeric(r.type);
  // text ordered byte by byte (ClickHouse's order), whatever the database's collation
  if (!numeric && op !== '==' && op !== '!=') [a, b] = [d.text(a), d.text(b)];
  const sqlOp = sql.raw(op === '==' ? '=' : op === '!=' ? '<>' : op);
  const raw = sql`(${a} ${sqlOp} ${b})`;
  // a conversion that may give NULL: text read as a number, or non-constant text read as a date
  const converts = (x: Compiled, y: Compiled) =>
    isText(x.type) && (isNumeric(y.type) || ((isDateTime(y.type) || y.type === 'Date') && !x.constant));
  const nullable = l.nullable || r.nullable || converts(l, r) || converts(r, l);
  if (!nullable) return condition(raw, key, [l, r]);
  return condition(sql`coalesce(${raw}, ${op === '!=' ? d.trueSql : d.falseSql})`, key, [l, r]);
}

/**
 * `l op r` when a side is a stored time (`Compiled.timeKey`) and the other a date, a DateTime or
 * text read as one: both sides as the store's time keys, the other side converted from its
 * DateTime text (`asDateTime`, then `StoredTime.fromText`, ../storage/events/index.ts, which a
 * store evaluates once for a constant), so the comparison is the one the text gives and
 * `events.timestamp`'s indexes serve it. Undefined otherwise.
 */
function compareTimes(scope: Scope, op: CompareOp, l: Compiled, r: Compiled, node: AstNode, key: string): Compiled | undefined {
  const dateLike = (c: Compiled) => isDateTime(c.type) || c.type === 'Date' || isText(c.type);
  if (!(l.timeKey && dateLike(r)) && !(r.timeKey && dateLike(l))) return undefined;
  const time = storedTime(scope);
  const keyOf = (c: Compiled) => c.timeKey?.() ?? time.fromText(asDateTime(scope, c, node));
  const raw = sql`(${keyOf(l)} ${sql.raw(op === '==' ? '=' : op === '!=' ? '<>' : op)} ${keyOf(r)})`;
  // non-constant text read as a date may be NULL, as in `compareValues`
  const nullable = l.nullable || r.nullable || (isText(l.type) && !l.constant) || (isText(r.type) && !r.constant);
  return condition(nullable ? sql`coalesce(${raw}, ${op === '!=' ? scope.dialect.trueSql : scope.dialect.falseSql})` : raw, key, [l, r]);
}

/**
 * Whether `c` is a String constant that a materialized column writes as HogQL does (see
 * `Compiled.materialized`): not empty and not `null` (ClickHouse's column reads NULL for both),
 * without a quote, a backslash or a control character (ClickHouse's column keeps the JSON escapes
 * of those), and not beginning as a number, an object or an array does.
 */
function columnWritesAlike(c: Compiled): boolean {
  const v = c.constant?.value;
  // eslint-disable-next-line no-control-regex -- the characters JSON escapes
  return c.type === 'String' && typeof v === 'string' && v !== '' && v !== 'null' && !/^[-+.0-9{[]|["\\\u0000-\u001f]/.test(v);
}

/** The two sides of a comparison in one comparable SQL type. */
function comparable(scope: Scope, l: Compiled, r: Compiled, node: AstNode): [Sql, Sql] {
  const d = scope.dialect;
  if (isNumeric(l.type) && isNumeric(r.type)) return [asValue(scope, l), asValue(scope, r)];
  if (isText(l.type) && isText(r.type)) return [l.sql, r.sql];
  if (isText(l.type) && isNumeric(r.type)) return [d.textToFloat(l.sql), asValue(scope, r)];
  if (isNumeric(l.type) && isText(r.type)) return [asValue(scope, l), d.textToFloat(r.sql)];
  const dates = (c: Compiled) => isDateTime(c.type) || c.type === 'Date';
  if (l.type === 'Date' && r.type === 'Date') return [l.sql, r.sql];
  if (l.type === 'Date' && isText(r.type)) return [l.sql, asDate(scope, r, node)];
  if (isText(l.type) && r.type === 'Date') return [asDate(scope, l, node), r.sql];
  if ((dates(l) && (dates(r) || isText(r.type))) || (isText(l.type) && dates(r)))
    return [asDateTime(scope, l, node), asDateTime(scope, r, node)];
  return fail(scope, node, `Cannot compare ${l.type} with ${r.type}`);
}

function constantStringOf(scope: Scope, node: AstNode, what: string): string {
  if (node.node !== 'Constant' || typeof node.value !== 'string') return fail(scope, node, `${what} must be a constant string`);
  return node.value;
}

function compileCompare(scope: Scope, node: AstNode): Compiled {
  const op = node.op as string;
  const left = node.left as AstNode;
  const right = node.right as AstNode;
  const l = compileExpr(scope, left);
  switch (op) {
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compareValues(scope, op, l, compileExpr(scope, right), node);
    case 'like':
    case 'ilike':
    case 'not like':
    case 'not ilike': {
      const pattern = constantStringOf(scope, right, 'A LIKE pattern');
      return regexCondition(
        scope,
        l,
        `(?s)${likeToRegex(pattern)}`,
        op.startsWith('not'),
        node,
        `${op}(${l.key},${JSON.stringify(pattern)})`,
        [l],
        op.endsWith('ilike'),
      );
    }
    case '=~':
    case '!~':
    case '=~*':
    case '!~*': {
      const pattern = constantStringOf(scope, right, 'A regular expression');
      return regexCondition(
        scope,
        l,
        pattern,
        op.startsWith('!'),
        node,
        `${op}(${l.key},${JSON.stringify(pattern)})`,
        [l],
        op.endsWith('*'),
      );
    }
    case 'in':
    case 'not in':
      return compileIn(scope, l, right, op === 'not in', node);
    default:
      return fail(scope, node, `The operator ${op} is not supported`);
  }
}

function compileIn(scope: Scope, l: Compiled, right: AstNode, negated: boolean, node: AstNode): Compiled {
  const d = scope.dialect;
  const items =
    right.node === 'Tuple' || right.node === 'Array' ? (right.exprs as AstNode[]) : right.node === 'Constant' ? [right] : undefined;
  if (!items) return fail(scope, right, 'IN needs a list of constants: x IN (1, 2, 3)');
  const values = items.map((item) => {
    if (item.node !== 'Constant') return fail(scope, item, 'IN needs a list of constants');
    return compileExpr(scope, item);
  });
  const key = `${negated ? 'notin' : 'in'}(${l.key},${values.map((v) => v.key).join(',')})`;
  const present = values.filter((v) => v.type !== 'Null');
  if (present.length === 0 || l.type === 'Null') return condition(negated ? d.trueSql : d.falseSql, key, [l]);
  // one comparison per value, as `=`/`!=` compare (each value may coerce differently)
  const each = present.map((v) => compareValues(scope, negated ? '!=' : '==', l, v, node).sql);
  return condition(sql`(${sql.join(each, negated ? sql` and ` : sql` or `)})`, key, [l, ...values]);
}

function intervalOf(c: Compiled): Interval | undefined {
  const v = c.constant?.value;
  return c.type === 'Interval' && v !== null && typeof v === 'object' ? v : undefined;
}

function compileArithmetic(scope: Scope, node: AstNode): Compiled {
  const d = scope.dialect;
  const op = node.op as string;
  const l = compileExpr(scope, node.left as AstNode);
  const r = compileExpr(scope, node.right as AstNode);
  const key = `arith${op}(${l.key},${r.key})`;
  const nullable = l.nullable || r.nullable;
  const li = intervalOf(l);
  const ri = intervalOf(r);
  if ((op === '+' || op === '-') && ri && (isDateTime(l.type) || l.type === 'Date')) {
    const sign = op === '+' ? 1 : -1;
    const isDate = l.type === 'Date' && ['day', 'week', 'month', 'quarter', 'year'].includes(ri.unit);
    if (typeof l.constant?.value === 'string') {
      const base = l.type === 'Date' ? `${l.constant.value}T00:00:00.000000Z` : l.constant.value;
      const moved = shiftTimestamp(base, ri, sign);
      const type = isDate ? 'Date' : l.type === 'Date' ? 'DateTime' : l.type;
      // outside the years 0001–9999: NULL, as the stores answer for a value of a row
      if (!/^[0-9]{4}-/.test(moved) || moved < '0001') return make(sqlNull, type, true, key, [l, r]);
      const value = isDate ? moved.slice(0, 10) : moved;
      return make(d.str(value), type, false, key, [l, r], { constant: { value } });
    }
    if (isDate) return make(d.addInterval(l.sql, ri, sign, true), 'Date', nullable, key, [l, r]);
    return make(d.addInterval(asDateTime(scope, l, node), ri, sign, false), l.type === 'Date' ? 'DateTime' : l.type, nullable, key, [l, r]);
  }
  if (op === '+' && li && (isDateTime(r.type) || r.type === 'Date')) {
    return compileArithmetic(scope, { ...node, left: node.right, right: node.left });
  }
  if (l.type === 'Null' || r.type === 'Null') return make(sqlNull, 'Null', true, key, [l, r]);
  if (!isNumeric(l.type) || !isNumeric(r.type)) {
    return typeFail(
      scope,
      node,
      `Arithmetic (${op}) needs numbers, not ${l.type} and ${r.type} (properties are Strings: cast them with toInt() or toFloat())`,
    );
  }
  const a = asValue(scope, l);
  const b = asValue(scope, r);
  const float = l.type === 'Float' || r.type === 'Float';
  // a Float result beyond the doubles fails on both stores (400, ./run.ts), as PostgreSQL's float8
  // arithmetic fails; SQLite binds the operands in a subquery (see `bindable`)
  const checkedFloat = (arith: '+' | '-' | '*' | '/') => {
    const [bl, br] = d.bindsChecked
      ? [bindable(scope, l, node.left as AstNode, compileExpr), bindable(scope, r, node.right as AstNode, compileExpr)]
      : [l, r];
    return make(d.checkFloat(arith, asValue(scope, bl), asValue(scope, br)), 'Float', arith === '/' || nullable, key, [bl, br], {
      canFail: true,
    });
  };
  switch (op) {
    case '+':
    case '-':
    case '*': {
      if (float) return checkedFloat(op);
      // Int64 overflow fails on both stores (400, ./run.ts), checked once per tree of + - *:
      // SQLite keeps an overflowed value as a REAL through the tree, so its root is what is checked
      // (SQLite binds the value in a subquery: its aggregates must read a column, see `bindable`)
      // a store whose arithmetic checks each operation itself (ClickHouse: HogQLDialect.intOp)
      if (d.intOp) return make(d.intOp(op, a, b), 'Int', nullable, key, [l, r], { canFail: true });
      const bind = (c: Compiled, at: unknown) => (d.bindsChecked ? bindable(scope, c, at as AstNode, compileExpr) : c);
      const [bl, br] = [bind(l, node.left), bind(r, node.right)];
      const raw = sql`(${bl.unchecked ?? asValue(scope, bl)} ${sql.raw(op)} ${br.unchecked ?? asValue(scope, br)})`;
      return make(d.checkInt(raw), 'Int', nullable, key, [bl, br], { unchecked: raw, canFail: true });
    }
    case '/':
      // Int / Int stays within the doubles
      return float ? checkedFloat('/') : make(d.divide(a, b), 'Float', true, key, [l, r]);
    case '%':
      if (float) return fail(scope, node, 'The modulo (%) needs integers: use toInt()');
      return make(d.modulo(a, b), 'Int', true, key, [l, r]);
    default:
      return fail(scope, node, `The operator ${op} is not supported`);
  }
}
