/**
 * The request path's plumbing, through real HTTP: `inSequence` (several middlewares as one Express
 * layer) keeps Express 5's semantics; `handleWithoutRouter` gives the sequence what Express's
 * `app.handle` and router would, and ends errors as they would; the memoised route match (openapi-pipeline.ts, fix 3) decides as
 * the library does on every repetition of a path; the request log writes one line per request, and
 * marks a response whose connection closed before it was sent.
 */
import type { Server } from 'node:http';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import { createHttpServer, handleWithoutRouter, inSequence } from '../../server/http/compose.js';
import { listOperations, loadSpec } from '../../server/http/spec.js';
import { memoiseRouteMatch } from '../../server/http/openapi-pipeline.js';
import { migrateToLatest, openStore } from '../../server/storage/db.js';
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js';

async function listen(app: express.Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('inSequence', () => {
  const calls: string[] = [];
  let srv: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const app = express();
    const mark =
      (name: string): RequestHandler =>
      (_req, _res, next) => {
        calls.push(name);
        next();
      };
    const fail: RequestHandler = (req, _res, next) => {
      calls.push('fail');
      const how = req.query.how;
      if (how === 'next') return next(new Error('by next'));
      if (how === 'throw') throw new Error('thrown');
      if (how === 'reject') return Promise.reject(new Error('rejected')) as unknown as void;
      if (how === 'twice') {
        next();
        next();
        return;
      }
      if (how === 'late') {
        // as express-openapi-validator's response validation: next(err) after having passed
        (_res.locals as { late?: NextFunction }).late = next;
        return next();
      }
      if (how === 'route') return next('route');
      next();
    };
    const asyncMark: RequestHandler = async (_req, _res, next) => {
      await new Promise((r) => setTimeout(r, 1));
      calls.push('async');
      next();
    };
    app.use(inSequence(mark('a'), fail, asyncMark, mark('b')));
    app.use((req: Request, res: Response) => {
      calls.push('after');
      const late = (res.locals as { late?: NextFunction }).late;
      if (req.query.how === 'late' && late) return late(new Error('reported late'));
      res.json({ calls });
    });
    app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => {
      calls.push('error');
      res.status(500).json({ error: err.message, calls });
    });
    srv = await listen(app);
  });
  afterAll(() => srv.close());

  async function get(query: string) {
    calls.length = 0;
    const r = await fetch(`${srv.url}/x?${query}`);
    return { status: r.status, body: (await r.json()) as { error?: string; calls: string[] } };
  }

  it('runs each middleware in order, async ones included, then the next layer', async () => {
    expect(await get('how=none')).toEqual({ status: 200, body: { calls: ['a', 'fail', 'async', 'b', 'after'] } });
  });

  it('next(err), a throw and a rejected promise skip the rest and reach the error handler', async () => {
    for (const [how, message] of [
      ['next', 'by next'],
      ['throw', 'thrown'],
      ['reject', 'rejected'],
    ]) {
      expect(await get(`how=${how}`)).toEqual({ status: 500, body: { error: message, calls: ['a', 'fail', 'error'] } });
    }
  });

  it("a second next() is ignored, and next('route') leaves the sequence", async () => {
    expect(await get('how=twice')).toEqual({ status: 200, body: { calls: ['a', 'fail', 'async', 'b', 'after'] } });
    expect(await get('how=route')).toEqual({ status: 200, body: { calls: ['a', 'fail', 'after'] } });
  });

  it('next(err) from a middleware that had already passed reaches the error handler (it was dropped: the request hung)', async () => {
    expect(await get('how=late')).toEqual({ status: 500, body: { error: 'reported late', calls: ['a', 'fail', 'async', 'b', 'after', 'error'] } });
  });

  it('refuses error-handling middlewares and non-functions when built', () => {
    const errorHandler = (_e: unknown, _q: Request, _s: Response, _n: NextFunction) => undefined;
    expect(() => inSequence(errorHandler as unknown as RequestHandler)).toThrow(TypeError);
    expect(() => inSequence(undefined as unknown as RequestHandler)).toThrow(TypeError);
  });
});

describe('handleWithoutRouter', () => {
  const unhandled: string[] = [];
  let srv: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const app = express();
    app.set('etag', false);
    const pipeline: RequestHandler = (req, res, next) => {
      const how = req.query.how;
      if (how === 'answer') {
        res.locals.seen = 'locals';
        return void res.status(201).json({ app: req.app === app, originalUrl: req.originalUrl, baseUrl: req.baseUrl, params: req.params, query: req.query, locals: res.locals.seen, ip: req.ip });
      }
      if (how === 'pass') return next();
      if (how === 'throw') throw new Error('thrown by the pipeline');
      if (how === 'reject') return Promise.reject(new Error('rejected by the pipeline')) as never;
      if (how === 'answer-then-next') {
        res.status(202).json({ answered: true });
        return next();
      }
      if (how === 'handler-passes') return next(new Error('handler passes'));
      // res.format reports an unacceptable type through req.next
      if (how === 'format') return void res.format({ 'application/json': () => res.json({ json: true }) });
      if (how === 'sent-then-fail') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('partial');
        return next(new Error('after the headers'));
      }
      if (how === 'handler-throws') return next(new Error('handler throws'));
      if (how === 'handler-rejects') return next(new Error('handler rejects'));
      next(new Error('plain'));
    };
    const onError = (err: unknown, req: Request, res: Response, _next: NextFunction) => {
      const message = err instanceof Error ? err.message : String(err);
      if (message === 'handler passes') return _next();
      if (message === 'handler throws' || message === 'after the headers') {
        if (!res.headersSent) res.setHeader('X-Set-Before-Throwing', '1');
        throw new Error(`onError: ${message}`);
      }
      if (message === 'handler rejects') return Promise.reject(new Error(`onError: ${message}`));
      res.status(message === 'not found' ? 404 : 500).json({ error: message, url: req.originalUrl });
    };
    handleWithoutRouter(app, pipeline, onError as never, () => new Error('not found'), (err) => unhandled.push((err as Error).message));
    srv = await listen(app);
  });
  afterAll(() => srv.close());

  it('gives the pipeline what Express does: prototypes (req.app, req.query, res.json), res.locals, originalUrl, baseUrl, params', async () => {
    const r = await fetch(`${srv.url}/a/b?how=answer&x=1`);
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await r.json()).toEqual({ app: true, originalUrl: '/a/b?how=answer&x=1', baseUrl: '', params: {}, query: { how: 'answer', x: '1' }, locals: 'locals', ip: '127.0.0.1' });
  });

  it('through createHttpServer, requests and responses arrive with the prototypes in their chain and answer the same', async () => {
    const app = express();
    app.set('etag', false);
    const pipeline: RequestHandler = (req, res) =>
      void res.json({
        ownPrototype: Object.getPrototypeOf(req) === app.request,
        inChain: Object.prototype.isPrototypeOf.call(app.request, req) && Object.prototype.isPrototypeOf.call(app.response, res),
        incoming: req instanceof http.IncomingMessage && res instanceof http.ServerResponse,
        query: req.query,
        app: req.app === app,
        host: req.hostname,
      });
    handleWithoutRouter(app, pipeline, (() => undefined) as never, () => new Error('not found'), () => undefined);
    const viaListen = await listen(app);
    const direct = createHttpServer(app);
    await new Promise<void>((resolve) => direct.listen(0, '127.0.0.1', resolve));
    try {
      const a = (await (await fetch(`${viaListen.url}/p?x=1`)).json()) as Record<string, unknown>;
      const b = await (await fetch(`http://127.0.0.1:${(direct.address() as AddressInfo).port}/p?x=1`)).json();
      expect(a).toEqual({ ownPrototype: true, inChain: true, incoming: true, query: { x: '1' }, app: true, host: '127.0.0.1' });
      expect(b).toEqual({ ...a, ownPrototype: false });
    } finally {
      await viaListen.close();
      await new Promise((resolve) => direct.close(resolve));
    }
  });

  it('an error reaches the error handler, through next or req.next; a pipeline that answers nothing gives it the not-found error', async () => {
    let r = await fetch(`${srv.url}/e?how=fail`);
    expect([r.status, await r.json()]).toEqual([500, { error: 'plain', url: '/e?how=fail' }]);
    r = await fetch(`${srv.url}/e?how=pass`);
    expect([r.status, await r.json()]).toEqual([404, { error: 'not found', url: '/e?how=pass' }]);
    r = await fetch(`${srv.url}/e?how=format`, { headers: { Accept: 'image/png' } });
    expect([r.status, await r.json()]).toEqual([500, { error: 'Not Acceptable', url: '/e?how=format' }]);
    for (const [how, message] of [
      ['throw', 'thrown by the pipeline'],
      ['reject', 'rejected by the pipeline'],
    ]) {
      r = await fetch(`${srv.url}/e?how=${how}`);
      expect([r.status, await r.json()], how).toEqual([500, { error: message, url: `/e?how=${how}` }]);
    }
  });

  it('a pipeline that answers and then calls next() keeps its answer; an error handler that calls next() ends in a bare 404', async () => {
    unhandled.length = 0;
    let r = await fetch(`${srv.url}/e?how=answer-then-next`);
    expect([r.status, await r.json()]).toEqual([202, { answered: true }]);
    r = await fetch(`${srv.url}/e?how=handler-passes`);
    expect([r.status, await r.text()]).toEqual([404, '']);
    expect(unhandled).toEqual([]);
  });

  it('an error handler that throws or rejects ends in a bare 500 without the headers it set, reported; after the headers, the connection is destroyed', async () => {
    unhandled.length = 0;
    for (const how of ['handler-throws', 'handler-rejects']) {
      const r = await fetch(`${srv.url}/e?how=${how}`);
      expect([r.status, await r.text()], how).toEqual([500, '']);
      // what the error handler had set is not sent with the bare 500
      expect(r.headers.get('x-set-before-throwing'), how).toBeNull();
    }
    await expect(fetch(`${srv.url}/e?how=sent-then-fail`).then((r) => r.text())).rejects.toThrow();
    expect(unhandled).toEqual(['onError: handler throws', 'onError: handler rejects', 'onError: after the headers']);
  });
});

describe('memoised route match', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('every repetition of a path is authenticated, validated and answered as the first', async () => {
    const team = t.boot.team.id;
    const catalogUrl = PLUGIN_CATALOG.find((p) => p.key === 'notification-bar')!.url;
    const notificationBar = t.boot.plugins.find((p) => p.url === catalogUrl)!;
    const created = await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugin: notificationBar.id, enabled: true, order: 1, config: {} }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: number }).id;
    const retrieve = `/api/environments/${team}/pipeline_frontend_apps_configs/${id}/`;
    for (let i = 0; i < 3; i++) {
      const ok = await t.fetch(retrieve);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { id: number }).id).toBe(id);
      expect((await t.fetch(retrieve, { key: null })).status).toBe(401);
      // a non-integer id is no object (404, as DRF), a bad query integer a validation error
      expect((await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/abc/`)).status).toBe(404);
      expect((await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/?limit=abc`)).status).toBe(400);
      expect((await t.fetch(retrieve, { method: 'DELETE' })).status).toBe(405);
      expect((await t.fetch(`/api/environments/${team}/no_such_thing/`)).status).toBe(404);
    }
  });

  it('gives each request its own path parameters (the validator coerces them in place)', async () => {
    const seen: unknown[] = [];
    // the id each request got before the validator's coercion
    const received: unknown[] = [];
    let libraryCalls = 0;
    const library: RequestHandler = (req, _res, next) => {
      libraryCalls++;
      (req as Request & { openapi?: object }).openapi = { schema: { operationId: 'x' }, expressRoute: '/a/:id/', pathParams: { id: req.url.split('/')[2] } };
      next();
    };
    const memo = memoiseRouteMatch(library, 2);
    const run = (url: string, method = 'GET') =>
      new Promise<Record<string, unknown>>((resolve) => {
        const req = { url, method, params: {} } as unknown as Request & { openapi: { pathParams: Record<string, unknown> } };
        memo(req, {} as Response, () => {
          seen.push(req.openapi.pathParams);
          received.push(req.openapi.pathParams.id);
          req.openapi.pathParams.id = Number(req.openapi.pathParams.id); // as ajv's coercion does
          resolve(req.openapi);
        });
      });
    const first = await run('/a/7/?q=1');
    const second = await run('/a/7/');
    expect(libraryCalls).toBe(1);
    expect(first.pathParams).toEqual({ id: 7 });
    expect(second.pathParams).toEqual({ id: 7 });
    expect(seen[0]).not.toBe(seen[1]);
    // a coerced copy never leaks into the memo: a third request starts from the string again
    const third = await run('/a/7/');
    expect(third.pathParams).toEqual({ id: 7 });
    expect(libraryCalls).toBe(1);
    expect(received).toEqual(['7', '7', '7']);
    // another method is another entry; the memo keeps at most 2 and drops the oldest
    await run('/a/7/', 'PATCH');
    await run('/a/8/');
    expect(libraryCalls).toBe(3);
    await run('/a/7/');
    expect(libraryCalls).toBe(4);
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
    for (const res of [created, await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/${((await created.clone().json()) as { id: number }).id}/`)]) {
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
      expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ plugin, config: { notification: 'Olá — ünïcode ✓' } });
    }
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
    const bodies = ['{}', '[]', '"x"', '{"name": 5, "order": "a", "enabled": "no", "config": 3}', '{"tiles": "x", "tile": {"id": "a"}, "toDashboard": null}', '{"user_uuid": 5, "level": 9}', '{"template": {"tiles": [{"type": 1}]}}', '{"job": {"type": 5}}', '{"orders": {"a": "b"}}'];
    const queries = ['', '?limit=abc', '?limit=-1&offset=x', '?event=$pageview&limit=2', '?properties=notjson', '?before=yesterday&after=1', '?key=$browser', '?format=csv&limit=1'];
    let compared = 0;
    for (const op of listOperations(loadSpec())) {
      const concrete = op.path
        .replace('{project_id}', String(team))
        .replace('{parent_membership__user__uuid}', t.boot.user.uuid)
        .replace('{id}', '1');
      const requests: { url: string; init: RequestInit }[] =
        op.method === 'get'
          ? queries.map((q) => ({ url: concrete + q, init: {} }))
          : bodies.map((body) => ({ url: concrete, init: { method: op.method.toUpperCase(), headers: { 'Content-Type': 'application/json' }, body } }));
      for (const { url, init } of requests) {
        const headers = { ...(init.headers as Record<string, string> | undefined), Authorization: `Bearer ${t.boot.key}` };
        const a = await fetch(t.url + url, { ...init, headers });
        const b = await fetch(prodUrl + url, { ...init, headers });
        const [ta, tb] = [await a.text(), await b.text()];
        // writes that succeed change the store between the two requests: compare only refusals and reads
        if (a.status < 400 && op.method !== 'get') continue;
        expect({ op: op.operationId, url, body: init.body, status: b.status, text: tb }).toEqual({ op: op.operationId, url, body: init.body, status: a.status, text: ta });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // ~1,400 requests one after another: seconds on a quiet machine, more than vitest's default 20 s
    // on a loaded one (it timed out twice at 20 s with two `npm test` running at once); the bound is
    // for a hang, not for speed
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
    const srv = await listen(createApp({ store, spec, rateLimit: false, validateResponses: false, logger: silentLogger(), onServerError: (e) => errors.push(e) }));
    try {
      const res = await fetch(`${srv.url}/api/projects/`, { headers: { Authorization: 'Bearer phx_x' } });
      expect(res.status).toBe(500);
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
    const r = await fetch(`${srv.url}/api/environments/1/events/?personal_api_key=phx_secret`, { headers: { Authorization: 'Bearer phx_secret', 'X-Request-Id': 'abc-1' } });
    expect(r.status).toBe(401);
    await new Promise((res) => setTimeout(res, 50));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, req: { id: 'abc-1', method: 'GET', path: '/api/environments/1/events/' }, res: { statusCode: 401 }, responseTime: expect.any(Number) });
    expect(lines[0]!.aborted).toBeUndefined();
    expect(JSON.stringify(lines)).not.toContain('phx_secret');
  });

  it('a response whose client went away first is logged as aborted, at warn', async () => {
    lines.length = 0;
    // a POST whose body never comes: the server has received it (100 Continue) and waits for the
    // body, so the client leaves before the answer
    const path = '/api/environments/1/pipeline_frontend_apps_configs/';
    await new Promise<void>((resolve) => {
      const req = http.request(`${srv.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': '2', Expect: '100-continue' } });
      req.on('error', () => resolve());
      req.once('continue', () => req.destroy());
      req.flushHeaders();
    });
    await new Promise((res) => setTimeout(res, 100));
    expect(lines).toHaveLength(1);
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
