/**
 * PostHog's HogQLMetadata (posthog/hogql/metadata.py): whether a HogQL text is valid, without
 * running it, for editors. `hogQL` compiles the text as a SELECT; `hogQLExpr` compiles it as the one
 * column of `SELECT <expr> FROM <table>`, the table being `sourceQuery`'s (a HogQLQuery; `events`
 * without one). The answer is `{query, isValid, errors, warnings, notices, table_names}`: on a
 * refusal one error, the compiler's detail with the offset where it stopped (`start`, `end`), as
 * PostHog reports an exposed HogQL error; `table_names` are the tables the SELECT reads. Never
 * throws for the text (an invalid one is `isValid: false`).
 */
import type { EventsTable } from '../storage/events/index.js';
import { HogQLError } from './errors.js';
import type { HogQLDialect } from './dialect.js';
import { parseExpr, parseSelect, type AstNode } from './parser.js';
import { compileSelect } from './select.js';

/** What an expression is wrapped in to compile it as a column. */
const PREFIX = 'SELECT ';

/** One error, warning or notice (PostHog's HogQLNotice). */
export interface HogQLNotice {
  message: string;
  start: number | null;
  end: number | null;
  fix: string | null;
}

/** The answer (PostHog's HogQLMetadataResponse). */
export interface HogQLMetadataAnswer {
  query: string;
  isValid: boolean;
  errors: HogQLNotice[];
  warnings: HogQLNotice[];
  notices: HogQLNotice[];
  table_names: string[];
}

/** The names of the tables a SELECT reads (its FROM and JOIN fields), in order, once each. */
function tableNames(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const n of node) tableNames(n, out);
  } else if (node !== null && typeof node === 'object') {
    const n = node as AstNode;
    if (n.node === 'JoinExpr') {
      const table = n.table as AstNode | undefined;
      if (table?.node === 'Field' && Array.isArray(table.chain)) {
        const name = table.chain.join('.');
        if (!out.includes(name)) out.push(name);
      }
    }
    for (const v of Object.values(n)) if (v !== null && typeof v === 'object') tableNames(v, out);
  }
  return out;
}

/**
 * Checks `text` (module doc) for one team on the store whose events table is `events` (in `dialect`, its store's). `now` is
 * `now()`. Throws only what is not the text's fault (the parser failing to load).
 */
export async function checkHogQL(
  dialect: HogQLDialect,
  events: EventsTable,
  teamId: number,
  language: 'hogQL' | 'hogQLExpr',
  text: string,
  now: Date,
  sourceQuery?: string,
): Promise<HogQLMetadataAnswer> {
  const answer: HogQLMetadataAnswer = { query: text, isValid: true, errors: [], warnings: [], notices: [], table_names: [] };
  try {
    if (language === 'hogQL') {
      const ast = await parseSelect(text, 'query');
      answer.table_names = tableNames(ast);
      compileSelect(ast, { dialect, events, teamId, source: text, attr: 'query', now });
    } else {
      await parseExpr(text, 'query');
      const table = sourceQuery !== undefined ? (tableNames(await parseSelect(sourceQuery, 'query'))[0] ?? 'events') : 'events';
      const wrapped = `${PREFIX}${text} FROM ${table}`;
      const ast = await parseSelect(wrapped, 'query');
      compileSelect(ast, { dialect, events, teamId, source: wrapped, attr: 'query', now });
    }
  } catch (err) {
    if (!(err instanceof HogQLError)) throw err;
    // an expression's offsets are counted in the text the user wrote, not in the SELECT around it
    const shift = err.offset !== undefined && err.source !== text ? PREFIX.length : 0;
    const at = err.offset === undefined ? null : Math.max(0, err.offset - shift);
    // PostHog's rewording of the parser's message for a text that stops too soon
    const message = /mismatched input '<EOF>' expecting/.test(err.detail) ? 'Unexpected end of query' : err.detail;
    answer.isValid = false;
    answer.errors.push({ message, start: at, end: at, fix: null });
  }
  return answer;
}
