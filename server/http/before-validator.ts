/**
 * The steps of an API request between the routes answered first (health, docs, capture) and
 * express-openapi-validator (server/app.ts draws the whole path):
 *
 * - `jsonBody(limit)`: Express's `express.json()`, then `deferBodyError`. A body that cannot be
 *   read (malformed JSON 400 `parse_error`, past the limit 413 `request_too_large`, an unknown
 *   charset 415) is reported only after authentication and the scope check, as PostHog (DRF)
 *   reads the body after its permission checks: the error waits on the request
 *   (`deferredBodyError`) and the security handler (security.ts) raises it once the key is
 *   accepted.
 * - `normaliseRequest`, the request as the API path reads it:
 *   - A personal API key sent without the `Authorization` header, in a JSON body's
 *     `personal_api_key` or the `personal_api_key` query parameter (PostHog's
 *     `find_key_with_source` reads both), is read as that header, so that authentication, scopes
 *     and rate limits see one key whatever way it came. The request log never writes the query
 *     string, so such a key is not logged.
 *   - PostHog's paths end with a slash; the same path without it is served too
 *     (`/api/…/plugin_configs` → `/api/…/plugin_configs/`, query kept), by rewriting `req.url`
 *     before the validator matches it. `req.originalUrl` (pagination links, the request log)
 *     keeps what the client sent.
 *   - A HEAD request runs the API path as a GET (`req.method` is `'GET'` from here on), as
 *     Express's router runs a GET route for HEAD and Django answers HEAD with the view's GET:
 *     routing, authentication, scopes and rate limits are GET's, and Node sends the status and
 *     the headers (`Content-Length` included) without the body, since the response was made for
 *     a HEAD request. `requestMethod(req)` gives the method the client sent, for the error
 *     handler (a 405 names HEAD); the request log keeps it from the start (logging.ts).
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { ApiError } from '../domain/errors.js';
import { toApiError } from './errors.js';

/** A request whose body error waits for the security handler (module doc). */
export interface DeferredBodyRequest extends Request {
  /** a body parse error (malformed JSON, too large), raised after the key and scope checks pass */
  deferredBodyError?: ApiError;
}

/**
 * Mounted right after `express.json()`: any error it passes on is the body's, kept on the request
 * as PostHog's `ApiError` (`deferredBodyError`); the request goes on without a body.
 */
export const deferBodyError: ErrorRequestHandler = function deferBodyError(err, req, _res, next) {
  (req as DeferredBodyRequest).deferredBodyError = toApiError(err, { method: req.method, contentType: req.headers['content-type'] });
  req.body = undefined;
  next();
};

/**
 * The JSON body step (module doc): `express.json({limit, strict: false})` (any JSON value, as DRF's
 * parser; `limit` as body-parser reads it, e.g. `'1mb'`), then `deferBodyError`. A POST, PUT or
 * PATCH with no body and no Content-Type reads as `{}` (DRF's empty data: the operation's
 * required fields answer 400). Other requests without a body, or with another media type, leave
 * `req.body` undefined (the validator answers 415 where an operation wants JSON).
 */
export function jsonBody(limit: string): [RequestHandler, ErrorRequestHandler] {
  const json = express.json({ limit, strict: false });
  // a request without a body (no Content-Length, no Transfer-Encoding: body-parser's own test,
  // type-is `hasBody`) has nothing to parse: most API requests are GETs, so they skip the parser
  const parseJson: RequestHandler = function parseJson(req, res, next) {
    const empty =
      req.headers['transfer-encoding'] === undefined &&
      (req.headers['content-length'] === undefined || req.headers['content-length'] === '0');
    // a write with no body at all reads as an empty JSON object, as DRF reads it (PostHog answers
    // the fields it requires with 400, not 415)
    if (empty && req.headers['content-type'] === undefined && WRITES.has(req.method)) {
      req.headers['content-type'] = 'application/json';
      req.body = {};
      return next();
    }
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return next();
    return json(req, res, next);
  };
  return [parseJson, deferBodyError];
}

/** The methods whose empty body (no bytes, no Content-Type) reads as `{}`. */
const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** The requests `normaliseRequest` runs as GET. */
const headRequests = new WeakSet<Request>();

/**
 * The request as the API path reads it (module doc): the trailing slash added to an `/api/…`
 * path that lacks it, HEAD run as GET. Mount after the body step, before the validator.
 */
export const normaliseRequest: RequestHandler = function normaliseRequest(req, _res, next) {
  const url = req.url;
  const q = url.indexOf('?');
  const p = q === -1 ? url : url.slice(0, q);
  if (p.startsWith('/api/') && !p.endsWith('/')) req.url = `${p}/${q === -1 ? '' : url.slice(q)}`;
  if (req.headers.authorization === undefined) {
    const key = keyOutsideHeader(req, q === -1 ? '' : url.slice(q + 1));
    if (key !== undefined) req.headers.authorization = `Bearer ${key}`;
  }
  if (req.method === 'HEAD') {
    req.method = 'GET';
    headRequests.add(req);
  }
  next();
};

/**
 * A personal API key sent where PostHog's `PersonalAPIKeyAuthentication` also looks for one
 * (posthog/auth.py `find_key_with_source`, after the header): a `personal_api_key` field of a JSON
 * object body, then the `personal_api_key` query parameter; undefined when neither holds one.
 */
function keyOutsideHeader(req: Request, query: string): string | undefined {
  const body = req.body as unknown;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const inBody = (body as Record<string, unknown>)['personal_api_key'];
    if (typeof inBody === 'string' && inBody !== '') return inBody;
  }
  if (!query.includes('personal_api_key=')) return undefined;
  const inQuery = new URLSearchParams(query).get('personal_api_key');
  return inQuery === null || inQuery === '' || /\s/.test(inQuery) ? undefined : inQuery;
}

/** The method the client sent: `'HEAD'` for a request `normaliseRequest` runs as GET, else `req.method`. */
export function requestMethod(req: Request): string {
  return headRequests.has(req) ? 'HEAD' : req.method;
}
