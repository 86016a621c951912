/**
 * The two express-openapi-validator fixes of server/http/validator-tuning.ts are installed (a
 * library upgrade that changes the patched modules makes these fail, so the fixes are revisited),
 * and they change only how much work is done: the memoised `pathToRegexp` gives what the original
 * gives, and requests are still routed and validated through the real HTTP stack.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installRouteRegexpCache, skipUnusedSpecSchemaCompile } from '../../server/http/validator-tuning.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));

describe('validator tuning', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it('both fixes are installed, and installing again changes nothing', () => {
    expect(installRouteRegexpCache()).toBe(true);
    expect(skipUnusedSpecSchemaCompile()).toBe(true);
    const ptr = fromValidator('path-to-regexp') as { pathToRegexp: unknown };
    const before = ptr.pathToRegexp;
    expect(installRouteRegexpCache()).toBe(true);
    expect(ptr.pathToRegexp).toBe(before);
  });

  it('the memoised pathToRegexp answers as the original does, and once per route', async () => {
    type Compile = (p: string, o?: object) => { regexp: RegExp; keys: { name: string }[] };
    const memoised = (fromValidator('path-to-regexp') as { pathToRegexp: Compile & { original?: Compile } }).pathToRegexp;
    const original = memoised.original!;
    expect(original).toBeTypeOf('function');
    expect(original).not.toBe(memoised);
    for (const route of ['/api/environments/:project_id/events/', '/api/environments/:project_id/pipeline_destination_configs/:id/']) {
      for (const opts of [{}, { sensitive: true, strict: false }, { end: false }]) {
        const a = memoised(route, opts);
        const b = original(route, opts);
        expect(a.regexp.source).toBe(b.regexp.source);
        expect(a.regexp.flags).toBe(b.regexp.flags);
        expect(a.keys.map((k) => k.name)).toEqual(b.keys.map((k) => k.name));
        expect(memoised(route, opts)).toBe(a);
      }
    }
  });

  it('requests are still routed by path and validated (unknown path 404, bad integer 400)', async () => {
    const team = t.boot.team.id;
    const ok = await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`);
    expect(ok.status).toBe(200);
    const bad = await t.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/?limit=abc`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'validation_error', attr: 'limit' });
    const config = await t.fetch(`/api/environments/${team}/pipeline_destination_configs/999999/`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(config.status).toBe(404);
    const missing = await t.fetch(`/api/environments/${team}/no_such_thing/`);
    expect(missing.status).toBe(404);
  });
});
