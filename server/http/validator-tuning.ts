/**
 * Three fixes of express-openapi-validator 5.6.2 inefficiencies found by profiling (figures in
 * docs/performance.md). Each changes how much work the library does, never what it decides; the
 * whole HTTP suite runs through them. Drop each when the library does it itself.
 *
 * 1. `installRouteRegexpCache()`: compiles each route of the spec to a regular expression once,
 * instead of on every request.
 *
 * express-openapi-validator 5.6.2 (`dist/middlewares/openapi.metadata.js`, `lookupRoute`) finds the
 * operation of a request by walking every path of the spec and calling path-to-regexp's
 * `pathToRegexp(route, {sensitive, strict})` for each one until a route matches: ~20 compilations
 * per request for our 23 operations, 6 % of envapi's CPU under load in the profile recorded in
 * docs/performance.md. The function is pure (same route and options → an equivalent `{regexp,
 * keys}`; the validator only calls `regexp.exec` without the `g`/`y` flags and reads `keys`), so
 * `installRouteRegexpCache()` replaces it, on the path-to-regexp module instance that the validator
 * itself loads, by a memoised version. Calls with options it does not know, or with a non-string
 * path, go straight through. The memo holds at most `MAX_ENTRIES` routes (the spec has 21 paths).
 *
 * 2. `skipUnusedSpecSchemaCompile()`: with `validateApiSpec: false` the library still builds an ajv
 * validator for the OpenAPI 3.1 meta-schema at start-up (`dist/framework/index.js` constructs
 * `OpenAPISchemaValidator`, whose constructor compiles the meta-schema whatever the option) and
 * never calls it: ~0.3–0.7 s of every cold start, a third of it. The replacement constructor
 * returns a validator that is never compiled when `validateApiSpec` is false, and the library's own
 * one otherwise.
 *
 * 3. `memoiseRouteMatch(metadataMiddleware)`: remembers which operation a request path matched.
 *
 * Even with fix 1, the library's metadata middleware walks every route of the spec on every request
 * (`lookupRoute`: `Object.entries` of the route map, two `app.enabled()` look-ups and a regexp per
 * route, one object per route tried), after a promise turn: ~15 µs of a keyed GET (docs/performance.md).
 * What it decides depends only on the method and the path (the spec and the app's routing settings
 * do not change while the app runs), so the wrapper keeps, per `METHOD path`, the `req.openapi` the
 * library built, and gives a later request with the same method and path a copy of it (its own
 * `pathParams` object, which request validation coerces in place) without calling the library.
 * Only matches are kept: a path the library refuses (404, 405, malformed escape) goes to the library
 * every time, and so does everything until the first match. The memo holds `max` entries; past
 * that the oldest is dropped.
 */
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };

const MAX_ENTRIES = 1000;
const INSTALLED = Symbol.for('envapi.validatorTuning');

/**
 * Installs the memo once per process (idempotent). Returns false, changing nothing, when the
 * validator's path-to-regexp does not export a writable `pathToRegexp` function.
 */
export function installRouteRegexpCache(): boolean {
  const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  const mod = fromValidator('path-to-regexp') as { pathToRegexp?: PathToRegexp & { [INSTALLED]?: true } };
  const original = mod.pathToRegexp;
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

type SchemaValidatorCtor = new (opts: { version: string; validateApiSpec: boolean }) => { validate(doc: unknown): { errors: unknown[] } };

/**
 * Installs fix 2 once per process (idempotent). Returns false, changing nothing, when the library's
 * module does not have the expected shape.
 */
export function skipUnusedSpecSchemaCompile(): boolean {
  const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
  let mod: { OpenAPISchemaValidator?: SchemaValidatorCtor & { [INSTALLED]?: true } };
  try {
    mod = fromValidator('./framework/openapi.schema.validator.js') as typeof mod;
  } catch {
    return false;
  }
  const original = mod.OpenAPISchemaValidator;
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
    mod.OpenAPISchemaValidator = replacement as unknown as SchemaValidatorCtor & { [INSTALLED]: true };
  } catch {
    return false;
  }
  return mod.OpenAPISchemaValidator === (replacement as unknown);
}

/** What the library's metadata middleware puts on `req.openapi` (the fields read downstream). */
interface OpenApiMatch {
  pathParams: Record<string, string>;
  [field: string]: unknown;
}

/**
 * Fix 3 (see the module docstring): wraps the library's `metadataMiddleware` (found by its name in
 * the validator's middleware list). `max`: entries kept (default 2,000 paths).
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
      req.params = pathParams;
      return next();
    }
    return metadata(req, res, (err?: unknown) => {
      const matched = r.openapi;
      if (err === undefined && matched?.schema && !memo.has(key)) {
        if (memo.size >= max) memo.delete(memo.keys().next().value!);
        memo.set(key, { ...matched, pathParams: { ...matched.pathParams } });
      }
      next(err);
    });
  };
}
