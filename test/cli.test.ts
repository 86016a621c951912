/**
 * The real thing, as a user runs it: the `envapi` command (`node bin/envapi.js`, the compiled CLI
 * in dist/) and `npm start` (`node --max-semi-space-size=8 bin/envapi.js serve`), as child
 * processes on a temporary data directory (SQLite: DATA_DIR / `--data-dir`) or, in the PostgreSQL
 * pass, on a fresh PostgreSQL schema (DATABASE_URL / `--database-url`), dropped afterwards; the
 * README's command lines in order; `npm run demo:plugins`; and bin/envapi.js's rule for rebuilding
 * dist/, on a scratch project (SQLite pass only: no store involved).
 *
 * Bounds: a child process gets CLI_TIMEOUT_MS (minutes, not seconds: the machine may be loaded, and
 * a command may first wait for a build of dist/); no test asserts a duration (speed is measured by
 * `npm run bench:cli`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpPgSchema, usesPostgres } from './helpers/pg.js';
import { freePort, ROOT, spawnListening, type Exit, type ListeningProcess } from './helpers/process.js';
import { childEnv as storelessEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

const BIN = path.join(ROOT, 'bin', 'envapi.js');
const EXAMPLE = 'examples/hedgebox-events.jsonl';
const CLI_TIMEOUT_MS = 180_000;
const T = 2 * CLI_TIMEOUT_MS;
const KEY_RE = /\b(phx_[A-Za-z0-9]+)\b/;
const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Children still running, killed in afterAll whatever happened. */
const children = new Set<ChildProcess>();
/** Stores made by this file, removed (directory, PostgreSQL schema) in afterAll. */
const locations: TestStoreLocation[] = [];

async function newStore(): Promise<TestStoreLocation> {
  const location = await createTestStoreLocation('envapi-cli-test-');
  locations.push(location);
  return location;
}

/** The environment of a child: ours, without anything that would pick another store or port, then `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = storelessEnv(extra);
  if (!('PORT' in extra)) delete env.PORT;
  delete env.HOST;
  return env;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <argv>` in the project root to completion (killed after CLI_TIMEOUT_MS). */
function node(argv: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${argv.join(' ')} did not finish within ${CLI_TIMEOUT_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `envapi <args>` (node bin/envapi.js); with a store, on that store (`--data-dir DIR`, or DATABASE_URL on PostgreSQL). */
function cli(args: string[], store?: TestStoreLocation, env: Record<string, string> = {}): Promise<Run> {
  return node([BIN, ...(store?.cliArgs ?? []), ...args], childEnv({ ...(store?.cliEnv ?? {}), ...env }));
}

/** `envapi <args>` expecting exit 0. */
async function ok(args: string[], store?: TestStoreLocation): Promise<Run> {
  const r = await cli(args, store);
  expect(r.code, `envapi ${args.join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
  return r;
}

/** `envapi <args> --json` on a store, expecting exit 0; the parsed document. */
async function cliJson<T>(store: TestStoreLocation, args: string[]): Promise<T> {
  return JSON.parse((await ok([...args, '--json'], store)).stdout) as T;
}

async function api(url: string, key: string, p: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${key}`);
  return fetch(url + p, { ...init, headers });
}

interface RunningServer extends ListeningProcess {
  stop(): Promise<Exit>;
}

/** What `npm start` runs (`node --max-semi-space-size=8 bin/envapi.js serve`), on `store`, PORT 0; resolves once it listens. */
async function startServer(store: TestStoreLocation): Promise<RunningServer> {
  const server = await spawnListening(['--max-semi-space-size=8', BIN, 'serve'], childEnv({ ...store.env, PORT: '0' }), {
    timeoutMs: CLI_TIMEOUT_MS,
    track: (child) => {
      children.add(child);
      child.once('exit', () => children.delete(child));
    },
  });
  return { ...server, stop: () => (server.proc.kill('SIGTERM'), server.exited) };
}

const running = (s: RunningServer | undefined): s is RunningServer => !!s && s.proc.exitCode === null && s.proc.signalCode === null;

beforeAll(async () => {
  // dist/ built once here (or found fresh), so that no test below waits for a build; when the
  // sources do not compile, the commands below run from them with tsx (bin/envapi.js), slower
  const r = await node([BIN, 'build'], childEnv({}));
  if (r.code !== 0) console.warn(`envapi build failed; the CLI runs from the sources:\n${r.stdout}${r.stderr}`);
}, T);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const location of locations) await location.cleanup();
});

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

  it('prints its URL and a phx_ key on first start; the key lists project 1’s frontend app configs', async () => {
    server = await startServer(store);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).not.toMatch(/:0$/);
    expect(server.stdout()).toContain(`store: ${store.dialect} `);
    bootstrapKey = KEY_RE.exec(server.stdout())?.[1] ?? '';
    expect(bootstrapKey, server.stdout()).not.toBe('');
    const res = await api(server.url, bootstrapKey, LIST);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ count: 0, next: null, previous: null, results: [] });
  }, T);

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

  it('refuses requests without a key, and stops on SIGTERM with exit code 0', async () => {
    expect((await fetch(server!.url + LIST)).status).toBe(401);
    expect(await server!.stop(), server!.output()).toEqual({ code: 0, signal: null });
  }, T);

  it('a second start on the same store prints no new key, and the old key still works', async () => {
    server = await startServer(store);
    expect(KEY_RE.test(server.stdout()), server.stdout()).toBe(false);
    expect(server.stdout()).not.toMatch(/Applied migrations/);
    expect((await api(server.url, bootstrapKey, LIST)).status).toBe(200);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
  }, T);

  it('envapi --data-dir/--database-url DIR serve --port 0 serves that store', async () => {
    const other = await newStore();
    const storeArgs = other.pg ? ['--database-url', other.pg.url] : ['--data-dir', other.dir];
    const s = await spawnListening([BIN, ...storeArgs, 'serve', '--port', '0'], childEnv({}), { timeoutMs: CLI_TIMEOUT_MS, track: (c) => children.add(c) });
    try {
      expect(s.stdout()).toContain(`store: ${other.dialect} `);
      expect((await api(s.url, KEY_RE.exec(s.stdout())![1]!, LIST)).status).toBe(200);
    } finally {
      s.proc.kill('SIGTERM');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    }
  }, T);
});

describe('envapi administration commands', () => {
  let store: TestStoreLocation;
  let server: RunningServer;
  let bootstrapKey: string;

  beforeAll(async () => {
    store = await newStore();
    server = await startServer(store);
    bootstrapKey = KEY_RE.exec(server.stdout())![1]!;
  }, T);
  afterAll(async () => {
    if (running(server)) await server.stop();
  });

  interface KeyJson {
    id: string;
    user_id: number;
    mask_value: string;
    scopes: string[];
    scoped_teams: number[] | null;
    created_at: string;
    key?: string;
  }
  let user: { id: number; uuid: string; email: string };
  let org: { id: string; name: string };
  let created: KeyJson;

  it('--version and -V print package.json’s version', async () => {
    for (const flag of ['--version', '-V']) expect((await ok([flag])).stdout.trim()).toBe(VERSION);
  }, T);

  it('users create --json prints the new user; an email that exists fails with a message', async () => {
    user = await cliJson(store, ['users', 'create', '--email', 'x@y.z']);
    expect(user).toMatchObject({ email: 'x@y.z', is_active: true, id: expect.any(Number) });
    expect(user.uuid).toMatch(/^[0-9a-f-]{36}$/);
    const again = await cli(['users', 'create', '--email', 'x@y.z', '--json'], store);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists/);
    const orgs = await cliJson<Array<{ id: string; name: string }>>(store, ['orgs', 'list']);
    expect(orgs.map((o) => o.name)).toEqual(['Default Organization']);
    org = orgs[0]!;
  }, T);

  it('keys create prints the key once with its id and “shown this once”; --quiet only the key; --json the record', async () => {
    const human = await ok(['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read', '--projects', '1'], store);
    const id = /Personal API key ([0-9a-f-]{36}) created for x@y\.z/.exec(human.stdout)?.[1];
    expect(id, human.stdout).toBeDefined();
    expect(human.stdout).toMatch(/shown this once/);
    expect(human.stdout).toMatch(KEY_RE);
    const quiet = await ok(['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read', '--quiet'], store);
    expect(quiet.stdout).toMatch(/^phx_[A-Za-z0-9]+\n$/);
    created = await cliJson<KeyJson>(store, ['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read', '--projects', '1']);
    expect(created.key).toMatch(/^phx_[A-Za-z0-9]+$/);
    expect(created).toMatchObject({ user_id: user.id, scopes: ['plugin:read'], scoped_teams: [1] });
    expect(created.mask_value).toBe(`phx_...${created.key!.slice(-4)}`);
    expect(created.created_at).toMatch(/Z$/);
    const list = await cliJson<KeyJson[]>(store, ['keys', 'list', '--user', 'x@y.z']);
    expect(list.map((k) => k.id)).toEqual(expect.arrayContaining([id, created.id]));
  }, T);

  it('a key of a user outside the organization gets 403; orgs add-member (level printed by name) gives it access', async () => {
    const refused = await api(server.url, created.key!, LIST);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toBe("You don't have access to the project.");
    const added = await ok(['orgs', 'add-member', '--user', 'x@y.z'], store);
    expect(added.stdout.trim()).toBe('x@y.z is now member of "Default Organization".');
    const m = await cliJson(store, ['orgs', 'add-member', '--user', 'x@y.z', '--level', 'admin']);
    expect(m).toMatchObject({ organization_id: org.id, user_id: user.id, level: 8, level_name: 'admin' });
    expect((await api(server.url, created.key!, LIST)).status).toBe(200);
  }, T);

  it('the key gets 403 on a plugin:write operation and on a project it is not limited to', async () => {
    const write = await api(server.url, created.key!, LIST, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ plugin: 1, order: 1 }) });
    expect(write.status).toBe(403);
    expect(await write.json()).toEqual({ type: 'authentication_error', code: 'permission_denied', detail: "API key missing required scope 'plugin:write'", attr: null });
    const p = await cliJson<{ id: number }>(store, ['projects', 'create', '--name', 'Limited out']);
    const res = await api(server.url, created.key!, `/api/environments/${p.id}/pipeline_frontend_apps_configs/`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toBe(`API key does not have access to the requested project: ID ${p.id}.`);
  }, T);

  it('keys list shows only masked keys; keys revoke <id> revokes one (then 401), a second time fails', async () => {
    const r = await ok(['keys', 'list', '--json'], store);
    for (const secret of [created.key!, bootstrapKey, 'sha256$']) expect(r.stdout).not.toContain(secret);
    const list = JSON.parse(r.stdout) as KeyJson[];
    for (const k of list) {
      expect(k.mask_value).toMatch(/^phx_\.\.\.[A-Za-z0-9]{4}$/);
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('secure_value');
    }
    expect(list.find((k) => k.id === created.id)?.mask_value).toBe(created.mask_value);
    await ok(['keys', 'revoke', created.id], store);
    const res = await api(server.url, created.key!, LIST);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('authentication_failed');
    expect((await api(server.url, bootstrapKey, LIST)).status).toBe(200);
    const again = await cli(['keys', 'revoke', created.id], store);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(created.id);
  }, T);

  it('with several organizations, a command that needs one says how to name it; --org NAME and --org ID both work', async () => {
    const acme = await cliJson<{ id: string; name: string }>(store, ['orgs', 'create', '--name', 'Acme']);
    const r = await cli(['projects', 'create', '--name', 'Where'], store);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/There are 2 organizations: name one with --org NAME or --org ID/);
    for (const o of [org, acme]) expect(r.stderr).toContain(`${o.id}  "${o.name}"`);
    const byName = await cliJson<{ organization_id: string; access_control: boolean }>(store, ['projects', 'create', '--name', 'P', '--private', '--org', 'acme']);
    expect(byName).toMatchObject({ organization_id: acme.id, access_control: true });
    const byId = await cliJson<{ organization_id: string }>(store, ['projects', 'create', '--name', 'Q', '--org', org.id]);
    expect(byId.organization_id).toBe(org.id);
    const unknown = await cli(['plugins', 'install', 'customerio', '--org', 'Nope'], store);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No organization "Nope"\. Name one with --org NAME or --org ID/);
  }, T);

  it('projects list prints every project with its organization and project token; --org filters', async () => {
    const all = await cliJson<Array<{ id: number; name: string; organization_name: string; api_token: string; access_control: boolean }>>(store, ['projects', 'list']);
    expect(all.map((p) => p.name)).toEqual(['Default project', 'Limited out', 'P', 'Q']);
    expect(all.find((p) => p.name === 'P')).toMatchObject({ organization_name: 'Acme', access_control: true });
    for (const p of all) expect(p.api_token).toMatch(/^phc_/);
    const human = await ok(['projects', 'list', '--org', 'Acme'], store);
    expect(human.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^\d+ {2}P {2}\(organization "Acme"\) {2}token phc_\S+ {2}private$/)]);
    const res = await api(server.url, bootstrapKey, '/api/projects/');
    const page = (await res.json()) as { results: Array<{ id: number; api_token: string }> };
    for (const p of page.results) expect(all.find((x) => x.id === p.id)?.api_token).toBe(p.api_token);
  }, T);

  it('plugins catalog --json prints the built-in catalog; unknown scopes and users fail with messages', async () => {
    const catalog = await cliJson<Array<{ key: string; url: string }>>(store, ['plugins', 'catalog']);
    expect(catalog.map((p) => p.key)).toEqual(expect.arrayContaining(['customerio', 'notification-bar']));
    for (const p of catalog) expect(p.url).toMatch(/^https?:\/\//);
    const scope = await cli(['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read,bogus:scope', '--json'], store);
    expect(scope.code).not.toBe(0);
    expect(scope.code).not.toBeNull();
    expect(scope.stderr).toContain('bogus:scope');
    const nobody = await cli(['keys', 'create', '--user', 'nobody@example.com', '--scopes', 'plugin:read'], store);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('nobody@example.com');
    for (const r of [scope, nobody]) expect(r.stdout).not.toMatch(KEY_RE);
  }, T);

  it('npm run demo:plugins reads PORT, creates five configs, and a second run creates none', async () => {
    const demo = (): Promise<Run> => node(['--import', 'tsx', 'scripts/demo-plugin-configs.ts', '--key', bootstrapKey], childEnv({ PORT: new URL(server.url).port }));
    const first = await demo();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout.match(/^created config \d+/gm)).toHaveLength(5);
    const second = await demo();
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).not.toMatch(/^created/m);
    expect(second.stdout.match(/^exists: config \d+/gm)).toHaveLength(5);
    const frontend = (await (await api(server.url, bootstrapKey, `${LIST}?limit=100`)).json()) as { count: number };
    const destinations = (await (await api(server.url, bootstrapKey, '/api/environments/1/pipeline_destination_configs/?limit=100')).json()) as { count: number };
    expect(frontend.count + destinations.count).toBe(5);
  }, T);

  it('npm run demo:plugins names the URL it tried when no server answers', async () => {
    const port = await freePort();
    const r = await node(['--import', 'tsx', 'scripts/demo-plugin-configs.ts', '--key', bootstrapKey], childEnv({ PORT: String(port) }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not reach the server at http://127.0.0.1:${port}`);
  }, T);
});

describe('events: the example file, progress lines, demo --output', () => {
  let store: TestStoreLocation;
  beforeAll(async () => {
    store = await newStore();
    await ok(['bootstrap'], store);
  }, T);

  it(`import events ${EXAMPLE} prints progress lines on stderr when it is not a terminal, and the summary on stdout`, async () => {
    const r = await ok(['import', 'events', EXAMPLE, '--project', '1'], store);
    expect(r.stdout).toMatch(/^Imported examples\/hedgebox-events\.jsonl into project 1: 200 rows read, 200 inserted, 0 skipped\.$/m);
    expect(r.stderr).toMatch(/^Checking {2}200 rows \| \d+s$/m);
    expect(r.stderr).toMatch(/^Importing 100% \| 200\/200 events \| \d+s elapsed, (\d+s|\?) left$/m);
    expect(r.stderr).not.toContain('\u001b['); // no terminal control sequences in a log
    const json = await ok(['import', 'events', EXAMPLE, '--project', '1', '--json'], store);
    expect(JSON.parse(json.stdout)).toMatchObject({ rows_read: 200, inserted: 0, skipped: 200 });
    expect(json.stderr).not.toMatch(/Importing|Checking/);
  }, T);

  it(`demo --output writes the events as JSON Lines; ${EXAMPLE} is the file its README command gives`, async () => {
    const file = path.join(store.dir, 'demo.jsonl');
    const r = await ok(['demo', '--events', '200', '--seed', '42', '--now', '2026-01-15T12:00:00Z', '--days', '7', '--output', file]);
    expect(r.stdout).toMatch(/^Wrote 200 events to /);
    expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(path.join(ROOT, EXAMPLE), 'utf8'));
    const refused = await cli(['demo', '--events', '5']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--project ID\), or a file to write \(--output FILE\)/);
  }, T);
});

describe('the README’s envapi command lines, in order, on a fresh store', () => {
  /** `npx envapi …` lines of README.md, in order, without their comments. */
  function readmeLines(): string[] {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    return [...readme.matchAll(/^npx envapi (.*)$/gm)].map((m) => m[1]!.replace(/\s+#\s.*$/, '').trim());
  }
  /** Shell words: double-quoted strings or runs of non-blanks. */
  const words = (line: string): string[] => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);

  it('each exits 0 (after npm start’s set-up, `envapi bootstrap`; <id> is the key just created, FILE the example, demo events 2,000 instead of 100,000)', async () => {
    const lines = readmeLines();
    expect(lines.length).toBeGreaterThanOrEqual(8);
    const store = await newStore();
    await ok(['bootstrap'], store);
    let lastKeyId = '';
    for (const line of lines) {
      const args = words(line).map((w) => (w === '<id>' ? lastKeyId : w === 'FILE' ? EXAMPLE : w === '100000' ? '2000' : w));
      const r = await cli(args, store);
      expect(r.code, `npx envapi ${line}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
      lastKeyId = /Personal API key (\S+) created/.exec(r.stdout)?.[1] ?? lastKeyId;
    }
  }, 4 * T);
});

describe('envapi --help', () => {
  /** Subcommand names listed under "Commands:" in a commander help text (without `help`). */
  function commandsIn(help: string): string[] {
    const section = help.split(/^Commands:\s*$/m)[1] ?? '';
    return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
  }

  it('the help of every command exits 0 and prints Usage', async () => {
    const seen: string[] = [];
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
    const expected = ['', 'serve', 'migrate', 'bootstrap', 'build', 'orgs list', 'orgs create', 'orgs add-member', 'projects create', 'projects list'];
    expected.push('users create', 'users list', 'keys create', 'keys list', 'keys revoke', 'plugins catalog', 'plugins install', 'import events', 'demo');
    expect(seen).toEqual(expect.arrayContaining(expected));
  }, 4 * T);

  it('an unknown command exits non-zero', async () => {
    const r = await cli(['no-such-command']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown command/i);
  }, T);
});

/** bin/envapi.js's exports (a JavaScript module without types). */
interface BinModule {
  checkBuild(o?: { root?: string }): { fresh: boolean; reason: string };
  ensureBuild(o?: { root?: string; log?: (line: string) => void }): { ok: boolean; built: boolean; reason: string };
}

describe.skipIf(usesPostgres())('bin/envapi.js: when dist/ is rebuilt (a scratch project)', () => {
  let bin: BinModule;
  let root: string;
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  const build = (): { ok: boolean; built: boolean; reason: string; log: string[] } => {
    const log: string[] = [];
    return { ...bin.ensureBuild({ root, log: (l) => log.push(l) }), log };
  };
  const compiled = (rel: string): string => fs.readFileSync(path.join(root, 'dist', rel), 'utf8');

  beforeAll(async () => {
    bin = (await import(pathToFileURL(BIN).href)) as BinModule;
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-build-test-'));
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], skipLibCheck: true, noEmit: true };
    write('tsconfig.json', JSON.stringify({ compilerOptions }));
    const build = { noEmit: false, outDir: 'dist', rootDir: '.', incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo' };
    write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', compilerOptions: build, include: ['server', 'generated'] }));
    write('package.json', '{"type": "module"}');
    write('server/a.ts', 'export const answer: number = 41;\n');
    write('server/b.ts', "import { answer } from './a.js';\nexport const next = answer + 1;\n");
    write('generated/types.d.ts', 'export type Id = number;\n');
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('builds when dist/ was never built, then not again while nothing changed', () => {
    const first = build();
    expect(first).toMatchObject({ ok: true, built: true });
    expect(first.log[0]).toMatch(/^envapi: building dist\/ \(dist\/ was never built by envapi; /);
    expect(compiled('server/b.js')).toContain('answer + 1');
    expect(build()).toEqual({ ok: true, built: false, reason: 'up to date', log: [] });
  }, T);

  it('a touch or a rewrite with the same bytes does not rebuild; a changed byte does, once', () => {
    const a = path.join(root, 'server/a.ts');
    fs.utimesSync(a, new Date(), new Date(Date.now() + 5_000));
    fs.writeFileSync(path.join(root, 'server/b.ts'), fs.readFileSync(path.join(root, 'server/b.ts')));
    expect(bin.checkBuild({ root }).fresh).toBe(true);
    expect(build().built).toBe(false);
    fs.writeFileSync(a, 'export const answer: number = 42;\n');
    expect(bin.checkBuild({ root })).toEqual({ fresh: false, reason: 'server/a.ts changed' });
    expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/a.ts changed' });
    expect(compiled('server/a.js')).toContain('= 42');
    expect(build().built).toBe(false);
  }, T);

  it('a new source, a removed source, a changed tsconfig or a deleted output rebuilds', () => {
    write('server/c.ts', 'export const c = 1;\n');
    expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/c.ts is new' });
    expect(fs.existsSync(path.join(root, 'dist/server/c.js'))).toBe(true);
    fs.rmSync(path.join(root, 'server/c.ts'));
    expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/c.ts was removed' });
    write('tsconfig.build.json', fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8').replace('"rootDir"', '"newLine":"lf","rootDir"'));
    expect(build()).toMatchObject({ ok: true, built: true, reason: 'tsconfig.build.json changed' });
    fs.rmSync(path.join(root, 'dist/server/b.js'));
    expect(build()).toMatchObject({ ok: true, built: true, reason: 'dist/server/b.js is missing' });
    expect(compiled('server/b.js')).toContain('answer + 1');
  }, 2 * T);

  it('a failed build is reported (ok false) and remembered: the same sources are not built again; a fix builds', () => {
    write('server/a.ts', 'export const answer: number = "not a number";\n');
    expect(build()).toMatchObject({ ok: false, built: true, reason: 'tsc reported errors (above)' });
    expect(build()).toMatchObject({ ok: false, built: false, log: [] });
    write('server/a.ts', 'export const answer: number = 43;\n');
    expect(build()).toMatchObject({ ok: true, built: true });
    expect(bin.checkBuild({ root }).fresh).toBe(true);
  }, T);

  it('concurrent commands build once; a lock left by a dead process is taken over', async () => {
    write('server/a.ts', 'export const answer: number = 44;\n');
    const script = 'const m = await import(process.argv[1]); console.log(JSON.stringify(m.ensureBuild({ root: process.argv[2] })));';
    const runs = await Promise.all([1, 2].map(() => node(['--input-type=module', '-e', script, pathToFileURL(BIN).href, root], childEnv({}))));
    const outcomes = runs.map((r) => JSON.parse(r.stdout) as { ok: boolean; built: boolean });
    expect(outcomes.every((x) => x.ok)).toBe(true);
    expect(outcomes.filter((x) => x.built)).toHaveLength(1);
    expect(runs.map((r) => r.stderr.match(/^envapi: building dist/gm)?.length ?? 0).reduce((x, y) => x + y)).toBe(1);
    const dead = await node(['-e', 'console.log(process.pid)'], childEnv({}));
    write('dist/.envapi-build.lock/owner', dead.stdout.trim());
    write('server/a.ts', 'export const answer: number = 45;\n');
    expect(build()).toMatchObject({ ok: true, built: true });
    expect(fs.existsSync(path.join(root, 'dist/.envapi-build.lock'))).toBe(false);
  }, 2 * T);
});
