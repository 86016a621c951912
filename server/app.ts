/**
 * `createApp(deps)`: the Express application, without `listen()`.
 *
 * Pipeline, one sequence of middlewares (`inSequence`) served without Express's router
 * (`handleWithoutRouter`), then the error handler: request log + request id
 * (pino) → one middleware for `/_health`, `/_readyz` (outside the spec and auth), trailing-slash
 * normalisation and the JSON body (1 MiB; skipped without a body) → express-openapi-validator
 * (route match, memoised per method and path; security with scopes read from the spec, then the
 * per-key rate limit, then request validation, response validation when enabled) → one dispatch
 * on the operationId the validator matched, to the handler map → PostHog-shaped errors. The spec
 * is parsed once, here, not per request; without response validation the validator is given the
 * spec without response schemas (`withoutResponseSchemas`).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { Logger } from 'pino';
import { createServices, type Services } from './domain/services.js';
import { handlers as defaultHandlers } from './handlers/index.js';
import { handleWithoutRouter, inSequence } from './http/compose.js';
import { ApiError, notFound, toApiError, validationError } from './http/errors.js';
import { healthRoutes } from './http/health.js';
import { JsonText } from './http/json-text.js';
import { assertRequestText } from './http/request-text.js';
import { defaultLogger, requestLogger } from './http/logging.js';
import { rateLimitMiddleware, readRateLimitConfig, type RateLimitConfig } from './http/rate-limit.js';
import { personalApiKeyHandler, type AuthedRequest } from './http/security.js';
import { listOperations, loadSpec, withoutResponseSchemas, type OpenApiDocument } from './http/spec.js';
import type { HandlerContext, HandlerMap, OperationId } from './http/typed.js';
import { installRouteRegexpCache, memoiseRouteMatch, skipUnusedSpecSchemaCompile } from './http/validator-tuning.js';
import type { EventsReads } from './read-pool/index.js';
import type { Store } from './storage/db.js';

/** What the app is built from. */
export interface AppDeps {
  store: Store;
  /** validate every response against the spec (on in tests and development; default true) */
  validateResponses?: boolean;
  /** handler map (default: the project's handlers) */
  handlers?: HandlerMap;
  /** the parsed spec (default: `openapi.yaml`) */
  spec?: OpenApiDocument;
  /** called with unexpected errors (500s); default: logged at level error */
  onServerError?: (err: unknown, req: Request) => void;
  /** per-key rate limits; `false` disables them (default: from the environment, on) */
  rateLimit?: RateLimitConfig | false;
  /** request logger (default: pino on stdout at `LOG_LEVEL`, silent under vitest) */
  logger?: Logger;
  /** test only: `GET /_health?slow=1` waits this long (from `ENVAPI_TEST_SLOW_MS`) */
  slowHealthMs?: number;
  /**
   * the events list and values reads, usually a worker pool (`createEventsReads`, server/read-pool/)
   * that the caller closes after the server; default: on the main thread
   */
  eventsReads?: EventsReads;
}

/** Largest accepted request body. */
export const BODY_LIMIT = '1mb';

/** The absolute URL of a request as the client sent it (for pagination links). */
function requestUrl(req: Request): URL {
  return new URL(req.originalUrl, `${req.protocol}://${req.get('host') ?? 'localhost'}`);
}

/**
 * 400 for a query number the validator let through but no integer is: ajv coerces `Infinity`,
 * `-Infinity` and `1e400` to non-finite numbers and passes them (found by the contract fuzzer);
 * DRF answers "A valid integer is required.".
 */
function assertFiniteQuery(query: unknown): void {
  if (!query || typeof query !== 'object') return;
  const q = query as Record<string, unknown>;
  for (const key in q) {
    const value = q[key];
    if (typeof value === 'number' && !Number.isFinite(value)) throw validationError('A valid integer is required.', key);
  }
}

/** What every handler gets; `url` is built on first use (only list operations read it, for their links). */
class Context {
  private builtUrl: URL | undefined;
  constructor(
    readonly operationId: OperationId,
    readonly params: Record<string, unknown>,
    readonly query: unknown,
    readonly body: unknown,
    readonly auth: AuthedRequest['auth'],
    readonly services: Services,
    private readonly req: Request,
  ) {}

  get url(): URL {
    return (this.builtUrl ??= requestUrl(this.req));
  }
}

/** The `Content-Type` Express gives JSON (`res.json`), sent with already-serialized bodies. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a JSON body that is already bytes or text, without Express's `res.send` (which, for a body
 * that is already serialized, only re-derives the content type, checks freshness against
 * validators this API never sets, and encodes the text again).
 */
function sendSerialized(res: Response, body: string | Buffer): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/** Adapts one typed handler to Express: builds the context, sends the reply, forwards errors. */
function route(operationId: OperationId, map: HandlerMap, services: Services, validatesResponses: boolean) {
  const handler = map[operationId] as unknown as (ctx: HandlerContext<OperationId>) => Promise<{
    status: number;
    body?: unknown;
    contentType?: string;
    headers?: Record<string, string>;
  }>;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertFiniteQuery(req.query);
      const pathParams = (req as Request & { openapi?: { pathParams?: Record<string, unknown> } }).openapi?.pathParams;
      // The same coercion lets `Infinity` through as an integer id: it names no object (404, as DRF).
      if (pathParams) for (const k in pathParams) if (typeof pathParams[k] === 'number' && !Number.isFinite(pathParams[k])) throw notFound();
      const params = pathParams ? { ...req.params, ...pathParams } : { ...req.params };
      // NUL and lone surrogates in the query or body: 400 on both stores (PostgreSQL cannot hold NUL)
      assertRequestText({ operation: (req as Request & { openapi?: { schema?: { parameters?: unknown; requestBody?: unknown } } }).openapi?.schema, query: req.query, body: req.body });
      const ctx = new Context(operationId, params, req.query, req.body, (req as AuthedRequest).auth, services, req) as unknown as HandlerContext<OperationId>;
      const reply = await handler(ctx);
      if (reply.headers) res.set(reply.headers);
      res.status(reply.status);
      const { body } = reply;
      if (body === undefined) res.end();
      else if (reply.contentType && reply.contentType !== 'application/json') res.type(reply.contentType).send(body);
      // JSON goes through res.json when the response validator must see it (tests, development);
      // otherwise it is written as is (a JsonText is already serialized)
      else if (validatesResponses) res.json(body instanceof JsonText ? JSON.parse(body.toString()) : body);
      else sendSerialized(res, body instanceof JsonText ? body.text : JSON.stringify(body));
    } catch (err) {
      next(err);
    }
  };
}

/** `mw` until it has once called `next()` without an error; from then on, only `next()`. */
function untilFirstSuccess(mw: express.RequestHandler): express.RequestHandler {
  let passed = false;
  return (req, res, next) => {
    if (passed) return next();
    return mw(req, res, (err?: unknown) => {
      if (err === undefined) passed = true;
      next(err);
    });
  };
}

/** Builds the application. Throws at build time if the spec has an operation without a handler. */
export function createApp(deps: AppDeps): express.Express {
  const spec = deps.spec ?? loadSpec();
  const map = deps.handlers ?? defaultHandlers;
  const services = createServices(deps.store, deps.eventsReads);
  const logger = deps.logger ?? defaultLogger();
  const onServerError = deps.onServerError ?? ((err: unknown) => logger.error({ err }, 'unexpected error'));
  const rateLimit = deps.rateLimit === undefined ? readRateLimitConfig() : deps.rateLimit;
  installRouteRegexpCache();
  skipUnusedSpecSchemaCompile();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // One middleware before the validator, not three (health probes, the trailing slash, the JSON body)
  const health = healthRoutes(deps.store, { slowHealthMs: deps.slowHealthMs });
  // A body that cannot be parsed is reported only after authentication and the scope check, as
  // PostHog (DRF) reads the body after its permission checks: the parse error waits on the request
  // and the security handler raises it once the key is accepted.
  const parseJson = express.json({ limit: BODY_LIMIT, strict: false });
  const beforeValidator: express.RequestHandler = (req, res, next) => {
    if (req.url.startsWith('/_')) return health(req, res, next);
    // PostHog's paths end with a slash; accept the same path without it.
    const q = req.url.indexOf('?');
    const p = q === -1 ? req.url : req.url.slice(0, q);
    if (p.startsWith('/api/') && !p.endsWith('/')) req.url = p + '/' + (q === -1 ? '' : req.url.slice(q));
    // no body (no Content-Length, no Transfer-Encoding: body-parser's own test): nothing to parse
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      req.body = undefined;
      return next();
    }
    parseJson(req, res, (err?: unknown) => {
      if (err) {
        (req as AuthedRequest).deferredBodyError = toApiError(err, { method: req.method, contentType: req.headers['content-type'] });
        req.body = undefined;
      }
      next();
    });
  };
  const validator = OpenApiValidator.middleware({
    // without response validation (production) the validator gets no response schemas to compile
    apiSpec: (deps.validateResponses === false ? withoutResponseSchemas(spec) : spec) as never,
    validateRequests: { allowUnknownQueryParameters: true, removeAdditional: true },
    validateResponses: deps.validateResponses === false ? false : { removeAdditional: false },
    validateSecurity: { handlers: { PersonalAPIKeyAuth: personalApiKeyHandler(deps.store) } },
    validateFormats: true,
    // The spec is checked where it changes: Redocly lints it (recommended-strict) and the contract
    // tests read it, in CI. Checking it again against the OpenAPI meta-schema at every start cost
    // ~200 ms of cold start (docs/performance.md).
    validateApiSpec: false,
    // no multipart/form-data in the spec: without this the library adds a middleware that checks
    // every request for one
    fileUploader: false,
    // match on req.url, which the trailing-slash step above has normalised
    useRequestUrl: true,
  }) as unknown as express.RequestHandler[];
  // The library's first middleware installs `app.param` handlers (for Express routes with path
  // parameters, which this app does not have: it dispatches on the operationId below) and reports a
  // spec that failed to load. Both are done once it has passed: after that it is skipped.
  const pathParams = validator.findIndex((mw) => mw.name === 'pathParamsMiddleware');
  if (pathParams !== -1) validator[pathParams] = untilFirstSuccess(validator[pathParams]!);
  const metadata = validator.findIndex((mw) => mw.name === 'metadataMiddleware');
  if (metadata !== -1) validator[metadata] = memoiseRouteMatch(validator[metadata]!);
  if (rateLimit) {
    // Throttle after authentication and the scope check (the key is known and valid, as DRF's
    // check_throttles after check_permissions), before request validation (invalid requests count).
    const afterSecurity = validator.findIndex((mw) => mw.name === 'securityMiddleware');
    validator.splice(afterSecurity === -1 ? validator.length : afterSecurity + 1, 0, rateLimitMiddleware({ logger, ...rateLimit }));
  }

  // The validator has already matched the request to one operation of the spec (unknown paths and
  // methods were answered 404/405 there): dispatch on its operationId instead of matching the path a
  // second time through one Express route per operation.
  const routes = new Map<string, ReturnType<typeof route>>();
  for (const op of listOperations(spec)) {
    if (!(op.operationId in map)) throw new Error(`openapi.yaml operation ${op.operationId} has no handler`);
    routes.set(op.operationId, route(op.operationId as OperationId, map, services, deps.validateResponses !== false));
  }
  const dispatch: express.RequestHandler = (req, res, next) => {
    const operationId = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
    const handle = operationId === undefined ? undefined : routes.get(operationId);
    if (!handle) return next(notFound());
    return handle(req, res, next);
  };

  // The whole request path is one sequence of middlewares (`inSequence`), served without Express's
  // router (`handleWithoutRouter`): the router's per-layer step, then its per-request closures,
  // were ~6 % of a keyed GET's CPU each time (docs/performance.md).
  const onError = (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const securityError = (req as AuthedRequest).securityError;
    const apiError: ApiError =
      securityError ?? toApiError(err, { method: req.method, contentType: req.headers['content-type'], body: req.body, query: req.query, params: req.params });
    // 503 and 504 are answers the server chose (busy, a query past its budget), not faults
    if (apiError.status === 500) onServerError(err, req);
    res.status(apiError.status).set(apiError.headers).json(apiError.body);
  };
  handleWithoutRouter(app, inSequence(requestLogger(logger), beforeValidator, ...validator, dispatch), onError, notFound, onServerError);
  return app;
}
