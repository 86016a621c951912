/**
 * The real thing, as a user runs it: `node --import tsx server/main.ts` (what `npm start` runs) and
 * the `envapi` command (`node bin/envapi.js`), as child processes on a temporary data directory
 * (SQLite: DATA_DIR / `--data-dir`) or, in the PostgreSQL pass, on a fresh PostgreSQL schema
 * (DATABASE_URL / `--database-url`), dropped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpPgSchema } from './helpers/pg.js';
import { ROOT, spawnListening, type Exit, type ListeningProcess } from './helpers/process.js';
import { childEnv as storelessEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

const BIN = path.join(ROOT, 'bin', 'envapi.js');
const START_TIMEOUT_MS = 30_000;
const CLI_TIMEOUT_MS = 30_000;
const KEY_RE = /\b(phx_[A-Za-z0-9]+)\b/;

/** Children still running, killed in afterAll whatever happened. */
const children = new Set<ChildProcess>();
/** Stores made by this file, removed (directory, PostgreSQL schema) in afterAll. */
const locations: TestStoreLocation[] = [];

/** A fresh store: a temporary data directory, or in the PostgreSQL pass a fresh schema. */
async function newStore(): Promise<TestStoreLocation> {
  const location = await createTestStoreLocation('envapi-cli-test-');
  locations.push(location);
  return location;
}

/** The environment of a child: ours, without anything that would pick another store or port, then `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = storelessEnv(extra);
  if (!('PORT' in extra)) delete env.PORT;
  return env;
}

interface RunningServer extends ListeningProcess {
  /** SIGTERM, then the exit */
  stop(): Promise<Exit>;
}

/** Spawns a server command and resolves once it prints `envapi listening on <url>`. */
async function spawnServer(args: string[], env: Record<string, string>): Promise<RunningServer> {
  const server = await spawnListening(args, childEnv(env), {
    timeoutMs: START_TIMEOUT_MS,
    track: (child) => {
      children.add(child);
      child.once('exit', () => children.delete(child));
    },
  });
  return {
    ...server,
    async stop() {
      server.proc.kill('SIGTERM');
      return server.exited;
    },
  };
}

/** `node --import tsx server/main.ts` with DATA_DIR (or DATABASE_URL) and PORT=0. */
function startMain(store: TestStoreLocation): Promise<RunningServer> {
  return spawnServer(['--import', 'tsx', 'server/main.ts'], { ...store.env, PORT: '0', HOST: '127.0.0.1' });
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `envapi <args>` (node bin/envapi.js) to completion; with a store, on that store
 * (`envapi --data-dir DIR <args>`, or DATABASE_URL on PostgreSQL).
 */
function cli(args: string[], store?: TestStoreLocation): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const argv = [BIN, ...(store?.cliArgs ?? []), ...args];
    const child = spawn(process.execPath, argv, { cwd: ROOT, env: childEnv(store?.cliEnv ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`envapi ${args.join(' ')} did not finish within ${CLI_TIMEOUT_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `envapi <args> --json` on a store, expects exit 0, and parses the one JSON document. */
async function cliJson<T>(store: TestStoreLocation, args: string[]): Promise<T> {
  const r = await cli([...args, '--json'], store);
  expect(r.code, `envapi ${args.join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

async function api(url: string, key: string, p: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${key}`);
  return fetch(url + p, { ...init, headers });
}

const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const location of locations) await location.cleanup();
});

describe('server/main.ts (npm start)', () => {
  let store: TestStoreLocation;
  let server: RunningServer | undefined;
  let bootstrapKey = '';

  beforeAll(async () => {
    store = await newStore();
  });

  afterAll(async () => {
    if (server && server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
  });

  it('prints its URL and a phx_ key on first start; the key lists project 1’s frontend app configs', async () => {
    server = await startMain(store);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.stdout()).toContain(`store: ${store.dialect} `);
    expect(server.url).not.toMatch(/:0$/);
    const m = KEY_RE.exec(server.stdout());
    expect(m, server.stdout()).not.toBeNull();
    bootstrapKey = m![1]!;
    const res = await api(server.url, bootstrapKey, LIST);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(page).sort()).toEqual(['count', 'next', 'previous', 'results']);
    expect(page).toMatchObject({ count: 0, next: null, previous: null, results: [] });
  }, 60_000);

  it('stores the key only hashed (SQLite: in the data directory’s files; PostgreSQL: in any row of the schema)', async () => {
    expect(bootstrapKey).not.toBe('');
    const hash = createHash('sha256').update(bootstrapKey, 'utf8').digest('hex');
    let contents: Array<{ name: string; bytes: Buffer }>;
    if (store.pg) {
      // every row of every table of the server's schema, all columns, as text
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
    let sawHash = false;
    for (const { name, bytes } of contents) {
      expect(bytes.includes(Buffer.from(bootstrapKey)), name).toBe(false);
      if (bytes.includes(Buffer.from(hash))) sawHash = true;
    }
    expect(sawHash).toBe(true);
  });

  it('refuses requests without a key while running', async () => {
    const res = await fetch(server!.url + LIST);
    expect(res.status).toBe(401);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exit = await server!.stop();
    expect(exit, `stdout:\n${server!.stdout()}\nstderr:\n${server!.stderr()}`).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('a second start on the same store prints no new key, and the old key still works', async () => {
    server = await startMain(store);
    expect(KEY_RE.test(server.stdout()), server.stdout()).toBe(false);
    expect(server.stdout()).not.toMatch(/Applied migrations/);
    const res = await api(server.url, bootstrapKey, LIST);
    expect(res.status).toBe(200);
    const exit = await server.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe('envapi serve', () => {
  it('serves on --port 0, prints a working key, and exits 0 on SIGTERM', async () => {
    const store = await newStore();
    // the store as an option: --data-dir, or --database-url on PostgreSQL
    const storeArgs = store.pg ? ['--database-url', store.pg.url] : ['--data-dir', store.dir];
    const server = await spawnServer([BIN, ...storeArgs, 'serve', '--port', '0'], {});
    try {
      expect(server.stdout()).toContain(`store: ${store.dialect} `);
      const key = KEY_RE.exec(server.stdout())?.[1];
      expect(key, server.stdout()).toBeDefined();
      expect((await api(server.url, key!, LIST)).status).toBe(200);
    } finally {
      const exit = await server.stop();
      expect(exit).toEqual({ code: 0, signal: null });
    }
  }, 60_000);
});

describe('envapi administration commands', () => {
  let store: TestStoreLocation;
  let server: RunningServer;
  let bootstrapKey: string;

  beforeAll(async () => {
    store = await newStore();
    server = await startMain(store);
    bootstrapKey = KEY_RE.exec(server.stdout())![1]!;
  }, 60_000);

  afterAll(async () => {
    if (server && server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
  });

  interface UserJson {
    id: number;
    uuid: string;
    email: string;
    is_active: boolean;
  }
  interface OrgJson {
    id: string;
    name: string;
  }
  interface KeyJson {
    id: string;
    user_id: number;
    label: string;
    mask_value: string;
    scopes: string[];
    scoped_teams: number[] | null;
    created_at: string;
    last_used_at: string | null;
    key?: string;
  }

  let user: UserJson;
  let org: OrgJson;
  let created: KeyJson;

  it('users create --json prints the new user', async () => {
    user = await cliJson<UserJson>(store, ['users', 'create', '--email', 'x@y.z']);
    expect(user).toMatchObject({ email: 'x@y.z', is_active: true });
    expect(user.id).toEqual(expect.any(Number));
    expect(user.uuid).toMatch(/^[0-9a-f-]{36}$/);
  }, 60_000);

  it('users create with an email that exists fails with a message', async () => {
    const r = await cli(['users', 'create', '--email', 'x@y.z', '--json'], store);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/exists/);
  }, 60_000);

  it('orgs list --json prints the bootstrap organization', async () => {
    const orgs = await cliJson<OrgJson[]>(store, ['orgs', 'list']);
    expect(orgs).toHaveLength(1);
    expect(orgs[0]!.name).toBe('Default Organization');
    org = orgs[0]!;
  }, 60_000);

  it('keys create --scopes plugin:read --projects 1 --json prints the key once, with its record', async () => {
    created = await cliJson<KeyJson>(store, ['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read', '--projects', '1']);
    expect(created.key).toMatch(/^phx_[A-Za-z0-9]+$/);
    expect(created).toMatchObject({ user_id: user.id, scopes: ['plugin:read'], scoped_teams: [1] });
    expect(created.mask_value).toBe(`phx_...${created.key!.slice(-4)}`);
    expect(created.created_at).toMatch(/Z$/);
  }, 60_000);

  it('the key of a user outside the organization gets 403 on project 1', async () => {
    const res = await api(server.url, created.key!, LIST);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toBe("You don't have access to the project.");
  });

  it('orgs add-member --user x@y.z adds the user to the only organization', async () => {
    const m = await cliJson<{ organization_id: string; user_id: number; level: number }>(store, ['orgs', 'add-member', '--user', 'x@y.z']);
    expect(m).toMatchObject({ organization_id: org.id, user_id: user.id, level: 1 });
  }, 60_000);

  it('the key works for plugin:read on project 1', async () => {
    const res = await api(server.url, created.key!, LIST);
    expect(res.status).toBe(200);
  });

  it('the key gets 403 on a plugin:write operation', async () => {
    const res = await api(server.url, created.key!, LIST, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin: 1, order: 1 }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'plugin:write'",
      attr: null,
    });
  });

  it('the key gets 403 on a project it is not limited to', async () => {
    const p = await cliJson<{ id: number }>(store, ['projects', 'create', '--name', 'Limited out']);
    const res = await api(server.url, created.key!, `/api/environments/${p.id}/pipeline_frontend_apps_configs/`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toBe(`API key does not have access to the requested project: ID ${p.id}.`);
  }, 60_000);

  it('keys list --json shows only masked keys', async () => {
    const r = await cli(['keys', 'list', '--json'], store);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(created.key!);
    expect(r.stdout).not.toContain(bootstrapKey);
    expect(r.stdout).not.toContain('sha256$');
    const list = JSON.parse(r.stdout) as KeyJson[];
    expect(list.length).toBeGreaterThanOrEqual(2);
    for (const k of list) {
      expect(k.mask_value).toMatch(/^phx_\.\.\.[A-Za-z0-9]{4}$/);
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('secure_value');
    }
    expect(list.map((k) => k.id)).toContain(created.id);
    expect(list.find((k) => k.id === created.id)!.mask_value).toBe(created.mask_value);
  }, 60_000);

  it('keys list --user filters by owner', async () => {
    const list = await cliJson<KeyJson[]>(store, ['keys', 'list', '--user', 'x@y.z']);
    expect(list.map((k) => k.id)).toEqual([created.id]);
  }, 60_000);

  it('keys revoke <id> revokes the key: it then gets 401', async () => {
    const r = await cli(['keys', 'revoke', created.id], store);
    expect(r.code, r.stderr).toBe(0);
    const res = await api(server.url, created.key!, LIST);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('authentication_failed');
    // the bootstrap key is untouched
    expect((await api(server.url, bootstrapKey, LIST)).status).toBe(200);
  }, 60_000);

  it('keys revoke of an unknown id fails with a message', async () => {
    const r = await cli(['keys', 'revoke', created.id], store);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(created.id);
  }, 60_000);

  it('projects create --name P --private --json creates a private project the API lists', async () => {
    const p = await cliJson<{ id: number; name: string; access_control: boolean; organization_id: string }>(store, [
      'projects',
      'create',
      '--name',
      'P',
      '--private',
    ]);
    expect(p).toMatchObject({ name: 'P', access_control: true, organization_id: org.id });
    const res = await api(server.url, bootstrapKey, '/api/projects/');
    expect(res.status).toBe(200);
    const page = (await res.json()) as { results: Array<{ id: number; name: string; access_control: boolean }> };
    expect(page.results.find((x) => x.id === p.id)).toMatchObject({ name: 'P', access_control: true });
  }, 60_000);

  it('plugins catalog --json prints the built-in catalog', async () => {
    const catalog = await cliJson<Array<{ key: string; name: string; url: string }>>(store, ['plugins', 'catalog']);
    expect(catalog.length).toBeGreaterThan(0);
    const keys = catalog.map((p) => p.key);
    expect(keys).toEqual(expect.arrayContaining(['customerio', 'notification-bar']));
    for (const p of catalog) {
      expect(typeof p.name).toBe('string');
      expect(p.url).toMatch(/^https?:\/\//);
    }
  }, 60_000);

  it('an unknown scope exits non-zero with a message naming it', async () => {
    const r = await cli(['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read,bogus:scope', '--json'], store);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stderr).toContain('bogus:scope');
    expect(r.stdout).not.toMatch(KEY_RE);
  }, 60_000);

  it('keys create for an unknown user exits non-zero with a message', async () => {
    const r = await cli(['keys', 'create', '--user', 'nobody@example.com', '--scopes', 'plugin:read'], store);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('nobody@example.com');
    expect(r.stdout).not.toMatch(KEY_RE);
  }, 60_000);
});

describe('envapi --help', () => {
  /** Subcommand names listed under "Commands:" in a commander help text (without `help`). */
  function commandsIn(help: string): string[] {
    const section = help.split(/^Commands:\s*$/m)[1];
    if (!section) return [];
    const names: string[] = [];
    for (const line of section.split('\n')) {
      const m = /^ {2}([a-z][\w-]*)/.exec(line);
      if (m && m[1] !== 'help') names.push(m[1]!);
    }
    return names;
  }

  it('the help of every command exits 0 and prints Usage', async () => {
    const seen: string[] = [];
    // two at a time: started all at once (20 node processes on a loaded 2-core machine) one took
    // longer than CLI_TIMEOUT_MS in a CI run
    const limit = pLimit(2);
    const visit = async (words: string[]): Promise<void> => {
      const r = await limit(() => cli([...words, '--help']));
      const what = `envapi ${[...words, '--help'].join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      expect(r.code, what).toBe(0);
      expect(r.stdout, what).toMatch(/^Usage: envapi/m);
      seen.push(words.join(' '));
      await Promise.all(commandsIn(r.stdout).map((c) => visit([...words, c])));
    };
    await visit([]);
    expect(seen).toEqual(
      expect.arrayContaining([
        '',
        'serve',
        'migrate',
        'bootstrap',
        'orgs list',
        'orgs create',
        'orgs add-member',
        'projects create',
        'users create',
        'users list',
        'keys create',
        'keys list',
        'keys revoke',
        'plugins catalog',
        'plugins install',
      ]),
    );
  }, 180_000);

  it('an unknown command exits non-zero', async () => {
    const r = await cli(['no-such-command']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown command/i);
  }, 60_000);
});
