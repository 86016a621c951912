/**
 * The `envapi` command line (commander). Every command has `--help`; every command that prints
 * takes `--json` for scripts (one JSON document on stdout). Global options choose the store:
 * `--data-dir DIR` (SQLite, default ./data or DATA_DIR) or `--database-url URL` (DATABASE_URL).
 * Every command migrates the store first. Exit codes: 0 done, 1 failed (message on stderr),
 * 2 bad usage (from commander).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { bootstrap, installCatalogPlugin } from './bootstrap.js';
import { readConfig } from './config.js';
import { PLUGIN_CATALOG, findCatalogPlugin } from './domain/plugin-catalog.js';
import { main as serve } from './main.js';
import { migrateToLatest, openStore, type Store } from './storage/db.js';
import { AccountsRepository, OrganizationLevel, type Organization, type User } from './storage/repositories/accounts.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.js';

/** Scopes a key may carry (PostHog's names); `*` grants all. */
export const KNOWN_SCOPES = [
  '*',
  'plugin:read',
  'plugin:write',
  'dashboard:read',
  'dashboard:write',
  'query:read',
  'query:write',
  'project:read',
  'project:write',
] as const;

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

/** Opens and migrates the store named by the global options, runs `fn`, closes the store. */
async function withStore<T>(program: Command, fn: (store: Store) => Promise<T>): Promise<T> {
  const opts = program.opts<{ dataDir?: string; databaseUrl?: string }>();
  const env = readConfig();
  const store = openStore({ dataDir: opts.dataDir ?? env.dataDir, databaseUrl: opts.databaseUrl ?? env.databaseUrl });
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

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
    .action(async (o: { port?: number; host?: string }) => {
      const opts = program.opts<{ dataDir?: string; databaseUrl?: string }>();
      const config = readConfig();
      await serve({
        ...config,
        port: o.port ?? config.port,
        host: o.host ?? config.host,
        dataDir: opts.dataDir ?? config.dataDir,
        databaseUrl: opts.databaseUrl ?? config.databaseUrl,
      });
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
