/**
 * Property filters of the events list (`properties` query parameter), parsed and validated into a
 * tree the store compiles to SQL. Semantics follow PostHog (posthog/models/property/property.py
 * `Property`, OperatorType; posthog/queries/base.py / HogQL property_to_expr):
 *
 * - `properties` is JSON: an array of filters (all must match) or a group
 *   `{"type": "AND" | "OR", "values": [filter | group, …]}`; groups nest.
 * - A filter is `{key, value?, operator = "exact", type = "event"}`; `type` is `event` (the event's
 *   properties) or `person` (the properties of the event's person).
 * - Values compare as PostHog compares them: a property's text (a string's own text, a number as
 *   written, `true`/`false`) against the value's text; an array value means any of (exact) or none
 *   of (is_not). A missing property matches the negative operators (is_not, not_icontains,
 *   not_regex, is_not_set) and no other.
 *
 * Errors: `ApiError` 400 — invalid JSON → "Properties are unparsable!" (PostHog's message and its
 *   `attr: null`);
 * anything else wrong → a message naming the problem, including a regular expression that RE2
 * (ClickHouse's engine, linear-time) cannot compile; `attr` is `properties` in all cases. Keys and
 * values a message quotes are JSON text cut to at most 200 characters with `…` (server/domain/echo.ts).
 */
import { validationError } from './errors.js';
import { re2Error } from '../storage/dialect.js';
import { clip, echo } from './echo.js';
import { parseRelativeOrIso } from './relative-dates.js';
import { PROPERTY_OPERATORS, type PropertyFilter, type PropertyGroup, type PropertyOperator } from '../storage/events/index.js';

/** Limits that keep one request's SQL small. */
const MAX_DEPTH = 5;
const MAX_FILTERS = 50;
const MAX_PATTERN_LENGTH = 1000;

/** How dates in `is_date_*` values are read. */
export interface FilterContext {
  now: Date;
  /** the project's IANA timezone */
  timezone: string;
  /** the `type` of a filter that names none (default `event`; the persons list: `person`) */
  defaultType?: 'event' | 'person' | undefined;
  /** the filter types accepted (default both; the persons list: `person` only) */
  types?: readonly ('event' | 'person')[] | undefined;
}

function fail(detail: string): never {
  throw validationError(detail, 'properties');
}

/** The text PostHog compares a scalar value as. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return fail('A property filter value must be a string, a number, a boolean or an array of those.');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseFilter(raw: Record<string, unknown>, ctx: FilterContext): PropertyFilter {
  const key = raw.key;
  if (typeof key !== 'string' || key === '') fail('Every property filter needs a "key" (a non-empty string).');
  const rawType = raw.type ?? ctx.defaultType ?? 'event';
  const types = ctx.types ?? (['event', 'person'] as const);
  if (!types.includes(rawType as 'event' | 'person')) {
    fail(`Property filters of type ${echo(rawType)} are not supported; use ${types.map((t) => `"${t}"`).join(' or ')}.`);
  }
  const type = rawType as 'event' | 'person';
  const operator = raw.operator ?? 'exact';
  if (typeof operator !== 'string' || !(PROPERTY_OPERATORS as readonly string[]).includes(operator)) {
    fail(`Unknown property filter operator ${echo(operator, 100)}; use one of ${PROPERTY_OPERATORS.join(', ')}.`);
  }
  const op = operator as PropertyOperator;
  const base = { kind: 'filter' as const, key, type };
  if (op === 'is_set' || op === 'is_not_set') return { ...base, operator: op };
  const value = raw.value;
  if (value === undefined || value === null) fail(`The property filter on ${echo(key)} needs a "value".`);
  if (op === 'exact' || op === 'is_not') {
    const list = Array.isArray(value) ? value : [value];
    if (list.length === 0) fail(`The property filter on ${echo(key)} has an empty value list.`);
    return { ...base, operator: op, texts: list.map(valueText) };
  }
  if (Array.isArray(value)) fail(`The operator "${op}" takes a single value, not a list.`);
  const text = valueText(value);
  switch (op) {
    case 'icontains':
    case 'not_icontains':
      return { ...base, operator: op, needle: text };
    case 'regex':
    case 'not_regex':
      if (text.length > MAX_PATTERN_LENGTH) fail(`The regular expression on ${echo(key)} is longer than ${MAX_PATTERN_LENGTH} characters.`);
      {
        // RE2 syntax and semantics, as ClickHouse's match(): linear-time matching, so no pattern
        // can stall the server; what RE2 cannot compile (lookaround, backreferences) is refused.
        const why = re2Error(text);
        // three quoted parts (RE2's reason may repeat the pattern): each gets a third of the usual room
        if (why !== undefined)
          fail(`The regular expression on ${echo(key, 60)} is not valid RE2 syntax (${clip(why, 80)}): ${echo(text, 100)}.`);
      }
      return { ...base, operator: op, pattern: text };
    case 'gt':
    case 'lt':
    case 'gte':
    case 'lte': {
      const n = typeof value === 'number' ? value : Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n)) fail(`The operator "${op}" needs a number, got ${echo(value)}.`);
      return { ...base, operator: op, number: n };
    }
    default: {
      const parsed = parseRelativeOrIso(text, ctx);
      if (parsed === undefined)
        fail(`The date ${echo(text, 100)} of the filter on ${echo(key, 100)} cannot be read; use ISO 8601 or a relative date such as -7d.`);
      const date = parsed.slice(0, 23);
      if (op === 'is_date_exact' && /^\d{4}-\d{2}-\d{2}$/.test(text.trim())) {
        const end = new Date(Date.parse(parsed.slice(0, 23) + 'Z') + 86_400_000).toISOString().slice(0, 23);
        return { ...base, operator: op, date, dayEnd: end };
      }
      return { ...base, operator: op, date };
    }
  }
}

/**
 * Parses the `properties` query parameter. Returns undefined for an empty list; throws
 * `ApiError` 400 (attr `properties`) as described in the module doc.
 */
export function parsePropertiesParam(raw: string, ctx: FilterContext): PropertyGroup | undefined {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw validationError('Properties are unparsable!', null);
  }
  let count = 0;
  const walk = (node: unknown, depth: number): PropertyFilter | PropertyGroup => {
    if (depth > MAX_DEPTH) fail(`Property groups nest at most ${MAX_DEPTH} levels deep.`);
    if (Array.isArray(node)) return { kind: 'group', type: 'AND', values: node.map((n) => walk(n, depth + 1)) };
    if (!isRecord(node)) fail('Each property filter must be an object.');
    if ((node.type === 'AND' || node.type === 'OR') && 'values' in node) {
      if (!Array.isArray(node.values)) fail('A property group needs "values", a list.');
      return { kind: 'group', type: node.type, values: node.values.map((n) => walk(n, depth + 1)) };
    }
    count += 1;
    if (count > MAX_FILTERS) fail(`At most ${MAX_FILTERS} property filters per request.`);
    return parseFilter(node, ctx);
  };
  if (!Array.isArray(json) && !isRecord(json)) throw validationError('Properties are unparsable!', 'properties');
  const tree = walk(json, 0);
  const group: PropertyGroup = tree.kind === 'group' ? tree : { kind: 'group', type: 'AND', values: [tree] };
  return group.values.length ? group : undefined;
}
