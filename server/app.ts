/**
 * `createApp(deps)`: the Express application, without `listen()` (server/main.ts serves it with
 * `http.createServer(app)`). An ordinary Express 5 app: each step is an `app.use`, `app.get` or
 * `app.all` layer of Express's router, in the order below, and express-openapi-validator is
 * mounted as its README shows. The spec is parsed once, here, not per request. API operations are
 * added to `openapi.yaml` and the handler map (server/handlers/), not as Express routes.
 *
 * The request path:
 *
 *     request
 *      │ requestLogger ............ X-Request-Id; one log line when the response closes, with the
 *      │                            method as sent (HEAD stays HEAD)              http/logging.ts
 *      ├─ outside /api/ (one router)
 *      │  ├─ GET /_health, /_readyz ▶ liveness, readiness                         http/health.ts
 *      │  ├─ /docs ────────────────▶ the HTML reference (405 but for GET and HEAD) http/docs.ts
 *      │  ├─ / ────────────────────▶ a browser (Accept prefers HTML): 302 /docs; others go on
 *      │  └─ capture router ───────▶ /batch/ /e/ /i/v0/e/ /capture/ /track/, /flags/ /decide/,
 *      │                             /array/<token>/config(.js): cors, raw-body, PostHog's
 *      │                             decoding, token, group commit, text errors      capture/
 *      │ environmentsDeprecation .. /api/environments/…: Deprecation, Sunset, Link headers
 *      │                                                                 http/deprecation.ts
 *      │ jsonBody ................. express.json(); a body error waits until the key is accepted
 *      │ normaliseRequest ......... /api/…/x → /api/…/x/; HEAD runs as GET from here on
 *      │                                                             http/before-validator.ts
 *      │ express-openapi-validator  route match → req.openapi (404 unknown path, 405 method)
 *      │  ├ security handler ...... key → scope → body error → project access → rate limit (429)
 *      │  │                                                  http/security.ts, http/rate-limit/
 *      │  ├ request validation .... 400, 415
 *      │  └ response validation ... when on: an answer outside the contract is a 500
 *      │                                                                    http/validator.ts
 *      │ dispatch ................. req.openapi.schema.operationId → typed handler → reply
 *      │                            (a key sent to a `security: []` operation must be valid)
 *      │                                                                     http/dispatch.ts
 *      └─ errorHandler ............ anything thrown or passed on → PostHog's {type, code, detail,
 *                                   attr} with its status; 500s told to onServerError
 */
import express, { type Request } from 'express';
import type { Logger } from 'pino';
import { captureRouter, type CaptureDeps } from './capture/index.js';
import { createServices } from './domain/services.js';
import { personWrites } from './ingest/person-writes.js';
import { handlers as defaultHandlers } from './handlers/index.js';
import { jsonBody, normaliseRequest } from './http/before-validator.js';
import { dispatch, errorHandler } from './http/dispatch.js';
import { DEFAULT_ENVIRONMENTS_SUNSET_DATE, environmentsDeprecation, type EnvironmentsDeprecation } from './http/deprecation.js';
import { docsRoute, rootRedirect } from './http/docs.js';
import { healthHandlers } from './http/health.js';
import { defaultLogger, requestLogger } from './http/logging.js';
import { createRedisLink, rateClassesOf, rateLimitCheck, readRateLimitConfig, type RateLimitConfig } from './http/rate-limit.js';
import { schemaHandlers } from './http/schema.js';
import { personalApiKeyHandler, publicOperationKeyCheck } from './http/security.js';
import { loadSpec, SPEC_PATH, type OpenApiDocument } from './http/spec.js';
import type { HandlerMap } from './http/handler-types.js';
import { openapiValidator } from './http/validator.js';
import type { EventsReads } from './domain/events-reads.js';
import type { Store } from './storage/db.js';

/** What the app is built from. */
export interface AppDeps {
  store: Store;
  /** validate every response against the spec (on in tests and development; default true) */
  validateResponses?: boolean;
  /** handler map (default: the project's handlers) */
  handlers?: HandlerMap;
  /** the parsed spec (default: the contract, `generated/openapi.bundle.yaml`: http/spec.ts `loadSpec`) */
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
  /** the `/api/environments/` deprecation headers (http/deprecation.ts; default on, Sunset 2026-07-31, PostHog's) */
  environmentsDeprecation?: EnvironmentsDeprecation;
}

/** Every path that does not start with `/api/` (matching nothing of it: a zero-width match). */
const OUTSIDE_API = /^(?!\/api\/)/;

/** Largest accepted request body (body-parser's notation). */
export const BODY_LIMIT = '1mb';

/**
 * Builds the application (module doc). Throws at build time if the spec has an operation without a
 * handler or without a valid `x-rate-limit-class` (`RateClassError`).
 */
export function createApp(deps: AppDeps): express.Express {
  const spec = deps.spec ?? loadSpec();
  const validateResponses = deps.validateResponses !== false;
  // the handler map, plus the operations server/http/ answers itself (handler-types.ts `HttpOperationId`)
  const handlers = {
    ...(deps.handlers ?? defaultHandlers),
    ...schemaHandlers({ document: spec, yamlPath: deps.spec ? undefined : SPEC_PATH }),
  };
  const logger = deps.logger ?? defaultLogger();
  const onServerError = deps.onServerError ?? ((err: unknown) => logger.error({ err }, 'unexpected error'));
  const rateLimit = deps.rateLimit === undefined ? readRateLimitConfig() : deps.rateLimit;
  const rateClasses = rateClassesOf(spec);
  // one Redis link per app, shared by its limiters and its /_readyz
  const redisLink = rateLimit ? createRedisLink({ logger, ...rateLimit }) : undefined;
  const services = createServices(deps.store, { events: deps.eventsReads, redis: redisLink, personWrites: personWrites(deps.store) });
  const limit = rateLimit ? rateLimitCheck({ logger, ...rateLimit }, { classes: rateClasses, link: redisLink }) : undefined;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(requestLogger(logger));
  // What is not the API (no key, not in the validator's contract) is one router, mounted on every
  // path outside /api/ with a zero-width match, so Express strips nothing from req.url and API
  // requests pass it with one regular-expression test.
  const outsideApi = express.Router();
  const health = healthHandlers(services.readiness);
  outsideApi.get('/_health', health.health);
  outsideApi.get('/_readyz', health.readyz);
  outsideApi.all('/docs', docsRoute());
  outsideApi.all('/', rootRedirect);
  outsideApi.use(
    captureRouter({
      store: deps.store,
      authentication: services.authentication,
      maxQueuedEvents: deps.capture?.maxQueuedEvents,
      onQueueChange: deps.capture?.onQueueChange,
      onServerError,
    }),
  );
  app.use(OUTSIDE_API, outsideApi);
  app.use(environmentsDeprecation(deps.environmentsDeprecation ?? { enabled: true, sunsetDate: DEFAULT_ENVIRONMENTS_SUNSET_DATE }));
  app.use(jsonBody(BODY_LIMIT));
  app.use(normaliseRequest);
  app.use(openapiValidator({ spec, validateResponses, securityHandler: personalApiKeyHandler(services.authentication, limit) }));
  app.use(
    dispatch({
      spec,
      handlers,
      services,
      validatesResponses: validateResponses,
      publicKeyCheck: publicOperationKeyCheck(services.authentication, limit),
    }),
  );
  app.use(errorHandler({ spec, onServerError }));
  return app;
}
