/**
 * PostHog's MCP tools endpoint (`POST /api/environments/{project_id}/mcp_tools/<tool>/`,
 * ee/hogai's `MCPToolsViewSet.invoke_tool`): the tool answers and failures as PostHog words them,
 * and the tool `execute_sql`. `read_taxonomy` is in ./taxonomy.ts.
 *
 * - A tool's answer is `{success: true, content}` (`McpToolResult`), `content` its text.
 * - A tool that fails answers 200 `{success: false, content, error}` (`mcpFailure`, PostHog's
 *   `_failure_response`): `content` is "Tool `<name>` failed (<category>): <cause>. <retry
 *   guidance> Correlation ID: <32 hex>." and `error` is `{category, retry, tool, correlation_id}`.
 * - `execute_sql` runs one HogQL SELECT as a `HogQLQuery` through the events reads (the same
 *   `QueryService` as `POST …/query/`) and writes the rows as PostHog's SQL formatter for
 *   language models does (ee/hogai/context/insight/format/sql.py `SQLResultsFormatter`, MCP mode):
 *   header of column names joined with `|`, one line per row, null as `(null)`, JSON-like cells
 *   over 500 characters cut when `truncate` is on.
 * No HTTP here; an error that is not the query's (busy, store failure) is thrown as it came.
 */
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/api.js';
import type { Team } from '../storage/repositories/accounts.js';
import { ApiError } from './errors.js';
import type { EventsReads } from './events-reads.js';

/** A tool's answer (schema `McpToolResult`). */
export type McpToolResult = components['schemas']['McpToolResult'];
/** Why a tool failed (schema `McpToolError`). */
export type McpToolError = components['schemas']['McpToolError'];
/** The arguments of `execute_sql` (schema `McpExecuteSqlArgs`). */
export type ExecuteSqlArgs = components['schemas']['McpExecuteSqlArgs'];

/** PostHog's retry guidance sentences, by verdict (`_RETRY_GUIDANCE`). */
const RETRY_GUIDANCE: Record<McpToolError['retry'], string> = {
  never: 'Retrying with the same input will not help.',
  once: 'Retrying once with the same input is safe.',
  adjusted: 'Retrying is safe once you adjust the input.',
};

/** The longest cause kept, characters (PostHog's `_max_tool_error_cause`, then `…`). */
const MAX_CAUSE = 500;

/**
 * A failed tool call as PostHog answers it: `cause` cut to 500 characters (then `…`) and
 * followed by `.`, as PostHog's `_max_tool_error_cause` does (so a cause that ends with a period
 * gets a second one, as in PostHog); a fresh correlation id (32 hex digits).
 */
export function mcpFailure(tool: string, category: McpToolError['category'], retry: McpToolError['retry'], cause: string): McpToolResult {
  let text = cause.trim();
  if (text.length > MAX_CAUSE) text = `${text.slice(0, MAX_CAUSE)}…`;
  const correlationId = randomBytes(16).toString('hex');
  return {
    success: false,
    content: `Tool \`${tool}\` failed (${category}): ${text}. ${RETRY_GUIDANCE[retry]} Correlation ID: ${correlationId}.`,
    error: { category, retry, tool, correlation_id: correlationId },
  };
}

/** PostHog's marker of a null cell (`NULL_MARKER`). */
export const NULL_MARKER = '(null)';
/** What follows a cut cell (`TRUNCATED_MARKER`). */
export const TRUNCATED_MARKER = '...truncated';
/** The longest JSON-like cell kept whole with `truncate` (`MAX_CELL_LENGTH`). */
export const MAX_CELL_LENGTH = 500;

/**
 * One cell as PostHog's formatter writes it: null `(null)`, a text equal to `(null)` quoted,
 * booleans `True`/`False` (Python's `str`), numbers and texts as they are, objects and arrays as
 * JSON (PostHog: Python's repr). With `truncate`, a JSON-like cell (object, array, or text that
 * starts with `{` or `[`) over 500 characters becomes its first 500 and `...truncated`.
 */
export function formatSqlCell(cell: unknown, truncate: boolean): string {
  if (cell === null || cell === undefined) return NULL_MARKER;
  let text: string;
  if (typeof cell === 'boolean') text = cell ? 'True' : 'False';
  else if (typeof cell === 'object') text = JSON.stringify(cell);
  else text = String(cell as string | number | bigint);
  if (text === NULL_MARKER) return `"${NULL_MARKER}"`;
  const jsonLike = typeof cell === 'object' || (typeof cell === 'string' && (text.startsWith('{') || text.startsWith('[')));
  if (truncate && jsonLike && text.length > MAX_CELL_LENGTH) return text.slice(0, MAX_CELL_LENGTH) + TRUNCATED_MARKER;
  return text;
}

/** The rows as PostHog's SQL formatter writes them: the header line, then one line per row (`\n`-joined, no final newline). */
export function formatSqlResults(columns: readonly string[], rows: readonly unknown[][], truncate: boolean): string {
  const lines = [columns.join('|')];
  for (const row of rows) lines.push(row.map((cell) => formatSqlCell(cell, truncate)).join('|'));
  return lines.join('\n');
}

/**
 * `execute_sql`: runs `args.query` for `team` as a `HogQLQuery` and answers its rows as text.
 * A query refused (400: syntax, subset) answers the failure `invalid_input`/`adjusted` with cause
 * "Query validation failed: <detail>"; one past its time budget (504) `transient`/`once`; a
 * `connectionId` (no warehouse connections here) `invalid_input`/`never`. Other errors are thrown.
 */
export async function executeSql(events: EventsReads, team: Team, args: ExecuteSqlArgs): Promise<McpToolResult> {
  const tool = 'execute_sql';
  if (args.connectionId !== undefined)
    return mcpFailure(tool, 'invalid_input', 'never', `No data warehouse connection ${args.connectionId} exists in this project`);
  let answer;
  try {
    answer = await events.query(team, { kind: 'HogQLQuery', query: args.query });
  } catch (err) {
    if (err instanceof ApiError && err.status === 400)
      return mcpFailure(tool, 'invalid_input', 'adjusted', `Query validation failed: ${err.body.detail}`);
    if (err instanceof ApiError && err.status === 504) return mcpFailure(tool, 'transient', 'once', err.body.detail);
    throw err;
  }
  if (!('columns' in answer) || !Array.isArray(answer.results)) throw new Error('a HogQLQuery answered no rows');
  return { success: true, content: formatSqlResults(answer.columns, answer.results as unknown[][], args.truncate ?? true) };
}
