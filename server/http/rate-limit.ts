/**
 * PostHog's API throttles (posthog/rate_limit.py), per personal API key, with express-rate-limit.
 *
 * The counter's key is the sha256 of the bearer token (never the token itself). Only requests that
 * authenticated with a personal API key are counted: the middleware runs right after the
 * validator's security step, so an unknown key has already answered 401. Each operation belongs
 * to one class, chosen by its operationId:
 *
 * | class | operations | limits |
 * |---|---|---|
 * | `events` | `environments_events_list`, `environments_events_retrieve` | 240/minute, 1,200/hour |
 * | `event_values` | `environments_events_values_retrieve` | 60/minute, 300/hour |
 * | `default` | every other operation | 480/minute, 4,800/hour |
 *
 * Over a limit: 429 with PostHog's `throttled_error` body and a `Retry-After` header in seconds
 * (PostHog omits the header).
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { ApiError } from './errors.js';
import { bearerToken } from './security.js';

/** A throttle class (PostHog's throttle scopes). */
export type RateClass = 'events' | 'event_values' | 'default';

/** One window of a class: at most `limit` requests per `windowMs`. */
export interface RateWindow {
  limit: number;
  windowMs: number;
}

/** The limits of each class; a request must stay within every window of its class. */
export interface RateLimitConfig {
  classes: Record<RateClass, RateWindow[]>;
  /**
   * Shared counters (server/main.ts sets this when `REDIS_URL` is set): every limiter keeps its
   * counts in Redis through rate-limit-redis, under `<prefix><class>:<windowMs>:`, so a key's limit
   * holds across processes. Without it, each process counts in its own memory.
   */
  redis?: RedisCounters | undefined;
}

/** How the limiters reach Redis: a raw command sender (e.g. ioredis's `call`) and a key prefix. */
export interface RedisCounters {
  sendCommand: (command: string, ...args: string[]) => Promise<unknown>;
  /** e.g. `envapi:rl:` (`RATE_LIMIT_REDIS_PREFIX`) */
  prefix: string;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** PostHog's limits. */
export const DEFAULT_RATE_LIMITS: RateLimitConfig = {
  classes: {
    events: [
      { limit: 240, windowMs: MINUTE },
      { limit: 1_200, windowMs: HOUR },
    ],
    event_values: [
      { limit: 60, windowMs: MINUTE },
      { limit: 300, windowMs: HOUR },
    ],
    default: [
      { limit: 480, windowMs: MINUTE },
      { limit: 4_800, windowMs: HOUR },
    ],
  },
};

/** The class of an operation. */
export function rateClassOf(operationId: string | undefined): RateClass {
  if (operationId === 'environments_events_list' || operationId === 'environments_events_retrieve') return 'events';
  if (operationId === 'environments_events_values_retrieve') return 'event_values';
  return 'default';
}

/** The counter key of a request: sha256 of its bearer token, or undefined without one. */
export function rateKeyOf(req: Request): string | undefined {
  const token = bearerToken(req);
  return token === undefined ? undefined : createHash('sha256').update(token).digest('hex');
}

/** PostHog's 429 body, with `Retry-After`. */
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

/**
 * The throttling middleware. Put it after the validator's metadata and security steps:
 * `req.openapi.schema.operationId` chooses the class.
 */
export function rateLimitMiddleware(config: RateLimitConfig): RequestHandler {
  const limiters = {} as Record<RateClass, RequestHandler[]>;
  for (const cls of Object.keys(config.classes) as RateClass[]) {
    limiters[cls] = config.classes[cls].map((w) =>
      rateLimit({
        windowMs: w.windowMs,
        limit: w.limit,
        ...(config.redis
          ? {
              store: new RedisStore({
                // rate-limit-redis types the reply narrowly; ioredis answers with those same values
                sendCommand: config.redis.sendCommand as SendCommand,
                prefix: `${config.redis.prefix}${cls}:${w.windowMs}:`,
              }),
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
    const operationId = (req as Request & { openapi?: { schema?: { operationId?: string } } }).openapi?.schema?.operationId;
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

/**
 * Reads the limits from the environment: `RATE_LIMIT_ENABLED` (default on; `0`, `false`, `off`,
 * `no` disable), `RATE_LIMIT_MULTIPLIER` (scales every limit, default 1), and per class
 * `RATE_LIMIT_EVENTS`, `RATE_LIMIT_EVENT_VALUES`, `RATE_LIMIT_DEFAULT` in DRF's rate syntax, e.g.
 * `240/minute,1200/hour` (units: second, minute, hour, day). Throws on a malformed value.
 */
export function readRateLimitConfig(env: NodeJS.ProcessEnv = process.env): RateLimitConfig | false {
  const enabled = env.RATE_LIMIT_ENABLED;
  if (enabled !== undefined && ['0', 'false', 'off', 'no'].includes(enabled.trim().toLowerCase())) return false;
  const multiplierText = env.RATE_LIMIT_MULTIPLIER;
  const multiplier = multiplierText === undefined || multiplierText === '' ? 1 : Number(multiplierText);
  if (!Number.isFinite(multiplier) || multiplier <= 0) throw new Error(`RATE_LIMIT_MULTIPLIER must be a positive number, got ${JSON.stringify(multiplierText)}`);
  const vars: Record<RateClass, string> = { events: 'RATE_LIMIT_EVENTS', event_values: 'RATE_LIMIT_EVENT_VALUES', default: 'RATE_LIMIT_DEFAULT' };
  const classes = {} as Record<RateClass, RateWindow[]>;
  for (const cls of Object.keys(vars) as RateClass[]) {
    const name = vars[cls];
    const text = env[name];
    const windows = text === undefined || text === '' ? DEFAULT_RATE_LIMITS.classes[cls] : parseRates(name, text);
    classes[cls] = windows.map((w) => ({ windowMs: w.windowMs, limit: Math.max(1, Math.round(w.limit * multiplier)) }));
  }
  return { classes };
}

const UNITS: Record<string, number> = { s: 1_000, second: 1_000, m: MINUTE, minute: MINUTE, h: HOUR, hour: HOUR, d: 24 * HOUR, day: 24 * HOUR };

/** `240/minute,1200/hour` → windows. */
export function parseRates(name: string, text: string): RateWindow[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*\/\s*([a-z]+)\s*$/i.exec(part);
    const windowMs = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    if (!m || windowMs === undefined || Number(m[1]) < 1) throw new Error(`${name} must look like "240/minute,1200/hour", got ${JSON.stringify(text)}`);
    return { limit: Number(m[1]), windowMs };
  });
}
