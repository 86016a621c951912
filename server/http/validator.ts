/**
 * express-openapi-validator, configured for envapi and mounted as its README shows:
 * `app.use(OpenApiValidator.middleware({...}))` (server/app.ts). It matches each request to one
 * operation of `openapi.yaml` (`req.openapi`: 404 for a path outside the spec, 405 for a method the
 * path does not declare), runs the `PersonalAPIKeyAuth` security handler with the scopes the
 * operation declares (server/http/security.ts, which also applies the per-key rate limit), validates
 * the request (400, 415), and, when asked, every JSON response (an answer outside the contract is a
 * 500 in tests and development). The handlers are then reached by the operationId it matched
 * (server/http/dispatch.ts).
 *
 * Nothing of the library is replaced or re-arranged: its middlewares run as it builds them, in its
 * order. What changes how much work it does is done through its options (below) and the copy of
 * the spec it is given (server/http/spec.ts). A change to its files that only saves work, carried as
 * a reviewed patch, is described in patches/README.md.
 *
 * Every reader of `req.openapi` goes through `openapiOf(req)`.
 */
import type { Request, RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { withoutPreValidatorPaths, withoutResponseSchemas, type OpenApiDocument } from './spec.js';

/** The operation the validator matched, as it hands it over (`$ref`s resolved). */
export interface MatchedOperation {
  operationId?: string;
  tags?: string[];
  parameters?: unknown;
  requestBody?: unknown;
  security?: unknown;
  [field: string]: unknown;
}

/** `req.openapi` once the validator has matched a request (the fields read downstream). */
export interface OpenApiMatch {
  schema: MatchedOperation;
  /** path parameters by name: strings from the route match, coerced in place by request validation */
  pathParams: Record<string, unknown>;
  [field: string]: unknown;
}

/** `req.openapi`: the operation the request matched and its path parameters; undefined before the match or without one. */
export function openapiOf(req: Request): OpenApiMatch | undefined {
  return (req as Request & { openapi?: OpenApiMatch }).openapi;
}

/** What `openapiValidator` builds from. */
export interface ValidatorOptions {
  /** the whole contract; the capture endpoints (`x-served-by: capture`) are left out of the validator's copy */
  spec: OpenApiDocument;
  /**
   * validate responses (tests, development); false (production): the validator gets a copy of
   * the spec without response schemas, so it compiles none
   */
  validateResponses: boolean;
  /** the `PersonalAPIKeyAuth` security handler (server/http/security.ts `personalApiKeyHandler`) */
  securityHandler: (req: Request, scopes: string[]) => Promise<boolean> | boolean;
}

/**
 * The validator's middlewares for envapi (an array, for `app.use`). Mount it after the body parser
 * and the trailing-slash step: it matches on `req.url` (`useRequestUrl`), which that step has
 * normalised. The spec is loaded asynchronously by the library; a spec it cannot load makes every
 * request it sees fail with the loader's error (a 500).
 */
export function openapiValidator(opts: ValidatorOptions): RequestHandler[] {
  const apiSpec = opts.validateResponses
    ? withoutPreValidatorPaths(opts.spec)
    : withoutResponseSchemas(withoutPreValidatorPaths(opts.spec));
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as never,
    // unknown query parameters are ignored, as DRF ignores them; unknown body fields are dropped
    // `discriminator`: ajv's OpenAPI discriminator, so that a query's `kind` picks the one schema its
    // errors come from, and a kind outside the union is one error (`schemaProblemBody`)
    validateRequests: { allowUnknownQueryParameters: true, removeAdditional: true, discriminator: true },
    validateResponses: opts.validateResponses ? { removeAdditional: false } : false,
    validateSecurity: { handlers: { PersonalAPIKeyAuth: opts.securityHandler as never } },
    validateFormats: true,
    // The spec is checked where it changes: Redocly lints it (recommended-strict) and the contract
    // tests read it, in CI; checking it again against the OpenAPI meta-schema at every start would
    // only lengthen the cold start.
    validateApiSpec: false,
    // no multipart/form-data in the spec: without this the library adds a middleware that checks
    // every request for one
    fileUploader: false,
    // match on req.url, which the trailing-slash step has normalised
    useRequestUrl: true,
  }) as unknown as RequestHandler[];
}
