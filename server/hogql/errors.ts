/**
 * HogQL's error: a query outside the subset this server runs, or one the parser refuses. It is a
 * domain error (`ApiError`, 400 `validation_error`, code `invalid_input`, `attr` the request field
 * that held the query), so http/ answers it in PostHog's shape; the detail names the construct and
 * where it is (line and column, both 1-based, counted in characters of the query text).
 */
import { ApiError } from '../domain/errors.js';

/** Where a node of PostHog's AST starts (`start`), as the parser reports it. */
export interface AstPosition {
  line: number;
  column: number;
  offset: number;
}

/** A HogQL query this server refuses (400). `line`/`column` are 1-based, or undefined when unknown. */
export class HogQLError extends ApiError {
  readonly line: number | undefined;
  readonly column: number | undefined;

  /**
   * `message` says what is wrong; `at` (a character offset into `source`) adds " (line L,
   * column C)"; `attr` is the request field, `query` by default.
   */
  constructor(message: string, source?: string, at?: number, attr: string | null = 'query') {
    const where = source !== undefined && at !== undefined ? lineColumn(source, at) : undefined;
    const detail = where ? `${message} (line ${where.line}, column ${where.column})` : message;
    super(400, { type: 'validation_error', code: 'invalid_input', detail, attr });
    this.name = 'HogQLError';
    this.line = where?.line;
    this.column = where?.column;
  }
}

/** The 1-based line and column of character `offset` in `text` (clamped to the text). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const at = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: at - lineStart + 1 };
}
