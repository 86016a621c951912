/**
 * The limiters' Redis link: the state of one Redis connection as the limiters of a process see it
 * (`up`: counters in Redis; `down`: counters in each limiter's memory), its timeouts, its probes,
 * and its warnings.
 *
 * When Redis does not answer (down, unreachable, or slower than `RATE_LIMIT_REDIS_TIMEOUT_MS`) the
 * link goes `down` and logs one warning; the stores (counter-store.ts) then count in memory. Redis
 * is probed again by requests (at most once a second) and by each `/_readyz`; once it answers,
 * every store's scripts are reloaded and the link goes `up` again (one info line). A link that
 * flaps logs past `REDIS_LOG_BUDGET_PER_MINUTE` lines a minute at debug.
 *
 * There is no module-level state: each app makes its own link (`createRedisLink`, middleware.ts)
 * and hands it to its limiters and to the readiness check of its `/_readyz` (`RedisLink.check`).
 */
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { DEFAULT_REDIS_TIMEOUT_MS } from './config.js';

/** While Redis is down, at most one probe per this many milliseconds. */
const REDIS_PROBE_INTERVAL_MS = 1_000;

/** Startup allowance, in milliseconds, for the first connection and script load. */
const REDIS_STARTUP_TIMEOUT_MS = 2_000;

/** At most this many outage warnings (and as many recovery lines) per minute; more go to debug. */
const REDIS_LOG_BUDGET_PER_MINUTE = 5;

/**
 * ioredis options for the rate-limit client, so that a command never waits long on a Redis that is
 * gone: connecting gives up after 2 s (`connectTimeout`), a command without an answer fails after
 * `timeoutMs` (`commandTimeout`), and commands queued while disconnected are failed after the first
 * unsuccessful reconnection (`maxRetriesPerRequest: 1`) instead of piling up for ~20 reconnection
 * attempts; reconnection itself goes on forever, every 0.1–2 s. The offline queue stays on so that
 * the first commands of a start-up wait for the connection rather than fail. The limiter bounds
 * its own waits as well (`redisTimeoutMs`), so it stays safe with a client built without these.
 */
export function redisClientOptions(timeoutMs: number = DEFAULT_REDIS_TIMEOUT_MS): RedisOptions {
  return {
    connectTimeout: 2_000,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    retryStrategy: (times: number) => Math.min(times * 100, 2_000),
  };
}

/** Redis did not answer within the limiter's timeout. */
class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'RedisTimeoutError';
  }
}

/** `p`, or a RedisTimeoutError after `ms` milliseconds (a late answer or error of `p` is ignored). */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RedisTimeoutError(ms)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * Why Redis failed, for the log: the error's message only (ioredis errors carry the command and
 * its arguments, i.e. counter keys, in other fields), shortened to 200 characters, with anything
 * that looks like an API key or a key hash removed.
 */
export function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .replace(/phx_[A-Za-z0-9_-]*/g, 'phx_[redacted]')
    .replace(/\b[0-9a-f]{64}\b/gi, '[redacted]')
    .slice(0, 200);
}

/** Redis reachability as the limiters of one process see it. */
export type RedisReadiness = 'ok' | 'unavailable';

/** What the link needs of a store: (re)loading its Redis scripts (rate-limit-redis's `init`). */
export interface ScriptLoader {
  loadScripts(): Promise<void>;
}

/**
 * The state of one Redis connection shared by the limiters of a middleware: `up` (counters in
 * Redis) or `down` (counters in each limiter's memory, Redis probed at most once a second).
 * `send` is a raw command sender (ioredis's `call`); `timeoutMs` bounds every Redis operation.
 */
export class RedisLink {
  private state: 'up' | 'down' = 'up';
  private nextProbeAt = 0;
  private probing: Promise<boolean> | undefined;
  private readonly logged = { down: [] as number[], up: [] as number[] };
  private readonly stores: ScriptLoader[] = [];
  /** how many times the link came back up (a late start-up failure must not undo a recovery) */
  private recoveries = 0;

  constructor(
    private readonly send: (command: string, ...args: string[]) => Promise<unknown>,
    readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  /** Whether to use Redis now; while down, starts a background probe when one is due. */
  usable(): boolean {
    if (this.state === 'up') return true;
    if (!this.probing && Date.now() >= this.nextProbeAt) void this.probe();
    return false;
  }

  /** Runs one Redis operation of a limiter under the timeout. */
  attempt<T>(op: () => Promise<T>, ms: number = this.timeoutMs): Promise<T> {
    let p: Promise<T>;
    try {
      p = op();
    } catch (err) {
      p = Promise.reject(err);
    }
    return withDeadline(p, ms);
  }

  /** Notes a failure: the first of an outage switches to per-process counting and warns. */
  failed(err: unknown): void {
    this.nextProbeAt = Date.now() + REDIS_PROBE_INTERVAL_MS;
    if (this.state === 'down') return;
    this.state = 'down';
    this.logTransition(
      'down',
      { redis: 'unavailable', reason: reasonOf(err) },
      'Redis unreachable: rate limits are counted by each process on its own until it answers again',
    );
  }

  /** Adds a store and loads its scripts (allowing for the first connection of a start-up). */
  register(store: ScriptLoader): void {
    this.stores.push(store);
    const since = this.recoveries;
    this.attempt(() => store.loadScripts(), Math.max(this.timeoutMs, REDIS_STARTUP_TIMEOUT_MS)).catch((err: unknown) => {
      if (this.recoveries === since) this.failed(err);
    });
  }

  /**
   * Readiness: PING when up; a probe when down. Resolves (never rejects) within about
   * `timeoutMs` (two round trips when Redis has just come back: PING, then the scripts).
   */
  async check(): Promise<RedisReadiness> {
    if (this.state === 'down') return (await this.probe()) ? 'ok' : 'unavailable';
    try {
      await this.attempt(() => this.send('PING'));
      return 'ok';
    } catch (err) {
      this.failed(err);
      return 'unavailable';
    }
  }

  /** PING, and after an outage reload every store's scripts before switching back to Redis. */
  private probe(): Promise<boolean> {
    if (this.probing) return this.probing;
    this.nextProbeAt = Date.now() + REDIS_PROBE_INTERVAL_MS;
    this.probing = (async () => {
      try {
        await this.attempt(() => this.send('PING'));
        if (this.state === 'down') {
          // a store whose first script load failed keeps that failure until loaded again, and a
          // Redis that restarted has forgotten the scripts
          await Promise.all(this.stores.map((s) => this.attempt(() => s.loadScripts())));
          this.state = 'up';
          this.recoveries += 1;
          this.logTransition('up', { redis: 'ok' }, 'Redis reachable again: rate limits are shared across processes again');
        }
        return true;
      } catch (err) {
        this.failed(err);
        return false;
      } finally {
        this.probing = undefined;
      }
    })();
    return this.probing;
  }

  /** A warn (down) or info (up) line; a link that flaps logs past the per-minute budget at debug. */
  private logTransition(to: 'down' | 'up', fields: Record<string, string>, msg: string): void {
    const now = Date.now();
    const recent = this.logged[to].filter((t) => now - t < 60_000);
    const level = recent.length >= REDIS_LOG_BUDGET_PER_MINUTE ? 'debug' : to === 'down' ? 'warn' : 'info';
    if (level !== 'debug') recent.push(now);
    this.logged[to] = recent;
    this.log[level](fields, msg);
  }
}
