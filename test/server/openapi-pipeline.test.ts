/**
 * The request path fails loudly: each thing server/http/openapi-pipeline.ts relies on in
 * express-openapi-validator (its middleware names and order, the two module exports it replaces,
 * the shape of `req.openapi`) is checked, and a missing one is an `OpenApiPipelineError` naming it
 * (simulated here); routes added with `app.use`/`app.get`… after `createApp` are a start-up error
 * saying how routes are added; and, through the real HTTP stack, the rate limiter runs before
 * request validation, so a key over its limit gets 429 even for a malformed request.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { bootstrap } from '../../server/bootstrap.js';
import { RouteAfterPipelineError } from '../../server/http/compose.js';
import {
  OpenApiPipelineError,
  arrangeValidatorMiddlewares,
  expectedMiddlewareNames,
  installValidatorTuning,
  loadPatchedModules,
  memoiseRouteMatch,
  openapiOf,
  validatorPipeline,
} from '../../server/http/openapi-pipeline.js';
import type { RateLimitConfig } from '../../server/http/rate-limit.js';
import { loadSpec } from '../../server/http/spec.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { createTestPgSchema, usesPostgres } from '../helpers/pg.js';
import { silentLogger } from '../helpers/server.js';

/** A middleware named `name` that only passes on, as the library's are (named functions). */
function named(name: string): RequestHandler {
  const mw: RequestHandler = (_req, _res, next) => next();
  Object.defineProperty(mw, 'name', { value: name });
  return mw;
}

const libraryList = (validateResponses: boolean) => expectedMiddlewareNames(validateResponses).map(named);

/** A fresh store (SQLite, or a PostgreSQL schema in the PostgreSQL pass), bootstrapped. */
async function freshStore(): Promise<{ store: Store; key: string; projectId: number; cleanup(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-pipeline-'));
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

describe("the validator's middleware list", () => {
  it('the real library gives the expected names, with and without response validation', () => {
    // validatorPipeline throws if not; the arranged list: memo'd match, security, then validation
    for (const validateResponses of [true, false]) {
      const list = validatorPipeline({ spec: loadSpec(), validateResponses, securityHandler: () => true });
      expect(list.map((mw) => mw.name)).toEqual(['', 'memoisedMetadataMiddleware', 'securityMiddleware', 'requestMiddleware', ...(validateResponses ? ['responseMiddleware'] : [])]);
    }
  });

  it('the rate limiter goes right after securityMiddleware, before request validation', () => {
    const limiter = named('limiter');
    const list = arrangeValidatorMiddlewares(libraryList(true), { validateResponses: true, rateLimiter: limiter });
    expect(list.map((mw) => mw.name)).toEqual(['', 'memoisedMetadataMiddleware', 'securityMiddleware', 'limiter', 'requestMiddleware', 'responseMiddleware']);
  });

  for (const missing of ['pathParamsMiddleware', 'metadataMiddleware', 'securityMiddleware', 'requestMiddleware', 'responseMiddleware']) {
    it(`throws at build time, naming the list, when ${missing} is missing`, () => {
      const list = libraryList(true).filter((mw) => mw.name !== missing);
      expect(() => arrangeValidatorMiddlewares(list, { validateResponses: true })).toThrowError(OpenApiPipelineError);
      expect(() => arrangeValidatorMiddlewares(list, { validateResponses: true })).toThrowError(new RegExp(`expected \\[.*${missing}`));
    });
  }

  it('throws when a middleware was renamed, added or moved', () => {
    const renamed = libraryList(false);
    renamed[2] = named('securityHandlerMiddleware');
    expect(() => arrangeValidatorMiddlewares(renamed, { validateResponses: false })).toThrowError(/securityHandlerMiddleware/);
    const added = [...libraryList(false).slice(0, 3), named('multipartMiddleware'), ...libraryList(false).slice(3)];
    expect(() => arrangeValidatorMiddlewares(added, { validateResponses: false })).toThrowError(/multipartMiddleware/);
    const moved = libraryList(false);
    [moved[1], moved[2]] = [moved[2]!, moved[1]!];
    expect(() => arrangeValidatorMiddlewares(moved, { validateResponses: false })).toThrowError(OpenApiPipelineError);
  });
});

describe('the module exports the fixes replace', () => {
  it('the real modules have them (and installing again is a no-op)', () => {
    expect(() => installValidatorTuning()).not.toThrow();
    const modules = loadPatchedModules();
    expect(typeof modules.pathToRegexp.pathToRegexp).toBe('function');
    expect(typeof modules.schemaValidator.OpenAPISchemaValidator).toBe('function');
  });

  it("throws when path-to-regexp's pathToRegexp is missing or cannot be replaced", () => {
    const schemaValidator = { OpenAPISchemaValidator: function OpenAPISchemaValidator() {} };
    expect(() => installValidatorTuning({ pathToRegexp: {}, schemaValidator })).toThrowError(/pathToRegexp is not a writable function/);
    const frozen = Object.freeze({ pathToRegexp: () => ({ regexp: /x/, keys: [] }) });
    expect(() => installValidatorTuning({ pathToRegexp: frozen, schemaValidator })).toThrowError(OpenApiPipelineError);
  });

  it('throws when OpenAPISchemaValidator is missing or cannot be replaced', () => {
    const pathToRegexp = { pathToRegexp: () => ({ regexp: /x/, keys: [] }) };
    expect(() => installValidatorTuning({ pathToRegexp, schemaValidator: {} })).toThrowError(/OpenAPISchemaValidator is not a writable constructor/);
    const frozen = Object.freeze({ OpenAPISchemaValidator: function OpenAPISchemaValidator() {} });
    expect(() => installValidatorTuning({ pathToRegexp: { pathToRegexp: () => ({ regexp: /x/, keys: [] }) }, schemaValidator: frozen })).toThrowError(OpenApiPipelineError);
  });
});

describe('the shape of req.openapi', () => {
  /** Runs `mw` on a fake request; resolves with what it passed to next. */
  function run(mw: RequestHandler, url: string): Promise<{ err: unknown; req: Request }> {
    const req = { url, method: 'GET' } as Request;
    return new Promise((resolve) => void mw(req, {} as Response, ((err?: unknown) => resolve({ err, req })) as NextFunction));
  }
  const library = (openapi: unknown): RequestHandler => (req, _res, next) => {
    (req as Request & { openapi?: unknown }).openapi = openapi;
    next();
  };

  it('a match with a schema and pathParams is passed on, readable through openapiOf', async () => {
    const { err, req } = await run(memoiseRouteMatch(library({ schema: { operationId: 'op' }, pathParams: { id: '1' } })), '/a/1/');
    expect(err).toBeUndefined();
    expect(openapiOf(req)?.schema.operationId).toBe('op');
    expect(openapiOf(req)?.pathParams).toEqual({ id: '1' });
  });

  it('no match (a path outside the spec) passes without req.openapi', async () => {
    const { err, req } = await run(memoiseRouteMatch(library(undefined)), '/elsewhere');
    expect(err).toBeUndefined();
    expect(openapiOf(req)).toBeUndefined();
  });

  for (const [what, openapi, message] of [
    ['schema', { pathParams: {} }, /req\.openapi\.schema/],
    ['pathParams', { schema: { operationId: 'op' } }, /req\.openapi\.pathParams/],
    ['the object', 'GET /a/', /req\.openapi is not an object/],
  ] as const) {
    it(`a match without ${what} fails with an OpenApiPipelineError naming it, every time (not memoised)`, async () => {
      const mw = memoiseRouteMatch(library(openapi));
      for (let i = 0; i < 2; i++) {
        const { err } = await run(mw, '/a/');
        expect(err).toBeInstanceOf(OpenApiPipelineError);
        expect((err as Error).message).toMatch(message);
      }
    });
  }
});

describe('routes added after createApp', () => {
  let env: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => {
    env = await freshStore();
  });
  afterAll(async () => env.cleanup());

  it('app.use, app.get(path), app.post, app.all and app.route throw, saying how routes are added; settings still read', () => {
    const app = createApp({ store: env.store, rateLimit: false, logger: silentLogger() });
    const handler: RequestHandler = (_req, res) => void res.end();
    const calls: Array<[string, () => unknown]> = [
      ['use', () => app.use(handler)],
      ['use', () => app.use('/extra', handler)],
      ['get', () => app.get('/extra', handler)],
      ['post', () => app.post('/extra', handler)],
      ['delete', () => app.delete('/extra', handler)],
      ['all', () => app.all('/extra', handler)],
      ['route', () => app.route('/extra')],
    ];
    for (const [name, call] of calls) {
      expect(call, name).toThrowError(RouteAfterPipelineError);
      expect(call, name).toThrowError(new RegExp(`^app\\.${name}\\(.*openapi\\.yaml.*handler map`));
    }
    expect(app.get('etag')).toBe(false);
    expect(app.get('x-powered-by')).toBe(false);
  });
});

describe('rate limit before request validation (real HTTP stack)', () => {
  const MINUTE = 60_000;
  const limits: RateLimitConfig = {
    classes: { events: [{ limit: 2, windowMs: MINUTE }], event_values: [{ limit: 2, windowMs: MINUTE }], query: [{ limit: 2, windowMs: MINUTE }], default: [{ limit: 2, windowMs: MINUTE }] },
  };
  let env: Awaited<ReturnType<typeof freshStore>>;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    env = await freshStore();
    const app = createApp({ store: env.store, validateResponses: true, rateLimit: limits, logger: silentLogger() });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await env.cleanup();
  });

  it('malformed requests (400) count, and a key over its limit gets 429 for a malformed request too', async () => {
    const malformed = `${url}/api/environments/${env.projectId}/pipeline_frontend_apps_configs/?limit=abc`;
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
  });
});
