/**
 * Contract ↔ mock, the routes beside the hand-written API: PostHog's capture endpoints and the
 * SDKs' start-up calls (`x-served-by: capture`, tags `capture` and `sdk`), each answering its
 * declared example on the Prism mock (`npm run mock`), and every generated
 * `/api/projects/{project_id}/` copy (scripts/gen-projects-paths.mjs), served exactly as its
 * `/api/environments/` twin.
 */
import { describe, expect, it } from 'vitest';
import { listCaptureOperations, type SpecOperation } from '../../server/http/spec.js';
import { mock, useMock } from '../helpers/mock-contract.js';
import { deref, environmentsTwin, opObject, paramsOf, projectsCopies, spec, type Schema } from '../helpers/spec.js';

useMock();

describe('the Prism mock, capture endpoints (x-served-by: capture)', () => {
  const captureOps = listCaptureOperations(spec).filter((o) => opObject(o).tags?.includes('capture'));
  it.each(captureOps.filter((o) => o.method === 'post').map((o) => [o.path]))(
    'POST %s with the batch example and the project token answers the 200 example',
    async (path) => {
      const op = captureOps.find((o) => o.path === path && o.method === 'post')!;
      const body = deref<Schema>(opObject(op).requestBody).content['application/json'].examples.batch;
      const res = await fetch(`${mock.url}${path}?token=phc_mock`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(deref<{ value: unknown }>(body).value),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'Ok' });
    },
  );
});

describe('the Prism mock, SDK start-up calls (tag sdk)', () => {
  const exampleValue = (op: string, status: string, media: string) => {
    const found = listCaptureOperations(spec).find((o) => o.operationId === op)!;
    const content = deref<Schema>(opObject(found).responses[status]).content[media];
    return deref<{ value: unknown }>(Object.values(content.examples as Record<string, unknown>)[0]).value;
  };
  it('POST /flags/?v=2 answers the no-flag example', async () => {
    const res = await fetch(`${mock.url}/flags/?v=2&token=phc_mock`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: 'phc_mock', distinct_id: 'u' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(exampleValue('capture_flags_create', '200', 'application/json'));
  });
  it('GET /array/{token}/config and config.js answer the remote config examples', async () => {
    const json = await fetch(`${mock.url}/array/phc_mock/config`);
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual(exampleValue('capture_array_config_retrieve', '200', 'application/json'));
    const js = await fetch(`${mock.url}/array/phc_mock/config.js`);
    expect(js.status).toBe(200);
    expect(await js.text()).toBe(exampleValue('capture_array_config_js_retrieve', '200', 'application/javascript'));
  });
});

/**
 * A request of `op` built from the spec's examples: each path parameter's first example, each
 * required query parameter's, the request body's first example.
 */
function exampleRequest(op: SpecOperation): { path: string; init: RequestInit } {
  const exampleOf = (p: { example?: unknown; examples?: Record<string, { value?: unknown }> }) =>
    p.example ?? Object.values(p.examples ?? {})[0]?.value;
  let path = op.path;
  const query = new URLSearchParams();
  for (const p of paramsOf(op)) {
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(exampleOf(p))));
    else if (p.in === 'query' && p.required) query.set(p.name, String(exampleOf(p)));
  }
  const init: RequestInit = { method: op.method.toUpperCase(), headers: { Authorization: 'Bearer phx_mock' } };
  const rb = opObject(op).requestBody;
  if (rb) {
    const examples = deref<Schema>(rb).content?.['application/json']?.examples as Record<string, unknown> | undefined;
    const first = examples && deref<{ value: unknown }>(Object.values(examples)[0]).value;
    init.body = JSON.stringify(first);
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
  }
  return { path: query.size ? `${path}?${query}` : path, init };
}

describe('the Prism mock, under /api/projects/{project_id}/', () => {
  it.each(projectsCopies.map((o) => [o.operationId, o]))('serves %s as it serves its /api/environments/ twin', async (_id, op) => {
    const twin = environmentsTwin(op)!;
    const [mine, theirs] = [exampleRequest(op), exampleRequest(twin)];
    const [a, b] = await Promise.all([fetch(mock.url + mine.path, mine.init), fetch(mock.url + theirs.path, theirs.init)]);
    // the same answer (the examples are shared components), and never Prism's 404 of an unknown path
    expect(a.status, `${op.method} ${mine.path}`).toBe(b.status);
    expect(a.status).not.toBe(404);
    expect(await a.text()).toBe(await b.text());
  });
});
