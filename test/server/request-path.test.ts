/**
 * The request path (server/app.ts draws it), through real HTTP: repeated requests are
 * authenticated, validated and answered as the first; the production settings (request-only spec,
 * no response validation) decide as the full ones and send exact bodies; a spec the validator
 * cannot load answers its own error; the rate limiter counts after authentication and before
 * request validation; body errors wait for the key; the request log writes one line per request
 * with the method as sent, and marks a response whose connection closed before it was sent.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { bootstrap } from '../../server/bootstrap.js';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import type { RateLimitConfig } from '../../server/http/rate-limit.js';
import { listOperations, loadSpec, withoutResponseSchemas } from '../../server/http/spec.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { createTestPgSchema, usesPostgres } from '../helpers/pg.js';
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js';

/** How long a test waits for something that happens after an answer (a log line); a bound for a hang, not for speed. */
const EVENTUALLY = { timeout: 10_000, interval: 10 };

async function listen(app: express.Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A fresh store (SQLite, or a PostgreSQL schema in the PostgreSQL pass), bootstrapped. */
async function freshStore(): Promise<{ store: Store; key: string; projectId: number; cleanup(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-path-'));
  const pg = usesPostgres() ? await createTestPgSchema() : undefined;
  const store = pg ? openStore({ databaseUrl: pg.url }) : openStore({ dataDir: dir });
  await migrateToLatest(store);
  const b = await bootstrap(store);
  if (!b.key || !b.team) throw new Error('bootstrap did not run');
  return {
    store,
    key: b.key,
    projectId: b.team.id,
    async cleanup() {
      await store.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A frontend-app config of the notification bar in the test server's project; its id. */
async function createFrontendConfig(t: TestServer, config: Record<string, unknown> = {}): Promise<number> {
  const catalogUrl = PLUGIN_CATALOG.find((p) => p.key === 'notification-bar')!.url;
  const plugin = t.boot.plugins.find((p) => p.url === catalogUrl)!.id;
  const created = await t.fetch(`/api/environments/${t.boot.team.id}/pipeline_frontend_apps_configs/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ plugin, enabled: true, order: 1, config }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { id: number }).id;
}

describe('repeated requests', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('every repetition of a path is authenticated, validated and answered as the first', async () => {
    const team = t.boot.team.id;
    const id = await createFrontendConfig(t);
    const retrieve = `/api/environments/${team}/pipeline_frontend_apps_configs/${id}/`;
    for (let i = 0; i < 3; i++) {
      const ok = await t.fetch(retrieve);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { id: number }).id).toBe(id);
      expect((await t.fetch(retrieve, { key: null })).status).toBe(401);
      // a non-integer id is no object (404, as DRF), a bad query integer a validation error
      expect((await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/abc/`)).status).toBe(404);
      const bad = await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/?limit=abc`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ type: 'validation_error', attr: 'limit' });
      expect((await t.fetch(retrieve, { method: 'DELETE' })).status).toBe(405);
      expect(
        (
          await t.fetch(`/api/environments/${team}/pipeline_destination_configs/999999/`, {
            method: 'PATCH',
            headers: { 'Content-Type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(404);
      expect((await t.fetch(`/api/environments/${team}/no_such_thing/`)).status).toBe(404);
    }
  });

  it('each request gets its own path parameters: two ids on one path template are told apart', async () => {
    const team = t.boot.team.id;
    const a = await createFrontendConfig(t, { notification: 'first' });
    const b = await createFrontendConfig(t, { notification: 'second' });
    for (let i = 0; i < 2; i++) {
      for (const [id, text] of [
        [a, 'first'],
        [b, 'second'],
      ] as const) {
        const body = (await t.json(`/api/environments/${team}/pipeline_frontend_apps_configs/${id}/`)) as {
          id: number;
          config: { notification: string };
        };
        expect([body.id, body.config.notification]).toEqual([id, text]);
      }
    }
  });

  it('the path without its trailing slash is served, with its query', async () => {
    const team = t.boot.team.id;
    const res = await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs?limit=1`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { results: unknown[]; next: string | null };
    expect(body.results.length).toBeLessThanOrEqual(1);
  });

  it('a malformed body waits for the key: 401 without one, 400 parse_error with it', async () => {
    const url = `/api/environments/${t.boot.team.id}/pipeline_frontend_apps_configs/`;
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"plugin": 1,' };
    const anonymous = await t.fetch(url, { ...init, key: null });
    expect(anonymous.status).toBe(401);
    const keyed = await t.fetch(url, init);
    expect(keyed.status).toBe(400);
    expect(await keyed.json()).toMatchObject({ type: 'invalid_request', code: 'parse_error' });
  });
});

describe('answers without response validation (production)', () => {
  let prod: TestServer;
  beforeAll(async () => {
    prod = await startTestServer({ validateResponses: false });
  });
  afterAll(() => prod.close());

  it('serialized and object bodies are sent with the JSON content type and their exact length', async () => {
    const team = prod.boot.team.id;
    const catalogUrl = PLUGIN_CATALOG.find((p) => p.key === 'notification-bar')!.url;
    const plugin = prod.boot.plugins.find((p) => p.url === catalogUrl)!.id;
    const created = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin, enabled: true, order: 1, config: { notification: 'Olá — ünïcode ✓' } }),
    });
    expect(created.status).toBe(201);
    for (const res of [
      created,
      await prod.fetch(
        `/api/environments/${team}/pipeline_frontend_apps_configs/${((await created.clone().json()) as { id: number }).id}/`,
      ),
    ]) {
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
      expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ plugin, config: { notification: 'Olá — ünïcode ✓' } });
    }
  });

  it('requests are still authenticated, validated and answered', async () => {
    const team = prod.boot.team.id;
    const ok = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ results: expect.any(Array) });
    const bad = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/?limit=abc`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'validation_error', attr: 'limit' });
    expect((await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`, { key: null })).status).toBe(401);
    const badBody = await prod.fetch(`/api/environments/${team}/explicit_members/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"user_uuid": 5}',
    });
    expect(badBody.status).toBe(400);
    expect(await badBody.json()).toMatchObject({ type: 'validation_error', attr: 'user_uuid' });
  });
});

describe('the request-only copy of the spec (what the production validator gets)', () => {
  it('keeps every operation and status but no response body schema, and only the components still referenced', () => {
    const spec = loadSpec();
    const lean = withoutResponseSchemas(spec);
    expect(listOperations(lean).map((o) => o.operationId)).toEqual(listOperations(spec).map((o) => o.operationId));
    let statuses = 0;
    for (const [p, item] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { responses?: Record<string, { description?: string }> }>)) {
        if (!op?.responses) continue;
        const leanOp = (lean.paths[p] as Record<string, { responses: Record<string, object>; parameters?: unknown }>)[method]!;
        expect(Object.keys(leanOp.responses)).toEqual(Object.keys(op.responses));
        for (const [status, r] of Object.entries(leanOp.responses)) {
          statuses++;
          expect(r).toEqual({ description: op.responses[status]!.description ?? status });
        }
        expect(leanOp.parameters).toEqual((op as { parameters?: unknown }).parameters);
      }
    }
    expect(statuses).toBeGreaterThan(19);
    // components: only what the lean copy still references, each entry unchanged, every $ref resolvable
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.add(String(x));
          else walk(x);
        }
    };
    walk(lean);
    const leanComponents = lean.components as Record<string, Record<string, unknown>>;
    const fullComponents = spec.components as Record<string, Record<string, unknown>>;
    for (const ref of refs) {
      const [section, name] = ref.replace('#/components/', '').split('/');
      expect(leanComponents[section!]?.[name!], ref).toBeDefined();
    }
    for (const [section, entries] of Object.entries(leanComponents)) {
      for (const [name, entry] of Object.entries(entries)) expect(entry).toEqual(fullComponents[section]![name]);
    }
    expect(leanComponents.securitySchemes).toEqual(fullComponents.securitySchemes);
    expect(Object.keys(leanComponents.schemas!).length).toBeLessThan(Object.keys(fullComponents.schemas!).length);
    expect(leanComponents.schemas).toHaveProperty('PatchedPluginConfig');
    // the original is untouched
    expect(JSON.stringify(spec)).toContain('"responses"');
    expect(JSON.stringify(loadSpec())).toEqual(JSON.stringify(spec));
  });
});

describe('production validator (request-only spec) decides as the full one', () => {
  let t: TestServer;
  let prodUrl: string;
  let closeProd: () => Promise<void>;
  beforeAll(async () => {
    t = await startTestServer();
    // a second app on the same store, configured as production: request-only spec, no response validation
    const prod = await listen(createApp({ store: t.store, validateResponses: false, rateLimit: false, logger: silentLogger() }));
    prodUrl = prod.url;
    closeProd = prod.close;
  });
  afterAll(async () => {
    await closeProd();
    await t.close();
  });

  it('every operation answers the same status and body to malformed and read requests', async () => {
    const team = t.boot.team.id;
    const bodies = [
      '{}',
      '[]',
      '"x"',
      '{"name": 5, "order": "a", "enabled": "no", "config": 3}',
      '{"tiles": "x", "tile": {"id": "a"}, "toDashboard": null}',
      '{"user_uuid": 5, "level": 9}',
      '{"template": {"tiles": [{"type": 1}]}}',
      '{"job": {"type": 5}}',
      '{"orders": {"a": "b"}}',
    ];
    const queries = [
      '',
      '?limit=abc',
      '?limit=-1&offset=x',
      '?event=$pageview&limit=2',
      '?properties=notjson',
      '?before=yesterday&after=1',
      '?key=$browser',
      '?format=csv&limit=1',
    ];
    let compared = 0;
    for (const op of listOperations(loadSpec())) {
      const concrete = op.path
        .replace('{project_id}', String(team))
        .replace('{parent_membership__user__uuid}', t.boot.user.uuid)
        .replace('{id}', '1');
      const requests: { url: string; init: RequestInit }[] =
        op.method === 'get'
          ? queries.map((q) => ({ url: concrete + q, init: {} }))
          : bodies.map((body) => ({
              url: concrete,
              init: { method: op.method.toUpperCase(), headers: { 'Content-Type': 'application/json' }, body },
            }));
      for (const { url, init } of requests) {
        const headers = { ...(init.headers as Record<string, string> | undefined), Authorization: `Bearer ${t.boot.key}` };
        const a = await fetch(t.url + url, { ...init, headers });
        const b = await fetch(prodUrl + url, { ...init, headers });
        // absolute links (a page's `next`) name each server's own port: compare them without it
        const [ta, tb] = [(await a.text()).replaceAll(t.url, 'http://server'), (await b.text()).replaceAll(prodUrl, 'http://server')];
        // writes that succeed change the store between the two requests: compare only refusals and reads
        if (a.status < 400 && op.method !== 'get') continue;
        expect({ op: op.operationId, url, body: init.body, status: b.status, text: tb }).toEqual({
          op: op.operationId,
          url,
          body: init.body,
          status: a.status,
          text: ta,
        });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // ~1,400 requests one after another: seconds on a quiet machine, more than vitest's default 20 s
    // on a loaded one; the bound is for a hang, not for speed
  }, 600_000);
});

describe('a spec the validator cannot load', () => {
  it("answers 500 with the loader's own error (not a TypeError further down)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-badspec-'));
    const store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    const spec = structuredClone(loadSpec());
    const first = Object.values(spec.paths)[0] as Record<string, { requestBody?: unknown }>;
    const op = Object.values(first).find((o) => o && typeof o === 'object' && 'responses' in o)!;
    op.requestBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/NoSuchSchema' } } } };
    const errors: unknown[] = [];
    const srv = await listen(
      createApp({ store, spec, rateLimit: false, validateResponses: false, logger: silentLogger(), onServerError: (e) => errors.push(e) }),
    );
    try {
      const res = await fetch(`${srv.url}/api/projects/`, { headers: { Authorization: 'Bearer phx_x' } });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ type: 'server_error' });
      expect(errors).toHaveLength(1);
      expect(errors[0]).not.toBeInstanceOf(TypeError);
      expect(String((errors[0] as Error).message)).toMatch(/NoSuchSchema/);
    } finally {
      await srv.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rate limit after authentication, before request validation', () => {
  const MINUTE = 60_000;
  const limits: RateLimitConfig = {
    classes: {
      events: [{ limit: 2, windowMs: MINUTE }],
      event_values: [{ limit: 2, windowMs: MINUTE }],
      query: [{ limit: 2, windowMs: MINUTE }],
      default: [{ limit: 2, windowMs: MINUTE }],
    },
  };
  let env: Awaited<ReturnType<typeof freshStore>>;
  let srv: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    env = await freshStore();
    srv = await listen(createApp({ store: env.store, validateResponses: true, rateLimit: limits, logger: silentLogger() }));
  });
  afterAll(async () => {
    await srv.close();
    await env.cleanup();
  });

  it('malformed requests (400) count, and a key over its limit gets 429 for a malformed request too', async () => {
    const malformed = `${srv.url}/api/environments/${env.projectId}/pipeline_frontend_apps_configs/?limit=abc`;
    const headers = { Authorization: `Bearer ${env.key}` };
    for (let i = 0; i < 2; i++) {
      const res = await fetch(malformed, { headers });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ type: 'validation_error', attr: 'limit' });
    }
    const over = await fetch(malformed, { headers });
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ type: 'throttled_error', code: 'throttled' });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // HEAD runs as GET: the same key, the same count
    const head = await fetch(malformed, { method: 'HEAD', headers });
    expect(head.status).toBe(429);
  });

  it('requests refused by authentication are not counted', async () => {
    const url = `${srv.url}/api/environments/${env.projectId}/events/`;
    for (let i = 0; i < 4; i++) expect((await fetch(url, { headers: { Authorization: 'Bearer phx_not_a_key' } })).status).toBe(401);
  });
});

describe('request log', () => {
  const lines: Record<string, unknown>[] = [];
  let srv: Awaited<ReturnType<typeof listen>>;
  let dir: string;
  let store: ReturnType<typeof openStore>;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-log-'));
    store = openStore({ dataDir: dir });
    await migrateToLatest(store);
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    // a synchronous destination: each line reaches the sink as it is written
    const logger = pino({ level: 'info' }, sink);
    srv = await listen(createApp({ store, logger, rateLimit: false }));
  });
  afterAll(async () => {
    await srv.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('one line per request with method, path without query, status, time and request id; no key', async () => {
    lines.length = 0;
    const r = await fetch(`${srv.url}/api/environments/1/events/?personal_api_key=phx_secret`, {
      headers: { Authorization: 'Bearer phx_secret', 'X-Request-Id': 'abc-1' },
    });
    expect(r.status).toBe(401);
    await r.arrayBuffer();
    await expect.poll(() => lines.length, EVENTUALLY).toBe(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      req: { id: 'abc-1', method: 'GET', path: '/api/environments/1/events/' },
      res: { statusCode: 401 },
      responseTime: expect.any(Number),
    });
    expect(lines[0]!.aborted).toBeUndefined();
    expect(JSON.stringify(lines)).not.toContain('phx_secret');
  });

  it('a HEAD request is logged as HEAD, though the API path runs it as GET', async () => {
    lines.length = 0;
    const r = await fetch(`${srv.url}/api/environments/1/events/`, { method: 'HEAD', headers: { 'X-Request-Id': 'head-1' } });
    expect(r.status).toBe(401);
    await expect.poll(() => lines.length, EVENTUALLY).toBe(1);
    expect(lines[0]).toMatchObject({
      req: { id: 'head-1', method: 'HEAD', path: '/api/environments/1/events/' },
      res: { statusCode: 401 },
    });
    expect(String(lines[0]!.msg)).toMatch(/^HEAD /);
  });

  it('a response whose client went away first is logged as aborted, at warn', async () => {
    lines.length = 0;
    // a POST whose body never comes: the server has received it (100 Continue) and waits for the
    // body, so the client leaves before the answer
    const path = '/api/environments/1/pipeline_frontend_apps_configs/';
    await new Promise<void>((resolve) => {
      const req = http.request(`${srv.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': '2', Expect: '100-continue' },
      });
      req.on('error', () => resolve());
      req.once('continue', () => req.destroy());
      req.flushHeaders();
    });
    await expect.poll(() => lines.length, EVENTUALLY).toBe(1);
    expect(lines[0]).toMatchObject({ level: 40, aborted: true, req: { method: 'POST', path } });
    expect(String(lines[0]!.msg)).toMatch(/\(aborted\)$/);
  });
});

describe('server process flags', () => {
  it('npm start and cluster workers run with SERVER_NODE_FLAGS; a flag given explicitly wins', async () => {
    const { SERVER_NODE_FLAGS, withServerNodeFlags } = await import('../../server/main.js');
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    for (const flag of SERVER_NODE_FLAGS) {
      expect(pkg.scripts.start).toContain(`node ${flag}`);
      expect(pkg.scripts.dev).toContain(flag);
    }
    expect(withServerNodeFlags(['--import', 'tsx'])).toEqual([...SERVER_NODE_FLAGS, '--import', 'tsx']);
    expect(withServerNodeFlags(['--max-semi-space-size=32'])).toEqual(['--max-semi-space-size=32']);
  });
});
