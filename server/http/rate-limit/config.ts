/**
 * The rate-limit configuration: PostHog's limits per throttle class (posthog/rate_limit.py) and
 * their reading from `RATE_LIMIT_*` environment variables into a `RateLimitConfig`. No Express, no
 * Redis: plain values, read once at start-up (server/config.ts, server/app.ts).
 */
import type { Logger } from 'pino';

/** A throttle class (PostHog's throttle scopes). */
export type RateClass = 'events' | 'event_values' | 'query' | 'default';

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
  /**
   * With `redis`: how long one Redis round trip of a limiter may take, in milliseconds, before the
   * request is counted in this process instead (`RATE_LIMIT_REDIS_TIMEOUT_MS`, default 500).
   */
  redisTimeoutMs?: number | undefined;
  /** With `redis`: where the Redis warnings go (`createApp` passes its request logger; default: pino on stdout at `LOG_LEVEL`). */
  logger?: Logger | undefined;
}

/** How the limiters reach Redis: a raw command sender (e.g. ioredis's `call`) and a key prefix. */
export interface RedisCounters {
  sendCommand: (command: string, ...args: string[]) => Promise<unknown>;
  /** e.g. `envapi:rl:` (`RATE_LIMIT_REDIS_PREFIX`) */
  prefix: string;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Default of `RATE_LIMIT_REDIS_TIMEOUT_MS`, in milliseconds. */
export const DEFAULT_REDIS_TIMEOUT_MS = 500;

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
    // PostHog's APIQueriesThrottle (posthog/rate_limit.py) of the query endpoint
    query: [
      { limit: 240, windowMs: MINUTE },
      { limit: 2_400, windowMs: HOUR },
    ],
    default: [
      { limit: 480, windowMs: MINUTE },
      { limit: 4_800, windowMs: HOUR },
    ],
  },
  redisTimeoutMs: DEFAULT_REDIS_TIMEOUT_MS,
};

/**
 * Reads the limits from the environment: `RATE_LIMIT_ENABLED` (default on; `0`, `false`, `off`,
 * `no` disable), `RATE_LIMIT_MULTIPLIER` (scales every limit, default 1), per class
 * `RATE_LIMIT_EVENTS`, `RATE_LIMIT_EVENT_VALUES`, `RATE_LIMIT_QUERY`, `RATE_LIMIT_DEFAULT` in DRF's rate syntax, e.g.
 * `240/minute,1200/hour` (units: second, minute, hour, day), and `RATE_LIMIT_REDIS_TIMEOUT_MS`
 * (positive integer, default 500; used only with Redis). Throws on a malformed value.
 */
export function readRateLimitConfig(env: NodeJS.ProcessEnv = process.env): RateLimitConfig | false {
  const enabled = env.RATE_LIMIT_ENABLED;
  if (enabled !== undefined && ['0', 'false', 'off', 'no'].includes(enabled.trim().toLowerCase())) return false;
  const multiplierText = env.RATE_LIMIT_MULTIPLIER;
  const multiplier = multiplierText === undefined || multiplierText === '' ? 1 : Number(multiplierText);
  if (!Number.isFinite(multiplier) || multiplier <= 0)
    throw new Error(`RATE_LIMIT_MULTIPLIER must be a positive number, got ${JSON.stringify(multiplierText)}`);
  const vars: Record<RateClass, string> = {
    events: 'RATE_LIMIT_EVENTS',
    event_values: 'RATE_LIMIT_EVENT_VALUES',
    query: 'RATE_LIMIT_QUERY',
    default: 'RATE_LIMIT_DEFAULT',
  };
  const classes = {} as Record<RateClass, RateWindow[]>;
  for (const cls of Object.keys(vars) as RateClass[]) {
    const name = vars[cls];
    const text = env[name];
    const windows = text === undefined || text === '' ? DEFAULT_RATE_LIMITS.classes[cls] : parseRates(name, text);
    classes[cls] = windows.map((w) => ({ windowMs: w.windowMs, limit: Math.max(1, Math.round(w.limit * multiplier)) }));
  }
  const timeoutText = env.RATE_LIMIT_REDIS_TIMEOUT_MS;
  const redisTimeoutMs = timeoutText === undefined || timeoutText === '' ? DEFAULT_REDIS_TIMEOUT_MS : Number(timeoutText);
  if (!Number.isInteger(redisTimeoutMs) || redisTimeoutMs < 1)
    throw new Error(`RATE_LIMIT_REDIS_TIMEOUT_MS must be a positive integer (milliseconds), got ${JSON.stringify(timeoutText)}`);
  return { classes, redisTimeoutMs };
}

const UNITS: Record<string, number> = {
  s: 1_000,
  second: 1_000,
  m: MINUTE,
  minute: MINUTE,
  h: HOUR,
  hour: HOUR,
  d: 24 * HOUR,
  day: 24 * HOUR,
};

/**
 * `240/minute,1200/hour` → windows (DRF's rate syntax; units s/second, m/minute, h/hour, d/day).
 * `name` is the variable being read, for the error. Throws on a malformed part or a limit below 1.
 */
export function parseRates(name: string, text: string): RateWindow[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*\/\s*([a-z]+)\s*$/i.exec(part);
    const windowMs = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    if (!m || windowMs === undefined || Number(m[1]) < 1)
      throw new Error(`${name} must look like "240/minute,1200/hour", got ${JSON.stringify(text)}`);
    return { limit: Number(m[1]), windowMs };
  });
}
