/**
 * PostHog's API throttles (posthog/rate_limit.py), per personal API key, with express-rate-limit.
 *
 * The counter's key is the sha256 of the bearer token (never the token itself). Only requests that
 * authenticated with a personal API key are counted: the limiters run in the security handler once
 * the key and its scopes are accepted, before request validation (rate-limit/limiter.ts), so an
 * unknown key has already answered 401 and an invalid request counts. Each operation belongs
 * to one class, the `x-rate-limit-class` it declares in `openapi.yaml` (read at start-up,
 * rate-limit/classes.ts):
 *
 * | class | operations | limits |
 * |---|---|---|
 * | `events` | `environments_events_list`, `environments_events_retrieve` | 240/minute, 1,200/hour |
 * | `event_values` | `environments_events_values_retrieve` | 60/minute, 300/hour |
 * | `query` | `environments_query_create` (PostHog's `APIQueriesThrottle`) | 240/minute, 2,400/hour |
 * | `default` | every other operation | 480/minute, 4,800/hour |
 *
 * Over a limit: 429 with PostHog's `throttled_error` body and a `Retry-After` header in seconds
 * (PostHog omits the header).
 *
 * With Redis (`REDIS_URL`) the counters are shared by every process. When Redis does not answer
 * (down, unreachable, or slower than `RATE_LIMIT_REDIS_TIMEOUT_MS`) the limiters **fail open to
 * per-process counting**: each request is counted in this process's memory instead (the same limits,
 * so N processes allow up to N × a limit), one warning is logged, and Redis is probed again (by
 * requests, at most once a second, and by each `/_readyz`); once it answers, its scripts are
 * reloaded and the shared counters are used again (one info line). No request waits on Redis longer than the
 * timeout, and none answers 500 because of it. See docs/deploy.md, "When Redis is unreachable".
 *
 * This module is the entry of the `rate-limit/` folder and re-exports its public parts:
 * - `rate-limit/config.ts`: `RateLimitConfig` and its reading from `RATE_LIMIT_*`;
 * - `rate-limit/classes.ts`: the class of each operation, from the spec;
 * - `rate-limit/redis-link.ts`: the Redis connection state (one per app), its probes, its readiness
 *   check and warnings, the ioredis options;
 * - `rate-limit/counter-store.ts`: the store that counts in Redis or, while Redis is down, in memory;
 * - `rate-limit/limiter.ts`: the limiters, where they run (inside the security handler, and why),
 *   the app's Redis link (`createRedisLink`), the 429.
 */
export {
  DEFAULT_RATE_LIMITS,
  DEFAULT_REDIS_TIMEOUT_MS,
  parseRates,
  readRateLimitConfig,
  type RateClass,
  type RateLimitConfig,
  type RateWindow,
  type RedisCounters,
} from './rate-limit/config.js';
export { RATE_CLASS_EXTENSION, RATE_CLASSES, RateClassError, rateClassesOf } from './rate-limit/classes.js';
export { createRedisLink, rateKeyOf, rateLimitCheck, throttled, type RateLimitCheck, type RateLimitDeps } from './rate-limit/limiter.js';
export { redisClientOptions, RedisLink, type RedisReadiness } from './rate-limit/redis-link.js';
