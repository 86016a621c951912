/**
 * `inSequence(...middlewares)`: several Express middlewares run as one Express layer;
 * `handleWithoutRouter`, which serves an app through one such sequence without Express's router
 * (and answers HEAD as GET without a body, as Express's router and Django do);
 * and `createHttpServer`, whose requests and responses are born with the app's prototypes.
 *
 * Why: Express 5's router costs a few microseconds per layer on every request (`next()` walks the
 * layer stack, re-reads the path through parseurl, matches the layer, resets `req.params`); with the
 * request log, the pre-validator step, express-openapi-validator's middlewares and the dispatch,
 * that was ~6 % of a keyed GET's CPU spent deciding to call the next function in a fixed list
 * (profile in docs/performance.md). Here each middleware is called directly, in order.
 *
 * Semantics kept from Express 5 for a list of plain (non-error, non-routing) middlewares:
 * - `next()` calls the following middleware; after the last one, the outer `next()`;
 * - `next(err)` (any value other than undefined, `'route'` or `'router'`) skips the rest and calls
 *   the outer `next(err)`; `'route'` and `'router'` leave the sequence like `next()` after the last;
 * - a middleware that throws, or returns a promise that rejects, is treated as `next(err)` (a
 *   rejection with a falsy value becomes an `Error`, as in Express 5);
 * - a middleware that calls `next` more than once advances only once: an extra `next()` is
 *   ignored, an extra `next(err)` goes to the outer `next(err)` unless the answer has been sent
 *   (express-openapi-validator reports an answer that fails response validation that way).
 *
 * Differences: `req.params` is not reset between the middlewares (nothing here reads
 * Express route params), and error-handling middlewares (four parameters) are not allowed:
 * `inSequence` throws a TypeError when given one, at build time.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';

/** Returns one middleware that runs `middlewares` in order (see the module docstring). */
export function inSequence(...middlewares: RequestHandler[]): RequestHandler {
  for (const mw of middlewares) {
    if (typeof mw !== 'function') throw new TypeError('inSequence: every middleware must be a function');
    if (mw.length >= 4) throw new TypeError(`inSequence: error-handling middleware ${mw.name || '(anonymous)'} is not supported`);
  }
  const count = middlewares.length;
  return function sequence(req: Request, res: Response, done: NextFunction): void {
    const step = (index: number): void => {
      if (index === count) return done();
      let called = false;
      const next = (err?: unknown): void => {
        if (called) {
          // An error reported after this middleware had passed: express-openapi-validator's
          // response validation calls its middleware's next(err) from inside res.json, when an
          // answer does not match the spec. Express's router takes such an error to the error
          // handler; so does this (ignoring it left the request unanswered).
          if (err !== undefined && err !== 'route' && err !== 'router' && !res.headersSent) done(err);
          return;
        }
        called = true;
        if (err !== undefined && err !== 'route' && err !== 'router') return done(err);
        if (err !== undefined) return done();
        step(index + 1);
      };
      try {
        const result = middlewares[index]!(req, res, next) as unknown;
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then(undefined, (err: unknown) => next(err ?? new Error('Rejected promise')));
        }
      } catch (err) {
        next(err ?? new Error('Thrown value was falsy'));
      }
    };
    step(0);
  };
}

/**
 * Makes `app` answer every request with `pipeline`, then `onError` for an error it passes on,
 * without Express's router (the app then has no routes or `app.use` layers of its own).
 *
 * Why: with the whole request path in one middleware (`inSequence`), the router had only that
 * layer and the error handler to walk, yet its `handle`/`next` (closures, the path re-read through
 * parseurl, layer matching) and the `finalhandler` built for every request were ~6 % of a keyed
 * GET's CPU and ~20 % of its allocations (paired run and allocation profile, docs/performance.md).
 *
 * What Express 5's `app.handle` and router do for one layer mounted at `/` is kept: `req.res`,
 * `res.req`, the app's request/response prototypes (so `req.app`, `req.query`, `res.json`… work),
 * `res.locals`, `req.originalUrl`, `req.baseUrl` `''`, `req.params` `{}`, and `req.next` (which
 * leads to `onError`). A throw or a rejected promise from `pipeline` is an error passed on.
 * `pipeline` ending with `next()` gives `onError` a 404 from `notFoundError`, unless it has already
 * answered. What `onError` leaves unanswered ends as finalhandler would end it: `next(err)`, a throw
 * or a rejection is reported to `onUnhandled` and answered with a bare 500 (headers `onError` set
 * are removed; the connection is destroyed instead when the headers were already sent), `next()`
 * with a bare 404. Not kept: the `X-Powered-By` header (envapi turns it off), the router's
 * diagnostics channel, and routes or `app.use` layers: once this has run, `app.use`, `app.route`,
 * `app.all` and every `app.<method>` route (`app.get(path, …)`; `app.get(setting)` still reads a
 * setting) throw a `RouteAfterPipelineError`, since no router would ever reach them. Routes are added
 * to the pipeline: an operation in `openapi.yaml` plus its handler in the handler map
 * (server/handlers/), or a step of the pipeline in `createApp` (server/app.ts; the request path is
 * drawn in server/http/openapi-pipeline.ts). `app.param` stays (the validator calls it).
 *
 * HEAD: as Express's router runs a GET route for a HEAD request that has no HEAD route, and as
 * Django answers HEAD with the view's GET, a HEAD request goes through `pipeline` as a GET
 * (`req.method` is `'GET'` there, so routing, authentication, scopes and rate limits are GET's),
 * and Node sends no body: the response object was made for a HEAD request, so Node writes the
 * status and headers (`Content-Length` and `Content-Type` included, as the GET sets them) and drops
 * the body. `req.method` is `'HEAD'` again for `onError` (a 405 names HEAD) and when the response
 * closes (the request log says HEAD).
 */
export function handleWithoutRouter(
  app: Express,
  pipeline: RequestHandler,
  onError: ErrorRequestHandler,
  notFoundError: () => unknown,
  onUnhandled: (err: unknown, req: Request) => void,
): void {
  const request = app.request;
  const response = app.response;
  const endBare = (req: Request, res: Response, status: number) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.statusCode = status;
    res.end();
  };
  const fail = (err: unknown, req: Request, res: Response) => {
    onUnhandled(err, req);
    endBare(req, res, 500);
  };
  /** Calls `mw` as the router would: a throw or a rejected promise goes to `onThrow`. */
  const guarded = (mw: (req: Request, res: Response, next: NextFunction) => unknown, req: Request, res: Response, next: NextFunction, onThrow: (err: unknown) => void) => {
    try {
      const result = mw(req, res, next);
      if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(undefined, (e: unknown) => onThrow(e ?? new Error('Rejected promise')));
    } catch (e) {
      onThrow(e ?? new Error('Thrown value was falsy'));
    }
  };
  refuseRoutes(app);
  (app as Express & { handle: (req: IncomingMessage, res: ServerResponse) => void }).handle = (rawReq, rawRes) => {
    const req = rawReq as Request;
    const res = rawRes as Response;
    req.res = res;
    res.req = req;
    // already in the chain when the server is `createHttpServer`'s (see there: much cheaper)
    if (!Object.prototype.isPrototypeOf.call(request, req)) Object.setPrototypeOf(req, request);
    if (!Object.prototype.isPrototypeOf.call(response, res)) Object.setPrototypeOf(res, response);
    res.locals ??= Object.create(null) as Response['locals'];
    req.originalUrl ??= req.url;
    req.baseUrl = '';
    req.params = {};
    // HEAD runs the pipeline as GET (see the docstring); the request log and errors see HEAD
    const head = req.method === 'HEAD';
    if (head) {
      req.method = 'GET';
      // registered before the pipeline's own 'close' listeners (the request log's), so it runs first
      res.once('close', () => (req.method = 'HEAD'));
    }
    const done = (err?: unknown) => {
      if (head) req.method = 'HEAD';
      // answered, then next(): nothing more to do (finalhandler's "cannot 404 after headers sent")
      if (err === undefined && res.headersSent) return;
      const error = err === undefined ? notFoundError() : err;
      const onErrorNext = (next?: unknown) => (next === undefined ? endBare(req, res, 404) : fail(next, req, res));
      guarded((q, s, n) => onError(error, q, s, n), req, res, onErrorNext, (e) => fail(e, req, res));
    };
    // what res.format, res.sendFile and res.render call on an error, as under the router
    req.next = done;
    guarded(pipeline, req, res, done, done);
  };
}

/** Thrown by `app.use`, `app.get(path, …)`… on an app served by `handleWithoutRouter`. */
export class RouteAfterPipelineError extends Error {
  constructor(call: string) {
    super(
      `${call}: this app is served without Express's router (handleWithoutRouter, server/http/compose.ts), ` +
        'so a route or middleware added this way would never be reached. Add an operation to openapi.yaml and its ' +
        'handler to the handler map (server/handlers/), or a step to the request pipeline in createApp (server/app.ts).',
    );
    this.name = 'RouteAfterPipelineError';
  }
}

/** The app's route-adding methods: `use`, `route`, `all` and one per HTTP method Express defines. */
const ROUTE_METHODS = ['use', 'route', 'all', ...http.METHODS.map((m) => m.toLowerCase())];

/** Makes every route-adding method of `app` throw `RouteAfterPipelineError` (`app.get(setting)` still reads). */
function refuseRoutes(app: Express): void {
  const methods = app as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ROUTE_METHODS) {
    const original = methods[name];
    if (typeof original !== 'function') continue;
    methods[name] = function (this: unknown, ...args: unknown[]) {
      // Express's app.get with one argument is the settings getter, not a route
      if (name === 'get' && args.length === 1) return original.apply(this, args);
      throw new RouteAfterPipelineError(`app.${name}(${typeof args[0] === 'string' ? JSON.stringify(args[0]) : '…'})`);
    };
  }
}

/**
 * An HTTP server for `app` (not listening yet) whose requests and responses are created with the
 * app's request and response prototypes already in their chain (Node's `IncomingMessage` and
 * `ServerResponse` server options: subclasses whose prototypes inherit from `app.request` and
 * `app.response`), so that `handleWithoutRouter` does not have to `Object.setPrototypeOf` them.
 *
 * Why: Express gives every request and response its prototypes with `Object.setPrototypeOf` (as
 * `handleWithoutRouter` still does for objects made by another server, e.g. `app.listen`'s). An
 * object whose prototype is changed after it was built gets a new hidden class, and every
 * property access to it in Node's HTTP and stream code, Express and the validator then meets
 * more than one shape per call site. Created with the right prototype from the start, a keyed GET
 * took about a third of the CPU (docs/performance.md). The objects are the same otherwise:
 * `instanceof http.IncomingMessage`/`http.ServerResponse` still hold, and Express's methods and
 * `req.app` are found through the chain.
 */
export function createHttpServer(app: Express): http.Server {
  class AppRequest extends http.IncomingMessage {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  class AppResponse<R extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<R> {}
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return http.createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse }, app);
}
