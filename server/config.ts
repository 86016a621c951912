/**
 * Configuration from the environment, with defaults for a development machine.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | PORT | 8000 | TCP port |
 * | HOST | 127.0.0.1 | interface to listen on |
 * | DATA_DIR | ./data | directory of the SQLite file |
 * | DATABASE_URL | (unset) | `postgres://…` selects PostgreSQL instead of SQLite |
 * | VALIDATE_RESPONSES | on unless NODE_ENV=production | validate every response against the spec |
 * | SHUTDOWN_TIMEOUT_MS | 10000 | how long requests in flight may take to finish on SIGTERM/SIGINT |
 * | LOG_LEVEL | info | pino level of the request log (`silent` turns it off) |
 * | RATE_LIMIT_ENABLED | on | per-key throttles; `0`, `false`, `off`, `no` disable them |
 * | RATE_LIMIT_MULTIPLIER | 1 | scales every limit |
 * | RATE_LIMIT_EVENTS / RATE_LIMIT_EVENT_VALUES / RATE_LIMIT_DEFAULT | PostHog's | a class's limits, e.g. `240/minute,1200/hour` |
 * | DATABASE_POOL_SIZE | 10 | PostgreSQL connections a process may open |
 * | REDIS_URL | (unset) | `redis://…`: rate-limit counters shared by every process through Redis |
 * | RATE_LIMIT_REDIS_PREFIX | envapi:rl: | prefix of the counters' Redis keys |
 * | RATE_LIMIT_REDIS_TIMEOUT_MS | 500 | longest wait on Redis for a request; past it, or while Redis is down, each process counts on its own |
 * | QUERY_TIMEOUT_MS | 30000 | time budget of one events list / values read (queue wait included); past it 504 |
 * | DATABASE_LOCK_TIMEOUT_MS | 10000 | SQLite: longest an API write waits for another writer (e.g. an import) before answering 503 with `Retry-After` |
 * | EVENTS_READ_THREADS | one per core, at most 4 | worker threads of the events reads (server/read-pool/); 0 = on the main thread |
 * | CAPTURE_MAX_QUEUED_EVENTS | 50000 | capture endpoints: events accepted and not yet committed, at most; past it 503 (server/capture/queue.ts) |
 * | EVENTS_STORE | the configuration store's | where events live: `sqlite` / `postgres` (the configuration store itself) or `clickhouse` |
 * | CLICKHOUSE_URL | (unset) | with EVENTS_STORE=clickhouse: `http(s)://user:password@host:8123/database`, a ClickHouse server; unset: embedded chDB in `DATA_DIR/clickhouse/` |
 * | CLICKHOUSE_MEMORY_LIMIT | half the RAM | embedded chDB: the engine's memory cap, bytes or with a unit (`4G`, `512M`) |
 * | CLICKHOUSE_MAX_QUERIES | 4 embedded, 8 server | ClickHouse statements in flight at most; the rest wait, under QUERY_TIMEOUT_MS |
 * | API_ENVIRONMENTS_DEPRECATION | on | answers under `/api/environments/` carry `Deprecation`, `Sunset` and `Link` (http/deprecation.ts); `0`, `false`, `off`, `no` leave them out |
 * | API_ENVIRONMENTS_SUNSET_DATE | 2026-07-31 | the `Sunset` day (`YYYY-MM-DD`, UTC; PostHog's setting and default); `none` sends no `Sunset` |
 */
import { readRateLimitConfig, type RateLimitConfig } from './http/rate-limit.js';
import { DEFAULT_MAX_QUEUED_EVENTS } from './capture/queue.js';
import { DEFAULT_QUERY_TIMEOUT_MS, defaultReadThreads } from './read-pool/index.js';
import { DEFAULT_ENVIRONMENTS_SUNSET_DATE, type EnvironmentsDeprecation } from './http/deprecation.js';
import { DEFAULT_LOCK_TIMEOUT_MS } from './storage/db.js';

/** The server's settings. */
export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL pool size of this process (`DATABASE_POOL_SIZE`, default 10) */
  databasePoolSize: number;
  /** `REDIS_URL`: when set, rate-limit counters live in Redis (shared by every process) */
  redisUrl: string | undefined;
  /** `RATE_LIMIT_REDIS_PREFIX`: prefix of the counters' Redis keys */
  redisPrefix: string;
  validateResponses: boolean;
  shutdownTimeoutMs: number;
  logLevel: string;
  /** per-key throttles, or false when disabled */
  rateLimit: RateLimitConfig | false;
  /** `QUERY_TIMEOUT_MS`: time budget of one events read, ms (also PostgreSQL's statement_timeout) */
  queryTimeoutMs: number;
  /** `EVENTS_READ_THREADS`: worker threads of the events reads; 0 = on the main thread */
  eventsReadThreads: number;
  /** `DATABASE_LOCK_TIMEOUT_MS`: SQLite, longest an API write waits for the write lock, ms */
  lockTimeoutMs: number;
  /** `CAPTURE_MAX_QUEUED_EVENTS`: capture events accepted and not yet committed, at most (per process) */
  captureMaxQueuedEvents: number;
  /** `EVENTS_STORE=clickhouse`: the events on ClickHouse (undefined: rows of the configuration store) */
  clickhouse: ClickHouseConfig | undefined;
  /** `API_ENVIRONMENTS_DEPRECATION`, `API_ENVIRONMENTS_SUNSET_DATE`: the `/api/environments/` deprecation headers */
  environmentsDeprecation: EnvironmentsDeprecation;
}

/** Where the ClickHouse events store is, and its limits. */
export interface ClickHouseConfig {
  /** `CLICKHOUSE_URL`; undefined: embedded chDB */
  url: string | undefined;
  /** `CLICKHOUSE_MEMORY_LIMIT`, bytes (undefined: the default share of RAM) */
  memoryLimitBytes: number | undefined;
  /** `CLICKHOUSE_MAX_QUERIES` (undefined: the default per connection kind) */
  maxQueries: number | undefined;
}

const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** A size in bytes: an integer, optionally with K, M, G or T (powers of 1024; `B`/`iB` allowed). */
export function parseBytes(name: string, value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(value);
  const n = m ? Math.floor(Number(m[1]) * UNITS[m[2]!.toUpperCase()]!) : NaN;
  if (!Number.isSafeInteger(n) || n < 64 * 1024 * 1024) {
    throw new Error(`${name} must be a size of at least 64M (bytes, or with K, M, G, T: e.g. 4G), got ${JSON.stringify(value)}`);
  }
  return n;
}

/**
 * The ClickHouse events store `env` asks for (`EVENTS_STORE=clickhouse`, `CLICKHOUSE_*`), or
 * undefined when the events stay beside the configuration. Throws with the variable's name.
 */
export function readClickHouseConfig(env: NodeJS.ProcessEnv = process.env): ClickHouseConfig | undefined {
  const store = (env.EVENTS_STORE ?? '').trim().toLowerCase();
  const dbStore = env.DATABASE_URL ? 'postgres' : 'sqlite';
  if (store === '' || store === dbStore) {
    if (env.CLICKHOUSE_URL)
      throw new Error('CLICKHOUSE_URL is set but EVENTS_STORE is not clickhouse: set EVENTS_STORE=clickhouse to keep the events there.');
    return undefined;
  }
  if (store === 'sqlite' || store === 'postgres') {
    throw new Error(
      `EVENTS_STORE=${store} needs the configuration store to be ${store} too (${store === 'postgres' ? 'set DATABASE_URL' : 'unset DATABASE_URL'}); the events of a row store live beside the configuration.`,
    );
  }
  if (store !== 'clickhouse')
    throw new Error(`EVENTS_STORE must be sqlite, postgres or clickhouse, got ${JSON.stringify(env.EVENTS_STORE)}`);
  const url = env.CLICKHOUSE_URL || undefined;
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new Error(
        'CLICKHOUSE_URL must be an http:// or https:// URL of a ClickHouse server (e.g. http://default:password@127.0.0.1:8123/default)',
      );
    }
  }
  const maxQueries = env.CLICKHOUSE_MAX_QUERIES ? positive('CLICKHOUSE_MAX_QUERIES', env.CLICKHOUSE_MAX_QUERIES, 1) : undefined;
  const memoryLimitBytes = env.CLICKHOUSE_MEMORY_LIMIT ? parseBytes('CLICKHOUSE_MEMORY_LIMIT', env.CLICKHOUSE_MEMORY_LIMIT) : undefined;
  return { url, memoryLimitBytes, maxQueries };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function int(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

/** Reads the settings from `env`. Throws with the variable's name when a value is malformed. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const validate = env.VALIDATE_RESPONSES;
  return {
    port: int('PORT', env.PORT, 8000),
    host: env.HOST || '127.0.0.1',
    dataDir: env.DATA_DIR || 'data',
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolSize: poolSize(env.DATABASE_POOL_SIZE),
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.RATE_LIMIT_REDIS_PREFIX || 'envapi:rl:',
    validateResponses:
      validate === undefined || validate === ''
        ? env.NODE_ENV !== 'production'
        : !['0', 'false', 'off', 'no'].includes(validate.toLowerCase()),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, 10_000),
    logLevel: logLevel(env.LOG_LEVEL),
    rateLimit: readRateLimitConfig(env),
    queryTimeoutMs: positive('QUERY_TIMEOUT_MS', env.QUERY_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS),
    eventsReadThreads: int('EVENTS_READ_THREADS', env.EVENTS_READ_THREADS, defaultReadThreads()),
    lockTimeoutMs: positive('DATABASE_LOCK_TIMEOUT_MS', env.DATABASE_LOCK_TIMEOUT_MS, DEFAULT_LOCK_TIMEOUT_MS),
    captureMaxQueuedEvents: positive('CAPTURE_MAX_QUEUED_EVENTS', env.CAPTURE_MAX_QUEUED_EVENTS, DEFAULT_MAX_QUEUED_EVENTS),
    clickhouse: readClickHouseConfig(env),
    environmentsDeprecation: readEnvironmentsDeprecation(env),
  };
}

/** The deprecation headers' settings (module doc's table). Throws with the variable's name for a malformed value. */
export function readEnvironmentsDeprecation(env: NodeJS.ProcessEnv = process.env): EnvironmentsDeprecation {
  const flag = (env.API_ENVIRONMENTS_DEPRECATION ?? '').trim().toLowerCase();
  const enabled = !['0', 'false', 'off', 'no'].includes(flag);
  const date = (env.API_ENVIRONMENTS_SUNSET_DATE ?? '').trim();
  if (date === '') return { enabled, sunsetDate: DEFAULT_ENVIRONMENTS_SUNSET_DATE };
  if (date.toLowerCase() === 'none') return { enabled, sunsetDate: undefined };
  const valid = /^\d{4}-\d\d-\d\d$/.test(date) && new Date(`${date}T00:00:00Z`).toISOString().startsWith(date);
  if (!valid) throw new Error(`API_ENVIRONMENTS_SUNSET_DATE must be a day as YYYY-MM-DD (or none), got ${JSON.stringify(date)}`);
  return { enabled, sunsetDate: date };
}

function positive(name: string, value: string | undefined, fallback: number): number {
  const n = int(name, value, fallback);
  if (n < 1) throw new Error(`${name} must be at least 1, got ${JSON.stringify(value)}`);
  return n;
}

function poolSize(value: string | undefined): number {
  const n = int('DATABASE_POOL_SIZE', value, 10);
  if (n < 1) throw new Error(`DATABASE_POOL_SIZE must be at least 1, got ${JSON.stringify(value)}`);
  return n;
}

function logLevel(value: string | undefined): string {
  if (value === undefined || value === '') return 'info';
  const level = value.toLowerCase();
  if (!LOG_LEVELS.includes(level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value)}`);
  return level;
}
