/**
 * Capture: the endpoints PostHog's SDKs send events to, answered before the OpenAPI validator (a
 * gzip, base64 or form body is not something it can read). `createCaptureStage(deps)` is the one
 * entry; server/app.ts mounts its `handle` in its `beforeValidator` step. openapi.yaml declares the
 * operations (tag `capture`, `x-served-by: capture`), the server's handler map does not hold them.
 *
 * What comes in: `POST` (or `GET` with `?data=`) on `/batch/`, `/capture/`, `/e/`, `/i/v0/e/`,
 * `/track/`, each also without the trailing slash; `OPTIONS` (CORS preflight). Also the SDKs'
 * start-up calls, answered by sdk-config.ts for a project without flags, recordings or surveys:
 * `POST /flags/`, `POST /decide/`, `GET /array/<token>/config` and `…/config.js`. PostHog's wire
 * behaviour, from its capture service (rust/capture/; research notes §1):
 * - decode.ts: the payload's bytes → JSON text (query `data=`, form `data=`, base64, gzip by hint
 *   or by magic bytes, size limits: 2 MiB, `/batch/` 20 MiB — 413 past them);
 * - parse.ts: the JSON → events and the project token (one event, `{batch}`, a bare array; token
 *   from `api_key` / `token` at the top, in the events, or in `properties.token`);
 * - the token must be a project's API token (`teams.api_token`, `phc_…`): PostHog's capture accepts
 *   an unknown well-formed token with 200 and drops its events later; envapi answers **401**
 *   instead (a server that stores events should not silently drop them), as issue 19 asks;
 * - process.ts: each event → the stored row (uuid, clock-skew-corrected timestamp, elements chain,
 *   person update; PostHog's person rules in server/events/person-rules.ts);
 * - queue.ts: group commit; the answer is sent once the events are committed.
 * What goes out: 200 `{"status": "Ok"}` (204 without a body with `?beacon=1`), or PostHog's error
 * as `text/plain` (400 malformed, 401 token, 413 too big, 503 busy with `Retry-After`). CORS as
 * PostHog's capture: the request's `Origin` echoed with credentials allowed; a preflight is
 * answered 200 with `GET,POST,OPTIONS` and the requested headers mirrored.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../storage/db.js';
import { AccountsRepository, TEAM_ID_BY_API_TOKEN } from '../storage/repositories/accounts.js';
import { UnchangedStoreCache } from '../storage/unchanged-cache.js';
import { decodePayload } from './decode.js';
import { CaptureError } from './errors.js';
import { answerPreflight, JSON_TYPE, readBody, send, setCors, TEXT_TYPE } from './http-io.js';
import { decideAnswer, flagsAnswer, parseFlagsRequest, remoteConfig, remoteConfigScript, unknownFlagsToken } from './sdk-config.js';
import { parseCaptureRequest, parseJson } from './parse.js';
import { processEvent, sentAtOf } from './process.js';
import { GroupCommitQueue, type QueueOptions } from './queue.js';
import type { NormalizedEventRow } from '../events/write-events.js';

export { DEFAULT_MAX_QUEUED_EVENTS, RETRY_AFTER_SECONDS } from './queue.js';

/** Payload limit of `/batch/`, bytes (PostHog's `BATCH_BODY_SIZE`). */
export const BATCH_BODY_LIMIT = 20 * 1024 * 1024;
/** Payload limit of the single-event paths, bytes (PostHog's `EVENT_BODY_SIZE`). */
export const EVENT_BODY_LIMIT = 2 * 1024 * 1024;

/** The capture paths, without their trailing slash, and whether each is a legacy path. */
const ROUTES = new Map<string, { legacy: boolean; limit: number }>([
  ['/batch', { legacy: false, limit: BATCH_BODY_LIMIT }],
  ['/capture', { legacy: true, limit: EVENT_BODY_LIMIT }],
  ['/e', { legacy: true, limit: EVENT_BODY_LIMIT }],
  ['/i/v0/e', { legacy: false, limit: EVENT_BODY_LIMIT }],
  ['/track', { legacy: true, limit: EVENT_BODY_LIMIT }],
]);

/** What the capture stage is built from. */
export interface CaptureDeps extends QueueOptions {
  store: Store;
  /** called with unexpected errors (answered 500) */
  onServerError?: ((err: unknown, req: IncomingMessage) => void) | undefined;
}

/** The capture stage: `handle` answers a capture request and returns true, or returns false for any other path. */
export interface CaptureStage {
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** events accepted and not yet committed */
  readonly queuedEvents: number;
}

const OK_BODY = '{"status":"Ok"}';

/** Builds the capture stage (module doc). */
export function createCaptureStage(deps: CaptureDeps): CaptureStage {
  const queue = new GroupCommitQueue(deps.store, deps);
  const accounts = new AccountsRepository(deps.store.db);
  // SQLite: token → project kept while `teams` is unchanged (a query would wait behind the
  // connection's open transaction, a group commit); PostgreSQL: a pooled query each time
  const changeCounter = deps.store.changeCounter;
  const tokens = changeCounter ? new UnchangedStoreCache(changeCounter, TEAM_ID_BY_API_TOKEN, { max: 10_000 }) : undefined;
  const teamIdOf = (token: string) => (tokens ? tokens.get(token, accounts, token, undefined) : accounts.findTeamIdByApiToken(token));

  const capture = async (req: IncomingMessage, res: ServerResponse, route: { legacy: boolean; limit: number }, query: URLSearchParams): Promise<void> => {
    const nowMs = Date.now();
    const body = req.method === 'POST' ? await readBody(req, route.limit) : Buffer.alloc(0);
    const text = decodePayload({
      query,
      body,
      contentType: req.headers['content-type'],
      contentEncoding: req.headers['content-encoding'],
      legacyPath: route.legacy,
      limit: route.limit,
    });
    const parsed = parseCaptureRequest(parseJson(text), query.get('token'));
    const teamId = await teamIdOf(parsed.token);
    if (teamId === undefined) throw new CaptureError(401, 'API key is not valid: no project has this project API key (phc_…)');
    const ctx = { nowMs, sentAtMs: sentAtOf(parsed.sentAt, query) };
    const rows: NormalizedEventRow[] = [];
    for (const e of parsed.events) {
      const row = processEvent(e, ctx);
      if (row) rows.push(row);
    }
    await queue.submit(teamId, rows);
    if (query.get('beacon') === '1') {
      res.statusCode = 204;
      res.end();
    } else send(res, 200, OK_BODY, JSON_TYPE);
  };

  /** The SDK start-up calls (sdk-config.ts): flags, legacy decide, remote config. */
  const startUp = async (req: IncomingMessage, res: ServerResponse, route: SdkRoute, query: URLSearchParams): Promise<void> => {
    if (route.kind === 'config' || route.kind === 'config.js') {
      const teamId = await teamIdOf(route.token);
      if (teamId === undefined) {
        send(res, 404, NOT_FOUND_BODY, JSON_TYPE);
        return;
      }
      if (route.kind === 'config') send(res, 200, JSON.stringify(remoteConfig(route.token)), JSON_TYPE);
      else send(res, 200, remoteConfigScript(route.token), 'application/javascript');
      return;
    }
    const nowMs = Date.now();
    const body = await readBody(req, EVENT_BODY_LIMIT);
    const text = decodePayload({ query, body, contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], legacyPath: false, limit: EVENT_BODY_LIMIT });
    const { token } = parseFlagsRequest(parseJson(text), query.get('token'));
    if ((await teamIdOf(token)) === undefined) throw unknownFlagsToken();
    send(res, 200, JSON.stringify(route.kind === 'flags' ? flagsAnswer(token, query, nowMs) : decideAnswer(token, query)), JSON_TYPE);
  };

  const fail = (req: IncomingMessage, res: ServerResponse) => (err: unknown) => {
    if (res.headersSent) return;
    if (err instanceof CaptureError) {
      send(res, err.status, err.message, TEXT_TYPE, err.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.retryAfterSeconds) } : {});
    } else {
      deps.onServerError?.(err, req);
      send(res, 500, 'internal server error', TEXT_TYPE);
    }
  };

  return {
    get queuedEvents() {
      return queue.queuedEvents;
    },
    handle(req, res) {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const rawPath = q === -1 ? url : url.slice(0, q);
      const path = rawPath.endsWith('/') && rawPath.length > 1 ? rawPath.slice(0, -1) : rawPath;
      const route = ROUTES.get(path);
      const sdkRoute = route ? undefined : sdkRouteOf(path);
      if (!route && !sdkRoute) return false;
      setCors(req, res);
      const method = req.method ?? 'GET';
      const allowed = route ? 'GET,POST,OPTIONS' : sdkRoute!.kind === 'flags' || sdkRoute!.kind === 'decide' ? 'POST,OPTIONS' : 'GET,OPTIONS';
      if (method === 'OPTIONS') {
        if (!answerPreflight(req, res, allowed)) send(res, 200, OK_BODY, JSON_TYPE);
        return true;
      }
      if (!allowed.split(',').includes(method) && !(method === 'HEAD' && allowed.includes('GET'))) {
        send(res, 405, 'method not allowed', TEXT_TYPE, { Allow: allowed.replaceAll(',', ', ') });
        return true;
      }
      const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
      (route ? capture(req, res, route, query) : startUp(req, res, sdkRoute!, query)).catch(fail(req, res));
      return true;
    },
  };
}

/** An SDK start-up path (sdk-config.ts). */
type SdkRoute = { kind: 'flags' | 'decide' } | { kind: 'config' | 'config.js'; token: string };

const REMOTE_CONFIG_PATH = /^\/array\/([^/]+)\/(config|config\.js)$/;

/** The SDK start-up route of a path without its trailing slash, or undefined. */
function sdkRouteOf(path: string): SdkRoute | undefined {
  if (path === '/flags') return { kind: 'flags' };
  if (path === '/decide') return { kind: 'decide' };
  const m = REMOTE_CONFIG_PATH.exec(path);
  if (!m) return undefined;
  let token: string;
  try {
    token = decodeURIComponent(m[1]!);
  } catch {
    token = '';
  }
  return { kind: m[2] === 'config' ? 'config' : 'config.js', token };
}

/** PostHog's 404 body (DRF's `NotFound` through PostHog's exception handler). */
const NOT_FOUND_BODY = JSON.stringify({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
