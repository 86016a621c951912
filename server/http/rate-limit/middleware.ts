/**
 * The throttling middleware: one express-rate-limit limiter per window of each class, chosen per
 * request by its operationId, counted per sha256 of the bearer token, answering PostHog's 429
 * `throttled_error` with `Retry-After` (seconds). With `config.redis`, each limiter counts through
 * a `SharedCounterStore` on one `RedisLink` (counter-store.ts, redis-link.ts).
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
import { adoptProcessLink, reasonOf, RedisLink } from './redis-link.js';

/**
 * The class of an operation (PostHog's throttle scopes): `events` for the events list and retrieve,
 * `event_values` for the events values, `default` for every other operation or none.
 */
export function rateClassOf(operationId: string | undefined): RateClass {
  if (operationId === 'environments_events_list' || operationId === 'environments_events_retrieve') return 'events';
  if (operationId === 'environments_events_values_retrieve') return 'event_values';
  return 'default';
}

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

/**
 * The throttling middleware. Put it after the validator's metadata and security steps:
 * `req.openapi.schema.operationId` chooses the class. With `config.redis`, counters are shared
 * through Redis and fall back to per-process counting while Redis does not answer (redis-link.ts);
 * `redisReadiness()` then reports on that connection.
 */
export function rateLimitMiddleware(config: RateLimitConfig): RequestHandler {
  const limiters = {} as Record<RateClass, RequestHandler[]>;
  let link: RedisLink | undefined;
  let log: Logger | undefined;
  if (config.redis) {
    log = (config.logger ?? defaultLogger()).child({ component: 'rate-limit' });
    link = new RedisLink(config.redis.sendCommand, config.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS, log);
    adoptProcessLink(link);
  }
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
    const chain = limiters[rateClassOf(operationId)];
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
