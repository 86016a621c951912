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
 */
import fs from 'node:fs';
import { Command } from 'commander';
import express, { type Request, type Response } from 'express';

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

const program = new Command('bench-http-bare')
  .description('bare Express 5 app replaying captured envapi replies (target A of bench:http)')
  .requiredOption('--routes <file>', 'JSON file of captured replies')
  .requiredOption('--port <n>', 'port', (v) => Number(v))
  .option('--host <host>', 'interface', '127.0.0.1')
  .action((o: { routes: string; port: number; host: string }) => {
    const routes = JSON.parse(fs.readFileSync(o.routes, 'utf8')) as CapturedRoute[];
    const ready = () => console.log(`listening on http://${o.host}:${o.port}`);
    const server = bareApp(routes).listen(o.port, o.host, ready);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.close(() => process.exit(0)));
  });

program.parse();
