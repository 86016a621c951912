/**
 * The adapter to PostHog's own HogQL parser (`@posthog/hogql-parser`, its ANTLR grammar compiled to
 * WebAssembly). What comes in: HogQL text. What goes out: PostHog's AST as plain objects
 * (`node: "SelectQuery" | "Field" | "Call" | …`, each with `start`/`end` positions), or a
 * `HogQLError` naming the parser's message and the line/column where it stopped. The WASM module
 * is loaded once, on first use.
 *
 * The parser's answers (its JSON text) are kept for the most recent texts (`CACHE_ENTRIES`, at most
 * `CACHE_CHARS` characters of them): a dashboard or a script sends the same queries again, and a
 * parse costs more than the rest of the compile (several ms for a short SELECT, docs/performance.md).
 * Each call reads the JSON again, so every caller gets its own AST to change.
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

/** Texts whose parser answers are kept, and the characters of the answers kept at most. */
const CACHE_ENTRIES = 500;
const CACHE_CHARS = 20_000_000;

/** The parser's recent answers by kind and text, oldest first (a Map keeps insertion order). */
const answers = new Map<string, string>();
let cachedChars = 0;

/** The parser's JSON answer for `text` as `kind`, from the cache when it has one. */
async function parsed(kind: 'expr' | 'select', text: string): Promise<string> {
  const key = `${kind}:${text}`;
  const hit = answers.get(key);
  if (hit !== undefined) {
    answers.delete(key);
    answers.set(key, hit);
    return hit;
  }
  const p = await parser();
  const json = kind === 'expr' ? p.parseExpr(text) : p.parseSelect(text);
  answers.set(key, json);
  cachedChars += json.length + key.length;
  for (const [k, v] of answers) {
    if (answers.size <= CACHE_ENTRIES && cachedChars <= CACHE_CHARS) break;
    answers.delete(k);
    cachedChars -= v.length + k.length;
  }
  return json;
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
  return answer(await parsed('expr', text), text, attr);
}

/** Parses one HogQL SELECT statement. Throws `HogQLError` on a syntax error. */
export async function parseSelect(text: string, attr: string | null = 'query'): Promise<AstNode> {
  return answer(await parsed('select', text), text, attr);
}
