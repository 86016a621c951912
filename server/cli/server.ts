/**
 * `envapi migrate`, `envapi serve`, `envapi bootstrap` and `envapi build`: the store's schema, the
 * server process (server/main.ts, one process or a node:cluster of workers; `npm start` is
 * `envapi serve`), the first set-up of an empty store (server/bootstrap.ts), and the compiled
 * JavaScript the command runs (dist/, built by bin/envapi.js before any command loads).
 */
import type { Command } from 'commander';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError, openCliStore, out, parseEmail, parseInteger, storeLocation, withStore } from './shared.js';

/** Adds `migrate`, `serve`, `bootstrap` and `build` to `program`. */
export function registerServerCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const { migrateToLatest } = await import('../storage/db.js');
      const store = await openCliStore(program);
      try {
        const result = await migrateToLatest(store);
        out(!!o.json, result, () => [result.applied.length ? `Applied: ${result.applied.join(', ')}` : 'Already up to date.']);
      } finally {
        await store.close();
      }
    });

  program
    .command('serve')
    .description('migrate, bootstrap an empty store (printing one API key), and serve the API (what npm start runs)')
    .option('-p, --port <port>', 'TCP port (env PORT, default 8000)', parseInteger)
    .option('--host <host>', 'interface (env HOST, default 127.0.0.1)')
    .option('-w, --workers <n>', 'worker processes on the same port (node:cluster); more than 1 needs DATABASE_URL', parseInteger)
    .action(async (o: { port?: number; host?: string; workers?: number }) => {
      // the server's modules (Express, the validator, the spec, the configuration) load only for
      // `serve`: every other command, and `--help`, starts without them
      const [{ main: serve, serveCluster, workersRefusal }, { readConfig }] = await Promise.all([
        import('../main.js'),
        import('../config.js'),
      ]);
      const config = readConfig();
      const resolved = { ...config, ...storeLocation(program), port: o.port ?? config.port, host: o.host ?? config.host };
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
    .option('--email <email>', 'e-mail address of the owner user', parseEmail, 'admin@envapi.local')
    .option('--json', 'print JSON')
    .action(async (o: { email: string; json?: boolean }) => {
      const { bootstrap } = await import('../bootstrap.js');
      await withStore(program, async (store) => {
        const r = await bootstrap(store, { email: o.email });
        out(!!o.json, { created: r.created, project_id: r.team?.id ?? null, user: r.user?.email ?? null, key: r.key ?? null }, () =>
          r.created
            ? [`Project ${r.team?.id} created. Personal API key (shown once, stored only as a hash):`, r.key ?? '']
            : ['Store already set up; nothing done.'],
        );
      });
    });

  program
    .command('build')
    .description(
      'compile the TypeScript sources into dist/ if they changed since the last build (every envapi command does this ' +
        'first; npm ci runs it as the prepare script). Exits 1 when tsc reports errors.',
    )
    .action(() => {
      // bin/envapi.js handles `envapi build` itself and loads this module only for --help; reaching
      // this action means the CLI was started some other way
      if (!fileURLToPath(import.meta.url).includes(`${path.sep}dist${path.sep}`))
        throw new CliError('envapi runs from the TypeScript sources: dist/ could not be built (see npm run build)');
      console.log('dist/ is up to date.');
    });
}
