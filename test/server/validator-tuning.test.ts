/**
 * The fixes of express-openapi-validator that server/http/openapi-pipeline.ts installs (fix 1, the
 * memoised `pathToRegexp`; fix 2, the skipped meta-schema compile) are in place once an app is
 * built, installing them again changes nothing, and they change only how much work is done: the
 * memoised `pathToRegexp` gives what the original gives, and requests are still routed and
 * validated through the real HTTP stack, with and without response validation. Also: the
 * request-only copy of the spec the production validator gets. (A library upgrade that moves a
 * patched module fails the start: test/server/openapi-pipeline.test.ts.)
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOperations, loadSpec, withoutResponseSchemas } from '../../server/http/spec.js';
import { installRouteRegexpCache, skipUnusedSpecSchemaCompile } from '../../server/http/openapi-pipeline.js';
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
      // an option the memo does not know goes through uncached
      const withDelimiter = memoised(route, { delimiter: '/' });
      expect(withDelimiter.regexp.source).toBe(original(route, { delimiter: '/' }).regexp.source);
      expect(memoised(route, { delimiter: '/' })).not.toBe(withDelimiter);
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

  it('the request-only copy of the spec keeps every operation and status but no response body schema', () => {
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
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) {
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

  it('with response validation off (production), requests are still authenticated, validated and answered', async () => {
    const prod = await startTestServer({ validateResponses: false });
    try {
      const team = prod.boot.team.id;
      const ok = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ results: expect.any(Array) });
      const bad = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/?limit=abc`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ type: 'validation_error', attr: 'limit' });
      const anonymous = await prod.fetch(`/api/environments/${team}/pipeline_frontend_apps_configs/`, { key: null });
      expect(anonymous.status).toBe(401);
      const badBody = await prod.fetch(`/api/environments/${team}/explicit_members/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"user_uuid": 5}' });
      expect(badBody.status).toBe(400);
      expect(await badBody.json()).toMatchObject({ type: 'validation_error', attr: 'user_uuid' });
    } finally {
      await prod.close();
    }
  });
});
