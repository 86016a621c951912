/**
 * Opening the ClickHouse events store (`EVENTS_STORE=clickhouse`): the connection
 * (../../clickhouse/connection.ts: embedded chDB, or `CLICKHOUSE_URL`), the Kysely instance its
 * reads and HogQL run on (../../clickhouse/kysely-dialect.ts), PostHog's tables created when
 * missing (../../clickhouse/schema.ts), and the writer of the events and the person mirror
 * (./write.ts). What the server holds while it runs, and closes at shutdown.
 */
import type { Kysely } from 'kysely';
import { openClickHouse, type ClickHouseConnection, type ClickHouseTarget } from '../../clickhouse/connection.js';
import { clickhouseKysely } from '../../clickhouse/kysely-dialect.js';
import { clickhouseSchema } from '../../clickhouse/schema.js';
import type { Database } from '../../schema.js';
import type { EventsStore } from '../store.js';
import { ClickHouseEventsStore } from './store.js';
import { ClickHouseEventsWriter } from './write.js';

/** The ClickHouse events store of a process. */
export interface ClickHouseEvents {
  readonly connection: ClickHouseConnection;
  /** the Kysely instance on ClickHouse (reads, HogQL) */
  readonly db: Kysely<unknown>;
  readonly writer: ClickHouseEventsWriter;
  /** the reads, with `rel` the relational store (persons' source of truth) */
  store(rel: Kysely<Database>): EventsStore;
  close(): Promise<void>;
}

/** How many statements embedded chDB runs at once by default (each holds a libuv thread: bin/envapi.js raises their number). */
export const DEFAULT_EMBEDDED_MAX_QUERIES = 4;
/** The same against a ClickHouse server (the client's sockets). */
export const DEFAULT_SERVER_MAX_QUERIES = 8;

/** What `openClickHouseEvents` takes besides where ClickHouse is. */
export interface ClickHouseEventsOptions {
  /** a read's time budget, ms (`QUERY_TIMEOUT_MS`) */
  budgetMs: number;
  /** statements in flight at most (`CLICKHOUSE_MAX_QUERIES`; default per connection kind) */
  maxQueries?: number | undefined;
}

/**
 * Opens the store and creates its tables when missing (idempotent DDL; on a cluster create them
 * first with `envapi clickhouse schema --cluster NAME`, then this finds them). Throws
 * `ClickHouseUnavailableError` (../../clickhouse/connection.ts) when ClickHouse cannot be loaded
 * or reached, or the engine's error for DDL it refuses.
 */
export async function openClickHouseEvents(target: ClickHouseTarget, options: ClickHouseEventsOptions): Promise<ClickHouseEvents> {
  const embedded = !target.url;
  const maxQueries = options.maxQueries ?? (embedded ? DEFAULT_EMBEDDED_MAX_QUERIES : DEFAULT_SERVER_MAX_QUERIES);
  const connection = await openClickHouse(target, maxQueries + 2);
  try {
    // idempotent: on a cluster the tables exist already (made by the cluster DDL) and are kept
    for (const statement of clickhouseSchema({ database: connection.database }).slice(1)) {
      await connection.client.command({ query: statement });
    }
  } catch (err) {
    await connection.close();
    throw err;
  }
  const db = clickhouseKysely({ client: connection.client, maxQueries, budgetMs: options.budgetMs, cancelOnBudget: !embedded });
  const writer = new ClickHouseEventsWriter(connection, db);
  return {
    connection,
    db,
    writer,
    store: (rel) => new ClickHouseEventsStore(db, rel),
    close: () => connection.close(),
  };
}
