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
 *
 * Test-only: when the app is built with `slowHealthMs` (from `ENVAPI_TEST_SLOW_MS`, never set in
 * production), `GET /_health?slow=1` waits that long before answering, so the shutdown test can
 * hold a request in flight.
 */
import { Router } from 'express';
import { sql } from 'kysely';
import type { Store } from '../storage/db.js';
import { redisReadiness } from './rate-limit.js';

/** The `/_health` and `/_readyz` routes over a store (see the module doc); mount before the validator. */
export function healthRoutes(store: Store, opts: { slowHealthMs?: number } = {}): Router {
  const router = Router();
  router.get('/_health', async (req, res) => {
    if (opts.slowHealthMs && req.query.slow !== undefined) await new Promise((r) => setTimeout(r, opts.slowHealthMs));
    res.json({ status: 'ok' });
  });
  router.get('/_readyz', async (_req, res) => {
    // both checks at once; the Redis one never rejects
    const redis = redisReadiness();
    let storeOk = true;
    try {
      await sql`select 1`.execute(store.db);
    } catch {
      storeOk = false;
    }
    const extra = redis ? { redis: await redis } : {};
    if (storeOk) res.json({ status: 'ok', ...extra });
    else res.status(503).json({ status: 'unavailable', ...extra });
  });
  return router;
}
