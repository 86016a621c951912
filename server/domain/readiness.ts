/**
 * Readiness of a server process, as `/_readyz` reports it (server/http/health.ts): ready when a
 * trivial storage query works. When the rate limits use Redis, Redis's reachability is reported
 * beside it but does not decide readiness: a replica whose Redis is down stays ready, because its
 * limiters fail open to per-process counting, and every replica shares that Redis, so taking them
 * out of rotation would turn a lost throttle store into an outage of the whole API
 * (docs/deploy.md, "When Redis is unreachable").
 */
import type { Store } from '../storage/db.js';
import { storeAnswers } from '../storage/ping.js';

/** Reachability of a dependency that is reported without deciding readiness. */
export type Reachability = 'ok' | 'unavailable';

/**
 * A dependency checked beside the store: the rate limiter's Redis link of the app
 * (`RedisLink.check`: a PING, or a recovery probe while it is down; resolves, never rejects, within
 * about two `RATE_LIMIT_REDIS_TIMEOUT_MS`).
 */
export interface ReachabilityCheck {
  check(): Promise<Reachability>;
}

/** What one readiness check found: `ready` (the store answers) and, with Redis, its reachability. */
export interface Readiness {
  ready: boolean;
  redis?: Reachability;
}

/** The readiness check of one app: its store and, when its rate limits use Redis, its Redis link. */
export class ReadinessService {
  constructor(
    private readonly store: Store,
    private readonly redis?: ReachabilityCheck,
  ) {}

  /** Checks the store and Redis at once; never rejects. */
  async check(): Promise<Readiness> {
    const redis = this.redis?.check();
    const ready = await storeAnswers(this.store);
    return redis ? { ready, redis: await redis } : { ready };
  }
}
