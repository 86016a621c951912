/**
 * The `envapi` administration commands as a user runs them (`node bin/envapi.js`, the compiled CLI
 * in dist/) on the store of a running server (test/helpers/cli.ts): `--version`, users, keys
 * (created, shown once, listed masked, revoked), organizations and their members, projects (with
 * their tokens, `--org` by name or id), the plugin catalog, the messages of refused commands
 * (a malformed e-mail address is bad usage, exit 2), and
 * `npm run demo:plugins` against the server. Each command's effect is checked through the API.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  childEnv,
  cli,
  cliJson,
  KEY_RE,
  LIST,
  newStore,
  node,
  ok,
  running,
  startServer,
  T,
  useCliProcesses,
  type Run,
  type RunningServer,
} from '../helpers/cli.js';
import { freePort, ROOT } from '../helpers/process.js';
import type { TestStoreLocation } from '../helpers/store.js';

const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

useCliProcesses();

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

  it(
    '--version and -V print package.json’s version',
    async () => {
      for (const flag of ['--version', '-V']) expect((await ok([flag])).stdout.trim()).toBe(VERSION);
    },
    T,
  );

  it(
    'users create --json prints the new user; an email that exists fails with a message',
    async () => {
      user = await cliJson(store, ['users', 'create', '--email', 'x@y.z']);
      expect(user).toMatchObject({ email: 'x@y.z', is_active: true, id: expect.any(Number) });
      expect(user.uuid).toMatch(/^[0-9a-f-]{36}$/);
      const again = await cli(['users', 'create', '--email', 'x@y.z', '--json'], store);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/exists/);
      const orgs = await cliJson<Array<{ id: string; name: string }>>(store, ['orgs', 'list']);
      expect(orgs.map((o) => o.name)).toEqual(['Default Organization']);
      org = orgs[0]!;
    },
    T,
  );

  it(
    'users create refuses a malformed e-mail address as bad usage (exit 2) and creates nothing',
    async () => {
      const before = await cliJson<unknown[]>(store, ['users', 'list']);
      const refused: Array<[string, string]> = [
        ['bad', 'it has no @'],
        ['ana@example', 'the domain "example" has no dot (e.g. example.com)'],
        ['ana @example.com', 'it contains a space'],
        ['@example.com', 'nothing comes before the @'],
        ['ana@@example.com', 'it has more than one @'],
        ['ana..b@example.com', '"ana..b" before the @ has a character an address cannot have'],
        ['ana@exa_mple.com', '"exa_mple.com" is not a domain name'],
      ];
      for (const [email, why] of refused) {
        const r = await cli(['users', 'create', '--email', email], store);
        expect(r.code, `${email}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(
          `error: option '--email <email>' argument '${email}' is invalid. Not an e-mail address (like ana@example.com): ${why}`,
        );
        expect(r.stderr).toContain('Usage: envapi users create [options]');
      }
      expect(await cliJson<unknown[]>(store, ['users', 'list'])).toEqual(before);
    },
    T,
  );

  it(
    'keys create, keys list and orgs add-member say a malformed --user is not an e-mail address (exit 2), not that no user has it',
    async () => {
      for (const args of [
        ['keys', 'create', '--user', 'ana', '--scopes', 'plugin:read'],
        ['keys', 'list', '--user', 'ana@'],
        ['orgs', 'add-member', '--user', 'ana'],
      ]) {
        const r = await cli(args, store);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          /^error: option '--user <email-or-id>' argument 'ana@?' is invalid\. Neither a user id nor an e-mail address \(like ana@example\.com\): /,
        );
        expect(r.stderr).not.toMatch(/No user/);
        expect(r.stdout).not.toMatch(KEY_RE);
      }
    },
    T,
  );

  it(
    'keys create prints the key once with its id and “shown this once”; --quiet only the key; --json the record',
    async () => {
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
    },
    T,
  );

  it(
    'a key of a user outside the organization gets 403; orgs add-member (level printed by name) gives it access',
    async () => {
      const refused = await api(server.url, created.key!, LIST);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { detail: string }).detail).toBe("You don't have access to the project.");
      const added = await ok(['orgs', 'add-member', '--user', 'x@y.z'], store);
      expect(added.stdout.trim()).toBe('x@y.z is now member of "Default Organization".');
      const m = await cliJson(store, ['orgs', 'add-member', '--user', 'x@y.z', '--level', 'admin']);
      expect(m).toMatchObject({ organization_id: org.id, user_id: user.id, level: 8, level_name: 'admin' });
      expect((await api(server.url, created.key!, LIST)).status).toBe(200);
    },
    T,
  );

  it(
    'the key gets 403 on a plugin:write operation and on a project it is not limited to',
    async () => {
      const write = await api(server.url, created.key!, LIST, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ plugin: 1, order: 1 }),
      });
      expect(write.status).toBe(403);
      expect(await write.json()).toEqual({
        type: 'authentication_error',
        code: 'permission_denied',
        detail: "API key missing required scope 'plugin:write'",
        attr: null,
      });
      const p = await cliJson<{ id: number }>(store, ['projects', 'create', '--name', 'Limited out']);
      const res = await api(server.url, created.key!, `/api/environments/${p.id}/pipeline_frontend_apps_configs/`);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toBe(`API key does not have access to the requested project: ID ${p.id}.`);
    },
    T,
  );

  it(
    'keys list shows only masked keys; keys revoke <id> revokes one (then 401), a second time fails',
    async () => {
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
    },
    T,
  );

  it(
    'with several organizations, a command that needs one says how to name it; --org NAME and --org ID both work',
    async () => {
      const acme = await cliJson<{ id: string; name: string }>(store, ['orgs', 'create', '--name', 'Acme']);
      const r = await cli(['projects', 'create', '--name', 'Where'], store);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/There are 2 organizations: name one with --org NAME or --org ID/);
      for (const o of [org, acme]) expect(r.stderr).toContain(`${o.id}  "${o.name}"`);
      const byName = await cliJson<{ organization_id: string; access_control: boolean }>(store, [
        'projects',
        'create',
        '--name',
        'P',
        '--private',
        '--org',
        'acme',
      ]);
      expect(byName).toMatchObject({ organization_id: acme.id, access_control: true });
      const byId = await cliJson<{ organization_id: string }>(store, ['projects', 'create', '--name', 'Q', '--org', org.id]);
      expect(byId.organization_id).toBe(org.id);
      const unknown = await cli(['plugins', 'install', 'customerio', '--org', 'Nope'], store);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/No organization "Nope"\. Name one with --org NAME or --org ID/);
    },
    T,
  );

  it(
    'projects list prints every project with its organization and project token; --org filters',
    async () => {
      const all = await cliJson<Array<{ id: number; name: string; organization_name: string; api_token: string; access_control: boolean }>>(
        store,
        ['projects', 'list'],
      );
      expect(all.map((p) => p.name)).toEqual(['Default project', 'Limited out', 'P', 'Q']);
      expect(all.find((p) => p.name === 'P')).toMatchObject({ organization_name: 'Acme', access_control: true });
      for (const p of all) expect(p.api_token).toMatch(/^phc_/);
      const human = await ok(['projects', 'list', '--org', 'Acme'], store);
      expect(human.stdout.trim().split('\n')).toEqual([
        expect.stringMatching(/^\d+ {2}P {2}\(organization "Acme"\) {2}token phc_\S+ {2}private$/),
      ]);
      const res = await api(server.url, bootstrapKey, '/api/projects/');
      const page = (await res.json()) as { results: Array<{ id: number; api_token: string }> };
      for (const p of page.results) expect(all.find((x) => x.id === p.id)?.api_token).toBe(p.api_token);
    },
    T,
  );

  it(
    'plugins catalog --json prints the built-in catalog; unknown scopes and users fail with messages',
    async () => {
      const catalog = await cliJson<Array<{ key: string; url: string }>>(store, ['plugins', 'catalog']);
      expect(catalog.map((p) => p.key)).toEqual(expect.arrayContaining(['customerio', 'notification-bar']));
      for (const p of catalog) expect(p.url).toMatch(/^https?:\/\//);
      const scope = await cli(['keys', 'create', '--user', 'x@y.z', '--scopes', 'plugin:read,bogus:scope', '--json'], store);
      expect(scope.code).toBe(2);
      expect(scope.stderr).toContain('bogus:scope');
      const nobody = await cli(['keys', 'create', '--user', 'nobody@example.com', '--scopes', 'plugin:read'], store);
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toContain('nobody@example.com');
      for (const r of [scope, nobody]) expect(r.stdout).not.toMatch(KEY_RE);
    },
    T,
  );

  it(
    'npm run demo:plugins reads PORT, creates five configs, and a second run creates none',
    async () => {
      const demo = (): Promise<Run> =>
        node(['--import', 'tsx', 'scripts/demo-plugin-configs.ts', '--key', bootstrapKey], childEnv({ PORT: new URL(server.url).port }));
      const first = await demo();
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(first.stdout.match(/^created config \d+/gm)).toHaveLength(5);
      const second = await demo();
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(second.stdout).not.toMatch(/^created/m);
      expect(second.stdout.match(/^exists: config \d+/gm)).toHaveLength(5);
      const frontend = (await (await api(server.url, bootstrapKey, `${LIST}?limit=100`)).json()) as { count: number };
      const destinations = (await (
        await api(server.url, bootstrapKey, '/api/environments/1/pipeline_destination_configs/?limit=100')
      ).json()) as { count: number };
      expect(frontend.count + destinations.count).toBe(5);
    },
    T,
  );

  it(
    'npm run demo:plugins names the URL it tried when no server answers',
    async () => {
      const port = await freePort();
      const r = await node(['--import', 'tsx', 'scripts/demo-plugin-configs.ts', '--key', bootstrapKey], childEnv({ PORT: String(port) }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`could not reach the server at http://127.0.0.1:${port}`);
    },
    T,
  );
});
