/**
 * HogQL's error: a query outside the subset this server runs, one the parser refuses, one the store
 * refuses for its data, or one the store's statement timeout stopped. It carries PostHog's `code`,
 * `detail` and `attr` and a `kind`, and knows nothing of HTTP: the domain, which calls HogQL,
 * turns it into its own error (`fromHogQLError`, ../domain/errors.ts), which http/ answers in
 * PostHog's shape:
 *
 * | kind | code | PostHog's answer |
 * |---|---|---|
 * | `invalid` | `invalid_input` | 400 `validation_error` (posthog/api/query.py answers an `ExposedHogQLError` as a DRF `ValidationError`) |
 * | `invalid` | ClickHouse's error name in lower case: `illegal_type_of_argument`, `no_common_type`, `type_mismatch`, … | 400 `validation_error`: a type error, or a statement ClickHouse refused for its data (PostHog's `ExposedCHQueryError.code_name`, posthog/errors.py) |
 * | `timeout` | `query_timeout` | 504 `server_error` (posthog/errors.py `ClickHouseQueryTimeOut`) |
 *
 * An `invalid` error's detail names the construct and where it is (line and column, both 1-based,
 * counted in characters of the query text); `attr` is the request field that held the query.
 */

/** Where a node of PostHog's AST starts (`start`), as the parser reports it. */
export interface AstPosition {
  line: number;
  column: number;
  offset: number;
}

/** What went wrong (see the module doc's table). */
export type HogQLErrorKind = 'invalid' | 'timeout';

/** PostHog's `code` for each kind. */
const CODES: Record<HogQLErrorKind, string> = { invalid: 'invalid_input', timeout: 'query_timeout' };

/** A HogQL query this server refuses or could not finish. `line`/`column` are 1-based, or undefined when unknown. */
export class HogQLError extends Error {
  readonly kind: HogQLErrorKind;
  /** PostHog's machine-readable code: `invalid_input`, `query_timeout`, or a ClickHouse error's name (module doc) */
  readonly code: string;
  /** the message PostHog's `detail` carries, with " (line L, column C)" when the position is known */
  readonly detail: string;
  /** the request field that held the query (`query`, `select`, `where`, …), or null; callers that know the field better may set it */
  attr: string | null;
  readonly line: number | undefined;
  readonly column: number | undefined;
  /** the character offset into `source` where the problem is, when known */
  readonly offset: number | undefined;
  /** the query text the offset counts in, when known */
  readonly source: string | undefined;

  /**
   * `message` says what is wrong; `at` (a character offset into `source`) adds " (line L,
   * column C)"; `attr` is the request field, `query` by default; `kind` is `invalid` by default;
   * `code` replaces the kind's code (a ClickHouse error name, module doc).
   */
  constructor(
    message: string,
    source?: string,
    at?: number,
    attr: string | null = 'query',
    kind: HogQLErrorKind = 'invalid',
    code: string = CODES[kind],
  ) {
    const where = source !== undefined && at !== undefined ? lineColumn(source, at) : undefined;
    const detail = where ? `${message} (line ${where.line}, column ${where.column})` : message;
    super(detail);
    this.name = 'HogQLError';
    this.kind = kind;
    this.code = code;
    this.detail = detail;
    this.attr = attr;
    this.line = where?.line;
    this.column = where?.column;
    this.offset = where ? at : undefined;
    this.source = source;
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
