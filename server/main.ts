/**
 * Entry point of `npm start` and `envapi serve`: reads the configuration, opens the store, applies
 * migrations, bootstraps an empty store (printing its one API key), and listens. SIGTERM/SIGINT
 * stop accepting connections, let requests in flight finish (bounded by SHUTDOWN_TIMEOUT_MS),
 * close the store and exit 0 (close-with-grace).
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { createApp } from './app.js';
import { defaultLogger } from './http/logging.js';
import { bootstrap } from './bootstrap.js';
import { readConfig, type ServerConfig } from './config.js';
import { migrateToLatest, openStore, type Store } from './storage/db.js';

/** A running server. */
export interface RunningServer {
  server: Server;
  store: Store;
  /** e.g. `http://127.0.0.1:8000` */
  url: string;
  /** Stops accepting, waits for requests in flight, closes the store. */
  close(): Promise<void>;
}

/** Prints what a person starting the server needs to know. */
export type Printer = (line: string) => void;

/**
 * Opens the store, migrates, bootstraps, and listens. Throws when the port is taken or the store
 * cannot be opened.
 */
export async function startServer(config: ServerConfig, print: Printer = (l) => console.log(l)): Promise<RunningServer> {
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const { applied } = await migrateToLatest(store);
  if (applied.length) print(`Applied migrations: ${applied.join(', ')}`);
  const boot = await bootstrap(store);
  const app = createApp({
    store,
    validateResponses: config.validateResponses,
    rateLimit: config.rateLimit,
    logger: defaultLogger(config.logLevel),
    slowHealthMs: config.testSlowMs || undefined,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  // Responses in flight, so that shutdown can close each connection once its response is sent
  // (instead of waiting for the keep-alive timeout).
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  server.on('request', (_req, res: ServerResponse) => {
    if (closing && !res.headersSent) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (closing) server.closeIdleConnections();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  if (boot.created && boot.key && boot.team && boot.user) {
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
  print(`envapi listening on ${url} (store: ${store.dialect} ${store.location})`);
  return {
    server,
    store,
    url,
    async close() {
      closing = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
        server.closeIdleConnections();
      });
      await store.close();
    },
  };
}

/** Runs the server until SIGTERM/SIGINT; exits 0 after a clean shutdown, 1 on failure. */
export async function main(config: ServerConfig = readConfig()): Promise<void> {
  const running = await startServer(config);
  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) console.error(err);
    console.log(`envapi: ${signal ?? 'shutdown'} received, finishing requests in flight…`);
    await running.close();
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
