/**
 * Target A of `npm run bench:http`, the framework's limit: a bare Express 5 app with
 * `express.json()` that answers each benchmarked path with the bytes envapi returned for it
 * (captured by bench-http.ts first). No validation, no authentication, no storage.
 *
 *   node --import tsx scripts/bench-http-bare.ts --routes FILE --port N [--host 127.0.0.1]
 *
 * FILE is JSON: `[{method, path, query, status, contentType, body}]` with `body` in base64 and
 * `query` the raw query string ('' for none). One Express route is registered per (method, path),
 * as an app would; the handler picks the captured reply by query string. Settings match envapi's
 * app (`x-powered-by` and ETag off), so both send the same headers and the same body bytes.
 * Prints `listening on http://HOST:PORT` once ready; exits on SIGTERM/SIGINT.
 *
 * With `--envapi-plumbing` (target A′): the same replies, served the way envapi serves its app
 * instead of through Express's router and `app.listen`: `express.json()` then a lookup by method
 * and path, in one `inSequence`, through `handleWithoutRouter` and `createHttpServer`
 * (server/http/compose.ts). It tells what envapi's own request path costs beyond what the same
 * plumbing costs bare.
 */
import fs from 'node:fs';
import type { Server } from 'node:http';
import { Command } from 'commander';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createHttpServer, handleWithoutRouter, inSequence } from '../server/http/compose.js';

/** One captured reply. */
export interface CapturedRoute {
  method: 'get' | 'post' | 'patch' | 'put' | 'delete';
  path: string;
  query: string;
  status: number;
  contentType: string;
  /** base64 of the response body */
  body: string;
}

/** One captured reply as sent. */
interface Reply {
  status: number;
  contentType: string;
  body: Buffer;
}

/** The captured replies by `METHOD path` (method upper-cased), then by raw query string. */
function replyTables(routes: CapturedRoute[]): Map<string, Map<string, Reply>> {
  const byRoute = new Map<string, Map<string, Reply>>();
  for (const r of routes) {
    const key = `${r.method.toUpperCase()} ${r.path}`;
    const replies = byRoute.get(key) ?? new Map<string, Reply>();
    byRoute.set(key, replies);
    replies.set(r.query, { status: r.status, contentType: r.contentType, body: Buffer.from(r.body, 'base64') });
  }
  return byRoute;
}

/** Sends the reply captured for the request's query string (the route's first one otherwise). */
function sendReply(req: Request, res: Response, replies: Map<string, Reply>): void {
  const q = req.originalUrl.indexOf('?');
  const reply = replies.get(q === -1 ? '' : req.originalUrl.slice(q + 1)) ?? replies.values().next().value!;
  res.status(reply.status).type(reply.contentType).send(reply.body);
}

/** Builds the bare app from the captured replies. */
export function bareApp(routes: CapturedRoute[]): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: '1mb' }));
  for (const [key, replies] of replyTables(routes)) {
    const [method, path] = key.split(' ') as [string, string];
    app[method.toLowerCase() as CapturedRoute['method']](path, (req: Request, res: Response) => sendReply(req, res, replies));
  }
  return app;
}

/** The bare replies served as envapi serves its app (see the module docstring), not listening yet. */
export function bareServerWithEnvapiPlumbing(routes: CapturedRoute[]): Server {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const byRoute = replyTables(routes);
  const reply = (req: Request, res: Response, next: NextFunction) => {
    const replies = byRoute.get(`${req.method} ${req.path}`);
    if (!replies) return next();
    sendReply(req, res, replies);
  };
  const notFound = Object.assign(new Error('not found'), { status: 404 });
  handleWithoutRouter(
    app,
    inSequence(express.json({ limit: '1mb' }), reply),
    (err: unknown, _req: Request, res: Response, _next: NextFunction) => void res.status((err as { status?: number }).status ?? 500).end(),
    () => notFound,
    () => undefined,
  );
  return createHttpServer(app);
}

const program = new Command('bench-http-bare')
  .description('bare Express 5 app replaying captured envapi replies (target A of bench:http)')
  .requiredOption('--routes <file>', 'JSON file of captured replies')
  .requiredOption('--port <n>', 'port', (v) => Number(v))
  .option('--host <host>', 'interface', '127.0.0.1')
  .option('--envapi-plumbing', 'serve as envapi serves its app (target A′): without the router, on createHttpServer', false)
  .action((o: { routes: string; port: number; host: string; envapiPlumbing: boolean }) => {
    const routes = JSON.parse(fs.readFileSync(o.routes, 'utf8')) as CapturedRoute[];
    const ready = () => console.log(`listening on http://${o.host}:${o.port}`);
    const server = o.envapiPlumbing ? bareServerWithEnvapiPlumbing(routes).listen(o.port, o.host, ready) : bareApp(routes).listen(o.port, o.host, ready);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.close(() => process.exit(0)));
  });

program.parse();
