/**
 * Operational endpoints, outside the API (not in `openapi.yaml`, no authentication, no rate limit):
 *
 * - `GET /_health`: liveness, always 200 `{"status":"ok"}` while the process serves requests.
 * - `GET /_readyz`: readiness, 200 `{"status":"ok"}` when a trivial storage query works, else 503
 *   `{"status":"unavailable"}`. When the rate limits use Redis (`REDIS_URL`), the body also has
 *   `"redis": "ok" | "unavailable"` (a PING, bounded by `RATE_LIMIT_REDIS_TIMEOUT_MS`), which is
 *   informational only: a replica whose Redis is down stays ready, because its limiters fail open
 *   to per-process counting (docs/deploy.md, "When Redis is unreachable"), and every replica
 *   shares that Redis, so taking them out of rotation would turn a lost throttle store into an
 *   outage of the whole API. The check also serves as the limiters' recovery probe.
 */
import type { RequestHandler } from 'express';
import type { ReadinessService } from '../domain/readiness.js';

/** The handlers of `GET /_health` and `GET /_readyz`. */
export interface HealthHandlers {
  health: RequestHandler;
  readyz: RequestHandler;
}

/**
 * The `/_health` and `/_readyz` handlers (see the module doc) over the app's readiness check
 * (domain/readiness.ts: the store, and the rate limiter's Redis link when there is one); mount them
 * before the validator, each with `app.get(path, …)` (which also answers HEAD).
 */
export function healthHandlers(readiness: ReadinessService): HealthHandlers {
  return {
    health: (_req, res) => {
      res.json({ status: 'ok' });
    },
    readyz: async (_req, res) => {
      const { ready, redis } = await readiness.check();
      const extra = redis ? { redis } : {};
      if (ready) res.json({ status: 'ok', ...extra });
      else res.status(503).json({ status: 'unavailable', ...extra });
    },
  };
}
