/**
 * ClickHouse for the test servers (test/helpers/server.ts, `eventsStore: 'clickhouse'` or npm
 * test's ClickHouse pass, scripts/test-clickhouse.mjs): embedded chDB, one data directory per
 * test process (a vitest file runs in its own process; chDB holds one data directory at a time),
 * and a fresh database in it for each test server, dropped when the server closes. So the servers
 * of one file, even two at once, do not see each other's events, as on the row stores.
 * With TEST_CLICKHOUSE_URL (`http://user:password@host:8123`, the opt-in server run of
 * scripts/test-clickhouse.mjs) the databases are made on that ClickHouse server instead, named
 * after the process so that runs side by side do not meet.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openClickHouse, type ClickHouseTarget } from '../../server/storage/clickhouse/connection.js';

/** The engine's memory cap in a test process, bytes: room for the largest suite, and for several processes at once. */
const TEST_MEMORY_LIMIT = 2 * 1024 ** 3;

/** The events store the suites run on: `clickhouse` in npm test's ClickHouse pass (TEST_EVENTS_STORE), else the row store. */
export function testEventsStore(): 'row' | 'clickhouse' {
  return process.env.TEST_EVENTS_STORE === 'clickhouse' ? 'clickhouse' : 'row';
}

/** Whether this run's test servers keep their events on ClickHouse (npm test's ClickHouse pass). */
export function usesClickHouse(): boolean {
  return testEventsStore() === 'clickhouse';
}

let dataDir: string | undefined;
let seq = 0;

/** A test server's ClickHouse database: where to open it, and how to drop it. */
export interface TestClickHouseDatabase {
  target: ClickHouseTarget;
  /** drops the database (after the server closed its connection) */
  drop(): Promise<void>;
}

/** A fresh database in this process's chDB data directory (made at the first call, removed at exit), or on TEST_CLICKHOUSE_URL. */
export async function testClickHouseDatabase(): Promise<TestClickHouseDatabase> {
  const server = process.env.TEST_CLICKHOUSE_URL;
  if (server) return serverDatabase(server);
  if (!dataDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-chdb-'));
    dataDir = dir;
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  seq += 1;
  const dir = dataDir;
  const database = `envapi_test_${seq}`;
  return {
    target: { dataDir: dir, database, memoryLimitBytes: TEST_MEMORY_LIMIT },
    async drop() {
      const c = await openClickHouse({ dataDir: dir, memoryLimitBytes: TEST_MEMORY_LIMIT }, 1);
      try {
        await c.client.command({ query: `DROP DATABASE IF EXISTS ${database} SYNC` });
      } finally {
        await c.close();
      }
    },
  };
}

/** A fresh database on the ClickHouse server at `base` (its URL without a database). */
async function serverDatabase(base: string): Promise<TestClickHouseDatabase> {
  seq += 1;
  const database = `envapi_test_${process.pid}_${seq}`;
  const root = new URL(base);
  root.pathname = '/';
  const admin = async (query: string) => {
    const c = await openClickHouse({ url: root.toString(), dataDir: os.tmpdir() }, 1);
    try {
      await c.client.command({ query });
    } finally {
      await c.close();
    }
  };
  await admin(`CREATE DATABASE IF NOT EXISTS ${database}`);
  const url = new URL(root);
  url.pathname = `/${database}`;
  return {
    target: { url: url.toString(), dataDir: os.tmpdir() },
    drop: () => admin(`DROP DATABASE IF EXISTS ${database} SYNC`),
  };
}
