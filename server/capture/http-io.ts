/**
 * The capture stage's HTTP plumbing (node:http, before Express's body parsers): reading a body up to a
 * byte limit, PostHog's CORS headers, and sending a complete answer. Used by server/capture/index.ts
 * for the capture paths and the SDK start-up calls alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CaptureError } from './errors.js';

/** `Content-Type` of the JSON answers. */
export const JSON_TYPE = 'application/json';
/** `Content-Type` of PostHog's plain-text capture and flags errors. */
export const TEXT_TYPE = 'text/plain; charset=utf-8';

/** Reads the body up to `limit` bytes; rejects with `CaptureError` 413 past it (declared or read). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new CaptureError(413, 'length limit exceeded'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new CaptureError(413, 'length limit exceeded'));
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * CORS headers of every answer of the capture stage, as PostHog's capture service sets them
 * (rust/capture/src/router.rs): the request's `Origin` echoed, with credentials allowed.
 */
export function setCors(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  res.setHeader('Vary', 'origin, access-control-request-method, access-control-request-headers');
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  }
}

/**
 * Answers a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`): 200, `allowMethods`,
 * the requested headers mirrored. Returns false for an `OPTIONS` that is not a preflight.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, allowMethods: string): boolean {
  if (req.headers['access-control-request-method'] === undefined) return false;
  res.setHeader('Access-Control-Allow-Methods', allowMethods);
  const headers = req.headers['access-control-request-headers'];
  if (headers) res.setHeader('Access-Control-Allow-Headers', headers);
  res.statusCode = 200;
  res.setHeader('Content-Length', '0');
  res.end();
  return true;
}

/** Sends a complete answer: `status`, `body` (UTF-8 text) as `contentType`, and extra `headers`. */
export function send(res: ServerResponse, status: number, body: string, contentType: string, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
