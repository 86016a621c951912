/**
 * What the command groups of the `envapi` command line share: option parsers (commander's
 * `InvalidArgumentError` on bad input, which commander reports as bad usage, exit 2), the store of
 * the global options (`withStore`), `--json` output (`out`), user and organization look-ups, and
 * `CliError` (a message for the user; `runCli` prints it on stderr and exits 1).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { readConfig } from '../config.js';
import { KNOWN_SCOPES } from '../domain/access.js';
import { openStore, migrateToLatest, type Store } from '../storage/db.js';
import { OrganizationLevel, type AccountsRepository, type Organization, type User } from '../storage/repositories/accounts.js';

/** A failure to tell the user as it is (stderr, exit 1), without a stack. */
export class CliError extends Error {}

const LEVELS: Record<string, number> = { member: OrganizationLevel.MEMBER, admin: OrganizationLevel.ADMIN, owner: OrganizationLevel.OWNER };

/** `member`, `admin`, `owner` (or PostHog's numbers 1, 8, 15) → the organization level number. */
export function parseLevel(value: string): number {
  const level = LEVELS[value.toLowerCase()] ?? Number(value);
  if (![1, 8, 15].includes(level)) throw new InvalidArgumentError('use member, admin or owner (1, 8, 15)');
  return level;
}

/** `1,2` → project ids `[1, 2]`. */
export function parseIdList(value: string): number[] {
  const ids = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!ids.length || ids.some((s) => !/^\d+$/.test(s))) throw new InvalidArgumentError('a comma-separated list of project ids, e.g. 1,2');
  return ids.map(Number);
}

/** `plugin:read,query:read` → scopes, each one of `KNOWN_SCOPES`. */
export function parseScopes(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(KNOWN_SCOPES as readonly string[]).includes(s));
  if (!scopes.length || unknown.length) throw new InvalidArgumentError(`unknown scope ${unknown.join(', ')}; known: ${KNOWN_SCOPES.join(', ')}`);
  return scopes;
}

/** A non-negative integer written in decimal digits. */
export function parseInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('an integer');
  return Number(value);
}

/** A positive integer written in decimal digits. */
export function parsePositive(value: string): number {
  const x = parseInteger(value);
  if (x < 1) throw new InvalidArgumentError('a positive integer');
  return x;
}

/** The global options `--data-dir` / `--database-url`. */
export interface StoreOptions {
  dataDir?: string;
  databaseUrl?: string;
}

/**
 * Opens the store named by the global options (else `DATA_DIR` / `DATABASE_URL`), without
 * migrating it. `lockTimeoutMs`: the store's bound on one wait for SQLite's write lock
 * (`StorageConfig`); undefined keeps the store's default.
 */
export function openCliStore(program: Command, lockTimeoutMs?: number): Store {
  const opts = program.opts<StoreOptions>();
  const env = readConfig();
  return openStore({ dataDir: opts.dataDir ?? env.dataDir, databaseUrl: opts.databaseUrl ?? env.databaseUrl, lockTimeoutMs });
}

/**
 * Opens and migrates the store named by the global options, runs `fn`, closes the store.
 * `lockTimeoutMs`: the store's bound on one wait for SQLite's write lock (`StorageConfig`).
 */
export async function withStore<T>(program: Command, fn: (store: Store) => Promise<T>, lockTimeoutMs?: number): Promise<T> {
  const store = openCliStore(program, lockTimeoutMs);
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Prints `value` as JSON (two-space indent) with `--json`, else the human lines, on stdout. */
export function out(json: boolean, value: unknown, human: () => string[]): void {
  if (json) console.log(JSON.stringify(value, null, 2));
  else for (const line of human()) console.log(line);
}

/** The user with this id (all digits) or email; CliError when there is none. */
export async function findUser(accounts: AccountsRepository, ref: string): Promise<User> {
  const user = /^\d+$/.test(ref) ? await accounts.findUserById(Number(ref)) : await accounts.findUserByEmail(ref);
  if (!user) throw new CliError(`No user ${ref}. Create one with: envapi users create --email ${ref.includes('@') ? ref : 'EMAIL'}`);
  return user;
}

/**
 * The organization with this id or name; without `ref`, the only one. CliError when there is none,
 * or when `ref` is omitted and there are several.
 */
export async function findOrg(accounts: AccountsRepository, ref: string | undefined): Promise<Organization> {
  const orgs = await accounts.listOrganizations();
  if (!ref) {
    if (orgs.length === 1 && orgs[0]) return orgs[0];
    throw new CliError(orgs.length ? 'Several organizations exist: name one with --org ID' : 'No organization yet: run envapi orgs create --name NAME');
  }
  const org = orgs.find((o) => o.id === ref || o.name === ref);
  if (!org) throw new CliError(`No organization ${ref}`);
  return org;
}

/**
 * Adds `<parent> list` with only `--json`: loads the rows from the store of the global options and
 * prints them as JSON, or one `line` each.
 */
export function addListCommand<T>(parent: Command, program: Command, description: string, load: (store: Store) => Promise<T[]>, line: (row: T) => string): void {
  parent
    .command('list')
    .description(description)
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withStore(program, async (store) => {
        const list = await load(store);
        out(!!o.json, list, () => list.map(line));
      });
    });
}
