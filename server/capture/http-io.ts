/**
 * The capture endpoints' HTTP steps, on Express's router (server/capture/index.ts mounts them per
 * route): reading a body up to a byte limit (`raw-body`, the reader under Express's own body
 * parsers, since decode.ts needs the bytes as sent: gzip, base64, lz-string, forms), PostHog's CORS
 * headers (the `cors` package), the preflight answer, the 405, and sending a complete answer.
 */
import type { ServerResponse } from 'node:http';
import cors from 'cors';
import type { Request, RequestHandler, Response } from 'express';
import getRawBody from 'raw-body';
import { CaptureError } from './errors.js';

/** `Content-Type` of the JSON answers. */
export const JSON_TYPE = 'application/json';
/** `Content-Type` of PostHog's plain-text capture and flags errors. */
export const TEXT_TYPE = 'text/plain; charset=utf-8';
/** The answer of a capture, and of an `OPTIONS` that is not a preflight. */
export const OK_BODY = '{"status":"Ok"}';

/** A request whose body `readBody` has read. */
export interface BodyRequest extends Request {
  body: Buffer | undefined;
}

/**
 * Reads the body as bytes, up to `limit` bytes, into `req.body` (a Buffer; nothing is decoded:
 * `Content-Encoding` is read by decode.ts). Past the limit, declared (`Content-Length`) or read,
 * the request fails with `CaptureError` 413 `length limit exceeded` (PostHog's text); a body that
 * ends before its declared length, or a client that goes away, with 400.
 */
export function readBody(limit: number): RequestHandler {
  return function readCaptureBody(req, _res, next) {
    getRawBody(req, { limit, length: req.headers['content-length'] }).then(
      (body) => {
        (req as BodyRequest).body = body;
        next();
      },
      (err: { type?: string; status?: number; message?: string }) => {
        if (err.type === 'entity.too.large') return next(new CaptureError(413, 'length limit exceeded'));
        if (err.status === 400) return next(new CaptureError(400, err.message ?? 'request body not received'));
        next(err);
      },
    );
  };
}

/** PostHog's capture `Vary` (rust/capture/src/router.rs, tower-http's CORS layer). */
const VARY = 'origin, access-control-request-method, access-control-request-headers';

/**
 * CORS as PostHog's capture service answers it (rust/capture/src/router.rs): the request's
 * `Origin` echoed with credentials allowed, `Vary` on the three request fields; on a preflight
 * (`OPTIONS`), `allowMethods` (e.g. `'GET,POST,OPTIONS'`) and the requested headers mirrored. The
 * `OPTIONS` itself is answered by `optionsAnswer`, next on the route.
 */
export function captureCors(allowMethods: string): RequestHandler[] {
  const vary: RequestHandler = (_req, res, next) => {
    res.setHeader('Vary', VARY);
    next();
  };
  return [vary, cors({ origin: true, credentials: true, methods: allowMethods, preflightContinue: true })];
}

/**
 * Answers an `OPTIONS`: a CORS preflight (with `Access-Control-Request-Method`) 200 without a
 * body, as PostHog's CORS layer; any other `OPTIONS` 200 `{"status":"Ok"}`, as PostHog's
 * capture routes answer it.
 */
export const optionsAnswer: RequestHandler = function optionsAnswer(req, res) {
  if (req.headers['access-control-request-method'] !== undefined) {
    res.statusCode = 200;
    res.setHeader('Content-Length', '0');
    res.end();
  } else send(res, 200, OK_BODY, JSON_TYPE);
};

/** The 405 of a method a capture route does not take, with `Allow` listing `allowMethods` (`'GET,POST,OPTIONS'`). */
export function methodNotAllowed(allowMethods: string): RequestHandler {
  const allow = allowMethods.replaceAll(',', ', ');
  return (_req, res) => send(res, 405, 'method not allowed', TEXT_TYPE, { Allow: allow });
}

/** Sends a complete answer: `status`, `body` (UTF-8 text) as `contentType`, and extra `headers`. */
export function send(
  res: ServerResponse | Response,
  status: number,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The query of a request as `URLSearchParams`, from the URL as sent (PostHog's capture reads `data`, `compression`, `ver`, `_`, `beacon`, `token`). */
export function queryOf(req: Request): URLSearchParams {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}
