/**
 * `EVENTS_STORE=clickhouse npm start` as a user runs it (the compiled server, a child process, on
 * a fresh SQLite store): the events go to embedded ClickHouse (chDB) in `DATA_DIR/clickhouse/`,
 * the start line says so, a captured batch is listed and survives a restart; `serve --workers 2`
 * and a second process on the same data directory are refused with what to do; a bad
 * `EVENTS_STORE` or `CLICKHOUSE_URL` stops the start with the variable's name. Skipped, and said
 * so, when the optional `chdb` cannot be loaded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../server/config.js';
import { workersRefusal } from '../../server/main.js';
import {
  api,
  BIN,
  childEnv,
  CLI_TIMEOUT_MS,
  KEY_RE,
  newStore,
  node,
  running,
  T,
  trackChild,
  useCliProcesses,
  type RunningServer,
} from '../helpers/cli.js';
import { spawnListening } from '../helpers/process.js';
import { reportSkip } from '../helpers/skips.js';
import type { TestStoreLocation } from '../helpers/store.js';

const chdb = await import('chdb').then(
  () => true,
  () => false,
);
if (!chdb)
  reportSkip(
    'test/cli/clickhouse-serve.test.ts',
    'the optional package chdb cannot be loaded',
    'npm install chdb (Linux x64/arm64 glibc, macOS)',
  );

useCliProcesses();

describe('EVENTS_STORE and CLICKHOUSE_* (server/config.ts)', () => {
  it('keeps the events beside the configuration by default, and reads the ClickHouse settings', () => {
    expect(readConfig({}).clickhouse).toBeUndefined();
    expect(readConfig({ EVENTS_STORE: 'sqlite' }).clickhouse).toBeUndefined();
    expect(readConfig({ EVENTS_STORE: 'postgres', DATABASE_URL: 'postgres://x@127.0.0.1/db' }).clickhouse).toBeUndefined();
    expect(readConfig({ EVENTS_STORE: 'ClickHouse' }).clickhouse).toEqual({
      url: undefined,
      memoryLimitBytes: undefined,
      maxQueries: undefined,
    });
    expect(
      readConfig({
        EVENTS_STORE: 'clickhouse',
        CLICKHOUSE_URL: 'https://u:p@ch.example:8443/envapi',
        CLICKHOUSE_MEMORY_LIMIT: '4G',
        CLICKHOUSE_MAX_QUERIES: '2',
      }).clickhouse,
    ).toEqual({ url: 'https://u:p@ch.example:8443/envapi', memoryLimitBytes: 4 * 1024 ** 3, maxQueries: 2 });
    expect(readConfig({ EVENTS_STORE: 'clickhouse', CLICKHOUSE_MEMORY_LIMIT: '536870912' }).clickhouse?.memoryLimitBytes).toBe(
      512 * 1024 ** 2,
    );
    expect(readConfig({ EVENTS_STORE: 'clickhouse', CLICKHOUSE_MEMORY_LIMIT: '1.5GiB' }).clickhouse?.memoryLimitBytes).toBe(
      1.5 * 1024 ** 3,
    );
  });

  it('refuses what it cannot honour, naming the variable', () => {
    expect(() => readConfig({ EVENTS_STORE: 'duckdb' })).toThrow(/EVENTS_STORE must be sqlite, postgres or clickhouse/);
    expect(() => readConfig({ EVENTS_STORE: 'postgres' })).toThrow(/EVENTS_STORE=postgres needs the configuration store to be postgres/);
    expect(() => readConfig({ CLICKHOUSE_URL: 'http://127.0.0.1:8123' })).toThrow(
      /CLICKHOUSE_URL is set but EVENTS_STORE is not clickhouse/,
    );
    expect(() => readConfig({ EVENTS_STORE: 'clickhouse', CLICKHOUSE_URL: 'tcp://127.0.0.1:9000' })).toThrow(
      /CLICKHOUSE_URL must be an http/,
    );
    for (const bad of ['lots', '10M', '-1G', '4X'])
      expect(() => readConfig({ EVENTS_STORE: 'clickhouse', CLICKHOUSE_MEMORY_LIMIT: bad }), bad).toThrow(
        /CLICKHOUSE_MEMORY_LIMIT must be a size/,
      );
    expect(() => readConfig({ EVENTS_STORE: 'clickhouse', CLICKHOUSE_MAX_QUERIES: '0' })).toThrow(/CLICKHOUSE_MAX_QUERIES/);
  });

  it('refuses serve --workers with embedded chDB, not with a ClickHouse server', () => {
    const embedded = readConfig({ EVENTS_STORE: 'clickhouse', DATABASE_URL: 'postgres://x@127.0.0.1/db' });
    expect(workersRefusal(embedded, 2)).toMatch(/--workers 2 cannot share embedded ClickHouse .* set CLICKHOUSE_URL/);
    expect(workersRefusal(embedded, 1)).toBeUndefined();
    const server = readConfig({
      EVENTS_STORE: 'clickhouse',
      CLICKHOUSE_URL: 'http://127.0.0.1:8123',
      DATABASE_URL: 'postgres://x@127.0.0.1/db',
    });
    expect(workersRefusal(server, 2)).toBeUndefined();
  });
});

describe.runIf(chdb)('EVENTS_STORE=clickhouse npm start (embedded chDB)', () => {
  let store: TestStoreLocation;
  let dataDir: string;
  let server: RunningServer | undefined;
  let key = '';
  // DATA_DIR holds the chDB files on either configuration store (the PostgreSQL pass too)
  const env = () => childEnv({ ...store.env, DATA_DIR: dataDir, PORT: '0', EVENTS_STORE: 'clickhouse' });
  const start = async () => {
    const s = await spawnListening(['--max-semi-space-size=8', BIN, 'serve'], env(), { timeoutMs: CLI_TIMEOUT_MS, track: trackChild });
    return { ...s, stop: () => (s.proc.kill('SIGTERM'), s.exited) };
  };

  beforeAll(async () => {
    store = await newStore();
    dataDir = store.env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-ch-serve-'));
  });
  afterAll(async () => {
    if (running(server)) await server.stop();
    if (!store.env.DATA_DIR) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'keeps the events in DATA_DIR/clickhouse/, lists a captured batch, and keeps it across a restart',
    async () => {
      server = await start();
      expect(server.stdout()).toMatch(/events: clickhouse \(embedded chDB\) \S+clickhouse;/);
      key = KEY_RE.exec(server.stdout())?.[1] ?? '';
      const project = (await (await api(server.url, key, '/api/projects/1/')).json()) as { api_token: string };
      const uuid = '01934e70-0000-7000-8000-00000000c001';
      const sent = await fetch(`${server.url}/batch/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          api_key: project.api_token,
          batch: [{ uuid, event: 'clicked', distinct_id: 'u1', properties: { plan: 'pro' } }],
        }),
      });
      expect(sent.status).toBe(200);
      const listed = async (url: string) =>
        ((await (await api(url, key, '/api/environments/1/events/?event=clicked')).json()) as { results: { id: string }[] }).results.map(
          (e) => e.id,
        );
      expect(await listed(server.url)).toEqual([uuid]);
      expect(fs.existsSync(path.join(dataDir, 'clickhouse'))).toBe(true);

      // a second process on the same data directory: refused with what to do, the first keeps serving
      const second = await node([BIN, 'serve'], env());
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/open in another process \(pid \d+, a server at http:[^)]+\).*CLICKHOUSE_URL/);
      expect(await listed(server.url)).toEqual([uuid]);

      // envapi import while the server holds chDB: the rows go to its /batch/ (historical_migration),
      // with the elements chain and the person's $set; sent again, nothing is stored twice
      const file = path.join(dataDir, 'import.jsonl');
      const imported = '01934e70-0000-7000-8000-00000000c002';
      const chain = 'a.btn:attr__href="/x"nth-child="1"nth-of-type="1"text="Go"';
      fs.writeFileSync(
        file,
        `${JSON.stringify({ uuid: imported, event: 'clicked', distinct_id: 'u2', timestamp: new Date().toISOString(), properties: { $set: { plan: 'team' } }, elements_chain: chain })}\n`,
      );
      for (let i = 0; i < 2; i++) {
        const sent = await node([BIN, 'import', 'events', file, '--project', '1'], env());
        expect(sent.code, sent.stderr).toBe(0);
        expect(sent.stderr).toMatch(
          /holds the embedded ClickHouse events store: sending the events to it at http:\/\/127\.0\.0\.1:\d+ \(\/batch\/, historical_migration\)/,
        );
        expect(sent.stdout).toMatch(/through the server at http:\/\/127\.0\.0\.1:\d+: 1 rows read and accepted/);
      }
      expect(await listed(server.url)).toEqual([imported, uuid]);
      const one = (await (await api(server.url, key, `/api/environments/1/events/${imported}/`)).json()) as {
        elements_chain: string;
        person: { properties: Record<string, unknown> } | null;
      };
      expect(one.elements_chain).toBe(chain);
      // demo --materialize needs the store itself: refused while the server holds it
      const materialize = await node([BIN, 'demo', '--project', '1', '--events', '10', '--materialize'], env());
      expect(materialize.code).toBe(1);
      expect(materialize.stderr).toMatch(/holds the embedded ClickHouse events store: stop it to materialize columns/);
      const demo = await node([BIN, 'demo', '--project', '1', '--events', '50', '--seed', '7', '--json'], env());
      expect(demo.code, demo.stderr).toBe(0);
      expect(JSON.parse(demo.stdout)).toMatchObject({ rows_read: 50, inserted: 50, sent_to: expect.stringMatching(/^http:/) });

      // with the server stopped, the import opens the store itself: the rows sent are there, nothing twice
      expect((await server.stop()).code).toBe(0);
      const run = await node([BIN, 'import', 'events', file, '--project', '1', '--json'], env());
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ inserted: 0, skipped: 1 });
      server = await start();
      const all = ((await (await api(server.url, key, '/api/environments/1/events/?limit=1000')).json()) as { results: unknown[] }).results;
      expect(all).toHaveLength(52);
      expect(await listed(server.url)).toEqual([imported, uuid]);
    },
    T,
  );

  it(
    'refuses serve --workers 2 with the reason and what to do',
    async () => {
      const run = await node([BIN, 'serve', '--workers', '2', '--port', '0'], env());
      expect(run.code).toBe(1);
      expect(run.stdout + run.stderr).toMatch(/--workers 2 cannot share embedded ClickHouse/);
    },
    T,
  );
});
