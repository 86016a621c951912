/**
 * The throttling middleware: one express-rate-limit limiter per window of each class, chosen per
 * request by the `x-rate-limit-class` its operation declares in the spec (classes.ts), counted per
 * sha256 of the bearer token, answering PostHog's 429 `throttled_error` with `Retry-After`
 * (seconds). With `config.redis`, each limiter counts through a `SharedCounterStore` on one
 * `RedisLink` (counter-store.ts, redis-link.ts), made per app by `createRedisLink` and shared with
 * `/_readyz`.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { ApiError } from '../../domain/errors.js';
import { defaultLogger } from '../logging.js';
import { openapiOf } from '../openapi-pipeline.js';
import { bearerToken } from '../security.js';
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
 * makes one per app and hands it to `rateLimitMiddleware` and to the readiness check of `/_readyz`
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

/**
 * The throttling middleware. Put it after the validator's metadata and security steps:
 * `req.openapi.schema.operationId` chooses the class in `deps.classes`. With `config.redis`,
 * counters are shared through Redis on `deps.link` and fall back to per-process counting while
 * Redis does not answer (redis-link.ts).
 */
export function rateLimitMiddleware(config: RateLimitConfig, deps: RateLimitDeps): RequestHandler {
  const limiters = {} as Record<RateClass, RequestHandler[]>;
  const { classes } = deps;
  const link = config.redis ? (deps.link ?? createRedisLink(config)) : undefined;
  const log = link ? rateLimitLog(config) : undefined;
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
        keyGenerator: (req) => `${cls}:${rateKeyOf(req) ?? ''}`,
        skip: (req) => rateKeyOf(req) === undefined,
        handler: (req, _res, next) => {
          const info = (req as Request & { [PROPERTY]?: { resetTime?: Date } })[PROPERTY];
          const wait = info?.resetTime ? (info.resetTime.getTime() - Date.now()) / 1000 : w.windowMs / 1000;
          next(throttled(wait));
        },
      }),
    );
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const operationId = openapiOf(req)?.schema.operationId;
    const chain = limiters[(operationId !== undefined && classes.get(operationId)) || 'default'];
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const limiter = chain[i++];
      if (!limiter) return next();
      void limiter(req, res, step);
    };
    step();
  };
}
