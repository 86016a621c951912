/**
 * `npm start` as a user runs it (`node --max-semi-space-size=8 bin/envapi.js serve`, the compiled
 * server in dist/), as a child process on a fresh store (test/helpers/cli.ts): the first start
 * prints its URL and a personal API key, stored only hashed; SIGTERM stops it with exit code 0; a
 * second start prints no new key; `envapi --data-dir/--database-url … serve --port 0` serves the
 * store it names.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  BIN,
  childEnv,
  CLI_TIMEOUT_MS,
  KEY_RE,
  LIST,
  newStore,
  running,
  startServer,
  T,
  trackChild,
  useCliProcesses,
  type RunningServer,
} from '../helpers/cli.js';
import { dumpPgSchema } from '../helpers/pg.js';
import { spawnListening } from '../helpers/process.js';
import type { TestStoreLocation } from '../helpers/store.js';

useCliProcesses();

describe('npm start (envapi serve)', () => {
  let store: TestStoreLocation;
  let server: RunningServer | undefined;
  let bootstrapKey = '';

  beforeAll(async () => {
    store = await newStore();
  });
  afterAll(async () => {
    if (running(server)) await server.stop();
  });

  it(
    'prints its URL and a phx_ key on first start; the key lists project 1’s frontend app configs',
    async () => {
      server = await startServer(store);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.url).not.toMatch(/:0$/);
      expect(server.stdout()).toContain(`store: ${store.dialect} `);
      bootstrapKey = KEY_RE.exec(server.stdout())?.[1] ?? '';
      expect(bootstrapKey, server.stdout()).not.toBe('');
      const res = await api(server.url, bootstrapKey, LIST);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ count: 0, next: null, previous: null, results: [] });
    },
    T,
  );

  it('stores the key only hashed (SQLite: in the data directory’s files; PostgreSQL: in any row of the schema)', async () => {
    const hash = createHash('sha256').update(bootstrapKey, 'utf8').digest('hex');
    let contents: Array<{ name: string; bytes: Buffer }>;
    if (store.pg) {
      const db = store.open();
      try {
        const dumps = await dumpPgSchema(db);
        expect(dumps.map((d) => d.table)).toContain('personal_api_keys');
        contents = dumps.map((d) => ({ name: `table ${d.table}`, bytes: Buffer.from(d.text, 'utf8') }));
      } finally {
        await db.close();
      }
    } else {
      const files = fs.readdirSync(store.dir);
      expect(files).toContain('envapi.sqlite3');
      contents = files.map((f) => ({ name: f, bytes: fs.readFileSync(path.join(store.dir, f)) }));
    }
    for (const { name, bytes } of contents) expect(bytes.includes(Buffer.from(bootstrapKey)), name).toBe(false);
    expect(contents.some(({ bytes }) => bytes.includes(Buffer.from(hash)))).toBe(true);
  });

  it(
    'refuses requests without a key, and stops on SIGTERM with exit code 0',
    async () => {
      expect((await fetch(server!.url + LIST)).status).toBe(401);
      expect(await server!.stop(), server!.output()).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'a second start on the same store prints no new key, and the old key still works',
    async () => {
      server = await startServer(store);
      expect(KEY_RE.test(server.stdout()), server.stdout()).toBe(false);
      expect(server.stdout()).not.toMatch(/Applied migrations/);
      expect((await api(server.url, bootstrapKey, LIST)).status).toBe(200);
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'envapi --data-dir/--database-url DIR serve --port 0 serves that store',
    async () => {
      const other = await newStore();
      const storeArgs = other.pg ? ['--database-url', other.pg.url] : ['--data-dir', other.dir];
      const s = await spawnListening([BIN, ...storeArgs, 'serve', '--port', '0'], childEnv({}), {
        timeoutMs: CLI_TIMEOUT_MS,
        track: trackChild,
      });
      try {
        expect(s.stdout()).toContain(`store: ${other.dialect} `);
        expect((await api(s.url, KEY_RE.exec(s.stdout())![1]!, LIST)).status).toBe(200);
      } finally {
        s.proc.kill('SIGTERM');
        expect(await s.exited).toEqual({ code: 0, signal: null });
      }
    },
    T,
  );
});
