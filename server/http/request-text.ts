/**
 * Text a request may not carry: U+0000 (NUL) and unpaired UTF-16 surrogates, in any string of the
 * request, checked once per request after the validator (`assertRequestText`, called from the
 * dispatch in `server/app.ts`), so every operation answers the same on both stores.
 *
 * Why: PostgreSQL cannot hold U+0000 in `text` or `jsonb` at all (a bound parameter with it fails
 * with "invalid byte sequence for encoding UTF8: 0x00"), and SQLite's JSON paths stop at it ("bad
 * JSON path"): such text reaching SQL was a 500. A lone surrogate cannot be written as UTF-8 (the
 * drivers turn it into U+FFFD, so what is stored is not what was sent). PostHog's serializers
 * refuse both in every `CharField` (Django's `ProhibitNullCharactersValidator`, DRF's
 * `ProhibitSurrogateCharactersValidator`, rest_framework/fields.py); this server applies the same
 * rule to every string, free-form maps (`config`, `filters`) and object keys included, where
 * PostHog would answer 500 from PostgreSQL.
 *
 * The answers (400 `validation_error`, DRF's codes and messages):
 * - `null_characters_not_allowed`, "Null characters are not allowed.";
 * - `surrogate_characters_not_allowed`, "Surrogate characters are not allowed: U+D800." (the first
 *   unpaired surrogate, upper-case hex, as DRF writes it).
 *
 * `attr`: for the body, the path of the string (object keys and array indices joined with `__`:
 * `config__api_key`, `template__tiles__0__body`); for a key holding such a character, the path of
 * the object that holds it (`config`; `null` at the top level); a body sent to an operation that
 * declares none is never read and not checked. For a query parameter, its name
 * (`key`, `event_name`, `properties`): declared query parameters only (unknown ones are ignored
 * anyway), and inside the ones the spec marks `contentMediaType: application/json` (`properties`,
 * `select`, `where`) every string and key of the decoded JSON as well (an escape `\u0000` is NUL
 * once decoded). Path parameters are left to the operations: each already answers a value that
 * names nothing (404, or 400 "Invalid UUID" for an event id) without sending it to SQL, and a lone
 * surrogate reaches no handler in a path (UTF-8 carries it as U+FFFD; its raw bytes, invalid
 * UTF-8, are refused by the validator's route match).
 *
 * Other control characters (U+0001–U+001F, U+007F) are ordinary text on both stores and accepted.
 */
import { validationError, type ApiError } from '../domain/errors.js';

/** One problem character: NUL, or a UTF-16 surrogate not part of a pair (the `u` flag pairs them). */
// eslint-disable-next-line no-control-regex -- NUL is what is refused
const FORBIDDEN = /[\u0000\ud800-\udfff]/u;

/** The 400 for `text` (which holds a forbidden character) at `attr`. */
function refusal(text: string, attr: string | null): ApiError {
  const found = FORBIDDEN.exec(text)?.[0] ?? '\u0000';
  if (found === '\u0000') return validationError('Null characters are not allowed.', attr, 'null_characters_not_allowed');
  const hex = found.charCodeAt(0).toString(16).toUpperCase();
  return validationError(`Surrogate characters are not allowed: U+${hex}.`, attr, 'surrogate_characters_not_allowed');
}

/**
 * The first refusal inside a JSON value (depth first, in key order), or undefined. `attr` is the
 * path of `root`; `nested` says whether keys and indices extend it (body) or not (a JSON-encoded
 * query parameter, named as a whole). Iterative: a 1 MiB body may nest ~500,000 levels deep.
 */
function findIn(root: unknown, attr: string | null, nested: boolean): ApiError | undefined {
  const stack: Array<[unknown, string | null]> = [[root, attr]];
  const join = (at: string | null, k: string) => (nested ? (at === null ? k : `${at}__${k}`) : at);
  while (stack.length) {
    const [value, at] = stack.pop() as [unknown, string | null];
    if (typeof value === 'string') {
      if (FORBIDDEN.test(value)) return refusal(value, at);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], join(at, String(i))]);
      continue;
    }
    const keys = Object.keys(value);
    for (const key of keys) if (FORBIDDEN.test(key)) return refusal(key, at);
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i] as string;
      stack.push([(value as Record<string, unknown>)[key], join(at, key)]);
    }
  }
  return undefined;
}

/** A declared parameter as the validator hands over the matched operation (`$ref`s resolved). */
interface DeclaredParameter {
  name?: unknown;
  in?: unknown;
  schema?: { contentMediaType?: unknown; items?: { contentMediaType?: unknown } };
}

/** The declared query parameters of an operation: name → whether its text is JSON to look into. */
function queryParameters(operation: { parameters?: unknown } | undefined): Map<string, boolean> {
  if (!operation) return NONE;
  const known = cache.get(operation);
  if (known) return known;
  const out = new Map<string, boolean>();
  for (const p of (Array.isArray(operation.parameters) ? operation.parameters : []) as DeclaredParameter[]) {
    if (p.in !== 'query' || typeof p.name !== 'string') continue;
    const media = p.schema?.contentMediaType ?? p.schema?.items?.contentMediaType;
    out.set(p.name, typeof media === 'string' && media.startsWith('application/json'));
  }
  cache.set(operation, out);
  return out;
}
const NONE = new Map<string, boolean>();
const cache = new WeakMap<object, Map<string, boolean>>();

/** The problem in one query parameter's value (a string, or the strings of a repeated parameter). */
function findInQuery(name: string, value: unknown, json: boolean): ApiError | undefined {
  for (const v of Array.isArray(value) ? value : [value]) {
    if (typeof v !== 'string') continue;
    if (FORBIDDEN.test(v)) return refusal(v, name);
    // in JSON text NUL and surrogates can only be written as \u escapes: parse only then; text that
    // is not JSON is left to the operation (e.g. 400 "Properties are unparsable!")
    if (!json || !v.includes('\\u')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      continue;
    }
    const problem = findIn(parsed, name, false);
    if (problem) return problem;
  }
  return undefined;
}

/** What `assertRequestText` reads of a request, after validation. */
export interface RequestText {
  /** the operation the validator matched (`openapiOf(req).schema`, validator.ts): its declared parameters and body */
  operation?: { parameters?: unknown; requestBody?: unknown } | undefined;
  /** the parsed query (`req.query`) */
  query?: unknown;
  /** the parsed JSON body, if any */
  body?: unknown;
}

/**
 * Throws the 400 for the first NUL or unpaired surrogate in the request (declared query parameters
 * in the order they were sent, then the body if the operation declares one; see the module
 * docstring for codes, messages and `attr`). Returns nothing when every string is clean. Only what
 * the operation reads is checked, so only operations that declare a body or a string query
 * parameter can answer this 400 (the contract fuzzer checks that they all declare it). Cost: one regular-expression test per string; JSON-encoded
 * query parameters are decoded a second time only when they contain a `\u` escape.
 */
export function assertRequestText(req: RequestText): void {
  if (req.query && typeof req.query === 'object') {
    const declared = queryParameters(req.operation);
    const q = req.query as Record<string, unknown>;
    for (const name in q) {
      const json = declared.get(name);
      if (json === undefined) continue;
      const problem = findInQuery(name, q[name], json);
      if (problem) throw problem;
    }
  }
  // a body sent to an operation that declares none is never read (and such operations declare no
  // 400); the validator sets `requestBody: null` on those
  if (req.body !== undefined && req.operation?.requestBody != null) {
    const problem = findIn(req.body, null, true);
    if (problem) throw problem;
  }
}
