/**
 * The per-key throttle: one express-rate-limit limiter per window of each class, chosen per
 * request by the `x-rate-limit-class` its operation declares in the spec (classes.ts), counted per
 * sha256 of the bearer token, refusing with PostHog's 429 `throttled_error` and `Retry-After`
 * (seconds). With `config.redis`, each limiter counts through a `SharedCounterStore` on one
 * `RedisLink` (counter-store.ts, redis-link.ts), made per app by `createRedisLink` and shared with
 * `/_readyz`.
 *
 * Where it runs: inside the `PersonalAPIKeyAuth` security handler that express-openapi-validator
 * calls (security.ts), once the key is authenticated, its scopes checked and the project resolved,
 * and before the validator's request validation. That is PostHog's order: DRF's `APIView.initial`
 * runs `check_permissions`, then `check_throttles`, and the serializer validates later, so an
 * invalid request counts and a request refused by authentication or scopes does not. The
 * validator offers no place between its security step and its request validation, but it awaits
 * the security handler there; so the limiters are run from the handler, each as the Express
 * middleware express-rate-limit documents (`limiter(req, res, next)`, `res` being `req.res`),
 * with its documented `keyGenerator` (the key's hash, computed once per request) and `handler`
 * (which passes the 429 to `next` instead of answering). The other way considered, two validator
 * instances (one with only the security step, the limiter between them, one with request and
 * response validation), matches every request to its route and loads the spec twice. The
 * operations that need no key (`security: []`, the schema) have no security step; a key sent to
 * one is checked, and counted, by the same handler from the dispatch (security.ts
 * `publicOperationKeyCheck`), after request validation.
 */
import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { ApiError } from '../../domain/errors.js';
import { defaultLogger } from '../logging.js';
import { bearerToken } from '../bearer.js';
import { DEFAULT_REDIS_TIMEOUT_MS, type RateClass, type RateLimitConfig } from './config.js';
import { SharedCounterStore } from './counter-store.js';
import { reasonOf, RedisLink } from './redis-link.js';

/** The counter key of a request: sha256 of its bearer token (hex), or undefined without one. */
export function rateKeyOf(req: Request): string | undefined {
  const token = bearerToken(req);
  return token === undefined ? undefined : createHash('sha256').update(token).digest('hex');
}

/** PostHog's 429 body, with `Retry-After` (`waitSeconds` rounded up, at least 0). */
export function throttled(waitSeconds: number): ApiError {
  const n = Math.max(0, Math.ceil(waitSeconds));
  return new ApiError(
    429,
    { type: 'throttled_error', code: 'throttled', detail: `Request was throttled. Expected available in ${n} seconds.`, attr: null },
    { 'Retry-After': String(n) },
  );
}

const PROPERTY = 'envapiRateLimit';

type SendCommand = Extract<ConstructorParameters<typeof RedisStore>[0], { sendCommand: unknown }>['sendCommand'];

/** express-rate-limit's own messages (store errors), message text only: never keys or hashes. */
function limiterLogger(log: Logger): { error: (err: unknown, msg?: string) => void; warn: (err: unknown, msg?: string) => void } {
  return {
    error: (err, msg) => log.error({ reason: reasonOf(err) }, msg ?? 'express-rate-limit error'),
    warn: (err, msg) => log.warn({ reason: reasonOf(err) }, msg ?? 'express-rate-limit warning'),
  };
}

/** The logger of the rate limiter's Redis warnings: `config.logger` (or the default) as component `rate-limit`. */
function rateLimitLog(config: RateLimitConfig): Logger {
  return (config.logger ?? defaultLogger()).child({ component: 'rate-limit' });
}

/**
 * The Redis link of one app's limiters when `config.redis` is set, else undefined. `createApp`
 * makes one per app and hands it to `rateLimitCheck` and to the readiness check of `/_readyz`
 * (domain/readiness.ts), so there is no process-wide link.
 */
export function createRedisLink(config: RateLimitConfig): RedisLink | undefined {
  if (!config.redis) return undefined;
  return new RedisLink(config.redis.sendCommand, config.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS, rateLimitLog(config));
}

/** What the middleware is built with besides the limits. */
export interface RateLimitDeps {
  /** operationId → class, from the spec (`rateClassesOf`, classes.ts); an operation not in it counts as `default` */
  classes: ReadonlyMap<string, RateClass>;
  /** with `config.redis`: the link the limiters count through (default: a new one, `createRedisLink`) */
  link?: RedisLink | undefined;
}

/** The throttle of one request (`rateLimitCheck`): resolves when it may go on, rejects with the 429 (`throttled`). */
export type RateLimitCheck = (req: Request, operationId: string | undefined) => Promise<void>;

/**
 * The per-key throttle (module doc). Call it once a request has authenticated with a personal API
 * key: `operationId` (the matched operation) chooses the class in `deps.classes`, the bearer token
 * is the counter's key (a request without one is not counted). It resolves when every window of
 * the class allows the request, and rejects with `throttled(seconds)` when one does not. With
 * `config.redis`, counters are shared through Redis on `deps.link` and fall back to per-process
 * counting while Redis does not answer (redis-link.ts).
 */
export function rateLimitCheck(config: RateLimitConfig, deps: RateLimitDeps): RateLimitCheck {
  const limiters = {} as Record<RateClass, RequestHandler[]>;
  const { classes } = deps;
  const link = config.redis ? (deps.link ?? createRedisLink(config)) : undefined;
  const log = link ? rateLimitLog(config) : undefined;
  // the counter key of each request being checked (sha256 of its token, once per request)
  const keys = new WeakMap<Request, string>();
  for (const cls of Object.keys(config.classes) as RateClass[]) {
    limiters[cls] = config.classes[cls].map((w) =>
      rateLimit({
        windowMs: w.windowMs,
        limit: w.limit,
        ...(config.redis && link && log
          ? {
              store: new SharedCounterStore(
                new RedisStore({
                  // rate-limit-redis types the reply narrowly; ioredis answers with those same values
                  sendCommand: config.redis.sendCommand as SendCommand,
                  prefix: `${config.redis.prefix}${cls}:${w.windowMs}:`,
                }),
                link,
              ),
              // the store does not throw; should it ever, serve the request rather than answer 500
              passOnStoreError: true,
              logger: limiterLogger(log),
            }
          : {}),
        standardHeaders: false,
        legacyHeaders: false,
        requestPropertyName: PROPERTY,
        // the class is part of the key as well: a limiter instance only ever sees its own class
        keyGenerator: (req) => `${cls}:${keys.get(req) ?? ''}`,
        handler: (req, _res, next) => {
          const info = (req as Request & { [PROPERTY]?: { resetTime?: Date } })[PROPERTY];
          const wait = info?.resetTime ? (info.resetTime.getTime() - Date.now()) / 1000 : w.windowMs / 1000;
          next(throttled(wait));
        },
      }),
    );
  }
  return (req, operationId) => {
    const key = rateKeyOf(req);
    const res = req.res;
    if (key === undefined || !res) return Promise.resolve();
    keys.set(req, key);
    const chain = limiters[(operationId !== undefined && classes.get(operationId)) || 'default'];
    return new Promise<void>((resolve, reject) => {
      let i = 0;
      const step = (err?: unknown): void => {
        if (err) return reject(err);
        const limiter = chain[i++];
        if (!limiter) return resolve();
        void limiter(req, res, step);
      };
      step();
    });
  };
}
