/**
 * What the command groups of the `envapi` command line share: option parsers (commander's
 * `InvalidArgumentError` on bad input, which commander reports as bad usage, exit 2; e-mail
 * addresses as `emailProblem` says), the store of the global options (`withStore`), `--json`
 * output (`out`), user and organization look-ups, the check that projects exist
 * (`requireProjects`), level names, and `CliError` (a message for the user; `runCli` prints it on
 * stderr and exits 1).
 *
 * Start-up time: this module and the command modules import the store, the repositories and the
 * server only inside the actions that use them (`await import(…)`), so `envapi --help` loads
 * commander and little else (bin/envapi.js, `npm run bench:cli`).
 */
import { InvalidArgumentError, type Command } from 'commander';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KNOWN_SCOPES } from '../domain/access.js';
import type { Store } from '../storage/db.js';
import { OrganizationLevel, type AccountsRepository, type Organization, type User } from '../storage/repositories/accounts.js';

/** A failure to tell the user as it is (stderr, exit 1), without a stack. */
export class CliError extends Error {}

/** PostHog's OrganizationMembership levels (posthog/models/organization.py `Level`): member 1, admin 8, owner 15. */
const LEVELS: Record<string, number> = { member: OrganizationLevel.MEMBER, admin: OrganizationLevel.ADMIN, owner: OrganizationLevel.OWNER };

/** `member`, `admin`, `owner` (or PostHog's numbers 1, 8, 15) → the organization level number. */
export function parseLevel(value: string): number {
  const level = LEVELS[value.toLowerCase()] ?? Number(value);
  if (![1, 8, 15].includes(level)) throw new InvalidArgumentError('Use member, admin or owner (or 1, 8, 15).');
  return level;
}

/** The name of an organization level: 1 → `member`, 8 → `admin`, 15 → `owner`; another number as `level N`. */
export function levelName(level: number): string {
  return Object.keys(LEVELS).find((name) => LEVELS[name] === level) ?? `level ${level}`;
}

/** `1,2` → project ids `[1, 2]`. */
export function parseIdList(value: string): number[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!ids.length || ids.some((s) => !/^\d+$/.test(s)))
    throw new InvalidArgumentError('Expected a comma-separated list of project ids, e.g. 1,2.');
  return ids.map(Number);
}

/** `plugin:read,query:read` → scopes, each one of `KNOWN_SCOPES` (server/domain/access.ts). */
export function parseScopes(value: string): string[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(KNOWN_SCOPES as readonly string[]).includes(s));
  if (!scopes.length || unknown.length)
    throw new InvalidArgumentError(
      `${unknown.length ? `Unknown scope ${unknown.join(', ')}` : 'No scope'}; known: ${KNOWN_SCOPES.join(', ')}.`,
    );
  return scopes;
}

/** The local part (before the @) of an address: Django's EmailValidator `user_regex`, unquoted form (dot-atom). */
const EMAIL_LOCAL_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
/** One label of the domain: letters, digits, hyphens inside, at most 63 characters (Django's `domain_regex`). */
const EMAIL_LABEL_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * Why `value` is not an e-mail address, or undefined when it is one. The rule is roughly Django's
 * EmailValidator (what PostHog's user e-mail field runs) narrowed to what the contract's
 * `format: email` accepts (ajv-formats, the server's request and response validator), so that any
 * address the CLI stores is one the API serves: at most 254 characters (User.email's max_length),
 * no blank, exactly one `@`, a non-empty dot-atom local part (letters, digits and
 * ``!#$%&'*+/=?^_`{|}~-``, dots between them), and a domain of at least two dot-separated labels of
 * letters, digits and inner hyphens. Unlike Django it refuses quoted local parts, IP literals
 * (`[127.0.0.1]`), non-ASCII domains and the bare `localhost`; unlike Django it takes a one-letter
 * top-level label (`x@y.z`), as ajv-formats does.
 */
export function emailProblem(value: string): string | undefined {
  if (!value) return 'it is empty';
  if (/\s/.test(value)) return 'it contains a space';
  if (value.length > 254) return 'it is longer than 254 characters';
  const parts = value.split('@');
  if (parts.length === 1) return 'it has no @';
  if (parts.length > 2) return 'it has more than one @';
  const [local, domain] = parts as [string, string];
  if (!local) return 'nothing comes before the @';
  if (!domain) return 'no domain comes after the @';
  if (!EMAIL_LOCAL_RE.test(local))
    return `"${local}" before the @ has a character an address cannot have, or a dot at its start, its end or twice in a row`;
  const labels = domain.split('.');
  if (labels.length < 2) return `the domain "${domain}" has no dot (e.g. example.com)`;
  if (!labels.every((l) => EMAIL_LABEL_RE.test(l))) return `"${domain}" is not a domain name (letters, digits and hyphens, between dots)`;
  return undefined;
}

/** `--email`: an e-mail address (`emailProblem`); InvalidArgumentError (bad usage, exit 2) saying what is wrong. */
export function parseEmail(value: string): string {
  const why = emailProblem(value);
  if (why) throw new InvalidArgumentError(`Not an e-mail address (like ana@example.com): ${why}.`);
  return value;
}

/**
 * `--user <email-or-id>`: a user id (decimal digits) or an e-mail address (`emailProblem`), as
 * given; InvalidArgumentError (bad usage, exit 2) when it is neither, so a malformed address is
 * refused as such before any look-up (which would only say there is no such user).
 */
export function parseUserRef(value: string): string {
  if (/^\d+$/.test(value)) return value;
  const why = emailProblem(value);
  if (why) throw new InvalidArgumentError(`Neither a user id nor an e-mail address (like ana@example.com): ${why}.`);
  return value;
}

/** A non-negative integer written in decimal digits. */
export function parseInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('Expected an integer (decimal digits).');
  return Number(value);
}

/** A positive integer written in decimal digits. */
export function parsePositive(value: string): number {
  const x = parseInteger(value);
  if (x < 1) throw new InvalidArgumentError('Expected a positive integer.');
  return x;
}

/** The version of package.json (the project root is the first directory up from here that has one). */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? 'unknown';
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

/** The global options `--data-dir` / `--database-url`. */
export interface StoreOptions {
  dataDir?: string;
  databaseUrl?: string;
}

/**
 * Where the store of the global options is: `--data-dir` / `--database-url`, else `DATA_DIR`
 * (default `data`) / `DATABASE_URL`, as server/config.ts `readConfig` reads them. Read here rather
 * than through `readConfig`, which also loads the rate limiter's modules (slow to load) and refuses
 * malformed server-only settings that no administration command uses.
 */
export function storeLocation(
  program: Command,
  env: NodeJS.ProcessEnv = process.env,
): { dataDir: string; databaseUrl: string | undefined } {
  const opts = program.opts<StoreOptions>();
  return { dataDir: opts.dataDir ?? (env.DATA_DIR || 'data'), databaseUrl: opts.databaseUrl ?? (env.DATABASE_URL || undefined) };
}

/**
 * Opens the store named by the global options (else `DATA_DIR` / `DATABASE_URL`), without
 * migrating it. `lockTimeoutMs`: the store's bound on one wait for SQLite's write lock
 * (`StorageConfig`); undefined keeps the store's default.
 */
export async function openCliStore(program: Command, lockTimeoutMs?: number): Promise<Store> {
  const { openStore } = await import('../storage/db.js');
  return openStore({ ...storeLocation(program), lockTimeoutMs });
}

/**
 * Opens and migrates the store named by the global options, runs `fn`, closes the store.
 * `lockTimeoutMs`: the store's bound on one wait for SQLite's write lock (`StorageConfig`).
 * `events`: the command reads or writes events, so with `EVENTS_STORE=clickhouse` the ClickHouse
 * events store is opened too (embedded chDB in the data directory, or `CLICKHOUSE_URL`) and closed
 * after; a chDB that another process holds (a running server) fails with `CliError` saying so.
 */
export async function withStore<T>(
  program: Command,
  fn: (store: Store) => Promise<T>,
  lockTimeoutMs?: number,
  opts: { events?: boolean } = {},
): Promise<T> {
  const { migrateToLatest } = await import('../storage/db.js');
  const clickhouse = opts.events ? await readClickHouseConfigOrFail() : undefined;
  const store = await openCliStore(program, lockTimeoutMs);
  let events: { close(): Promise<void> } | undefined;
  try {
    if (clickhouse) {
      const { openClickHouseEvents, useClickHouseEvents } = await import('../storage/events/index.js');
      const { ClickHouseUnavailableError } = await import('../storage/clickhouse/connection.js');
      try {
        const opened = await openClickHouseEvents(
          { url: clickhouse.url, dataDir: storeLocation(program).dataDir, memoryLimitBytes: clickhouse.memoryLimitBytes },
          { budgetMs: 300_000, maxQueries: clickhouse.maxQueries },
        );
        events = opened;
        useClickHouseEvents(store, opened);
      } catch (err) {
        if (err instanceof ClickHouseUnavailableError) throw new CliError(err.message);
        throw err;
      }
    }
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await events?.close();
    await store.close();
  }
}

/**
 * The running server that holds the embedded ClickHouse events store of the global options' data
 * directory (`EVENTS_STORE=clickhouse` without `CLICKHOUSE_URL`), from the owner record the
 * server writes once it listens (../storage/clickhouse/connection.ts `ownerOf`): its pid and
 * URL; undefined when the events are elsewhere or no live server holds them. CliError on a bad
 * ClickHouse configuration.
 */
export async function clickhouseHolder(program: Command): Promise<{ pid: number; url: string } | undefined> {
  const clickhouse = await readClickHouseConfigOrFail();
  if (!clickhouse || clickhouse.url) return undefined;
  const { ownerOf } = await import('../storage/clickhouse/connection.js');
  const owner = ownerOf(storeLocation(program).dataDir);
  return owner?.url ? { pid: owner.pid, url: owner.url } : undefined;
}

/** `readClickHouseConfig` (../config.ts, loaded here only) of the environment, its error as a `CliError`. */
async function readClickHouseConfigOrFail(): Promise<import('../config.js').ClickHouseConfig | undefined> {
  const { readClickHouseConfig } = await import('../config.js');
  try {
    return readClickHouseConfig(process.env);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** The accounts repository over a store (loaded when a command needs it). */
export async function accountsOf(store: Store): Promise<AccountsRepository> {
  const { AccountsRepository } = await import('../storage/repositories/accounts.js');
  return new AccountsRepository(store.db);
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

/** How many projects a "does not exist" message names; beyond, it says how many more there are. */
const PROJECTS_NAMED = 10;

/**
 * Checks that every project (team) id of `ids` exists in the store; CliError (exit 1) otherwise,
 * naming the missing ids and what to do. On a store with no project at all (never started nor
 * bootstrapped): `Project 1 does not exist: this store has no projects yet. Start the server once
 * (npm start) or run \`envapi bootstrap\` to create the default organization and project 1.`;
 * otherwise `Project 9 does not exist. This store has 2 projects: 1 "Default project", 2 "Web"
 * (see envapi projects list).` (the first ten, then how many more).
 */
export async function requireProjects(store: Store, ids: readonly number[]): Promise<void> {
  const rows = await store.db.selectFrom('teams').select(['id', 'name']).orderBy('id').execute();
  const have = new Set(rows.map((r) => Number(r.id)));
  const missing = [...new Set(ids)].filter((id) => !have.has(id));
  if (!missing.length) return;
  const what = missing.length === 1 ? `Project ${missing[0]} does not exist` : `Projects ${missing.join(', ')} do not exist`;
  if (!rows.length) {
    throw new CliError(
      `${what}: this store has no projects yet. Start the server once (npm start) or run \`envapi bootstrap\` to create the default organization and project 1.`,
    );
  }
  const named = rows
    .slice(0, PROJECTS_NAMED)
    .map((r) => `${r.id} "${r.name}"`)
    .join(', ');
  const more = rows.length > PROJECTS_NAMED ? ` and ${rows.length - PROJECTS_NAMED} more` : '';
  const count = rows.length === 1 ? 'one project' : `${rows.length} projects`;
  throw new CliError(`${what}. This store has ${count}: ${named}${more} (see envapi projects list).`);
}

/** The help text of every `--org` option. */
export const ORG_OPTION_HELP = 'the organization, by name or id (default: the only one)';

/** `  <id>  "<name>"` lines, one per organization, for messages that ask to name one. */
function orgLines(orgs: Organization[]): string {
  return orgs.map((o) => `  ${o.id}  "${o.name}"`).join('\n');
}

/**
 * The organization named by `ref`: its id, else its exact name, else its name in any case. Without
 * `ref`, the only one. CliError, saying how to name one (`--org NAME` or `--org ID`, with the
 * organizations there are), when there is none, when `ref` is omitted and there are several, or
 * when a name is shared by several.
 */
export async function findOrg(accounts: AccountsRepository, ref: string | undefined): Promise<Organization> {
  const orgs = await accounts.listOrganizations();
  if (!orgs.length)
    throw new CliError('No organization yet: create one with envapi orgs create --name NAME (or start the server once: npm start)');
  if (ref === undefined) {
    if (orgs.length === 1) return orgs[0]!;
    throw new CliError(
      `There are ${orgs.length} organizations: name one with --org NAME or --org ID, e.g. --org "${orgs[0]!.name}"\n${orgLines(orgs)}`,
    );
  }
  const byId = orgs.find((o) => o.id === ref);
  if (byId) return byId;
  let named = orgs.filter((o) => o.name === ref);
  if (!named.length) named = orgs.filter((o) => o.name.toLowerCase() === ref.toLowerCase());
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new CliError(`${named.length} organizations are named "${ref}": name one with --org ID\n${orgLines(named)}`);
  throw new CliError(`No organization "${ref}". Name one with --org NAME or --org ID:\n${orgLines(orgs)}`);
}

/**
 * Adds `<parent> list` with only `--json`: loads the rows from the store of the global options and
 * prints them as JSON, or one `line` each.
 */
export function addListCommand<T>(
  parent: Command,
  program: Command,
  description: string,
  load: (store: Store) => Promise<T[]>,
  line: (row: T) => string,
): void {
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
