/**
 * Capture: the endpoints PostHog's SDKs send events to, answered before the OpenAPI validator (a
 * gzip, base64 or form body is not something it can read). `captureRouter(deps)` is the one entry:
 * an Express router (`express.Router()`, case-sensitive, a trailing slash optional) that
 * server/app.ts mounts before the API's steps; a request for any other path passes through it.
 * openapi.yaml declares the operations (tag `capture`, `x-served-by: capture`), the server's
 * handler map does not hold them.
 *
 * What comes in: `POST` (or `GET` with `?data=`) on `/batch/`, `/capture/`, `/e/`, `/i/v0/e/`,
 * `/track/`, each also without the trailing slash; `OPTIONS` (CORS preflight). Also the SDKs'
 * start-up calls, answered by sdk-config.ts for a project without flags, recordings or surveys:
 * `POST /flags/`, `POST /decide/`, `GET /array/<token>/config` and `…/config.js`; and the OTLP
 * logs the SDKs send, `POST /i/v1/logs`, accepted with PostHog's capture-logs answer and not
 * stored (`logs` below). PostHog's wire
 * behaviour, from its capture service (rust/capture/; research notes §1):
 * - decode.ts: the payload's bytes → JSON text (query `data=`, form `data=`, base64, gzip by hint
 *   or by magic bytes, size limits: 2 MiB, `/batch/` 20 MiB — 413 past them);
 * - parse.ts: the JSON → events and the project token (one event, `{batch}`, a bare array; token
 *   from `api_key` / `token` at the top, in the events, or in `properties.token`);
 * - the token must be a project's API token (`teams.api_token`, `phc_…`): PostHog's capture accepts
 *   an unknown well-formed token with 200 and drops its events later; envapi answers **401**
 *   instead (a server that stores events should not silently drop them), as issue 19 asks;
 * - an event whose JSON text is over 1,000,000 bytes (PostHog's Kafka message limit) fails the
 *   request with 400 `maximum event size exceeded: …` (its sink's `EventTooBig`), nothing stored;
 * - process.ts: each event → the stored row (uuid, clock-skew-corrected timestamp, elements chain,
 *   person update; PostHog's person rules in server/ingest/person-rules.ts);
 * - queue.ts: group commit; the answer is sent once the events are committed.
 * What goes out: 200 `{"status": "Ok"}` (204 without a body with `?beacon=1`), or PostHog's error
 * as `text/plain` (400 malformed, 401 token, 413 too big, 503 busy with `Retry-After`). CORS as
 * PostHog's capture (http-io.ts, with the `cors` package): the request's `Origin` echoed with
 * credentials allowed; a preflight is answered 200 with `GET,POST,OPTIONS` and the requested
 * headers mirrored; another method 405 with `Allow`. HEAD is answered as GET, without a body.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { Store } from '../storage/db.js';
import type { AuthenticationService } from '../domain/authentication.js';
import { decodePayload } from './decode.js';
import { CaptureError } from './errors.js';
import {
  captureCors,
  JSON_TYPE,
  methodNotAllowed,
  OK_BODY,
  optionsAnswer,
  queryOf,
  readBody,
  send,
  TEXT_TYPE,
  type BodyRequest,
} from './http-io.js';
import { decideAnswer, flagsAnswer, parseFlagsRequest, remoteConfig, remoteConfigScript, unknownFlagsToken } from './sdk-config.js';
import { parseCaptureRequest, parseJson } from './parse.js';
import { processEvent, sentAtOf } from './process.js';
import { GroupCommitQueue, type QueueOptions } from './queue.js';
import type { NormalizedEventRow } from '../ingest/write-events.js';

export { DEFAULT_MAX_QUEUED_EVENTS, RETRY_AFTER_SECONDS } from './queue.js';

/** Payload limit of `/batch/`, bytes (PostHog's `BATCH_BODY_SIZE`). */
export const BATCH_BODY_LIMIT = 20 * 1024 * 1024;
/** Payload limit of the single-event paths, bytes (PostHog's `EVENT_BODY_SIZE`). */
export const EVENT_BODY_LIMIT = 2 * 1024 * 1024;
/**
 * The largest event, bytes of its JSON text: PostHog's Kafka message limit (`message.max.bytes`,
 * 1,000,000), past which its capture sink answers `EventTooBig` (400) for the request.
 */
export const MAX_EVENT_BYTES = 1_000_000;

/** The capture paths (a trailing slash is optional), whether each is a legacy path, and its payload limit. */
const ROUTES: ReadonlyArray<[path: string, route: CaptureRoute]> = [
  ['/batch', { legacy: false, limit: BATCH_BODY_LIMIT }],
  ['/capture', { legacy: true, limit: EVENT_BODY_LIMIT }],
  ['/e', { legacy: true, limit: EVENT_BODY_LIMIT }],
  ['/i/v0/e', { legacy: false, limit: EVENT_BODY_LIMIT }],
  ['/track', { legacy: true, limit: EVENT_BODY_LIMIT }],
];

/** One capture path: a legacy path (`/e`, `/capture`, `/track`) decodes base64 inside base64; `limit` in bytes. */
interface CaptureRoute {
  legacy: boolean;
  limit: number;
}

/** Payload limit of `/i/v1/logs`, bytes (what posthog-node's logs batching allows, 10 MiB). */
export const LOGS_BODY_LIMIT = 10 * 1024 * 1024;

/** What the capture router is built from. */
export interface CaptureDeps extends QueueOptions {
  store: Store;
  /** the app's authentication service, whose token → project cache the API's `?token=` shares */
  authentication: AuthenticationService;
  /** called with unexpected errors (answered 500) */
  onServerError?: ((err: unknown, req: Request) => void) | undefined;
}

const EMPTY = Buffer.alloc(0);

/** PostHog's 404 body (DRF's `NotFound` through PostHog's exception handler). */
const NOT_FOUND_BODY = JSON.stringify({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });

/**
 * The capture router (module doc): the capture paths and the SDK start-up calls, each with its
 * CORS, its `OPTIONS` answer and its 405; errors answered as PostHog's capture service answers
 * them (`CaptureError`: plain text with its status; anything else 500, told to
 * `deps.onServerError`). Requests for other paths pass through untouched.
 */
export function captureRouter(deps: CaptureDeps): express.Router {
  const queue = new GroupCommitQueue(deps.store, deps);
  // SQLite: token → project kept while `teams` is unchanged (a query would wait behind the
  // connection's open transaction, a group commit); PostgreSQL: a pooled query each time
  const teamIdOf = (token: string) => deps.authentication.teamIdByApiToken(token);

  /** A capture: POST with a body, or GET (HEAD) with `?data=`. */
  const capture =
    (route: CaptureRoute): RequestHandler =>
    async (request, res) => {
      const req = request as BodyRequest;
      const nowMs = Date.now();
      const query = queryOf(req);
      const text = decodePayload({
        query,
        body: req.body ?? EMPTY,
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
        // PostHog's capture produces each event as one Kafka message, at most 1,000,000 bytes
        // (its sink answers EventTooBig, a 400); the event's JSON text stands for that message
        const size = Buffer.byteLength(JSON.stringify(e));
        if (size > MAX_EVENT_BYTES)
          throw new CaptureError(400, `maximum event size exceeded: Event payload too large for Kafka: ${size} bytes`);
        const row = processEvent(e, ctx);
        if (row) rows.push(row);
      }
      await queue.submit(teamId, rows);
      if (query.get('beacon') === '1') {
        res.statusCode = 204;
        res.end();
      } else send(res, 200, OK_BODY, JSON_TYPE);
    };

  /** `POST /flags/` and the legacy `POST /decide/` (sdk-config.ts). */
  const flags =
    (kind: 'flags' | 'decide'): RequestHandler =>
    async (request, res) => {
      const req = request as BodyRequest;
      const nowMs = Date.now();
      const query = queryOf(req);
      const text = decodePayload({
        query,
        body: req.body ?? EMPTY,
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        legacyPath: false,
        limit: EVENT_BODY_LIMIT,
      });
      const { token } = parseFlagsRequest(parseJson(text), query.get('token'));
      if ((await teamIdOf(token)) === undefined) throw unknownFlagsToken();
      send(res, 200, JSON.stringify(kind === 'flags' ? flagsAnswer(token, query, nowMs) : decideAnswer(token, query)), JSON_TYPE);
    };

  /**
   * `POST /i/v1/logs` (PostHog's rust/capture-logs `export_logs_http`): the token from the query's
   * `token`, else `Authorization: Bearer`; the body OTLP/JSON, gzipped or not (PostHog also reads
   * protobuf; envapi does not). Errors are capture-logs' JSON `{"error": …}`: 401 without a
   * token, 401 for one no project has (PostHog drops those records later; envapi refuses them,
   * as its capture does), 400 for a body that is not a JSON object, 413 past the limit. A
   * request that passes is answered 200 `{}`, and its records are dropped: envapi has no logs.
   */
  const logs: RequestHandler = async (request, res) => {
    const req = request as BodyRequest;
    const query = queryOf(req);
    const fail = (status: number, error: string) => send(res, status, JSON.stringify({ error }), JSON_TYPE);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = query.get('token') || bearer;
    if (!token) return fail(401, 'No token provided');
    if ((await teamIdOf(token)) === undefined) return fail(401, 'Invalid token');
    let value: unknown;
    try {
      const text = decodePayload({
        query: new URLSearchParams(),
        body: req.body ?? EMPTY,
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        legacyPath: false,
        limit: LOGS_BODY_LIMIT,
      });
      value = JSON.parse(text);
    } catch (err) {
      if (err instanceof CaptureError && err.status === 413) return fail(413, 'Payload too large');
      return fail(400, `Failed to decode JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return fail(400, 'Failed to decode JSON: expected an ExportLogsServiceRequest object');
    send(res, 200, '{}', JSON_TYPE);
  };

  /** `GET /array/<token>/config` and `…/config.js` (sdk-config.ts); 404 for a token no project has. */
  const config =
    (kind: 'config' | 'config.js'): RequestHandler =>
    async (req, res) => {
      const token = String(req.params.token);
      if ((await teamIdOf(token)) === undefined) return send(res, 404, NOT_FOUND_BODY, JSON_TYPE);
      if (kind === 'config') send(res, 200, JSON.stringify(remoteConfig(token)), JSON_TYPE);
      else send(res, 200, remoteConfigScript(token), 'application/javascript');
    };

  const router = express.Router({ caseSensitive: true });
  const ALL = 'GET,POST,OPTIONS';
  for (const [path, route] of ROUTES) {
    router
      .route(path)
      .all(captureCors(ALL))
      .get(capture(route))
      .post(readBody(route.limit), capture(route))
      .options(optionsAnswer)
      .all(methodNotAllowed(ALL));
  }
  for (const kind of ['flags', 'decide'] as const) {
    router
      .route(`/${kind}`)
      .all(captureCors('POST,OPTIONS'))
      .post(readBody(EVENT_BODY_LIMIT), flags(kind))
      .options(optionsAnswer)
      .all(methodNotAllowed('POST,OPTIONS'));
  }
  router
    .route('/i/v1/logs')
    .all(captureCors('POST,OPTIONS'))
    .post(readBody(LOGS_BODY_LIMIT), logs, logsBodyError)
    .options(optionsAnswer)
    .all(methodNotAllowed('POST,OPTIONS'));
  for (const kind of ['config', 'config.js'] as const) {
    router
      .route(`/array/:token/${kind}`)
      .all(captureCors('GET,OPTIONS'))
      .get(config(kind))
      .options(optionsAnswer)
      .all(methodNotAllowed('GET,OPTIONS'));
  }
  router.use(captureErrors(deps));
  return router;
}

/** A logs body that could not be read: capture-logs' JSON error (413 past the limit, else 400). */
const logsBodyError: ErrorRequestHandler = function logsBodyError(err: unknown, _req, res, next) {
  if (!(err instanceof CaptureError) || res.headersSent) return next(err);
  const error = err.status === 413 ? 'Payload too large' : err.message;
  send(res, err.status === 413 ? 413 : 400, JSON.stringify({ error }), JSON_TYPE);
};

/**
 * The capture router's error handler: a `CaptureError` is answered as PostHog's capture service
 * answers it (its status, its text, `Retry-After` when it has one); a path parameter that is not
 * UTF-8 once percent-decoded (a remote-config token, `URIError` from the router) names no project,
 * so 404 as for an unknown token; anything else 500 `internal server error`, told to `onServerError`.
 */
function captureErrors(deps: CaptureDeps): ErrorRequestHandler {
  return function captureError(err: unknown, req: Request, res: Response, next: (err?: unknown) => void) {
    if (res.headersSent) return next(err);
    if (err instanceof CaptureError) {
      send(
        res,
        err.status,
        err.message,
        TEXT_TYPE,
        err.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.retryAfterSeconds) } : {},
      );
    } else if (err instanceof URIError) {
      send(res, 404, NOT_FOUND_BODY, JSON_TYPE);
    } else {
      deps.onServerError?.(err, req);
      send(res, 500, 'internal server error', TEXT_TYPE);
    }
  };
}
