/**
 * PostHog's trends formulas (posthog/hogql_queries/utils/formula_ast.py): an arithmetic
 * expression over the series, `A` the first series' bucket values, `B` the second's, and so on
 * (either case), evaluated bucket by bucket. Operators `+ - * / %`, unary minus, numbers and
 * parentheses; a division or modulo by 0 gives 0, as PostHog's does. The text is read by PostHog's
 * own HogQL expression parser (../hogql/parser.ts), whose grammar holds this arithmetic.
 */
import { HogQLError, parseExpr, type AstNode } from '../hogql/index.js';
import { InsightQueryError } from './errors.js';

/** A formula ready to evaluate over series arrays. */
export type Formula = (series: readonly (readonly number[])[], index: number) => number;

/**
 * Compiles `text` for `seriesCount` series. Throws `InsightQueryError` (attr `attr`) for text that
 * does not parse, a letter past the series, or anything but arithmetic.
 */
export async function compileFormula(text: string, seriesCount: number, attr: string): Promise<Formula> {
  let ast: AstNode;
  try {
    ast = await parseExpr(text, attr);
  } catch (err) {
    if (err instanceof HogQLError) throw new InsightQueryError(`Formula "${text}" cannot be read: ${err.message}`, attr);
    throw err;
  }
  const bad = (what: string): never => {
    throw new InsightQueryError(`Formula "${text}": ${what}. A formula combines the series A, B, … with + - * / % and numbers.`, attr);
  };
  const build = (node: AstNode): Formula => {
    switch (node.node) {
      case 'Constant': {
        const value = node.value;
        if (typeof value !== 'number') bad(`${JSON.stringify(value)} is not a number`);
        return () => value as number;
      }
      case 'Field': {
        const chain = node.chain as unknown[];
        const name = chain.length === 1 && typeof chain[0] === 'string' ? chain[0].toUpperCase() : '';
        if (!/^[A-Z]$/.test(name)) bad(`${chain.join('.')} names no series`);
        const at = name.charCodeAt(0) - 65;
        if (at >= seriesCount) bad(`${name} names no series (the query has ${seriesCount})`);
        return (series, i) => series[at]![i] ?? 0;
      }
      case 'ArithmeticOperation': {
        const left = build(node.left as AstNode);
        const right = build(node.right as AstNode);
        switch (node.op) {
          case '+':
            return (s, i) => left(s, i) + right(s, i);
          case '-':
            return (s, i) => left(s, i) - right(s, i);
          case '*':
            return (s, i) => left(s, i) * right(s, i);
          case '/':
            return (s, i) => {
              const d = right(s, i);
              return d === 0 ? 0 : left(s, i) / d;
            };
          case '%':
            return (s, i) => {
              const d = right(s, i);
              return d === 0 ? 0 : left(s, i) % d;
            };
          default:
            return bad(`the operator ${String(node.op)} is not supported`);
        }
      }
      default:
        return bad(`${String(node.node)} is not supported`);
    }
  };
  return build(ast);
}
