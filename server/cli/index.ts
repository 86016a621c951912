/**
 * The `envapi` command line (commander). Every command has `--help`; every command that prints
 * takes `--json` for scripts (one JSON document on stdout). Global options choose the store:
 * `--data-dir DIR` (SQLite, default ./data or DATA_DIR) or `--database-url URL` (DATABASE_URL).
 * Every command migrates the store first. Exit codes: 0 done, 1 failed (message on stderr),
 * 2 bad usage (from commander). `-V, --version` prints package.json's version.
 *
 * bin/envapi.js runs this module compiled (dist/server/cli/index.js), building dist/ first when
 * the sources changed; the command modules load the store, the repositories and the server inside
 * the actions that need them, so `--help` and `--version` load little more than commander.
 *
 * One file per command group, each adding its commands to the program (in this order, which is
 * the order `--help` lists them in):
 * - `server.ts`: `migrate`, `serve`, `bootstrap`, `build`;
 * - `orgs.ts`: `orgs create | list | add-member`, `members add`;
 * - `projects.ts`: `projects create | list`;
 * - `users.ts`: `users create | list`;
 * - `keys.ts`: `keys create | list | revoke`;
 * - `plugins.ts`: `plugins catalog | install`;
 * - `events.ts`: `import events`, `demo` (progress lines on stderr);
 * - `materialize.ts`: `events materialize | materialized | dematerialize`;
 * and `shared.ts`: option parsers, the store of the global options, `--json` output, look-ups,
 * level names.
 *
 * This module has no side effect: `bin/envapi.js` calls `runCli()`.
 */
import { Command } from 'commander';
import { registerEventCommands } from './events.js';
import { registerMaterializeCommands } from './materialize.js';
import { registerKeyCommands } from './keys.js';
import { registerOrgCommands } from './orgs.js';
import { registerPluginCommands } from './plugins.js';
import { registerProjectCommands } from './projects.js';
import { registerServerCommands } from './server.js';
import { registerUserCommands } from './users.js';
import { packageVersion } from './shared.js';

/** Builds the program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('envapi')
    .description('envapi: PostHog-compatible environment API server and its administration')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--data-dir <dir>', 'directory of the SQLite store (env DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL instead of SQLite (env DATABASE_URL)')
    .showHelpAfterError()
    .configureOutput({ outputError: (s, write) => write(s) });
  registerServerCommands(program);
  registerOrgCommands(program);
  registerProjectCommands(program);
  registerUserCommands(program);
  registerKeyCommands(program);
  registerPluginCommands(program);
  registerEventCommands(program);
  registerMaterializeCommands(program);
  return program;
}

/** Runs the CLI on `argv` (default `process.argv`); prints errors on stderr and sets exit code 1 on failure. */
export async function runCli(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    console.error(`envapi: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
