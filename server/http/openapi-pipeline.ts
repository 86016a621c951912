/**
 * The request path, and everything on it that depends on express-openapi-validator's internals.
 *
 * The request path (built by `createApp`, server/app.ts; served by `handleWithoutRouter`,
 * server/http/compose.ts, as one `inSequence` without Express's router):
 *
 *     request ─▶ handleWithoutRouter (HEAD runs as GET) ─▶ requestLogger (X-Request-Id, one log line)
 *       ─▶ beforeValidator: /_health, /_readyz, /docs answered here (and `GET /` from a browser:
 *          302 to /docs; other clients go on to the 404) │ the capture endpoints (/batch/, /e/,
 *          /i/v0/e/, /capture/, /track/) answered here by server/capture/ (their own body reading,
 *          token and group commit) │ trailing slash added │ JSON body parsed
 *          (a parse error waits on the request until the key is accepted)
 *       ─▶ pathParamsMiddleware (until it has once passed) ─▶ metadataMiddleware, memoised per
 *          `METHOD path` (route match → `req.openapi`; 404 unknown path, 405 unknown method)
 *       ─▶ securityMiddleware (key, scopes read from the spec; 401/403; the deferred body error)
 *       ─▶ rate limiter (429; after security, before validation: invalid requests count)
 *       ─▶ requestMiddleware (400) ─▶ responseMiddleware (when responses are validated)
 *       ─▶ dispatch on `req.openapi.schema.operationId` ─▶ typed handler ─▶ reply
 *     any next(err), throw or rejection ─▶ onError (PostHog's `{type, code, detail, attr}`);
 *     nothing answered ─▶ 404. Routes are the spec's operations plus the handler map: `app.use`,
 *     `app.get`… after `createApp` throw (compose.ts), since no router would ever reach them.
 *
 * What this module relies on, each checked when the app is built (`validatorPipeline` throws an
 * `OpenApiPipelineError` naming what is missing, so a library upgrade that moves something fails
 * the start, never silently drops a step):
 * - the validator's middleware list is exactly `pathParamsMiddleware, metadataMiddleware,
 *   securityMiddleware, requestMiddleware[, responseMiddleware]` (found by function name: the
 *   memo wraps the second, the rate limiter goes after the third);
 * - the validator's own `path-to-regexp` exports a writable `pathToRegexp` function, and its
 *   `framework/openapi.schema.validator.js` a writable `OpenAPISchemaValidator` constructor (both
 *   replaced, see below);
 * - `req.openapi`, as the metadata middleware sets it on a match, has a `schema` object (the
 *   operation: `operationId`, `tags`, `parameters`, `requestBody`) and a `pathParams` object. This
 *   one is checked at every library match (not memoised ones), since the library loads the spec
 *   asynchronously: a request it matches into another shape fails with a 500 naming the field.
 * Every reader of `req.openapi` goes through `openapiOf(req)`.
 *
 * Three fixes of express-openapi-validator 5.6.2 inefficiencies found by profiling (figures in
 * docs/performance.md). Each changes how much work the library does, never what it decides. Drop
 * each when the library does it itself.
 *
 * 1. `installRouteRegexpCache()`: the metadata middleware (`lookupRoute`,
 * `dist/middlewares/openapi.metadata.js`) calls path-to-regexp's `pathToRegexp(route, {sensitive,
 * strict})` for each path of the spec until one matches: ~20 compilations per request, 6 % of
 * envapi's CPU under load. The function is pure (the validator only calls `regexp.exec` without
 * the `g`/`y` flags and reads `keys`), so it is replaced, on the path-to-regexp module instance the
 * validator loads, by a memoised version. Calls with options it does not know, or a non-string path,
 * go straight through. At most `MAX_ENTRIES` routes are kept (the spec has 21 paths).
 *
 * 2. `skipUnusedSpecSchemaCompile()`: with `validateApiSpec: false` the library still builds an ajv
 * validator for the OpenAPI 3.1 meta-schema at start-up (`dist/framework/index.js` constructs
 * `OpenAPISchemaValidator`, which compiles it whatever the option) and never calls it: ~0.3–0.7 s
 * of every cold start. The replacement returns a validator that is never compiled when
 * `validateApiSpec` is false, and the library's own one otherwise.
 *
 * 3. `memoiseRouteMatch(metadataMiddleware)`: even with fix 1, the metadata middleware walks every
 * route on every request (two `app.enabled()` look-ups and a regexp per route, one object per route
 * tried) after a promise turn: ~15 µs of a keyed GET. What it decides depends only on the method and
 * the path, so the wrapper keeps, per `METHOD path`, the `req.openapi` the library built and gives a
 * later request a copy (its own `pathParams`, which request validation coerces in place) without
 * calling the library. Only matches are kept: a refused path (404, 405, malformed escape) goes to
 * the library every time. The memo holds `max` entries; past that the oldest is dropped.
 */
import { createRequire } from 'node:module';
import type { Request, RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { withoutPreValidatorPaths, withoutResponseSchemas, type OpenApiDocument } from './spec.js';

/** A start-up (or first-match) failure: something of the validator is not where this module expects. */
export class OpenApiPipelineError extends Error {
  constructor(what: string) {
    super(`express-openapi-validator: ${what} (server/http/openapi-pipeline.ts relies on it; revisit it for this library version)`);
    this.name = 'OpenApiPipelineError';
  }
}

/** The operation the validator matched, as it hands it over (`$ref`s resolved). */
export interface MatchedOperation {
  operationId?: string;
  tags?: string[];
  parameters?: unknown;
  requestBody?: unknown;
  [field: string]: unknown;
}

/** `req.openapi` once the metadata middleware has matched a request (the fields read downstream). */
export interface OpenApiMatch {
  schema: MatchedOperation;
  /** path parameters by name: strings from the route match, coerced in place by request validation */
  pathParams: Record<string, unknown>;
  [field: string]: unknown;
}

/** `req.openapi`: the operation the request matched and its path parameters; undefined before the match. */
export function openapiOf(req: Request): OpenApiMatch | undefined {
  return (req as Request & { openapi?: OpenApiMatch }).openapi;
}

/** Throws unless `value` has the shape of `OpenApiMatch` (checked at each library match). */
export function assertOpenApiMatch(value: unknown): asserts value is OpenApiMatch {
  const v = value as { schema?: unknown; pathParams?: unknown } | null;
  if (!v || typeof v !== 'object') throw new OpenApiPipelineError('req.openapi is not an object after a route match');
  if (!v.schema || typeof v.schema !== 'object') throw new OpenApiPipelineError('req.openapi.schema (the matched operation) is not an object');
  if (!v.pathParams || typeof v.pathParams !== 'object') throw new OpenApiPipelineError('req.openapi.pathParams is not an object');
}

/** The validator's middlewares in order, by function name, for the options `validatorPipeline` passes. */
export function expectedMiddlewareNames(validateResponses: boolean): string[] {
  const names = ['pathParamsMiddleware', 'metadataMiddleware', 'securityMiddleware', 'requestMiddleware'];
  return validateResponses ? [...names, 'responseMiddleware'] : names;
}

/**
 * The validator's middleware list arranged for envapi: the path-params step runs until it has once
 * passed, the route match is memoised, and `rateLimiter` (if any) runs right after security.
 * Throws `OpenApiPipelineError` when the list is not `expectedMiddlewareNames(validateResponses)`.
 */
export function arrangeValidatorMiddlewares(list: RequestHandler[], opts: { validateResponses: boolean; rateLimiter?: RequestHandler }): RequestHandler[] {
  const expected = expectedMiddlewareNames(opts.validateResponses);
  const names = list.map((mw) => (typeof mw === 'function' ? mw.name : typeof mw));
  if (names.length !== expected.length || names.some((n, i) => n !== expected[i])) {
    throw new OpenApiPipelineError(`middleware list is [${names.join(', ')}], expected [${expected.join(', ')}]`);
  }
  const [pathParams, metadata, security, ...validation] = list as [RequestHandler, RequestHandler, RequestHandler, ...RequestHandler[]];
  // The path-params step installs `app.param` handlers (for Express routes with path parameters,
  // which this app does not have) and reports a spec that failed to load: once passed, skipped.
  const arranged = [untilFirstSuccess(pathParams), memoiseRouteMatch(metadata), security];
  // Throttle after authentication and the scope check (the key is known and valid, as DRF's
  // check_throttles after check_permissions), before request validation (invalid requests count).
  if (opts.rateLimiter) arranged.push(opts.rateLimiter);
  return [...arranged, ...validation];
}

/** What `validatorPipeline` builds from. */
export interface ValidatorPipelineOptions {
  spec: OpenApiDocument;
  /** validate responses (tests, development); false: the validator gets the spec without response schemas */
  validateResponses: boolean;
  /** the `PersonalAPIKeyAuth` security handler (server/http/security.ts) */
  securityHandler: unknown;
  /** the per-key rate limiter, run right after security; none when limits are off */
  rateLimiter?: RequestHandler;
}

/**
 * express-openapi-validator's middlewares for envapi, in order (module docstring), with the three
 * fixes installed. Throws `OpenApiPipelineError` when anything relied on is missing.
 */
export function validatorPipeline(opts: ValidatorPipelineOptions): RequestHandler[] {
  installValidatorTuning();
  const list = OpenApiValidator.middleware({
    // without response validation (production) the validator gets no response schemas to compile
    // and without the capture endpoints, answered before it (`x-served-by: capture`, server/capture/)
    apiSpec: (opts.validateResponses ? withoutPreValidatorPaths(opts.spec) : withoutResponseSchemas(withoutPreValidatorPaths(opts.spec))) as never,
    validateRequests: { allowUnknownQueryParameters: true, removeAdditional: true },
    validateResponses: opts.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: { handlers: { PersonalAPIKeyAuth: opts.securityHandler as never } },
    validateFormats: true,
    // The spec is checked where it changes: Redocly lints it (recommended-strict) and the contract
    // tests read it, in CI. Checking it again against the OpenAPI meta-schema at every start cost
    // ~200 ms of cold start (docs/performance.md).
    validateApiSpec: false,
    // no multipart/form-data in the spec: without this the library adds a middleware that checks
    // every request for one
    fileUploader: false,
    // match on req.url, which the trailing-slash step has normalised
    useRequestUrl: true,
  }) as unknown as RequestHandler[];
  return arrangeValidatorMiddlewares(list, { validateResponses: opts.validateResponses, rateLimiter: opts.rateLimiter });
}

/** `mw` until it has once called `next()` without an error; from then on, only `next()`. */
export function untilFirstSuccess(mw: RequestHandler): RequestHandler {
  let passed = false;
  return (req, res, next) => {
    if (passed) return next();
    return mw(req, res, (err?: unknown) => {
      if (err === undefined) passed = true;
      next(err);
    });
  };
}

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };
type SchemaValidatorCtor = new (opts: { version: string; validateApiSpec: boolean }) => { validate(doc: unknown): { errors: unknown[] } };

/** The module objects fixes 1 and 2 replace a function of. */
export interface PatchedModules {
  pathToRegexp: { pathToRegexp?: unknown };
  schemaValidator: { OpenAPISchemaValidator?: unknown };
}

const MAX_ENTRIES = 1000;
const INSTALLED = Symbol.for('envapi.validatorTuning');

/** `require` as seen from express-openapi-validator's own files (its dependencies, its dist/). */
function validatorRequire(): NodeJS.Require {
  return createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
}

/** The validator's path-to-regexp module and schema-validator module; throws when one cannot be loaded. */
export function loadPatchedModules(): PatchedModules {
  const req = validatorRequire();
  const load = (id: string) => {
    try {
      return req(id) as Record<string, unknown>;
    } catch (err) {
      throw new OpenApiPipelineError(`cannot load ${id} from the validator (${(err as Error).message})`);
    }
  };
  return { pathToRegexp: load('path-to-regexp'), schemaValidator: load('./framework/openapi.schema.validator.js') };
}

/** Installs fixes 1 and 2 (idempotent); throws `OpenApiPipelineError` when either cannot be installed. */
export function installValidatorTuning(modules: PatchedModules = loadPatchedModules()): void {
  if (!installRouteRegexpCache(modules.pathToRegexp)) throw new OpenApiPipelineError("path-to-regexp's pathToRegexp is not a writable function");
  if (!skipUnusedSpecSchemaCompile(modules.schemaValidator)) throw new OpenApiPipelineError('OpenAPISchemaValidator is not a writable constructor');
}

/**
 * Fix 1 (module docstring), once per module (idempotent). Returns false, changing nothing, when
 * `mod` does not export a writable `pathToRegexp` function.
 */
export function installRouteRegexpCache(mod: { pathToRegexp?: unknown } = loadPatchedModules().pathToRegexp): boolean {
  const original = mod.pathToRegexp as (PathToRegexp & { [INSTALLED]?: true }) | undefined;
  if (typeof original !== 'function') return false;
  if (original[INSTALLED]) return true;
  // by route, then by the four boolean options as bits (the validator calls this ~20 times a request,
  // so the key is not a string built each time)
  const memo = new Map<string, (ReturnType<PathToRegexp> | undefined)[]>();
  const memoised = Object.assign(
    function pathToRegexp(path: unknown, options: Record<string, unknown> = {}) {
      if (typeof path !== 'string') return original(path, options);
      let bits = 0;
      for (const k in options) {
        if (k === 'sensitive') bits |= options.sensitive ? 1 : 0;
        else if (k === 'strict') bits |= options.strict ? 2 : 0;
        else if (k === 'end') bits |= options.end === false ? 4 : 0;
        else if (k === 'trailing') bits |= options.trailing === false ? 8 : 0;
        // any other option (delimiter, …) is passed through uncached
        else return original(path, options);
      }
      let byOptions = memo.get(path);
      let hit = byOptions?.[bits];
      if (!hit) {
        hit = original(path, options);
        if (!byOptions && memo.size < MAX_ENTRIES) memo.set(path, (byOptions = []));
        if (byOptions) byOptions[bits] = hit;
      }
      return hit;
    },
    // the library's own function stays reachable, for comparison in tests
    { [INSTALLED]: true as const, original },
  );
  try {
    mod.pathToRegexp = memoised;
  } catch {
    return false;
  }
  return mod.pathToRegexp === memoised;
}

/**
 * Fix 2 (module docstring), once per module (idempotent). Returns false, changing nothing, when
 * `mod` does not export a writable `OpenAPISchemaValidator` constructor.
 */
export function skipUnusedSpecSchemaCompile(mod: { OpenAPISchemaValidator?: unknown } = loadPatchedModules().schemaValidator): boolean {
  const original = mod.OpenAPISchemaValidator as (SchemaValidatorCtor & { [INSTALLED]?: true }) | undefined;
  if (typeof original !== 'function') return false;
  if (original[INSTALLED]) return true;
  const replacement = Object.assign(
    function OpenAPISchemaValidator(opts: { version: string; validateApiSpec: boolean }) {
      if (opts.validateApiSpec) return new original(opts);
      return {
        validate(): never {
          throw new Error('the OpenAPI document validator was skipped (validateApiSpec: false) and cannot validate');
        },
      };
    },
    { [INSTALLED]: true as const },
  );
  try {
    mod.OpenAPISchemaValidator = replacement;
  } catch {
    return false;
  }
  return mod.OpenAPISchemaValidator === replacement;
}

/**
 * Fix 3 (module docstring): wraps the library's `metadataMiddleware`. `max`: entries kept (default
 * 2,000 paths). A library match whose `req.openapi` is not an `OpenApiMatch` is passed on as an
 * `OpenApiPipelineError` (a 500 naming the field), never memoised.
 */
export function memoiseRouteMatch(metadata: RequestHandler, max = 2_000): RequestHandler {
  const memo = new Map<string, OpenApiMatch>();
  return function memoisedMetadataMiddleware(req, res, next) {
    const url = req.url;
    const q = url.indexOf('?');
    const key = `${req.method} ${q === -1 ? url : url.slice(0, q)}`;
    const hit = memo.get(key);
    const r = req as typeof req & { openapi?: OpenApiMatch };
    if (hit) {
      const pathParams = { ...hit.pathParams };
      r.openapi = { ...hit, pathParams };
      req.params = pathParams as Record<string, string>;
      return next();
    }
    return metadata(req, res, (err?: unknown) => {
      const matched: unknown = r.openapi;
      if (err === undefined && matched !== undefined) {
        try {
          assertOpenApiMatch(matched);
        } catch (shapeError) {
          return next(shapeError);
        }
        if (!memo.has(key)) {
          if (memo.size >= max) memo.delete(memo.keys().next().value!);
          memo.set(key, { ...matched, pathParams: { ...matched.pathParams } });
        }
      }
      next(err);
    });
  };
}
