/**
 * A capture request's JSON value → its events and its project token, with PostHog's checks and
 * messages (rust/capture/src/v0_request.rs `RawRequest`, rust/common/types/src/event.rs `RawEvent`,
 * utils.rs `extract_and_verify_token`, token.rs; research notes §1b). All-or-nothing: one bad
 * event fails the whole request (400), as PostHog's capture does.
 *
 * Body forms: a bare array of events (posthog-js), `{"batch": [...], "api_key"|"token", "sent_at"}`
 * (posthog-node, posthog-js), or one event object. Token: the batch's top-level `api_key` /
 * `token`; else each event's `token` / `$token` / `api_key`, else its `properties.token`; the
 * events must agree. distinct_id: `distinct_id` / `$distinct_id`, else `properties.distinct_id`;
 * strings as they are, numbers and containers as JSON text; NUL → U+FFFD; cut to 200 characters.
 */
import { canonicalJson, isPlainObject } from '../ingest/import/normalize.js';
import { CaptureError } from './errors.js';

/** One event as sent, checked for shape. */
export interface RawCaptureEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  uuid: string | undefined;
  timestamp: unknown;
  offset: unknown;
  $set: unknown;
  $set_once: unknown;
}

/** The parsed request. */
export interface ParsedCapture {
  events: RawCaptureEvent[];
  /** the project token, trimmed and checked for shape (not yet looked up) */
  token: string;
  /** the batch's `sent_at` (ISO 8601 text), if any */
  sentAt: string | undefined;
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const MAX_DISTINCT_ID = 200;

function parseError(detail: string): CaptureError {
  return new CaptureError(400, `failed to parse request: ${detail}`);
}

/** JSON text → value; 400 `failed to parse request: …` when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw parseError((err as Error).message);
  }
}

function tokenOf(obj: Record<string, unknown>): string | undefined {
  for (const key of ['token', '$token', 'api_key']) if (typeof obj[key] === 'string') return obj[key] as string;
  return undefined;
}

/** The distinct id as PostHog's capture derives it (module doc); 400 when missing or empty. */
function distinctIdOf(raw: Record<string, unknown>, properties: Record<string, unknown>): string {
  let v = raw.distinct_id ?? raw.$distinct_id;
  if (v === undefined || v === null) v = properties.distinct_id;
  if (v === undefined || v === null) throw new CaptureError(400, 'event submitted without a distinct_id');
  let id = typeof v === 'string' ? v : canonicalJson(v);
  id = id.replaceAll('\u0000', '\uFFFD');
  if (id === '') throw new CaptureError(400, 'event submitted without a distinct_id');
  return [...id].length > MAX_DISTINCT_ID ? [...id].slice(0, MAX_DISTINCT_ID).join('') : id;
}

function checkEvent(raw: unknown, index: number): RawCaptureEvent & { token: string | undefined } {
  if (!isPlainObject(raw)) throw parseError(`event ${index} is not an object`);
  if (typeof raw.event !== 'string')
    throw parseError(raw.event === undefined ? `event ${index} has no "event" name` : `"event" of event ${index} must be a string`);
  if (raw.event === '') throw new CaptureError(400, 'event submitted with an empty event name');
  const properties = raw.properties === undefined || raw.properties === null ? {} : raw.properties;
  if (!isPlainObject(properties)) throw parseError(`"properties" of event ${index} must be an object`);
  let uuid: string | undefined;
  if (raw.uuid !== undefined && raw.uuid !== null && raw.uuid !== '') {
    if (typeof raw.uuid !== 'string' || !UUID_RE.test(raw.uuid))
      throw parseError(`"uuid" of event ${index} is not a UUID: ${JSON.stringify(raw.uuid)?.slice(0, 60)}`);
    const hex = raw.uuid.replace(/-/g, '').toLowerCase();
    uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  if (raw.offset !== undefined && raw.offset !== null && !Number.isInteger(raw.offset))
    throw parseError(`"offset" of event ${index} must be an integer (milliseconds)`);
  const distinctId = distinctIdOf(raw, properties);
  const propToken = typeof properties.token === 'string' ? properties.token : undefined;
  return {
    event: raw.event,
    distinct_id: distinctId,
    properties,
    uuid,
    timestamp: raw.timestamp,
    offset: raw.offset,
    $set: raw.$set,
    $set_once: raw.$set_once,
    token: tokenOf(raw) ?? propToken,
  };
}

/**
 * The shape check of a project token (rust/capture/src/token.rs): trimmed; empty, longer than 64
 * bytes, not ASCII, a personal API key (`phx_`), or holding NUL → 401
 * `API key is not valid: <reason>`.
 */
export function checkTokenShape(token: string): string {
  const t = token.trim();
  const invalid = (reason: string) => new CaptureError(401, `API key is not valid: ${reason}`);
  if (!t) throw invalid('empty');
  if (Buffer.byteLength(t) > 64) throw invalid('too_long');
  if (/[^\p{ASCII}]/u.test(t)) throw invalid('not_ascii');
  if (t.startsWith('phx_')) throw invalid('personal_api_key');
  if (t.includes('\u0000')) throw invalid('null_byte');
  return t;
}

/**
 * The request's events and token (module doc); throws `CaptureError` 400 / 401. `queryToken`: the
 * query's `token`, used only when the payload has none (envapi's reading of the spec's
 * `ProjectTokenAuth`; PostHog reads only the payload).
 */
export function parseCaptureRequest(value: unknown, queryToken?: string | null): ParsedCapture {
  let list: unknown[];
  let batchToken: string | undefined;
  let sentAt: string | undefined;
  if (Array.isArray(value)) list = value;
  else if (isPlainObject(value) && 'batch' in value) {
    if (!Array.isArray(value.batch)) throw parseError('"batch" must be an array of events');
    list = value.batch;
    batchToken = tokenOf(value);
    if (typeof value.sent_at === 'string') sentAt = value.sent_at;
  } else if (isPlainObject(value)) {
    if (value.event === undefined)
      throw new CaptureError(400, 'failed to hydrate events from request: non-engage request missing event name attribute');
    list = [value];
  } else {
    throw parseError('the payload must be an event object, an array of events or {"batch": [...]}');
  }
  if (list.length === 0) throw new CaptureError(400, 'request holds no event');
  const checked = list.map((e, i) => checkEvent(e, i));
  let token = batchToken;
  if (token === undefined) {
    const tokens = new Set(checked.map((e) => e.token).filter((t): t is string => t !== undefined));
    if (tokens.size === 0 && queryToken) tokens.add(queryToken);
    if (tokens.size === 0) throw new CaptureError(401, 'event submitted without an api_key');
    if (tokens.size > 1) throw new CaptureError(401, 'batch submitted with inconsistent api_key values');
    token = [...tokens][0]!;
  }
  const events = checked.filter((e) => e.event !== '$performance_event');
  if (events.length === 0) throw new CaptureError(400, 'payload empty after filtering invalid event types');
  return { events, token: checkTokenShape(token), sentAt };
}
