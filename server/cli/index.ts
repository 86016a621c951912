/**
 * The `envapi` command line (commander). Every command has `--help`; every command that prints
 * takes `--json` for scripts (one JSON document on stdout). Global options choose the store:
 * `--data-dir DIR` (SQLite, default ./data or DATA_DIR) or `--database-url URL` (DATABASE_URL).
 * Every command migrates the store first. Exit codes: 0 done, 1 failed (message on stderr),
 * 2 bad usage. `-V, --version` prints package.json's version.
 *
 * Bad usage (an unknown command or option, a missing option or argument, a value its parser
 * refuses, an action's `command.error()`) prints commander's one-line error and two lines instead
 * of the whole help, which would scroll the error away:
 *
 *     error: required option '--user <email-or-id>' not specified
 *     Usage: envapi keys create [options]
 *     Run 'envapi keys create --help' for the options.
 *
 * (`showHelpAfterError(message)` on every command, `exitOverride()` so that `runCli` sets exit code 2.)
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
 * - `events.ts`: `import events`, `demo` (progress lines on stderr: `progress.ts`);
 * - `materialize.ts`: `events materialize | materialized | dematerialize`;
 * and `shared.ts`: option parsers (e-mail addresses included), the store of the global options,
 * `--json` output, look-ups (users, organizations, projects), level names.
 *
 * This module has no side effect: `bin/envapi.js` calls `runCli()`.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { registerClickhouseCommands } from './clickhouse.js';
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
    .configureOutput({ outputError: (s, write) => write(s) })
    // inherited by every command added below (`.command()` copies it); `runCli` maps the exit code
    .exitOverride();
  registerServerCommands(program);
  registerOrgCommands(program);
  registerProjectCommands(program);
  registerUserCommands(program);
  registerKeyCommands(program);
  registerPluginCommands(program);
  registerEventCommands(program);
  registerMaterializeCommands(program);
  registerClickhouseCommands(program);
  for (const cmd of commandTree(program)) cmd.showHelpAfterError(usageHint(cmd));
  return program;
}

/** `cmd` and every command under it, `cmd` first. */
function* commandTree(cmd: Command): Generator<Command> {
  yield cmd;
  for (const sub of cmd.commands) yield* commandTree(sub);
}

/** The words that run `cmd`, from the program down: `envapi keys create`. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * What bad usage of `cmd` prints after commander's error line: its usage line and where its help
 * is, e.g. `Usage: envapi keys create [options]` / `Run 'envapi keys create --help' for the options.`
 */
export function usageHint(cmd: Command): string {
  const words = commandPath(cmd);
  return `Usage: ${words} ${cmd.usage()}\nRun '${words} --help' for ${cmd.commands.length ? 'its commands and options' : 'the options'}.`;
}

/**
 * Runs the CLI on `argv` (default `process.argv`). Sets the exit code: 2 on bad usage (commander
 * printed the error and the usage hint), 0 after `--help` / `--version`; on any other error prints
 * `envapi: <message>` on stderr and sets 1.
 */
export async function runCli(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    // an action's own InvalidArgumentError (a parser's is caught by commander, which throws a new
    // CommanderError after printing): bad usage that nothing printed yet
    if (err instanceof InvalidArgumentError) {
      console.error(`error: ${err.message}`);
      process.exitCode = 2;
      return;
    }
    // exitOverride: commander printed what it had to (help, version, or the error and the hint)
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    console.error(`envapi: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
