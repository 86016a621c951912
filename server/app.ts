/**
 * `createApp(deps)`: the Express application, without `listen()`.
 *
 * The request path, step by step, is drawn at the top of server/http/openapi-pipeline.ts: one
 * sequence of middlewares (`inSequence`) served without Express's router (`handleWithoutRouter`),
 * request log → health probes, the HTML API reference (`/docs`, server/http/docs.ts; `GET /` in a
 * browser redirects there), the capture endpoints (server/capture/: PostHog's ingestion paths,
 * answered there), trailing slash and JSON body → express-openapi-validator with the route memo
 * and the per-key rate limit (`validatorPipeline`) → one dispatch on the operationId the
 * validator matched, to the handler map (plus `schema_retrieve`, the contract itself, answered by
 * server/http/schema.ts) → PostHog-shaped errors. Operations whose success answer is also `text/csv` answer CSV for
 * `Accept: text/csv` as for `format=csv` (`csvByAccept`). The spec is parsed once, here, not per
 * request. Routes are added to `openapi.yaml` and the handler map, never with `app.use`.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { createCaptureStage, type CaptureDeps } from './capture/index.js';
import { createServices, type Services } from './domain/services.js';
import { handlers as defaultHandlers } from './handlers/index.js';
import { handleWithoutRouter, inSequence } from './http/compose.js';
import { ApiError, notFound, validationError } from './domain/errors.js';
import { toApiError } from './http/errors.js';
import { healthRoutes } from './http/health.js';
import { docsRoute, rootRedirect } from './http/docs.js';
import { negotiate } from './http/negotiate.js';
import { schemaHandlers } from './http/schema.js';
import { JsonText } from './wire/json-text.js';
import { assertRequestText } from './http/request-text.js';
import { defaultLogger, requestLogger } from './http/logging.js';
import { openapiOf, validatorPipeline } from './http/openapi-pipeline.js';
import { createRedisLink, rateClassesOf, rateLimitMiddleware, readRateLimitConfig, type RateLimitConfig } from './http/rate-limit.js';
import { keyOnPublicOperations, personalApiKeyHandler, type AuthedRequest } from './http/security.js';
import { listOperations, loadSpec, SPEC_PATH, type OpenApiDocument, type SpecOperation } from './http/spec.js';
import type { HandlerContext, HandlerMap, OperationId } from './http/typed.js';
import type { EventsReads } from './domain/events-reads.js';
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
  /** request logger (default: pino on stdout at `LOG_LEVEL`; tests pass a silent one) */
  logger?: Logger;
  /**
   * the events list and values reads, usually a worker pool (`createEventsReads`, server/read-pool/)
   * that the caller closes after the server; default: on the main thread
   */
  eventsReads?: EventsReads;
  /**
   * the capture endpoints' queue (server/capture/queue.ts): `maxQueuedEvents` (`npm start` passes
   * `CAPTURE_MAX_QUEUED_EVENTS` from server/config.ts; default `DEFAULT_MAX_QUEUED_EVENTS`, 50,000)
   * and a queue-size observer (tests)
   */
  capture?: Pick<CaptureDeps, 'maxQueuedEvents' | 'onQueueChange'>;
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
    readonly accept: string | undefined,
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
function sendSerialized(res: Response, body: string | Buffer, contentType?: string): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.setHeader('Content-Type', contentType && contentType !== 'application/json' ? `${contentType}; charset=utf-8` : JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/** True for a JSON media type: `application/json` or `application/<x>+json` (parameters ignored). */
function isJsonMediaType(contentType: string): boolean {
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/** `node` with its `$ref`s (local, `#/…`) followed in `spec`, up to ten deep; undefined when one names nothing. */
function resolveRef(spec: OpenApiDocument, node: unknown): Record<string, unknown> | undefined {
  let cur = node as Record<string, unknown> | undefined;
  for (let i = 0; i < 10 && cur && typeof cur.$ref === 'string'; i += 1) {
    let target: unknown = spec;
    for (const part of (cur.$ref as string).replace(/^#\//, '').split('/')) target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    cur = target as Record<string, unknown> | undefined;
  }
  return cur;
}

/**
 * True when `op` answers CSV as well as JSON: its 200 declares `text/csv` and it has a `format`
 * query parameter (the events list, retrieve and values). Those answer CSV for `Accept: text/csv`
 * as for `format=csv`, as DRF picks PostHog's `PaginatedCSVRenderer` for either
 * (posthog/api/event.py `renderer_classes`); `format` wins when both are given.
 */
function offersCsvByAccept(spec: OpenApiDocument, op: SpecOperation): boolean {
  const item = spec.paths[op.path] as Record<string, unknown> & { parameters?: unknown[] };
  const operation = item[op.method] as { parameters?: unknown[]; responses?: Record<string, unknown> } | undefined;
  const resolve = (node: unknown) => resolveRef(spec, node);
  const ok = resolve(operation?.responses?.['200']) as { content?: Record<string, unknown> } | undefined;
  if (!ok?.content || !('text/csv' in ok.content)) return false;
  const params = [...(item.parameters ?? []), ...(operation?.parameters ?? [])].map(resolve);
  return params.some((p) => p?.in === 'query' && p.name === 'format');
}

/** The query a CSV-offering operation's handler gets: `format: 'csv'` added when `Accept` picks CSV and `format` is absent. */
function csvByAccept(query: unknown, accept: string | undefined): unknown {
  const q = (query ?? {}) as Record<string, unknown>;
  if (q.format !== undefined || accept === undefined) return query;
  return negotiate(accept, ['application/json', 'text/csv']) === 'text/csv' ? { ...q, format: 'csv' } : query;
}

/**
 * A missing required field answered with the operation's own message: the validator says "This
 * field is required."; a query parameter declaring `x-required-detail` in openapi.yaml (the events
 * values' `key`: PostHog's "You must provide a key"), or a top-level property of the JSON request
 * body's schema declaring it (a plugin config's `order`, which newcomers leave out), has its 400
 * `required` say that instead. A query parameter is looked up first, then the body.
 */
function withRequiredDetail(error: ApiError, req: Request, spec: OpenApiDocument): ApiError {
  if (error.status !== 400 || error.body.code !== 'required' || !error.body.attr) return error;
  const operation = openapiOf(req)?.schema;
  if (!operation) return error;
  const attr = error.body.attr;
  const params = Array.isArray(operation.parameters) ? (operation.parameters as unknown[]).map((p) => resolveRef(spec, p)) : [];
  const param = params.find((p) => p?.in === 'query' && p.name === attr);
  const body = resolveRef(spec, operation.requestBody) as { content?: Record<string, { schema?: unknown }> } | undefined;
  const bodySchema = resolveRef(spec, body?.content?.['application/json']?.schema) as { properties?: Record<string, unknown> } | undefined;
  const property = param ? undefined : resolveRef(spec, bodySchema?.properties?.[attr]);
  const detail = (param ?? property)?.['x-required-detail'];
  return typeof detail === 'string' ? new ApiError(400, { ...error.body, detail }, error.headers) : error;
}

/** Adapts one typed handler to Express: builds the context, sends the reply, forwards errors. */
function route(operationId: OperationId, map: Readonly<Record<string, unknown>>, services: Services, validatesResponses: boolean, csv: boolean) {
  const handler = map[operationId] as unknown as (ctx: HandlerContext<OperationId>) => Promise<{
    status: number;
    body?: unknown;
    contentType?: string;
    headers?: Record<string, string>;
  }>;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertFiniteQuery(req.query);
      const openapi = openapiOf(req);
      const pathParams = openapi?.pathParams;
      // The same coercion lets `Infinity` through as an integer id: it names no object (404, as DRF).
      if (pathParams) for (const k in pathParams) if (typeof pathParams[k] === 'number' && !Number.isFinite(pathParams[k])) throw notFound();
      const params = pathParams ? { ...req.params, ...pathParams } : { ...req.params };
      // NUL and lone surrogates in the query or body: 400 on both stores (PostgreSQL cannot hold NUL)
      assertRequestText({ operation: openapi?.schema, query: req.query, body: req.body });
      const accept = req.headers.accept;
      const query = csv ? csvByAccept(req.query, accept) : req.query;
      if (csv) res.vary('Accept');
      const ctx = new Context(accept, operationId, params, query, req.body, (req as AuthedRequest).auth, services, req) as unknown as HandlerContext<OperationId>;
      const reply = await handler(ctx);
      if (reply.headers) res.set(reply.headers);
      res.status(reply.status);
      const { body, contentType } = reply;
      if (body === undefined) res.end();
      else if (contentType && !isJsonMediaType(contentType)) res.type(contentType).send(body);
      // JSON goes through res.json when the response validator must see it (tests, development);
      // otherwise it is written as is (a JsonText is already serialized)
      else if (validatesResponses) {
        if (contentType && contentType !== 'application/json') res.type(contentType);
        res.json(body instanceof JsonText ? JSON.parse(body.toString()) : body);
      } else sendSerialized(res, body instanceof JsonText ? body.text : JSON.stringify(body), contentType);
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Builds the application. Throws at build time if the spec has an operation without a handler or
 * without a valid `x-rate-limit-class` (`RateClassError`).
 */
export function createApp(deps: AppDeps): express.Express {
  const spec = deps.spec ?? loadSpec();
  // the handler map, plus the operations server/http/ answers itself (typed.ts `HttpOperationId`)
  const map = { ...(deps.handlers ?? defaultHandlers), ...schemaHandlers({ document: spec, yamlPath: deps.spec ? undefined : SPEC_PATH }) };
  const logger = deps.logger ?? defaultLogger();
  const onServerError = deps.onServerError ?? ((err: unknown) => logger.error({ err }, 'unexpected error'));
  const rateLimit = deps.rateLimit === undefined ? readRateLimitConfig() : deps.rateLimit;
  const rateClasses = rateClassesOf(spec);
  // one Redis link per app, shared by its limiters and its /_readyz
  const redisLink = rateLimit ? createRedisLink({ logger, ...rateLimit }) : undefined;
  const services = createServices(deps.store, { events: deps.eventsReads, redis: redisLink });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // One middleware before the validator, not three (health probes, the trailing slash, the JSON body)
  const health = healthRoutes(services.readiness);
  const docs = docsRoute();
  // A body that cannot be parsed is reported only after authentication and the scope check, as
  // PostHog (DRF) reads the body after its permission checks: the parse error waits on the request
  // and the security handler raises it once the key is accepted.
  const parseJson = express.json({ limit: BODY_LIMIT, strict: false });
  // The capture endpoints (server/capture/) are answered here, before the validator: their gzip,
  // base64 and form bodies are not for it to read (openapi.yaml declares them, `x-served-by: capture`).
  const capture = createCaptureStage({
    store: deps.store,
    maxQueuedEvents: deps.capture?.maxQueuedEvents,
    onQueueChange: deps.capture?.onQueueChange,
    onServerError: (err, req) => onServerError(err, req as Request),
  });
  const beforeValidator: express.RequestHandler = (req, res, next) => {
    if (req.url.startsWith('/_')) return health(req, res, next);
    const q = req.url.indexOf('?');
    const p = q === -1 ? req.url : req.url.slice(0, q);
    if (p === '/docs' || p === '/docs/') return docs(req, res);
    // a browser opening the server's address is led to the reference; API clients get the JSON 404
    if (p === '/') return rootRedirect(req, res, next);
    if (capture.handle(req, res)) return;
    // PostHog's paths end with a slash; accept the same path without it.
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
  // express-openapi-validator's middlewares with the route memo and the rate limiter in place;
  // throws here when the library's internals are not where the pipeline expects them
  const validator = validatorPipeline({
    spec,
    validateResponses: deps.validateResponses !== false,
    securityHandler: personalApiKeyHandler(services.authentication),
    rateLimiter: rateLimit ? rateLimitMiddleware({ logger, ...rateLimit }, { classes: rateClasses, link: redisLink }) : undefined,
  });

  // The validator has already matched the request to one operation of the spec (unknown paths and
  // methods were answered 404/405 there): dispatch on its operationId instead of matching the path a
  // second time through one Express route per operation.
  const routes = new Map<string, ReturnType<typeof route>>();
  for (const op of listOperations(spec)) {
    if (!(op.operationId in map)) throw new Error(`openapi.yaml operation ${op.operationId} has no handler`);
    routes.set(op.operationId, route(op.operationId as OperationId, map, services, deps.validateResponses !== false, offersCsvByAccept(spec, op)));
  }
  const dispatch: express.RequestHandler = (req, res, next) => {
    const operationId = openapiOf(req)?.schema.operationId;
    const handle = operationId === undefined ? undefined : routes.get(operationId);
    if (!handle) return next(notFound());
    return handle(req, res, next);
  };

  // The whole request path is one sequence of middlewares (`inSequence`), served without Express's
  // router (`handleWithoutRouter`): the router's per-layer step, then its per-request closures,
  // were ~6 % of a keyed GET's CPU each time (docs/performance.md).
  const onError = (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const securityError = (req as AuthedRequest).securityError;
    const apiError: ApiError = withRequiredDetail(
      securityError ?? toApiError(err, { method: req.method, contentType: req.headers['content-type'], body: req.body, query: req.query, params: req.params }),
      req,
      spec,
    );
    // 503 and 504 are answers the server chose (busy, a query past its budget), not faults
    if (apiError.status === 500) onServerError(err, req);
    res.status(apiError.status).set(apiError.headers).json(apiError.body);
  };
  handleWithoutRouter(app, inSequence(requestLogger(logger), beforeValidator, ...validator, keyOnPublicOperations(services.authentication), dispatch), onError, notFound, onServerError);
  return app;
}
