/**
 * The adapter to PostHog's own HogQL parser (`@posthog/hogql-parser`, its ANTLR grammar compiled to
 * WebAssembly). What comes in: HogQL text. What goes out: PostHog's AST as plain objects
 * (`node: "SelectQuery" | "Field" | "Call" | …`, each with `start`/`end` positions), or a
 * `HogQLError` naming the parser's message and the line/column where it stopped. The WASM module
 * is loaded once, on first use.
 */
import type { HogQLParser } from '@posthog/hogql-parser';
import { HogQLError } from './errors.js';

/** A node of PostHog's AST as the parser returns it (see the package's `ASTNode`). */
export interface AstNode {
  node: string;
  start?: { line: number; column: number; offset: number };
  end?: { line: number; column: number; offset: number };
  [key: string]: unknown;
}

let loading: Promise<HogQLParser> | undefined;

/** The parser instance, loaded on first call (~tens of ms once per process). */
async function parser(): Promise<HogQLParser> {
  loading ??= import('@posthog/hogql-parser').then((m) => m.default());
  return loading;
}

/** Reads the parser's JSON answer: the AST, or a thrown `HogQLError` with the parser's message and position. */
function answer(json: string, source: string, attr: string | null): AstNode {
  const parsed = JSON.parse(json) as AstNode & { error?: boolean; message?: string };
  if (parsed.error) {
    const message = typeof parsed.message === 'string' ? parsed.message : 'syntax error';
    throw new HogQLError(`Syntax error: ${message}`, source, parsed.start?.offset ?? 0, attr);
  }
  return parsed;
}

/** Parses one HogQL expression (`count()`, `properties.$browser = 'Chrome'`). Throws `HogQLError` on a syntax error. */
export async function parseExpr(text: string, attr: string | null = 'query'): Promise<AstNode> {
  return answer((await parser()).parseExpr(text), text, attr);
}

/** Parses one HogQL SELECT statement. Throws `HogQLError` on a syntax error. */
export async function parseSelect(text: string, attr: string | null = 'query'): Promise<AstNode> {
  return answer((await parser()).parseSelect(text), text, attr);
}
