/**
 * The connection of the ClickHouse events store: one `@clickhouse/client` client, on embedded
 * chDB (the npm package `chdb`, an optional dependency: ClickHouse as a library, data in
 * `DATA_DIR/clickhouse/`) or on a ClickHouse server (`CLICKHOUSE_URL`). The store is written once
 * against the client; only how it connects differs.
 *
 * What chDB allows, and how this module keeps to it (docs/research/clickhouse-chdb.md):
 * - One process holds a data directory (a second is refused with "Cannot lock file"), and one
 *   process holds one data directory at a time. So the embedded store belongs to the process that
 *   opened it: `serve --workers` refuses it (server/main.ts) and the import and demo commands send
 *   their events to a running server instead (server/cli/events.ts).
 * - Every call is asynchronous (`queryAsync` underneath, on libuv's thread pool), on the main
 *   thread: loading chDB in a worker thread crashed the process at exit. Each query in flight
 *   holds one libuv thread, so the queries in flight are bounded (`maxQueries`, the rest queued:
 *   ./kysely-dialect.ts) and `UV_THREADPOOL_SIZE` is raised above that bound at start
 *   (bin/envapi.js).
 * - The engine's memory is capped process-wide (`--max_server_memory_usage`, from
 *   `CLICKHOUSE_MEMORY_LIMIT`): chDB's `createChdbConnection` takes only a path, so a `Session`
 *   opened first with the server arguments sets them for the process, and the connection joins
 *   that session (sessions of one path are reference-counted). A query over the cap fails (code
 *   241) and the engine lives on.
 * - Settings passed as `clickhouse_settings` are applied by chDB's connection as `SET` on the
 *   shared session and stay in force for every later query; so only settings meant for every
 *   query go there (`output_format_json_quote_64bit_integers`, so that 64-bit integers come back
 *   as strings, not as JSON numbers that lose precision), and a query's own limits go in its SQL's
 *   `SETTINGS` tail (./kysely-dialect.ts).
 *
 * Errors: `ClickHouseUnavailableError` when chDB is not installed or has no build for this
 * platform, or the server does not answer, with what to do.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { checkIdentifier } from './schema.js';

/** Settings every query of the store runs with (safe to keep on a shared chDB session: see the module doc). */
export const CLIENT_SETTINGS = { output_format_json_quote_64bit_integers: 1 } as const;

/** Where the events store's ClickHouse is. */
export interface ClickHouseTarget {
  /** `CLICKHOUSE_URL`: `http(s)://user:password@host:port/database`; undefined: embedded chDB */
  url?: string | undefined;
  /** the server's data directory (embedded chDB keeps its files in `<dataDir>/clickhouse/`) */
  dataDir: string;
  /** embedded: the engine's memory cap, bytes (`CLICKHOUSE_MEMORY_LIMIT`; default `defaultMemoryLimit()`) */
  memoryLimitBytes?: number | undefined;
  /**
   * embedded: the database the tables go in (created when missing; default `default`). The
   * tests' ClickHouse pass gives each test server its own database in one chDB per process,
   * since a process holds one data directory at a time. A server's database is in its URL.
   */
  database?: string | undefined;
}

/** An open connection. */
export interface ClickHouseConnection {
  readonly client: ClickHouseClient;
  /** `embedded` (chDB in this process) or `server` */
  readonly kind: 'embedded' | 'server';
  /** the database the store's tables are in */
  readonly database: string;
  /** what to show of it in logs and messages (the URL without its password, or the data directory) */
  readonly shown: string;
  /**
   * Inserts `text`, rows in ClickHouse's `TabSeparated` format, into `table` of `database`
   * (`columns` in the rows' order); resolves once the engine has written them. On a server
   * through the client's raw-format insert; on embedded chDB through its raw insert
   * (`connection.chdb.rawInsert`, chDB's documented passthrough: the bytes go to the engine's
   * parser as they are, where the client's insert over chDB's connection first copies them into
   * the statement's text). Throws the engine's error (`ClickHouseError`).
   */
  insertTabSeparated(table: string, columns: readonly [string, ...string[]], text: string): Promise<void>;
  /** closes the client (and chDB's session); idempotent */
  close(): Promise<void>;
}

/** ClickHouse cannot be reached or loaded; the message says why and what to do. */
export class ClickHouseUnavailableError extends Error {
  override readonly name = 'ClickHouseUnavailableError';
}

/**
 * The default memory cap of embedded chDB: half of the machine's memory (the rest for the Node
 * process, the configuration store and the page cache), at least 512 MiB.
 */
export function defaultMemoryLimit(total: number = totalmem()): number {
  return Math.max(512 * 1024 * 1024, Math.floor(total / 2));
}

/** `url` with its password hidden. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unreadable URL)';
  }
}

/** The client's pluggable connection (its experimental `connection` option, which chDB's adapter fills). */
type ClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection'];

interface ChdbModules {
  Session: new (path?: string, options?: { connectionArgs?: string[] }) => { close(): void };
  createChdbConnection: (options: { path: string }) => {
    /** chDB's extension of its connection (chdb/dist/connection/extension.d.ts) */
    chdb: {
      rawInsert(params: {
        table: string;
        columns: readonly [string, ...string[]];
        format: 'TabSeparated';
        values: Buffer;
      }): Promise<unknown>;
    };
  };
}

/** The messages of `err` and of its causes, on one line (chDB puts the engine's reason in a cause or after a newline). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ').replace(/\s*\n\s*/g, ' ');
}

/** chDB's two entry points, or `ClickHouseUnavailableError` naming what is missing. */
async function loadChdb(): Promise<ChdbModules> {
  try {
    const root = (await import('chdb')) as unknown as { Session: ChdbModules['Session'] };
    const conn = (await import('chdb/connection')) as unknown as { createChdbConnection: ChdbModules['createChdbConnection'] };
    return { Session: root.Session, createChdbConnection: conn.createChdbConnection };
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ClickHouseUnavailableError(
      `EVENTS_STORE=clickhouse without CLICKHOUSE_URL needs embedded ClickHouse, the optional npm package chdb, which could not be loaded (${why}). ` +
        `It has builds for Linux (x64, arm64; glibc) and macOS only: install it with \`npm install chdb\`, or set CLICKHOUSE_URL to a ClickHouse server, or use EVENTS_STORE=sqlite.`,
    );
  }
}

/**
 * Opens the events store's ClickHouse: a server when `target.url` is set (checked with a ping),
 * else embedded chDB in `<dataDir>/clickhouse/` (created). `maxOpenConnections`: the client's
 * HTTP sockets (a server only). Throws `ClickHouseUnavailableError`.
 */
export async function openClickHouse(target: ClickHouseTarget, maxOpenConnections = 10): Promise<ClickHouseConnection> {
  if (target.url) {
    const url = new URL(target.url);
    const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || 'default';
    const client = createClient({
      url: target.url,
      max_open_connections: maxOpenConnections,
      // above the longest query budget: the server stops a query at its max_execution_time first
      request_timeout: 300_000,
      clickhouse_settings: CLIENT_SETTINGS,
    });
    const ping = await client.ping();
    if (!ping.success) {
      await client.close();
      const why = ping.error instanceof Error ? ping.error.message : String(ping.error);
      throw new ClickHouseUnavailableError(`ClickHouse at ${shownUrl(target.url)} does not answer: ${why}`);
    }
    let closed = false;
    return {
      client,
      kind: 'server',
      insertTabSeparated: async (table, columns, text) => {
        await client.insert({ table, columns: [...columns], format: 'TabSeparated', values: Readable.from([text], { objectMode: false }) });
      },
      database,
      shown: shownUrl(target.url),
      close: async () => {
        if (closed) return;
        closed = true;
        await client.close();
      },
    };
  }
  const chdb = await loadChdb();
  const path = join(target.dataDir, 'clickhouse');
  mkdirSync(path, { recursive: true });
  const limit = target.memoryLimitBytes ?? defaultMemoryLimit();
  let session: { close(): void };
  try {
    session = new chdb.Session(path, { connectionArgs: [`--max_server_memory_usage=${limit}`] });
  } catch (err) {
    const why = errorText(err);
    // chDB writes the engine's reason (CANNOT_OPEN_FILE: "Cannot lock file …/status") to stderr, not into the error
    const holder = ownerOf(target.dataDir);
    const held = holder !== undefined || /cannot lock|already running|only one active/i.test(why);
    throw new ClickHouseUnavailableError(
      held
        ? `The embedded ClickHouse in ${path} is open in another process${holder ? ` (pid ${holder.pid}${holder.url ? `, a server at ${holder.url}` : ''})` : ''}: chDB lets one process hold a data directory. Stop it first, or use a ClickHouse server (CLICKHOUSE_URL) to share the events between processes.`
        : `The embedded ClickHouse in ${path} could not be opened: ${why}`,
    );
  }
  writeOwner(target.dataDir, { pid: process.pid });
  const connection = chdb.createChdbConnection({ path });
  const client = createClient({
    connection: connection as unknown as ClientConnection,
    clickhouse_settings: CLIENT_SETTINGS,
  });
  const database = target.database ?? 'default';
  if (database !== 'default') {
    try {
      // each chDB connection keeps its own current database, so USE scopes this client only
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${checkIdentifier('The database', database)}` });
      await client.command({ query: `USE ${database}` });
    } catch (err) {
      await client.close();
      session.close();
      throw err;
    }
  }
  let closed = false;
  return {
    client,
    kind: 'embedded',
    insertTabSeparated: async (table, columns, text) => {
      await connection.chdb.rawInsert({ table: `${database}.${table}`, columns, format: 'TabSeparated', values: Buffer.from(text) });
    },
    database,
    shown: path,
    close: async () => {
      if (closed) return;
      closed = true;
      await client.close();
      session.close();
      removeOwner(target.dataDir);
    },
  };
}

/** Who holds embedded chDB: the process, and the URL it serves on when it is a server. */
export interface ClickHouseOwner {
  pid: number;
  url?: string | undefined;
}

/** The file beside `<dataDir>/clickhouse/` that names the process holding it (chDB's own lock says only that one does). */
function ownerFile(dataDir: string): string {
  return join(dataDir, 'clickhouse.owner.json');
}

/** Records `owner` as the holder of `<dataDir>/clickhouse/` (the server adds its URL once it listens). */
export function writeOwner(dataDir: string, owner: ClickHouseOwner): void {
  writeFileSync(ownerFile(dataDir), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

/** The live process that holds `<dataDir>/clickhouse/`, or undefined (no record, or its process is gone). */
export function ownerOf(dataDir: string): ClickHouseOwner | undefined {
  let owner: ClickHouseOwner;
  try {
    owner = JSON.parse(readFileSync(ownerFile(dataDir), 'utf8')) as ClickHouseOwner;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(owner.pid) || owner.pid === process.pid) return undefined;
  try {
    process.kill(owner.pid, 0);
    return owner;
  } catch (err) {
    // EPERM: the process exists but belongs to another user
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? owner : undefined;
  }
}

function removeOwner(dataDir: string): void {
  try {
    const owner = JSON.parse(readFileSync(ownerFile(dataDir), 'utf8')) as ClickHouseOwner;
    if (owner.pid === process.pid) rmSync(ownerFile(dataDir), { force: true });
  } catch {
    // no record, or not ours
  }
}
