/**
 * Pattern matching, for the operators (`like`, `ilike`, `=~`, `!~`, `=~*`, `!~*`: ./expr.ts) and
 * the function (`match()`: ./functions.ts) alike. Every pattern is an RE2 pattern on the SQL side
 * (ClickHouse's `match()` is RE2, posthog/hogql/functions/mapping.py): a LIKE pattern is turned
 * into an anchored one (`likeToRegex`), and a pattern RE2 refuses is a `HogQLError` at compile
 * time, so both stores accept exactly the patterns PostHog does.
 */
import { sql } from 'kysely';
import { re2Error } from '../storage/dialect.js';
import { condition } from './coerce.js';
import type { AstNode } from './parser.js';
import { fail, typeFail, type Scope } from './scope.js';
import { isText, type Compiled } from './types.js';

/** RE2 pattern equivalent of a LIKE pattern (`%`, `_`, backslash escapes), anchored. */
export function likeToRegex(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) out += escapeRegex(pattern[++i]!);
    else if (c === '%') out += '.*';
    else if (c === '_') out += '.';
    else out += escapeRegex(c);
  }
  return `^${out}$`;
}

/** `c` escaped for an RE2 pattern when it is one of its metacharacters. */
function escapeRegex(c: string): string {
  return /[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c;
}

/** `text` matches `pattern` (RE2-checked), NULL-safe: false for NULL, or true when `negated`. */
export function regexCondition(
  scope: Scope,
  text: Compiled,
  pattern: string,
  negated: boolean,
  node: AstNode,
  key: string,
  parts: Compiled[],
  ignoreCase = false,
): Compiled {
  const d = scope.dialect;
  const problem = re2Error(ignoreCase ? `(?i)${pattern}` : pattern);
  if (problem !== undefined) return fail(scope, node, `Invalid regular expression: ${problem}`);
  if (text.type === 'Null') return condition(negated ? d.trueSql : d.falseSql, key, parts);
  if (!isText(text.type)) return typeFail(scope, node, `Pattern matching needs a String, not ${text.type}`);
  const match = d.regexMatch(text.sql, pattern, ignoreCase);
  const raw = negated ? sql`(not ${match})` : match;
  return condition(text.nullable ? sql`coalesce(${raw}, ${negated ? d.trueSql : d.falseSql})` : raw, key, parts);
}
