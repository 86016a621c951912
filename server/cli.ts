/**
 * The `envapi` command line (commander). Every command has `--help`; every command that prints
 * takes `--json` for scripts (one JSON document on stdout). Global options choose the store:
 * `--data-dir DIR` (SQLite, default ./data or DATA_DIR) or `--database-url URL` (DATABASE_URL).
 * Every command migrates the store first. Exit codes: 0 done, 1 failed (message on stderr),
 * 2 bad usage (from commander).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import cliProgress from 'cli-progress';
import { bootstrap, installCatalogPlugin } from './bootstrap.js';
import { readConfig } from './config.js';
import { KNOWN_SCOPES } from './domain/access.js';
import { PLUGIN_CATALOG, findCatalogPlugin } from './domain/plugin-catalog.js';
import { parseIsoTimestamp } from './domain/timestamps.js';
import { generateDemoEvents } from './events/demo.js';
import { importEvents, importEventsFile, type ImportFormat, type ImportSummary, type LockWaitCallback, type ProgressCallback } from './events/import.js';
import { main as serve, serveCluster, workersRefusal } from './main.js';
import { migrateToLatest, openStore, type Store } from './storage/db.js';
import { AccountsRepository, OrganizationLevel, type Organization, type User } from './storage/repositories/accounts.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.js';


const LEVELS: Record<string, number> = { member: OrganizationLevel.MEMBER, admin: OrganizationLevel.ADMIN, owner: OrganizationLevel.OWNER };

class CliError extends Error {}

function parseLevel(value: string): number {
  const level = LEVELS[value.toLowerCase()] ?? Number(value);
  if (![1, 8, 15].includes(level)) throw new InvalidArgumentError('use member, admin or owner (1, 8, 15)');
  return level;
}

function parseIdList(value: string): number[] {
  const ids = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!ids.length || ids.some((s) => !/^\d+$/.test(s))) throw new InvalidArgumentError('a comma-separated list of project ids, e.g. 1,2');
  return ids.map(Number);
}

function parseScopes(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(KNOWN_SCOPES as readonly string[]).includes(s));
  if (!scopes.length || unknown.length) throw new InvalidArgumentError(`unknown scope ${unknown.join(', ')}; known: ${KNOWN_SCOPES.join(', ')}`);
  return scopes;
}

function parseInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('an integer');
  return Number(value);
}

/**
 * Opens and migrates the store named by the global options, runs `fn`, closes the store.
 * `lockTimeoutMs`: the store's bound on one wait for SQLite's write lock (`StorageConfig`).
 */
async function withStore<T>(program: Command, fn: (store: Store) => Promise<T>, lockTimeoutMs?: number): Promise<T> {
  const opts = program.opts<{ dataDir?: string; databaseUrl?: string }>();
  const env = readConfig();
  const store = openStore({ dataDir: opts.dataDir ?? env.dataDir, databaseUrl: opts.databaseUrl ?? env.databaseUrl, lockTimeoutMs });
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * `import events` and `demo`: a batch gives up on the store's write lock after this many ms and is
 * retried at once, so that a line can say the import is waiting (the server's bound is 10 s).
 */
const IMPORT_LOCK_WAIT_MS = 2_000;
/** While a batch keeps waiting, one line every this many ms. */
const LOCK_WAIT_LINE_EVERY_MS = 30_000;

/** Prints `value` as JSON with `--json`, else the human lines. */
function out(json: boolean, value: unknown, human: () => string[]): void {
  if (json) console.log(JSON.stringify(value, null, 2));
  else for (const line of human()) console.log(line);
}

async function findUser(accounts: AccountsRepository, ref: string): Promise<User> {
  const user = /^\d+$/.test(ref) ? await accounts.findUserById(Number(ref)) : await accounts.findUserByEmail(ref);
  if (!user) throw new CliError(`No user ${ref}. Create one with: envapi users create --email ${ref.includes('@') ? ref : 'EMAIL'}`);
  return user;
}

async function findOrg(accounts: AccountsRepository, ref: string | undefined): Promise<Organization> {
  const orgs = await accounts.listOrganizations();
  if (!ref) {
    if (orgs.length === 1 && orgs[0]) return orgs[0];
    throw new CliError(orgs.length ? 'Several organizations exist: name one with --org ID' : 'No organization yet: run envapi orgs create --name NAME');
  }
  const org = orgs.find((o) => o.id === ref || o.name === ref);
  if (!org) throw new CliError(`No organization ${ref}`);
  return org;
}

/** Options and action of `orgs add-member` / `members add`. */
function addMemberCommand(cmd: Command, program: Command): Command {
  return cmd
    .requiredOption('--user <email-or-id>', 'the user')
    .option('--org <id-or-name>', 'the organization (default: the only one)')
    .addOption(new Option('--level <level>', 'member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(async (o: { user: string; org?: string; level: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        const user = await findUser(accounts, o.user);
        const org = await findOrg(accounts, o.org);
        const m = await accounts.upsertMembership(org.id, user.id, o.level);
        out(!!o.json, m, () => [`${user.email} is now level ${m.level} in "${org.name}".`]);
      });
    });
}

/** Builds the program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command('envapi')
    .description('envapi: PostHog-compatible environment API server and its administration')
    .option('--data-dir <dir>', 'directory of the SQLite store (env DATA_DIR, default ./data)')
    .option('--database-url <url>', 'PostgreSQL URL instead of SQLite (env DATABASE_URL)')
    .showHelpAfterError()
    .configureOutput({ outputError: (s, write) => write(s) });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const opts = program.opts<{ dataDir?: string; databaseUrl?: string }>();
      const env = readConfig();
      const store = openStore({ dataDir: opts.dataDir ?? env.dataDir, databaseUrl: opts.databaseUrl ?? env.databaseUrl });
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
      const opts = program.opts<{ dataDir?: string; databaseUrl?: string }>();
      const config = readConfig();
      const resolved = {
        ...config,
        port: o.port ?? config.port,
        host: o.host ?? config.host,
        dataDir: opts.dataDir ?? config.dataDir,
        databaseUrl: opts.databaseUrl ?? config.databaseUrl,
      };
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

  const orgs = program.command('orgs').description('organizations');
  orgs
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'organization name')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const org = await new AccountsRepository(store.db).createOrganization({ name: o.name });
        out(!!o.json, org, () => [`Organization ${org.id} "${org.name}" created.`]);
      });
    });
  orgs
    .command('list')
    .description('list organizations')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withStore(program, async (store) => {
        const list = await new AccountsRepository(store.db).listOrganizations();
        out(!!o.json, list, () => list.map((x) => `${x.id}  ${x.name}`));
      });
    });
  addMemberCommand(orgs.command('add-member').description('add a user to an organization (or change their level)'), program);

  addMemberCommand(program.command('members').description('organization memberships').command('add').description('same as "orgs add-member"'), program);

  program
    .command('projects')
    .description('projects (teams)')
    .command('create')
    .description('create a project in an organization')
    .requiredOption('--name <name>', 'project name')
    .option('--org <id-or-name>', 'the organization (default: the only one)')
    .option('--timezone <tz>', 'IANA time zone', 'UTC')
    .option('--private', 'turn on access control (explicit project members)')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; org?: string; timezone: string; private?: boolean; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        const org = await findOrg(accounts, o.org);
        const team = await accounts.createTeam({ organization_id: org.id, name: o.name, timezone: o.timezone, access_control: !!o.private });
        out(!!o.json, team, () => [`Project ${team.id} "${team.name}" created in "${org.name}"${team.access_control ? ' (private)' : ''}.`]);
      });
    });

  const users = program.command('users').description('users');
  users
    .command('create')
    .description('create a user, optionally adding them to an organization')
    .requiredOption('--email <email>', 'email address')
    .option('--first-name <name>', 'first name', '')
    .option('--last-name <name>', 'last name', '')
    .option('--staff', 'staff user (may set staff-only job fields)')
    .option('--org <id-or-name>', 'also add to this organization')
    .addOption(new Option('--level <level>', 'level in --org: member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(async (o: { email: string; firstName: string; lastName: string; staff?: boolean; org?: string; level: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        if (await accounts.findUserByEmail(o.email)) throw new CliError(`A user with email ${o.email} exists already.`);
        const user = await accounts.createUser({ email: o.email, first_name: o.firstName, last_name: o.lastName, is_staff: !!o.staff });
        if (o.org) {
          const org = await findOrg(accounts, o.org);
          await accounts.upsertMembership(org.id, user.id, o.level);
        }
        out(!!o.json, user, () => [`User ${user.id} ${user.email} created (uuid ${user.uuid}).`]);
      });
    });
  users
    .command('list')
    .description('list users')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withStore(program, async (store) => {
        const list = await new AccountsRepository(store.db).listUsers();
        out(!!o.json, list, () => list.map((u) => `${u.id}  ${u.email}  ${u.uuid}`));
      });
    });

  const keys = program.command('keys').description('personal API keys');
  keys
    .command('create')
    .description('create a personal API key; the key is printed once and stored only hashed')
    .requiredOption('--user <email-or-id>', 'owner of the key')
    .requiredOption('--scopes <list>', `comma-separated scopes (${KNOWN_SCOPES.join(', ')})`, parseScopes)
    .option('--projects <ids>', 'limit the key to these project ids, e.g. 1,2', parseIdList)
    .option('--label <label>', 'a name for the key', 'cli')
    .option('--json', 'print JSON')
    .action(async (o: { user: string; scopes: string[]; projects?: number[]; label: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = await findUser(new AccountsRepository(store.db), o.user);
        const { key, record } = await new ApiKeysRepository(store.db).create({ user_id: user.id, label: o.label, scopes: o.scopes, scoped_teams: o.projects ?? null });
        out(!!o.json, { ...record, key }, () => [key]);
      });
    });
  keys
    .command('list')
    .description('list keys (masked)')
    .option('--user <email-or-id>', 'only this user’s keys')
    .option('--json', 'print JSON')
    .action(async (o: { user?: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = o.user ? await findUser(new AccountsRepository(store.db), o.user) : undefined;
        const list = await new ApiKeysRepository(store.db).list(user?.id);
        out(!!o.json, list, () =>
          list.map((k) => `${k.id}  ${k.mask_value}  user ${k.user_id}  ${k.scopes.join(',')}${k.scoped_teams ? `  projects ${k.scoped_teams.join(',')}` : ''}  ${k.label}`),
        );
      });
    });
  keys
    .command('revoke')
    .description('revoke (delete) a key by id')
    .argument('<id>', 'key id (see keys list)')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withStore(program, async (store) => {
        const revoked = await new ApiKeysRepository(store.db).revoke(id);
        if (!revoked) throw new CliError(`No key ${id}`);
        out(!!o.json, { id, revoked }, () => [`Key ${id} revoked.`]);
      });
    });

  const plugins = program.command('plugins').description('plugins from the built-in catalog');
  plugins
    .command('catalog')
    .description('list the built-in catalog')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => {
      out(!!o.json, PLUGIN_CATALOG, () => PLUGIN_CATALOG.map((p) => `${p.key.padEnd(18)} ${p.name.padEnd(28)} ${p.url}`));
    });
  plugins
    .command('install')
    .description('install catalog plugins in an organization (by key or url; --all for every one)')
    .argument('[plugins...]', 'catalog keys or urls, e.g. customerio')
    .option('--all', 'install the whole catalog')
    .option('--org <id-or-name>', 'the organization (default: the only one)')
    .option('--json', 'print JSON')
    .action(async (refs: string[], o: { all?: boolean; org?: string; json?: boolean }) => {
      const entries = o.all ? [...PLUGIN_CATALOG] : refs.map((r) => findCatalogPlugin(r) ?? r);
      const unknown = entries.filter((e): e is string => typeof e === 'string');
      if (unknown.length) throw new CliError(`Not in the catalog: ${unknown.join(', ')} (see envapi plugins catalog)`);
      if (!entries.length) throw new CliError('Name plugins to install, or pass --all');
      await withStore(program, async (store) => {
        const org = await findOrg(new AccountsRepository(store.db), o.org);
        const installed: Awaited<ReturnType<typeof installCatalogPlugin>>[] = [];
        for (const entry of entries) {
          if (typeof entry === 'string') continue;
          installed.push(await installCatalogPlugin(store, org.id, entry));
        }
        out(!!o.json, installed.map((i) => ({ ...i.plugin, created: i.created })), () =>
          installed.map((i) => `${i.created ? 'Installed' : 'Updated'} plugin ${i.plugin.id} ${i.plugin.name}`),
        );
      });
    });

  // Events: `import events` and `demo` (server/events/import.ts, server/events/demo.ts).
  /** A cli-progress bar on stderr while an import runs; none with --json or when stderr is not a terminal. */
  const importProgress = (json: boolean): { onProgress: ProgressCallback | undefined; stop(): void } => {
    if (json || !process.stderr.isTTY) return { onProgress: undefined, stop: () => undefined };
    let bar: cliProgress.SingleBar | undefined;
    let phase: string | undefined;
    const stop = (): void => {
      bar?.stop();
      bar = undefined;
    };
    const onProgress: ProgressCallback = (done, total, p) => {
      const key = `${p}:${total === undefined ? '' : 'total'}`;
      if (key !== phase) {
        stop();
        phase = key;
        const format =
          p === 'validating'
            ? 'Checking  {value} rows'
            : total === undefined
              ? 'Importing {value} events | {duration_formatted}'
              : 'Importing |{bar}| {percentage}% | {value}/{total} events | {duration_formatted} elapsed, {eta_formatted} left';
        bar = new cliProgress.SingleBar({ format, stream: process.stderr, hideCursor: true, fps: 10, etaBuffer: 50 }, cliProgress.Presets.shades_classic);
        bar.start(total ?? 0, done);
      }
      bar?.update(done);
    };
    return { onProgress, stop };
  };
  const n = (x: number): string => x.toLocaleString('en-US');
  /**
   * A stderr line when a batch has waited `IMPORT_LOCK_WAIT_MS` for the store's write lock (another
   * writer kept it), then one every `LOCK_WAIT_LINE_EVERY_MS` while it keeps waiting; the batch is
   * retried until it is written.
   */
  const lockWaitLines = (): LockWaitCallback => {
    let batch = 0;
    let printedAt = -Infinity;
    return (w) => {
      if (w.from_row !== batch) {
        batch = w.from_row;
        printedAt = -Infinity;
      }
      if (w.waited_ms - printedAt < LOCK_WAIT_LINE_EVERY_MS) return;
      printedAt = w.waited_ms;
      console.error(
        `envapi: the store is locked by another writer (a server or another import); waiting to write rows ${n(w.from_row)}–${n(w.to_row)} ` +
          `(${(w.waited_ms / 1000).toFixed(0)} s so far); the import goes on as soon as it can`,
      );
    };
  };
  const summaryLines = (s: ImportSummary, projectId: number): string[] => {
    const reasons = Object.entries(s.skipped_reasons).map(([reason, count]) => `${reason}: ${n(count)}`);
    return [
      `Imported ${s.source} into project ${projectId}: ${n(s.rows_read)} rows read, ${n(s.inserted)} inserted, ${n(s.skipped)} skipped${reasons.length ? ` (${reasons.join(', ')})` : ''}.`,
      `${n(s.persons_created)} persons created; ${(s.duration_ms / 1000).toFixed(1)} s, ${n(s.events_per_second)} events/s.`,
    ];
  };
  const parseBatchSize = (value: string): number => {
    const size = parseInteger(value);
    if (size < 1 || size > 100_000) throw new InvalidArgumentError('from 1 to 100000');
    return size;
  };
  const parsePositive = (value: string): number => {
    const x = parseInteger(value);
    if (x < 1) throw new InvalidArgumentError('a positive integer');
    return x;
  };

  program
    .command('import')
    .description('import data into a project')
    .command('events')
    .description(
      'import events from a JSON Lines (.jsonl, .ndjson, .json) or CSV (.csv) file in PostHog\'s export shape ' +
        '(event, distinct_id, properties, timestamp, optional uuid, elements_chain, $set, $set_once). The whole file is ' +
        'checked first: a bad line stops the import before anything is written, with FILE:LINE: reason. Rows are then ' +
        'written in batches, each in one transaction; rows whose uuid is stored already are skipped, so importing a ' +
        'file twice inserts nothing twice.',
    )
    .argument('<file>', 'the file (.gz accepted)')
    .requiredOption('--project <id>', 'project id', parsePositive)
    .addOption(new Option('--format <format>', 'file format (default: from the file name)').choices(['jsonl', 'csv']))
    .option('--batch-size <n>', 'rows per transaction', parseBatchSize, 2000)
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, o: { project: number; format?: ImportFormat; batchSize: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const progress = importProgress(!!o.json);
        let summary: ImportSummary;
        try {
          summary = await importEventsFile(store, o.project, file, { format: o.format, batchSize: o.batchSize, onProgress: progress.onProgress, onLockWait: lockWaitLines() });
        } finally {
          progress.stop();
        }
        out(!!o.json, { ...summary, project_id: o.project }, () => summaryLines(summary, o.project));
      }, IMPORT_LOCK_WAIT_MS);
    });

  program
    .command('demo')
    .description(
      'generate a realistic product-analytics data set (Hedgebox, a file-sharing app: pageviews, autocaptures with ' +
        'elements chains, custom events, identified and anonymous persons, browsers, OS, UTM sources) spread over ' +
        'the last --days days up to --now, and import it through the same path as "import events". The same ' +
        '--seed, --now, --days and --events give the same events, uuids included.',
    )
    .requiredOption('--project <id>', 'project id', parsePositive)
    .requiredOption('--events <n>', 'number of events', parseInteger)
    .option('--seed <n>', 'random seed (default: a random one, printed in the summary)', parseInteger)
    .option('--days <n>', 'length of the period in days', parsePositive, 30)
    .option('--now <timestamp>', 'end of the period, ISO 8601 (default: now)', (value: string) => {
      const ts = parseIsoTimestamp(value);
      if (!ts) throw new InvalidArgumentError('an ISO 8601 timestamp, e.g. 2025-01-15T12:00:00Z');
      return new Date(ts.value.slice(0, 23) + 'Z');
    })
    .option('--batch-size <n>', 'rows per transaction', parseBatchSize, 2000)
    .option('--json', 'print the summary as JSON')
    .action(async (o: { project: number; events: number; seed?: number; days: number; now?: Date; batchSize: number; json?: boolean }) => {
      const seed = o.seed ?? Math.floor(Math.random() * 1_000_000);
      const now = o.now ?? new Date();
      await withStore(program, async (store) => {
        const progress = importProgress(!!o.json);
        let summary: ImportSummary;
        try {
          summary = await importEvents(store, o.project, generateDemoEvents({ count: o.events, seed, now, days: o.days }), {
            source: 'demo',
            total: o.events,
            batchSize: o.batchSize,
            onProgress: progress.onProgress,
            onLockWait: lockWaitLines(),
          });
        } finally {
          progress.stop();
        }
        out(!!o.json, { ...summary, project_id: o.project, seed, now: now.toISOString(), days: o.days }, () => [
          ...summaryLines(summary, o.project),
          `Seed ${seed}, ${o.days} days up to ${now.toISOString()} (repeat with --seed ${seed} --now ${now.toISOString()}).`,
        ]);
      }, IMPORT_LOCK_WAIT_MS);
    });
  return program;
}

/** Runs the CLI on `argv`; prints errors on stderr and exits 1 on failure. */
export async function runCli(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    console.error(`envapi: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}

await runCli();
