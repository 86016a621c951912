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
 *
 * With Redis (`REDIS_URL`) the counters are shared by every process. When Redis does not answer
 * (down, unreachable, or slower than `RATE_LIMIT_REDIS_TIMEOUT_MS`) the limiters **fail open to
 * per-process counting**: each request is counted in this process's memory instead (the same limits,
 * so N processes allow up to N × a limit), one warning is logged, and Redis is probed again (by
 * requests, at most once a second, and by each `/_readyz`); once it answers, its scripts are
 * reloaded and the shared counters are used again (one info line). No request waits on Redis longer than the
 * timeout, and none answers 500 because of it. See docs/deploy.md, "When Redis is unreachable".
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { MemoryStore, rateLimit, type ClientRateLimitInfo, type IncrementResponse, type Options as LimiterOptions, type Store } from 'express-rate-limit';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { ApiError } from './errors.js';
import { defaultLogger } from './logging.js';
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

/** While Redis is down, at most one probe per this many milliseconds. */
const REDIS_PROBE_INTERVAL_MS = 1_000;

/** Startup allowance, in milliseconds, for the first connection and script load. */
const REDIS_STARTUP_TIMEOUT_MS = 2_000;

/** At most this many outage warnings (and as many recovery lines) per minute; more go to debug. */
const REDIS_LOG_BUDGET_PER_MINUTE = 5;

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
  redisTimeoutMs: DEFAULT_REDIS_TIMEOUT_MS,
};

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
 * its arguments, i.e. counter keys, in other fields), shortened, with anything that looks like an
 * API key or a key hash removed.
 */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .replace(/phx_[A-Za-z0-9_-]*/g, 'phx_[redacted]')
    .replace(/\b[0-9a-f]{64}\b/gi, '[redacted]')
    .slice(0, 200);
}

/** Redis reachability as the limiters of one process see it. */
export type RedisReadiness = 'ok' | 'unavailable';

/**
 * The state of one Redis connection shared by the limiters of a middleware: `up` (counters in
 * Redis) or `down` (counters in each limiter's memory, Redis probed at most once a second).
 */
class RedisLink {
  private state: 'up' | 'down' = 'up';
  private nextProbeAt = 0;
  private probing: Promise<boolean> | undefined;
  private readonly logged = { down: [] as number[], up: [] as number[] };
  private readonly stores: SharedCounterStore[] = [];
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
  register(store: SharedCounterStore): void {
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

/**
 * An express-rate-limit store that counts in Redis (rate-limit-redis) while the link is up, and in
 * this process's memory (express-rate-limit's MemoryStore, same window) while it is down. It never
 * throws: a Redis failure falls back to memory for that request.
 */
class SharedCounterStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private readonly memory = new MemoryStore();
  private options: LimiterOptions | undefined;

  constructor(
    private readonly redis: RedisStore,
    private readonly link: RedisLink,
  ) {
    this.prefix = redis.prefix;
  }

  init(options: LimiterOptions): void {
    this.options = options;
    this.memory.init(options);
    this.link.register(this);
  }

  /** (Re)loads the Redis scripts (rate-limit-redis's `init`). */
  loadScripts(): Promise<void> {
    if (!this.options) return Promise.reject(new Error('store not initialised'));
    return this.redis.init(this.options);
  }

  private async route<T>(onRedis: () => Promise<T>, onMemory: () => Promise<T>): Promise<T> {
    if (this.link.usable()) {
      try {
        return await this.link.attempt(onRedis);
      } catch (err) {
        this.link.failed(err);
      }
    }
    return onMemory();
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.route(
      () => this.redis.increment(key),
      () => this.memory.increment(key),
    );
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.route(
      () => this.redis.get(key),
      () => this.memory.get(key),
    );
  }

  decrement(key: string): Promise<void> {
    return this.route(
      () => this.redis.decrement(key),
      () => this.memory.decrement(key),
    );
  }

  async resetKey(key: string): Promise<void> {
    await this.memory.resetKey(key);
    await this.route(
      () => this.redis.resetKey(key),
      async () => undefined,
    );
  }

  shutdown(): void {
    this.memory.shutdown();
  }
}

/** The Redis link of the most recently built middleware with Redis (one per server process). */
let processLink: RedisLink | undefined;

/**
 * Redis readiness of this process's rate limiter, for `/_readyz`: undefined when the limits do not
 * use Redis; otherwise a promise (never rejected) of `'ok'` or `'unavailable'`, settled within
 * about two `redisTimeoutMs`. A server process builds one app; with several, the latest counts.
 */
export function redisReadiness(): Promise<RedisReadiness> | undefined {
  return processLink?.check();
}

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
 * through Redis and fall back to per-process counting while Redis does not answer (module doc);
 * `redisReadiness()` then reports on that connection.
 */
export function rateLimitMiddleware(config: RateLimitConfig): RequestHandler {
  const limiters = {} as Record<RateClass, RequestHandler[]>;
  let link: RedisLink | undefined;
  let log: Logger | undefined;
  if (config.redis) {
    log = (config.logger ?? defaultLogger()).child({ component: 'rate-limit' });
    link = new RedisLink(config.redis.sendCommand, config.redisTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS, log);
    processLink = link;
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
 * `no` disable), `RATE_LIMIT_MULTIPLIER` (scales every limit, default 1), per class
 * `RATE_LIMIT_EVENTS`, `RATE_LIMIT_EVENT_VALUES`, `RATE_LIMIT_DEFAULT` in DRF's rate syntax, e.g.
 * `240/minute,1200/hour` (units: second, minute, hour, day), and `RATE_LIMIT_REDIS_TIMEOUT_MS`
 * (positive integer, default 500; used only with Redis). Throws on a malformed value.
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
  const timeoutText = env.RATE_LIMIT_REDIS_TIMEOUT_MS;
  const redisTimeoutMs = timeoutText === undefined || timeoutText === '' ? DEFAULT_REDIS_TIMEOUT_MS : Number(timeoutText);
  if (!Number.isInteger(redisTimeoutMs) || redisTimeoutMs < 1)
    throw new Error(`RATE_LIMIT_REDIS_TIMEOUT_MS must be a positive integer (milliseconds), got ${JSON.stringify(timeoutText)}`);
  return { classes, redisTimeoutMs };
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
