/**
 * From the operation express-openapi-validator matched to the typed handler, and from any failure
 * to PostHog's error body: the last two steps of the API request path (server/app.ts draws it).
 *
 * - `dispatch(opts)`: one middleware for every operation of the spec. The validator has already
 *   matched the request to one operation (`req.openapi`, server/http/validator.ts; unknown paths
 *   and methods were answered 404/405 there), so the handler is found by that operationId in the
 *   handler map (server/handlers/, typed by server/http/handler-types.ts), not by matching the path a
 *   second time. It builds the handler's context (path parameters as the validator coerced them,
 *   query, body, `req.auth`, services), sends the reply, and passes any failure on. Operations
 *   whose success answer is also `text/csv` answer CSV for `Accept: text/csv` as for `format=csv`.
 *   An operation that needs no key (`security: []`) first checks a key sent anyway, which the
 *   validator's security step leaves alone (security.ts `publicOperationKeyCheck`).
 * - `errorHandler(opts)`: the Express error handler: anything thrown or passed to `next` becomes
 *   PostHog's `{type, code, detail, attr}` with its status (server/http/errors.ts `toApiError`;
 *   the security handler's own refusal as it made it). 500s are reported to `onServerError`; 503
 *   and 504 are answers the server chose (busy, a query past its budget), not faults.
 */
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError, notFound, validationError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { JsonText } from '../domain/json-text.js';
import { requestMethod } from './before-validator.js';
import { toApiError } from './errors.js';
import { negotiate } from './negotiate.js';
import { assertRequestText } from './request-text.js';
import type { AuthedRequest } from './security.js';
import { listOperations, type OpenApiDocument, type SpecOperation } from './spec.js';
import type { HandlerContext, OperationId } from './handler-types.js';
import { openapiOf } from './validator.js';

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

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v[0] : v;
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
    for (const part of (cur.$ref as string).replace(/^#\//, '').split('/'))
      target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
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

/** True when `op` needs no key: its own `security` is the empty list (`security: []`, the schema). */
function isPublicOperation(spec: OpenApiDocument, op: SpecOperation): boolean {
  const operation = (spec.paths[op.path] as Record<string, unknown>)[op.method] as { security?: unknown } | undefined;
  return Array.isArray(operation?.security) && operation.security.length === 0;
}

/** How one operation is answered: its handler, whether it answers CSV by `Accept`, the check of a public operation's key. */
interface RouteOptions {
  validatesResponses: boolean;
  csv: boolean;
  publicKeyCheck: ((req: Request) => Promise<void>) | undefined;
}

/** Adapts one typed handler to Express: builds the context, sends the reply, forwards errors. */
function route(
  operationId: OperationId,
  map: Readonly<Record<string, unknown>>,
  services: Services,
  { validatesResponses, csv, publicKeyCheck }: RouteOptions,
) {
  const handler = map[operationId] as unknown as (ctx: HandlerContext<OperationId>) => Promise<{
    status: number;
    body?: unknown;
    contentType?: string;
    headers?: Record<string, string>;
  }>;
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (publicKeyCheck) await publicKeyCheck(req);
      assertFiniteQuery(req.query);
      const openapi = openapiOf(req);
      const pathParams = openapi?.pathParams;
      // The same coercion lets `Infinity` through as an integer id: it names no object (404, as DRF).
      if (pathParams)
        for (const k in pathParams) if (typeof pathParams[k] === 'number' && !Number.isFinite(pathParams[k])) throw notFound();
      const params = pathParams ? { ...req.params, ...pathParams } : { ...req.params };
      // NUL and lone surrogates in the query or body: 400 on both stores (PostgreSQL cannot hold NUL)
      assertRequestText({ operation: openapi?.schema, query: req.query, body: req.body });
      const accept = req.headers.accept;
      const query = csv ? csvByAccept(req.query, accept) : req.query;
      if (csv) res.vary('Accept');
      const ctx = new Context(
        accept,
        operationId,
        params,
        query,
        req.body,
        (req as AuthedRequest).auth,
        services,
        req,
      ) as unknown as HandlerContext<OperationId>;
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

/** What `dispatch` is built from. */
export interface DispatchOptions {
  spec: OpenApiDocument;
  /** operationId → handler, for every operation of `spec` (the handler map plus server/http/'s own) */
  handlers: Readonly<Record<string, unknown>>;
  services: Services;
  /** responses are validated: JSON bodies go through `res.json`, where the validator sees them */
  validatesResponses: boolean;
  /**
   * run before the handler of each operation that needs no key (`security: []`): a key sent
   * anyway must be valid (security.ts `publicOperationKeyCheck`)
   */
  publicKeyCheck?: (req: Request) => Promise<void>;
}

/**
 * The dispatch middleware (module doc). Throws at build time, naming it, when an operation of the
 * spec has no handler. A request the validator matched to no operation gets `next(notFound())`.
 */
export function dispatch(opts: DispatchOptions): RequestHandler {
  const routes = new Map<string, ReturnType<typeof route>>();
  for (const op of listOperations(opts.spec)) {
    if (!(op.operationId in opts.handlers)) throw new Error(`openapi.yaml operation ${op.operationId} has no handler`);
    routes.set(
      op.operationId,
      route(op.operationId as OperationId, opts.handlers, opts.services, {
        validatesResponses: opts.validatesResponses,
        csv: offersCsvByAccept(opts.spec, op),
        publicKeyCheck: isPublicOperation(opts.spec, op) ? opts.publicKeyCheck : undefined,
      }),
    );
  }
  return function dispatch(req, res, next) {
    const operationId = openapiOf(req)?.schema.operationId;
    const handle = operationId === undefined ? undefined : routes.get(operationId);
    if (!handle) return next(notFound());
    return handle(req, res, next);
  };
}

/** What `errorHandler` is built from. */
export interface ErrorHandlerOptions {
  spec: OpenApiDocument;
  /** told every unexpected error (a 500) */
  onServerError: (err: unknown, req: Request) => void;
}

/**
 * The error handler (module doc): the status and PostHog's body of `toApiError(err)`, or of the
 * security handler's refusal (`req.securityError`), with the operation's own "required" message
 * where it declares one (`x-required-detail`). A 405 names the method the client sent (HEAD for a
 * HEAD run as GET). Mount last.
 */
export function errorHandler(opts: ErrorHandlerOptions): ErrorRequestHandler {
  return function apiError(err: unknown, req: Request, res: Response, _next: NextFunction) {
    const securityError = (req as AuthedRequest).securityError;
    const input = {
      method: requestMethod(req),
      contentType: req.headers['content-type'],
      body: req.body as unknown,
      query: req.query,
      params: req.params,
    };
    const apiError: ApiError = withRequiredDetail(securityError ?? toApiError(err, input), req, opts.spec);
    if (apiError.status === 500) opts.onServerError(err, req);
    res.status(apiError.status).set(apiError.headers).json(apiError.body);
  };
}
