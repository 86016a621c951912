/**
 * Plain regression tests for the failures `contract.fuzz.test.ts` found, each reduced to one
 * request. They assert the correct behaviour (they fail until the server is fixed).
 *
 * 1. `offset=Infinity` / `-Infinity` / `limit=Infinity` on the paginated lists answered 500
 *    (SqliteError: datatype mismatch): the value passed the validator as a number and reached
 *    SQLite's LIMIT/OFFSET. DRF's IntegerField refuses it: 400 "A valid integer is required.".
 * 2. A `regex` property filter with catastrophic backtracking (`(a+)+$`) against a stored value
 *    `aaaa…!` blocked the event loop for seconds (exponential in the value's length; 25 `a` ≈ 3.4 s,
 *    30 `a` ≈ minutes) — every other request waits meanwhile. PostHog evaluates regexes with re2
 *    (linear time), and so does this server now: the pattern is valid RE2 and answers its correct
 *    result (a backtracking engine would not finish within the test's timeout on 25,000 `a`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { EventsWriteRepository } from '../../server/storage/repositories/events-write.js';
import { formatTimestamp } from '../../server/domain/timestamps.js';


const invalidInteger = (attr: string) => ({ type: 'validation_error', code: 'invalid_input', detail: 'A valid integer is required.', attr });

let t: TestServer;
let configId: number;

beforeAll(async () => {
  t = await startTestServer();
  const plugin = t.boot.plugins.find((p) => p.name === 'Customer.io');
  if (!plugin) throw new Error('no Customer.io in the bootstrap catalog');
  const res = await t.fetch('/api/environments/1/pipeline_frontend_apps_configs/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ plugin: plugin.id, order: 1, config: {} }),
  });
  configId = ((await res.json()) as { id: number }).id;
  await t.store.db.transaction().execute(async (trx) => {
    await new EventsWriteRepository(trx).insertEvents(1, [
      { uuid: randomUUID(), event: '$pageview', distinct_id: 'redos', properties: { redos: `${'a'.repeat(25_000)}!` }, timestamp: formatTimestamp(new Date(Date.now() - 60_000)), elements_chain: '' },
    ]);
  });
});

afterAll(async () => {
  await t.close();
});

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await t.fetch(path);
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('fuzz finding 1: Infinity as limit / offset answers 400, not 500', () => {
  const lists = ['/api/projects/', '/api/environments/1/pipeline_frontend_apps_configs/', '/api/environments/1/dashboards/'];
  for (const list of lists) {
    for (const [param, value] of [
      ['offset', 'Infinity'],
      ['offset', '-Infinity'],
      ['limit', 'Infinity'],
    ] as const) {
      it(`GET ${list}?${param}=${value}`, async () => {
        expect(await get(`${list}?${param}=${value}`)).toEqual({ status: 400, body: invalidInteger(param) });
      });
    }
  }

  for (const value of ['Infinity', '-Infinity']) {
    it(`GET /api/environments/1/events/?offset=${value}`, async () => {
      expect(await get(`/api/environments/1/events/?offset=${value}`)).toEqual({ status: 400, body: invalidInteger('offset') });
    });
  }

  for (const [param, value] of [
    ['page', 'Infinity'],
    ['limit', 'Infinity'],
    ['limit', '-Infinity'],
  ] as const) {
    it(`GET …/pipeline_destination_configs/{id}/activity/?${param}=${value}`, async () => {
      const a = await get(`/api/environments/1/pipeline_destination_configs/${configId}/activity/?${param}=${value}`);
      expect(a.status).toBe(400);
      expect(a.body).toMatchObject({ type: 'validation_error', attr: param });
    });
  }
});

describe('fuzz finding 2: a backtracking regex filter does not block the server', () => {
  it('GET /api/environments/1/events/?properties=[{"key":"redos","value":"(a+)+$","operator":"regex"}] answers the correct result', async () => {
    const filter = (value: string) => encodeURIComponent(JSON.stringify([{ key: 'redos', value, operator: 'regex' }]));
    const none = await get(`/api/environments/1/events/?properties=${filter('(a+)+$')}`);
    expect(none.status).toBe(200);
    expect((none.body as { results: unknown[] }).results).toHaveLength(0);
    const one = await get(`/api/environments/1/events/?properties=${filter('(a+)+!$')}`);
    expect((one.body as { results: { distinct_id: string }[] }).results.map((e) => e.distinct_id)).toEqual(['redos']);
  });
});
