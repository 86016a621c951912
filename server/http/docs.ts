/**
 * `GET /docs`: the HTML API reference, outside the contract (like `/_health`: not in
 * `openapi.yaml`, no authentication, no rate limit), answered before the validator.
 *
 * The page is `generated/api-docs.html`, built from the contract (`generated/openapi.bundle.yaml`,
 * openapi.yaml with its `/api/projects/` copies) by Redocly's `build-docs` (@redocly/cli) with
 * `--inlineBundle` at generation time (`npm run gen`, scripts/gen-docs-html.mjs) and committed,
 * like `generated/openapi.json`; `npm run check:gen` fails when it is stale. It is
 * a committed file rather than an output of the `build` step because the server also runs from
 * its sources (tests and `npm run dev` run `server/` with tsx, without a build), and because
 * Redocly is a devDependency: a production install must serve the page without it. The build is
 * reproducible byte for byte, so the check is a plain comparison. The page holds Redoc's scripts
 * and the document itself: it loads nothing from another host (test/server/docs-page.test.ts
 * checks it in Chromium), and its `Content-Security-Policy` allows nothing but this server, inline
 * scripts and styles, and `data:`/`blob:` URLs.
 *
 * Answers: 200 `text/html` (gzip when the client accepts it: the page is several MB and
 * compresses well; compressed once, on first use); `HEAD` the same without a body; other methods 405
 * with `Allow: GET, HEAD`; 503 naming `npm run gen` when the file is missing.
 *
 * `GET /` leads a browser here (`rootRedirect`): when `Accept` prefers `text/html`
 * (negotiate.ts `prefersHtml`, DRF's choice between JSON and its browsable API), 302 with
 * `Location: /docs`; any other client (no `Accept`, `*∕*`, `application/json`) gets the JSON 404
 * it always got, from the validator, as PostHog's API answers a path it does not serve.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzip } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { prefersHtml } from './negotiate.js';
import { PROJECT_ROOT } from './spec.js';

/** Absolute path of the built reference page. */
export const DOCS_HTML_PATH = path.join(PROJECT_ROOT, 'generated', 'api-docs.html');

/** The page's Content-Security-Policy: this server, inline code (Redoc's bundle), data: and blob: URLs. */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** True when `Accept-Encoding` allows gzip (a `q=0` refuses it). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * The `/docs` handler (see the module doc) over `file` (default `DOCS_HTML_PATH`); the file is read
 * on first use and kept. It answers every method itself (405 but for GET and HEAD): mount it before
 * the validator with `app.all('/docs', …)`, which also serves `/docs/`.
 */
export function docsRoute(file = DOCS_HTML_PATH): (req: IncomingMessage, res: ServerResponse) => void {
  let page: Buffer | undefined;
  let gzipped: Promise<Buffer> | undefined;
  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    type: string,
    body: Buffer,
    headers: Record<string, string> = {},
  ) => {
    res.statusCode = status;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(req, res, 405, 'text/plain; charset=utf-8', Buffer.from(`Method "${req.method}" not allowed.\n`), { Allow: 'GET, HEAD' });
      return;
    }
    try {
      page ??= fs.readFileSync(file);
    } catch {
      send(req, res, 503, 'text/plain; charset=utf-8', Buffer.from('The API reference is not built: run `npm run gen`.\n'));
      return;
    }
    const html = page;
    const headers = {
      'Content-Security-Policy': DOCS_CSP,
      'Cache-Control': 'no-cache',
      Vary: 'Accept-Encoding',
      'X-Content-Type-Options': 'nosniff',
    };
    if (!acceptsGzip(req.headers['accept-encoding'])) {
      send(req, res, 200, 'text/html; charset=utf-8', html, headers);
      return;
    }
    gzipped ??= new Promise<Buffer>((resolve, reject) => gzip(html, (err, out) => (err ? reject(err) : resolve(out))));
    gzipped.then(
      (body) => send(req, res, 200, 'text/html; charset=utf-8', body, { ...headers, 'Content-Encoding': 'gzip' }),
      () => send(req, res, 200, 'text/html; charset=utf-8', html, headers),
    );
  };
}

/** Where `GET /` sends a browser. */
export const DOCS_PATH = '/docs';

/**
 * The `/` handler (see the module doc): a `GET` or `HEAD` whose `Accept` prefers `text/html` is
 * answered 302 to `/docs` (Express's `res.redirect`, with `Vary: Accept`, since the answer depends
 * on that header); every other request goes on (`next()`) to the validator, which answers the
 * JSON 404. Mount before the validator, for the path `/` and every method (`app.all('/', …)`).
 */
export function rootRedirect(req: Request, res: Response, next: NextFunction): void {
  res.vary('Accept');
  if ((req.method === 'GET' || req.method === 'HEAD') && prefersHtml(req.headers.accept)) return res.redirect(302, DOCS_PATH);
  next();
}
