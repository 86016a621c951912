/**
 * Positional arguments: an integer literal that is a whole GROUP BY or ORDER BY item names a column
 * of the SELECT list, 1 for the first (`order by 2 desc`), -1 for the last. PostHog runs HogQL with
 * ClickHouse's `enable_positional_arguments` (on by default since ClickHouse 22.7; negative
 * positions since 23.12), and its printer writes an integer constant into the SQL as it is
 * (posthog/hogql/printer.py `visit_constant`), so ClickHouse reads it as a position. This
 * compiler binds every value as a parameter instead (./dialect.ts), and SQL reads a parameter as
 * a constant that orders or groups nothing: so ./select.ts and ./events-query.ts replace each
 * such item by the column's own expression before compiling it.
 *
 * What is a position, as ClickHouse reads it: only an integer literal (`2`, `-1`, `0x2`, `(2)`),
 * not a float (`2.0`, `2e0`) nor an expression (`1 + 1`, `toInt64(2)`), which stay constants.
 * Out of range (0, or past the columns either way) is ClickHouse's BAD_ARGUMENTS, which PostHog
 * answers as a 400 `validation_error` with code `bad_arguments` (posthog/errors.py, code 36,
 * user-safe); GROUP BY the position of an aggregate is ILLEGAL_AGGREGATION (`illegal_aggregation`,
 * 184), as ClickHouse refuses it.
 */
import { HogQLError } from './errors.js';
import type { AstNode } from './parser.js';

/** An integer literal's text: decimal or hexadecimal digits, with a sign (parentheses are not in the node's text). */
const INTEGER_LITERAL = /^[-+]?\s*(?:0x[0-9a-f]+|[0-9]+)$/i;

/**
 * The value of `node` when it is an integer literal of `source` (so a position where a whole
 * GROUP BY or ORDER BY item is one), else undefined. A node without a position in `source` (one
 * the server built) is no literal: the parser's JSON writes `2.0` as `2`, so only the text tells
 * an integer from a float.
 */
export function integerLiteral(node: AstNode, source: string): number | undefined {
  if (node.node !== 'Constant' || typeof node.value !== 'number' || !Number.isInteger(node.value)) return undefined;
  if (!node.start || !node.end) return undefined;
  return INTEGER_LITERAL.test(source.slice(node.start.offset, node.end.offset).trim()) ? node.value : undefined;
}

/**
 * The 0-based index in a SELECT list of `columns` columns that `node` (a whole GROUP BY or ORDER
 * BY item of `source`) names by position, or undefined when it is no integer literal. Throws a
 * `HogQLError` (code `bad_arguments`, attr `attr`, located at the literal) with ClickHouse's
 * message and the clause (`clause`: `ORDER BY`, `GROUP BY`, `orderBy`) when the position is out of
 * range: "Positional argument number 5 is out of bounds in ORDER BY. Expected in range [1, 2]"
 * (0 included), or for a negative one "Negative positional argument number -3 is out of bounds in
 * ORDER BY. Expected in range [-2, -1]".
 */
export function positionalIndex(node: AstNode, source: string, attr: string | null, columns: number, clause: string): number | undefined {
  const p = integerLiteral(node, source);
  if (p === undefined) return undefined;
  if (p >= 1 && p <= columns) return p - 1;
  if (p < 0 && p >= -columns) return columns + p;
  const message =
    p < 0
      ? `Negative positional argument number ${p} is out of bounds in ${clause}. Expected in range [${-columns}, -1]`
      : `Positional argument number ${p} is out of bounds in ${clause}. Expected in range [1, ${columns}]`;
  throw new HogQLError(message, source, node.start?.offset, attr, 'invalid', 'bad_arguments');
}

/**
 * The error for GROUP BY the position of an aggregate column (`group by 2` of `select event,
 * count()`), as ClickHouse's ILLEGAL_AGGREGATION: code `illegal_aggregation`, located at the literal.
 */
export function aggregateInGroupBy(node: AstNode, source: string, attr: string | null, column: string): HogQLError {
  return new HogQLError(
    `Aggregate function ${column} is found in GROUP BY (position ${String(node.value)})`,
    source,
    node.start?.offset,
    attr,
    'invalid',
    'illegal_aggregation',
  );
}
