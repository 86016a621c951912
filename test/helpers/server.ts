/**
 * Test harness: a real server in-process on port 0 over a fresh store (SQLite; in the PostgreSQL
 * pass a fresh PostgreSQL schema, see `usesPostgres`), with response validation on, bootstrapped
 * like a first start, and helpers to make keys, users and projects.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type AppDeps } from '../../server/app.js';
import { bootstrap, type BootstrapResult } from '../../server/bootstrap.js';
import { createEventsReads, type ReadPoolOptions } from '../../server/read-pool/index.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { clickhouseEventsOf, openClickHouseEvents, useClickHouseEvents } from '../../server/storage/events/index.js';
import {
  AccountsRepository,
  OrganizationLevel,
  type Organization,
  type Team,
  type User,
} from '../../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../../server/storage/repositories/api-keys.js';
import { pino, type Logger } from 'pino';
import { createClient, type EnvApiClient } from '../../client/index.js';
import { testClickHouseDatabase, testEventsStore, usesClickHouse } from './clickhouse.js';
import { createTestPgSchema, usesPostgres, type TestPgSchema } from './pg.js';

export { usesClickHouse, usesPostgres };

/** A running test server and what its bootstrap created. */
export interface TestServer {
  url: string;
  store: Store;
  /** bootstrap: organization, project (team) 1, owner user, key with scope `*` */
  boot: Required<Pick<BootstrapResult, 'organization' | 'team' | 'user' | 'key' | 'plugins'>>;
  accounts: AccountsRepository;
  /** a client with the bootstrap key (scope `*`) */
  client: EnvApiClient;
  /** a new key for `user` (default: the owner) with these scopes, optionally limited to projects */
  key(scopes: string[], opts?: { user?: User; projects?: number[] }): Promise<string>;
  /** a client for a key */
  clientFor(key: string): EnvApiClient;
  /** a new user in an organization at a level (default: the bootstrap organization, member) */
  user(opts?: { email?: string; organization?: Organization; level?: number }): Promise<User>;
  /** a new organization with one project, its owner, and the catalog installed if asked */
  otherOrganization(): Promise<{ organization: Organization; team: Team; owner: User; key: string }>;
  /** raw fetch with a key (for non-JSON answers, missing slashes, bad bodies) */
  fetch(pathAndQuery: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** `fetch`, then the body parsed as JSON; throws with the path, status and body unless the answer is 200 */
  json(pathAndQuery: string, init?: RequestInit & { key?: string | null }): Promise<unknown>;
  /** the rows a HogQLQuery answers in project `teamId` (the query endpoint, bootstrap key); throws unless 200 */
  hogql(teamId: number, query: string): Promise<unknown[][]>;
  /** the store's schema, in the PostgreSQL pass */
  pg: TestPgSchema | undefined;
  close(): Promise<void>;
}

/** Options of `startTestServer`. */
export interface TestServerOptions {
  /** `clickhouse`: the events on embedded ClickHouse (chDB) in the server's data directory (default: TEST_EVENTS_STORE, else the row store) */
  eventsStore?: 'row' | 'clickhouse';
  /** validate responses against the spec (default true; production's setting is false) */
  validateResponses?: boolean;
  /** the events read pool (default one worker thread) */
  readPool?: ReadPoolOptions;
  /** PostgreSQL: what the store is told of an idle connection that failed (`StoreListeners.onConnectionError`) */
  onConnectionError?: (err: Error) => void;
  /** the capture queue's options (server/capture/queue.ts) */
  capture?: AppDeps['capture'];
  /** the `/api/environments/` deprecation headers (default: on, PostHog's sunset day) */
  environmentsDeprecation?: AppDeps['environmentsDeprecation'];
}

let seq = 0;

/** A logger that writes nothing: what in-process test apps pass as `logger` (the server's default logs to stdout). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * Starts a server on a fresh store: SQLite in a temp directory, or a fresh schema in the PostgreSQL
 * pass. Responses are validated against the spec unless `validateResponses: false` (production's setting).
 * The events list and values run in a read pool of one worker thread unless `readPool` says otherwise.
 */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-test-'));
  const pgSchema = usesPostgres() ? await createTestPgSchema() : undefined;
  const store = pgSchema
    ? openStore({ databaseUrl: pgSchema.url }, { onConnectionError: opts.onConnectionError })
    : openStore({ dataDir: dir });
  await migrateToLatest(store);
  const chDatabase = (opts.eventsStore ?? testEventsStore()) === 'clickhouse' ? await testClickHouseDatabase() : undefined;
  if (chDatabase) useClickHouseEvents(store, await openClickHouseEvents(chDatabase.target, { budgetMs: 30_000 }));
  const b = await bootstrap(store);
  if (!b.created || !b.organization || !b.team || !b.user || !b.key || !b.plugins) throw new Error('bootstrap did not run');
  const boot = { organization: b.organization, team: b.team, user: b.user, key: b.key, plugins: b.plugins };
  const errors: unknown[] = [];
  // the events reads run in a worker pool of one thread, as `npm start` runs them (with more threads)
  const eventsReads = createEventsReads(store, { threads: 1, ...opts.readPool });
  const app = createApp({
    store,
    validateResponses: opts.validateResponses ?? true,
    rateLimit: false,
    logger: silentLogger(),
    onServerError: (err) => errors.push(err),
    eventsReads,
    capture: opts.capture,
    environmentsDeprecation: opts.environmentsDeprecation,
  });
  const server = await new Promise<Server>((resolve) => {
    // the server `npm start` uses (server/main.ts)
    const s = http.createServer(app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accounts = new AccountsRepository(store.db);
  const keys = new ApiKeysRepository(store.db);
  const clientFor = (key: string) => createClient({ baseUrl: url, apiKey: key });

  const t: TestServer = {
    url,
    store,
    boot,
    accounts,
    client: clientFor(boot.key),
    clientFor,
    async key(scopes, opts = {}) {
      const { key } = await keys.create({
        user_id: (opts.user ?? boot.user).id,
        label: 'test',
        scopes,
        scoped_teams: opts.projects ?? null,
      });
      return key;
    },
    async user(opts = {}) {
      seq += 1;
      const user = await accounts.createUser({ email: opts.email ?? `user${seq}-${Date.now()}@example.com`, first_name: `User${seq}` });
      await accounts.upsertMembership((opts.organization ?? boot.organization).id, user.id, opts.level ?? OrganizationLevel.MEMBER);
      return user;
    },
    async otherOrganization() {
      seq += 1;
      const organization = await accounts.createOrganization({ name: `Other Org ${seq}` });
      const team = await accounts.createTeam({ organization_id: organization.id, name: `Other project ${seq}` });
      const owner = await accounts.createUser({ email: `owner${seq}-${Date.now()}@other.example.com` });
      await accounts.upsertMembership(organization.id, owner.id, OrganizationLevel.OWNER);
      await accounts.setCurrentTeam(owner.id, team.id);
      const { key } = await keys.create({ user_id: owner.id, label: 'other', scopes: ['*'], scoped_teams: null });
      return { organization, team, owner, key };
    },
    async fetch(pathAndQuery, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? boot.key : init.key;
      if (key) headers.set('Authorization', `Bearer ${key}`);
      return fetch(url + pathAndQuery, { ...init, headers });
    },
    async json(pathAndQuery, init = {}) {
      const res = await t.fetch(pathAndQuery, init);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${pathAndQuery} answered ${res.status}: ${text}`);
      return JSON.parse(text) as unknown;
    },
    async hogql(teamId, query) {
      const body = JSON.stringify({ query: { kind: 'HogQLQuery', query } });
      const r = (await t.json(`/api/environments/${teamId}/query/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })) as { results: unknown[][] };
      return r.results;
    },
    pg: pgSchema,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await eventsReads.close();
      await clickhouseEventsOf(store)?.close();
      await chDatabase?.drop();
      await store.close();
      await pgSchema?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
      if (errors.length) throw new Error(`the server logged ${errors.length} unexpected error(s): ${String(errors[0])}`);
    },
  };
  return t;
}
