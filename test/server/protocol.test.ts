/**
 * HTTP protocol rules that hold for every operation: paths with and without the trailing slash,
 * PostHog's bodies for unknown routes, unknown methods and malformed JSON, the exact error shape,
 * that no 501 placeholder is left, UTC timestamps, and HEAD answered as GET without a body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type ErrorBody, methodNotAllowed, NOT_FOUND, required } from '../helpers/errors.js';
import { declaredStatuses, operations } from '../helpers/spec.js';

const ERROR_TYPES = ['validation_error', 'authentication_error', 'invalid_request', 'throttled_error', 'server_error'];
const UTC_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';

let t: TestServer;
let frontendPluginId: number;
let destinationPluginId: number;
/** every error body this file has seen, checked for its exact keys at the end */
const seenErrors: Array<{ where: string; status: number; body: unknown }> = [];

beforeAll(async () => {
  t = await startTestServer();
  frontendPluginId = t.boot.plugins.find((p) => p.name === 'Notification Bar')!.id;
  destinationPluginId = t.boot.plugins.find((p) => p.name === 'Customer.io')!.id;
});

afterAll(async () => {
  await t?.close();
});

/** Reads an error answer, records it, and checks the common shape. */
async function errorOf(res: Response, where: string): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.headers.get('content-type') ?? '', `${where}: ${text}`).toMatch(/^application\/json/);
  const body = JSON.parse(text) as ErrorBody;
  seenErrors.push({ where, status: res.status, body });
  return body;
}

async function createConfig(plugin: number, extra: Record<string, unknown> = {}): Promise<Record<string, unknown> & { id: number }> {
  const res = await t.fetch(LIST, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ plugin, order: 1, ...extra }) });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown> & { id: number };
}

describe('trailing slash', () => {
  it('GET works with and without the trailing slash, with the same answer', async () => {
    await createConfig(frontendPluginId);
    const withSlash = await t.fetch(LIST);
    const without = await t.fetch(LIST.slice(0, -1));
    expect(withSlash.status).toBe(200);
    expect(without.status).toBe(200);
    expect(await without.json()).toEqual(await withSlash.json());
  });

  it('GET /api/projects works without the trailing slash', async () => {
    const res = await t.fetch('/api/projects');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { count: number }).count).toBeGreaterThan(0);
  });

  it('without the trailing slash, the query string still applies', async () => {
    await createConfig(frontendPluginId);
    const res = await t.fetch(`${LIST.slice(0, -1)}?limit=1&offset=0`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { results: unknown[]; next: string | null };
    expect(page.results).toHaveLength(1);
    expect(page.next).not.toBeNull();
  });

  it('POST works without the trailing slash', async () => {
    const res = await t.fetch(LIST.slice(0, -1), {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ plugin: frontendPluginId, order: 4 }),
    });
    expect(res.status).toBe(201);
  });

  it('PATCH and DELETE on a templated path work without the trailing slash', async () => {
    const config = await createConfig(destinationPluginId);
    const path = `/api/environments/1/pipeline_destination_configs/${config.id}`;
    const patch = await t.fetch(path, { method: 'PATCH', headers: JSON_HEADERS, body: JSON.stringify({ name: 'No slash' }) });
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as { name: string }).name).toBe('No slash');
    const del = await t.fetch(path, { method: 'DELETE' });
    expect(del.status).toBe(204);
  });

  it('a static path segment wins over a templated one without the slash too (rearrange)', async () => {
    const res = await t.fetch('/api/environments/1/pipeline_destination_configs/rearrange', {
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: JSON.stringify({ orders: {} }),
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(await res.json())).toBe(true);
  });
});

describe('unknown routes and methods', () => {
  it.each([
    '/api/environments/1/nothing_here/',
    '/api/environments/1/pipeline_transformation_configs/',
    '/api/nope/',
    '/api/nope',
    '/api/',
    '/',
    '/not-api/at-all',
  ])('GET %s answers 404 not_found', async (path) => {
    const res = await t.fetch(path);
    expect(res.status).toBe(404);
    expect(await errorOf(res, `GET ${path}`)).toEqual(NOT_FOUND);
  });

  it('an unknown route answers 404 even without a key', async () => {
    const res = await t.fetch('/api/environments/1/nothing_here/', { key: null });
    expect(res.status).toBe(404);
    expect(await errorOf(res, 'unknown route without key')).toEqual(NOT_FOUND);
  });

  it('a non-integer plugin config id answers 404 "Not found."', async () => {
    const res = await t.fetch('/api/environments/1/pipeline_frontend_apps_configs/abc/');
    expect(res.status).toBe(404);
    expect(await errorOf(res, 'non-integer id')).toEqual(NOT_FOUND);
  });

  it('PUT on a known path answers 405 method_not_allowed', async () => {
    const res = await t.fetch(LIST, { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
    expect(res.status).toBe(405);
    expect(await errorOf(res, 'PUT list')).toEqual(methodNotAllowed('PUT'));
  });

  it('PUT on a known templated path answers 405 method_not_allowed', async () => {
    const config = await createConfig(destinationPluginId);
    const res = await t.fetch(`/api/environments/1/pipeline_destination_configs/${config.id}/`, {
      method: 'PUT',
      headers: JSON_HEADERS,
      body: '{}',
    });
    expect(res.status).toBe(405);
    expect(await errorOf(res, 'PUT destination')).toEqual(methodNotAllowed('PUT'));
  });

  it('DELETE on a list path answers 405 naming DELETE', async () => {
    const res = await t.fetch('/api/projects/', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(await errorOf(res, 'DELETE projects')).toEqual(methodNotAllowed('DELETE'));
  });
});

describe('request bodies', () => {
  it('malformed JSON answers 400 parse_error', async () => {
    const res = await t.fetch(LIST, { method: 'POST', headers: JSON_HEADERS, body: '{"plugin": 1,' });
    expect(res.status).toBe(400);
    const body = await errorOf(res, 'malformed JSON');
    expect(body.code).toBe('parse_error');
    expect(body.type).toBe('invalid_request');
    expect(body.attr).toBeNull();
    expect(body.detail).toMatch(/^JSON parse error/);
  });

  it('malformed JSON on a PATCH answers 400 parse_error', async () => {
    const config = await createConfig(destinationPluginId);
    const res = await t.fetch(`/api/environments/1/pipeline_destination_configs/${config.id}/`, {
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: 'not json',
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res, 'malformed PATCH')).code).toBe('parse_error');
  });

  it('a missing required field answers 400 required with attr', async () => {
    const res = await t.fetch(LIST, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ order: 1 }) });
    expect(res.status).toBe(400);
    expect(await errorOf(res, 'missing plugin')).toEqual(required('plugin'));
  });

  it('an invalid query parameter answers 400 with attr naming it', async () => {
    const res = await t.fetch(`${LIST}?limit=0`);
    expect(res.status).toBe(400);
    const body = await errorOf(res, 'limit=0');
    expect(body.type).toBe('validation_error');
    expect(body.attr).toBe('limit');
  });
});

describe('no placeholders left', () => {
  it('no operation of the spec declares a 501', () => {
    const with501 = operations.filter((o) => declaredStatuses(o).includes('501'));
    expect(with501.map((o) => o.operationId)).toEqual([]);
  });
});

describe('response formats', () => {
  it('dates in responses are UTC ISO 8601 strings ending in Z', async () => {
    const created = await createConfig(destinationPluginId, { enabled: true, name: 'Dates' });
    expect(created.created_at).toMatch(UTC_ISO);
    expect(created.updated_at).toMatch(UTC_ISO);
    const now = Date.now();
    expect(Math.abs(Date.parse(created.created_at as string) - now)).toBeLessThan(60_000);

    const patched = await t.fetch(`/api/environments/1/pipeline_destination_configs/${created.id}/`, {
      method: 'PATCH',
      headers: JSON_HEADERS,
      body: JSON.stringify({ enabled: false }),
    });
    const p = (await patched.json()) as { created_at: string; updated_at: string };
    expect(p.created_at).toMatch(UTC_ISO);
    expect(p.updated_at).toMatch(UTC_ISO);

    const list = (await (await t.fetch(LIST)).json()) as { results: Array<{ created_at: string; updated_at: string }> };
    for (const r of list.results) {
      expect(r.created_at).toMatch(UTC_ISO);
      expect(r.updated_at).toMatch(UTC_ISO);
    }

    const activity = (await (await t.fetch(`/api/environments/1/pipeline_destination_configs/${created.id}/activity/`)).json()) as {
      results: Array<{ created_at: string }>;
    };
    expect(activity.results.length).toBeGreaterThan(0);
    for (const a of activity.results) expect(a.created_at).toMatch(UTC_ISO);

    const job = await t.fetch(`/api/environments/1/pipeline_destination_configs/${created.id}/job/`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ job: { type: 'Export historical events V2', payload: { dateRange: ['2024-01-01', '2024-01-31'] } } }),
    });
    expect(job.status).toBe(200);
    expect(((await job.json()) as { created_at: string }).created_at).toMatch(UTC_ISO);

    const migrated = await t.fetch(`/api/environments/1/pipeline_destination_configs/${created.id}/migrate/`, { method: 'POST' });
    expect(migrated.status).toBe(200);
    expect(((await migrated.json()) as { created_at: string }).created_at).toMatch(UTC_ISO);
  });

  it('JSON answers are application/json', async () => {
    const res = await t.fetch(LIST);
    expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  });
});

describe('error bodies', () => {
  it('every error body seen has exactly the keys type, code, detail, attr', async () => {
    // a few more kinds, so the check covers 401, 403 and 404 from the security handler too
    for (const [where, res] of [
      ['no key', await t.fetch(LIST, { key: null })],
      ['bad key', await t.fetch(LIST, { key: 'phx_nope' })],
      ['missing scope', await t.fetch(LIST, { key: await t.key(['query:read']) })],
      ['project not found', await t.fetch('/api/environments/99999/pipeline_frontend_apps_configs/')],
      ['config not found', await t.fetch('/api/environments/1/pipeline_frontend_apps_configs/999999/')],
    ] as const) {
      await errorOf(res, where);
    }
    expect(seenErrors.length).toBeGreaterThanOrEqual(20);
    for (const e of seenErrors) {
      const body = e.body as Record<string, unknown>;
      expect(Object.keys(body).sort(), e.where).toEqual(['attr', 'code', 'detail', 'type']);
      expect(ERROR_TYPES, e.where).toContain(body.type);
      expect(typeof body.code, e.where).toBe('string');
      expect(typeof body.detail, e.where).toBe('string');
      expect(body.attr === null || typeof body.attr === 'string', e.where).toBe(true);
    }
  });
});

/**
 * The end-to-end headers of an answer, without those that differ from one answer to the next
 * (`Date`, `X-Request-Id`). Hop-by-hop headers are left out too: fetch (undici) sends HEAD with
 * `Connection: close`, so the server answers it with `Connection: close` and no `Keep-Alive`.
 */
function stableHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!['date', 'x-request-id', 'connection', 'keep-alive'].includes(name)) out[name] = value;
  });
  return out;
}

describe('HEAD on GET operations', () => {
  /** GET then HEAD on `path` with the same key: same status and headers, HEAD without a body. */
  async function expectHeadLikeGet(path: string, key?: string | null): Promise<Response> {
    const get = await t.fetch(path, { key });
    const getBody = await get.arrayBuffer();
    const head = await t.fetch(path, { method: 'HEAD', key });
    expect(head.status, `HEAD ${path}`).toBe(get.status);
    expect(stableHeaders(head), `HEAD ${path}`).toEqual(stableHeaders(get));
    expect(head.headers.get('content-length'), `HEAD ${path}`).toBe(String(getBody.byteLength));
    expect(head.headers.get('x-request-id')).toBeTruthy();
    expect((await head.arrayBuffer()).byteLength, `HEAD ${path}`).toBe(0);
    return head;
  }

  it('answers like GET without a body on lists, a retrieve, the events list (JSON and CSV) and the projects list', async () => {
    const config = await createConfig(frontendPluginId, { name: 'Head' });
    const list = await expectHeadLikeGet(LIST);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await expectHeadLikeGet(`${LIST}${config.id}/`)).status).toBe(200);
    expect((await expectHeadLikeGet('/api/environments/1/events/?limit=5')).status).toBe(200);
    const csv = await expectHeadLikeGet('/api/environments/1/events/?limit=5&format=csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await expectHeadLikeGet('/api/projects/')).status).toBe(200);
  });

  it('works without the trailing slash too', async () => {
    expect((await expectHeadLikeGet(LIST.slice(0, -1))).status).toBe(200);
  });

  it('without a key answers 401 as GET does, without a body', async () => {
    expect((await expectHeadLikeGet(LIST, null)).status).toBe(401);
    expect((await expectHeadLikeGet('/api/environments/1/events/', null)).status).toBe(401);
  });

  it('with a bad key, a key without the scope, or an unknown object, answers as GET does (401, 403, 404)', async () => {
    expect((await expectHeadLikeGet(LIST, 'phx_nope')).status).toBe(401);
    expect((await expectHeadLikeGet(LIST, await t.key(['query:read']))).status).toBe(403);
    expect((await expectHeadLikeGet(`${LIST}999999/`)).status).toBe(404);
    expect((await expectHeadLikeGet('/api/environments/1/nothing_here/')).status).toBe(404);
  });

  it('answers like GET without a body with production settings too (responses not validated, bodies written as serialized)', async () => {
    const prod = await startTestServer({ validateResponses: false });
    try {
      for (const path of [LIST, '/api/environments/1/events/?limit=5', '/api/projects/']) {
        const get = await prod.fetch(path);
        const getBody = await get.arrayBuffer();
        const head = await prod.fetch(path, { method: 'HEAD' });
        expect(head.status, path).toBe(200);
        expect(stableHeaders(head), path).toEqual(stableHeaders(get));
        expect(head.headers.get('content-length'), path).toBe(String(getBody.byteLength));
        expect((await head.arrayBuffer()).byteLength, path).toBe(0);
      }
    } finally {
      await prod.close();
    }
  });

  it('on a path without a GET operation answers 405, naming HEAD', async () => {
    const path = '/api/environments/1/pipeline_destination_configs/rearrange/';
    const head = await t.fetch(path, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    // the body HEAD does not send is the one DRF would send for HEAD
    const detail = JSON.stringify(methodNotAllowed('HEAD'));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(detail)));
  });
});
