/**
 * `envapi migrate`, `envapi serve` and `envapi bootstrap`: the store's schema, the server process
 * (server/main.ts, one process or a node:cluster of workers), and the first set-up of an empty store
 * (server/bootstrap.ts).
 */
import type { Command } from 'commander';
import { bootstrap } from '../bootstrap.js';
import { readConfig } from '../config.js';
import { migrateToLatest } from '../storage/db.js';
import { CliError, openCliStore, out, parseInteger, withStore, type StoreOptions } from './shared.js';

/** Adds `migrate`, `serve` and `bootstrap` to `program`. */
export function registerServerCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const store = openCliStore(program);
      try {
        const result = await migrateToLatest(store);
        out(!!o.json, result, () => [result.applied.length ? `Applied: ${result.applied.join(', ')}` : 'Already up to date.']);
      } finally {
        await store.close();
      }
    });

  program
    .command('serve')
    .description('migrate, bootstrap an empty store (printing one API key), and serve the API')
    .option('-p, --port <port>', 'TCP port (env PORT, default 8000)', parseInteger)
    .option('--host <host>', 'interface (env HOST, default 127.0.0.1)')
    .option('-w, --workers <n>', 'worker processes on the same port (node:cluster); more than 1 needs DATABASE_URL', parseInteger)
    .action(async (o: { port?: number; host?: string; workers?: number }) => {
      const opts = program.opts<StoreOptions>();
      const config = readConfig();
      const resolved = {
        ...config,
        port: o.port ?? config.port,
        host: o.host ?? config.host,
        dataDir: opts.dataDir ?? config.dataDir,
        databaseUrl: opts.databaseUrl ?? config.databaseUrl,
      };
      // the server's modules (Express, the validator, the spec) load only for `serve`: every other
      // command, and `--help`, starts without them
      const { main: serve, serveCluster, workersRefusal } = await import('../main.js');
      if (o.workers === undefined) {
        await serve(resolved);
        return;
      }
      const refusal = workersRefusal(resolved, o.workers);
      if (refusal) throw new CliError(refusal);
      await serveCluster(resolved, o.workers);
    });

  program
    .command('bootstrap')
    .description('set up an empty store: default organization, project 1, owner user, plugin catalog, one key with scope *')
    .option('--email <email>', 'email of the owner user', 'admin@envapi.local')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const r = await bootstrap(store, { email: o.email });
        out(!!o.json, { created: r.created, project_id: r.team?.id ?? null, user: r.user?.email ?? null, key: r.key ?? null }, () =>
          r.created ? [`Project ${r.team?.id} created. Personal API key (shown once):`, r.key ?? ''] : ['Store already set up; nothing done.'],
        );
      });
    });
}
