/**
 * Entry point of `npm start` and `envapi serve`: reads the configuration, opens the store, applies
 * migrations, bootstraps an empty store (printing its one API key), keeps the monthly partitions of
 * events created ahead on PostgreSQL (storage/events/partitions.ts: at start, then daily), and listens. SIGTERM/SIGINT
 * (close-with-grace) stop accepting connections, answer in full every request already received
 * (server/http/drain.ts; the whole shutdown bounded by SHUTDOWN_TIMEOUT_MS, past which the process
 * exits 1), close the store and exit 0. With `REDIS_URL` the rate-limit counters live in
 * Redis (closed on shutdown). `serveCluster` is `envapi serve --workers N` (node:cluster).
 */
import cluster, { type Worker } from 'node:cluster';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import type { Redis as RedisClient } from 'ioredis';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { createEventsReads } from './read-pool/index.js';
import { trackConnections, type DrainStart } from './http/drain.js';
import { defaultLogger, flushLogs } from './http/logging.js';
import { redisClientOptions } from './http/rate-limit.js';
import { bootstrap, type BootstrapResult } from './bootstrap.js';
import { readConfig, type ServerConfig } from './config.js';
import { migrateToLatest, openStore, type Store } from './storage/db.js';
import { clickhouseEventsOf, keepEventPartitions, openClickHouseEvents, useClickHouseEvents } from './storage/events/index.js';
import { writeOwner } from './storage/clickhouse/connection.js';

/** A running server. */
export interface RunningServer {
  server: Server;
  store: Store;
  /** e.g. `http://127.0.0.1:8000` */
  url: string;
  /**
   * Stops accepting, lets every request already received finish (server/http/drain.ts), then
   * closes the store, Redis and the log. `onStopAccepting` is called once the listener is closed,
   * with the requests still in flight and the connections open then. Never rejects on the drain;
   * rejects when closing the store fails.
   */
  close(onStopAccepting?: (start: DrainStart) => void): Promise<void>;
}

/** Prints what a person starting the server needs to know. */
export type Printer = (line: string) => void;

/** Options of `startServer`. */
export interface StartOptions {
  /**
   * A cluster worker (`serve --workers N`): the primary has already migrated and bootstrapped, so
   * the worker does neither and prints only its listening line.
   */
  worker?: boolean;
}

/** Migrates and bootstraps the store; returns what a first start created (nothing on later starts). */
async function migrateAndBootstrap(store: Store, print: Printer): Promise<BootstrapResult> {
  const { applied } = await migrateToLatest(store);
  if (applied.length) print(`Applied migrations: ${applied.join(', ')}`);
  return bootstrap(store);
}

/** Prints what a first start created, with its one API key and a curl line against `url`. */
function printFirstStart(boot: BootstrapResult, print: Printer, url: string): void {
  if (!(boot.created && boot.key && boot.team && boot.user)) return;
  print('');
  print(`Created organization "${boot.organization?.name}", project ${boot.team.id} ("${boot.team.name}") and owner ${boot.user.email},`);
  print(`and installed ${boot.plugins?.length ?? 0} plugins from the built-in catalog.`);
  print('');
  print('Personal API key (scope *). It is shown this once and stored only as a hash:');
  print('');
  print(`  ${boot.key}`);
  print('');
  print(`Try: curl -H "Authorization: Bearer ${boot.key}" ${url}/api/environments/${boot.team.id}/pipeline_frontend_apps_configs/`);
  print('');
}

/**
 * The banner's second line, after `envapi listening on <url> (…)`: where the HTML API reference is
 * (`GET /docs`, server/http/docs.ts; `GET /` in a browser leads there too). The listening line
 * itself keeps its format: scripts and test/helpers/process.ts read the URL from it.
 */
export function docsLine(url: string): string {
  return `API reference: ${url}/docs`;
}

/** Migrates and bootstraps the store, printing what a first start created (the one API key). */
async function prepareStore(store: Store, print: Printer, url: string | undefined): Promise<void> {
  printFirstStart(await migrateAndBootstrap(store, print), print, url ?? 'http://HOST:PORT');
}

function openConfiguredStore(config: ServerConfig, logger: Logger): Store {
  return openStore(
    {
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      // the time budget of a read also bounds every PostgreSQL statement of the main thread
      statementTimeoutMs: config.queryTimeoutMs,
      lockTimeoutMs: config.lockTimeoutMs,
      // no request waits for a WAL checkpoint (storage/checkpoints.ts)
      backgroundCheckpoints: true,
    },
    {
      onConnectionError: (err) =>
        logger.warn({ err: { message: err.message } }, 'an idle PostgreSQL connection failed; the next query opens a new one'),
      onCheckpointFailure: (err) =>
        logger.warn({ err: { message: err.message } }, 'the SQLite checkpoint worker failed; checkpoints run in the commits again'),
    },
  );
}

/**
 * Opens the store, migrates, bootstraps, and listens. Throws when the port is taken or the store
 * cannot be opened. With `REDIS_URL` the rate-limit counters live in Redis.
 */
export async function startServer(
  config: ServerConfig,
  print: Printer = (l) => console.log(l),
  opts: StartOptions = {},
): Promise<RunningServer> {
  const logger = defaultLogger(config.logLevel);
  const store = openConfiguredStore(config, logger);
  // opened before the first start's bootstrap, so that a ClickHouse that cannot be opened stops
  // the start before anything is created or a key is printed
  if (config.clickhouse) {
    // the events on ClickHouse (storage/events/clickhouse/): embedded chDB or a server
    try {
      const events = await openClickHouseEvents(
        { url: config.clickhouse.url, dataDir: config.dataDir, memoryLimitBytes: config.clickhouse.memoryLimitBytes },
        { budgetMs: config.queryTimeoutMs, maxQueries: config.clickhouse.maxQueries },
      );
      useClickHouseEvents(store, events);
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  const boot = opts.worker ? undefined : await migrateAndBootstrap(store, print);
  // PostgreSQL: the monthly partitions of events, created ahead now and about daily (storage/events/partitions.ts)
  const partitions = keepEventPartitions(store.db, logger);
  await partitions.first;
  // commands fail fast while Redis is unreachable (the limiter then counts per process; rate-limit.ts)
  // ioredis is loaded only when REDIS_URL is set (loading it is a noticeable part of a cold start)
  let redis: RedisClient | undefined;
  if (config.rateLimit && config.redisUrl) {
    const { Redis } = await import('ioredis');
    redis = new Redis(config.redisUrl, redisClientOptions(config.rateLimit.redisTimeoutMs));
  }
  // connection errors are reported by the limiter (one warning per outage), not as unhandled events
  redis?.on('error', () => {});
  // the events list and values run in worker threads under the time budget (server/read-pool/)
  const eventsReads = createEventsReads(store, { threads: config.eventsReadThreads, queryTimeoutMs: config.queryTimeoutMs });
  const app = createApp({
    store,
    eventsReads,
    validateResponses: config.validateResponses,
    rateLimit:
      config.rateLimit && redis
        ? { ...config.rateLimit, redis: { prefix: config.redisPrefix, sendCommand: (command, ...args) => redis.call(command, ...args) } }
        : config.rateLimit,
    logger,
    capture: { maxQueuedEvents: config.captureMaxQueuedEvents },
    environmentsDeprecation: config.environmentsDeprecation,
  });
  const httpServer = http.createServer(app);
  // before listening: the drain must know every connection (server/http/drain.ts)
  const connections = trackConnections(httpServer);
  const server = await new Promise<Server>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => resolve(httpServer));
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  if (boot) printFirstStart(boot, print, url);
  if (clickhouseEventsOf(store)?.connection.kind === 'embedded') {
    // `envapi import` / `envapi demo` of this data directory then send their events here (server/cli/events.ts)
    const any = address.address === '0.0.0.0' || address.address === '::';
    writeOwner(config.dataDir, { pid: process.pid, url: any ? `http://127.0.0.1:${address.port}` : url });
  }
  const limits = config.rateLimit ? (redis ? 'rate limits: redis' : 'rate limits: per process') : 'rate limits: off';
  if (opts.worker) print(`envapi worker ${process.pid} listening on ${url}`);
  else {
    print(
      `envapi listening on ${url} (store: ${store.dialect} ${store.location}; ${eventsLine(store)}${limits}; events reads: ${config.eventsReadThreads ? `${config.eventsReadThreads} worker threads` : 'main thread'}, ${config.queryTimeoutMs} ms budget)`,
    );
    print(docsLine(url));
  }
  return {
    server,
    store,
    url,
    async close(onStopAccepting) {
      // every request already received is answered in full before the read workers and the
      // store close
      await connections.drain(onStopAccepting);
      await eventsReads.close();
      await partitions.stop();
      await clickhouseEventsOf(store)?.close();
      await store.close();
      // quit() would wait behind a reconnect while Redis is down; a client that is not ready just disconnects
      if (redis) await (redis.status === 'ready' ? redis.quit().catch(() => redis.disconnect()) : redis.disconnect());
      await flushLogs(logger);
    },
  };
}

/** Runs the server until SIGTERM/SIGINT; exits 0 after a clean shutdown, 1 on failure. */
export async function main(config: ServerConfig = readConfig()): Promise<void> {
  const running = await startServer(config, undefined, { worker: cluster.isWorker });
  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) console.error(err);
    const quiet = cluster.isWorker;
    if (!quiet) console.log(`envapi: ${signal ?? 'shutdown'} received, finishing requests in flight…`);
    await running.close(({ inFlight, connections }) => {
      if (!quiet) console.log(`envapi: stopped accepting connections; ${inFlight} requests in flight on ${connections} connections`);
    });
  });
}

/** The start line's part on the events store when it is not the configuration store: `events: clickhouse <where>; `. */
function eventsLine(store: Store): string {
  const ch = clickhouseEventsOf(store)?.connection;
  return ch ? `events: clickhouse ${ch.kind === 'embedded' ? `(embedded chDB) ${ch.shown}` : ch.shown}; ` : '';
}

/** Why `serve --workers N` refuses a configuration, or undefined when it is fine. */
export function workersRefusal(config: ServerConfig, workers: number): string | undefined {
  if (!Number.isInteger(workers) || workers < 1) return `--workers must be a positive integer, got ${workers}`;
  if (workers > 1 && config.clickhouse && !config.clickhouse.url)
    return `--workers ${workers} cannot share embedded ClickHouse (EVENTS_STORE=clickhouse without CLICKHOUSE_URL): chDB lets one process hold its data directory. Use --workers 1, or run a ClickHouse server and set CLICKHOUSE_URL (docs/deploy.md).`;
  if (workers > 1 && !config.databaseUrl)
    return `--workers ${workers} needs PostgreSQL (DATABASE_URL): SQLite allows one writer, so several processes on one SQLite file would fail with "database is locked". Use --workers 1, or set DATABASE_URL.`;
  return undefined;
}

/**
 * V8 flags every server process runs with (`npm start`, `npm run dev`, and the workers of `serve
 * --workers N`): `--max-semi-space-size=8` (MB) caps the young generation at about half of Node 20's
 * default. A request's garbage dies young either way; measured on keyed GETs and events pages, the
 * throughput is unchanged (paired runs, `npm run bench:pair`) and the resident memory after load is
 * lower (docs/performance.md).
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=8'];

/** `execArgv` with `SERVER_NODE_FLAGS` added where the same flag is not already given. */
export function withServerNodeFlags(execArgv: string[]): string[] {
  const missing = SERVER_NODE_FLAGS.filter((f) => !execArgv.some((a) => a.split('=')[0] === f.split('=')[0]));
  return [...missing, ...execArgv];
}

/**
 * `envapi serve --workers N`: the primary migrates and bootstraps once (printing the key), then
 * forks N workers (node:cluster) that listen on the same port and serve. SIGTERM/SIGINT on the
 * primary stop the workers gracefully (each finishes its requests in flight) and exit 0. A worker
 * that dies after it listened is replaced; one that fails before listening stops everything.
 */
export async function serveCluster(config: ServerConfig, workers: number, print: Printer = (l) => console.log(l)): Promise<void> {
  const refusal = workersRefusal(config, workers);
  if (refusal) throw new Error(refusal);
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await prepareStore(store, print, config.port ? `http://${config.host}:${config.port}` : undefined);
  } finally {
    await store.close();
  }
  // the workers run this module: compiled (dist/, plain node) or the TypeScript source (with tsx)
  const exec = fileURLToPath(import.meta.url);
  const runsAsIs = !exec.endsWith('.ts') || process.execArgv.some((a) => a.includes('tsx'));
  cluster.setupPrimary({
    exec,
    args: [],
    execArgv: withServerNodeFlags(runsAsIs ? process.execArgv : [...process.execArgv, '--import', 'tsx']),
  });
  // the workers read the same settings from the environment, with the command line's overrides
  const env: Record<string, string> = { PORT: String(config.port), HOST: config.host, DATA_DIR: config.dataDir };
  if (config.databaseUrl) env.DATABASE_URL = config.databaseUrl;
  let stopping = false;
  let announced = false;
  const listened = new Set<Worker>();
  const fork = (): void => {
    const worker = cluster.fork(env);
    worker.once('listening', (address) => {
      listened.add(worker);
      if (!announced) {
        announced = true;
        const host = address.address && address.address.includes(':') ? `[${address.address}]` : (address.address ?? config.host);
        const url = `http://${host}:${address.port}`;
        print(`envapi listening on ${url} (${workers} workers; store: ${config.databaseUrl ? 'postgres' : 'sqlite'})`);
        print(docsLine(url));
      }
    });
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      if (!listened.has(worker)) {
        console.error(`envapi: worker ${worker.process.pid} exited (${signal ?? code}) before listening; stopping`);
        void stop(1);
        return;
      }
      listened.delete(worker);
      console.error(`envapi: worker ${worker.process.pid} exited (${signal ?? code}); starting a new one`);
      fork();
    });
  };
  const stop = async (exitCode: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    const exits = alive.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    for (const w of alive) w.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const w of alive) if (!w.isDead()) w.process.kill('SIGKILL');
    }, config.shutdownTimeoutMs + 2_000);
    await Promise.all(exits);
    clearTimeout(timer);
    process.exit(exitCode);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      print(`envapi: ${signal} received, stopping ${workers} workers…`);
      void stop(0);
    });
  }
  for (let i = 0; i < workers; i++) fork();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
