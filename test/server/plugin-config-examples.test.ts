/**
 * The request examples of the plugin-config create operations (issue 37), run against a freshly
 * bootstrapped server through the real HTTP stack, response validation on: each example of
 * `environments_pipeline_frontend_apps_configs_create` and its projects twin answers 201 with what
 * it sent, and the first one, `minimal`, is the smallest working body (the two required fields;
 * plugin 7, Pineapple Mode, on a fresh store). Leaving `order` out answers PostHog's 400 `required`
 * with a `detail` that says what to send (`x-required-detail` in openapi.yaml).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { deref, opObject, type Schema } from '../helpers/spec.js';

const CREATES = ['environments_pipeline_frontend_apps_configs_create', 'pipeline_frontend_apps_configs_create'] as const;
const PATHS: Record<(typeof CREATES)[number], string> = {
  environments_pipeline_frontend_apps_configs_create: '/api/environments/1/pipeline_frontend_apps_configs/',
  pipeline_frontend_apps_configs_create: '/api/projects/1/pipeline_frontend_apps_configs/',
};

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t?.close();
});

/** The request body examples of an operation, by name, in the spec's order. */
function requestExamples(operationId: string): Array<[string, Record<string, unknown>]> {
  const body = deref<Schema>(opObject(operationId).requestBody);
  const examples = (body.content?.['application/json']?.examples ?? {}) as Record<string, unknown>;
  return Object.entries(examples).map(([name, ex]) => [name, deref<{ value: Record<string, unknown> }>(ex).value]);
}

/** POSTs `body` as JSON with the bootstrap key (scope `*`). */
async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('POST /api/projects/{project_id}/pipeline_frontend_apps_configs/ (and its /api/environments/ alias): the request examples', () => {
  it('the first example, minimal, is plugin and order only, and plugin 7 is Pineapple Mode on a fresh store', () => {
    for (const id of CREATES) {
      const [first] = requestExamples(id);
      expect(first?.[0], id).toBe('minimal');
      expect(first?.[1]).toEqual({ plugin: 7, order: 0 });
    }
    expect(t.boot.plugins.find((p) => p.id === 7)?.name).toBe('Pineapple Mode');
  });

  it('every example answers 201 with the config it describes, under both prefixes', async () => {
    for (const id of CREATES) {
      const examples = requestExamples(id);
      expect(examples.length, id).toBeGreaterThan(0);
      for (const [name, value] of examples) {
        const res = await post(PATHS[id], value);
        expect(res.status, `${id} ${name}: ${JSON.stringify(res.body)}`).toBe(201);
        expect(res.body).toMatchObject({ plugin: value.plugin, order: value.order, enabled: value.enabled ?? false, deleted: false });
        expect((res.body.plugin_info as { id: number }).id).toBe(value.plugin);
      }
    }
  });

  it('the minimal body creates a disabled Pineapple Mode config that the frontend apps list then shows', async () => {
    const created = await post(PATHS.pipeline_frontend_apps_configs_create, { plugin: 7, order: 0 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ plugin: 7, order: 0, enabled: false, config: {}, name: 'Pineapple Mode' });
    const list = (await t.json('/api/projects/1/pipeline_frontend_apps_configs/')) as { results: Array<{ id: number }> };
    expect(list.results.map((c) => c.id)).toContain(created.body.id);
  });

  it('without order, answers 400 required with attr order and a detail saying what to send', async () => {
    for (const id of CREATES) {
      const res = await post(PATHS[id], { plugin: 7, enabled: true });
      expect(res.status, id).toBe(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail:
          'This field is required: send "order", an integer giving the config\'s position among the project\'s plugin configs (lowest first), e.g. {"plugin": 7, "order": 0}.',
        attr: 'order',
      });
    }
  });
});
