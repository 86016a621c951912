/**
 * Plain regression tests for the failures the fuzzers found (`contract.fuzz.test.ts`, the random
 * requests, and `control-chars.fuzz.test.ts`, the control-character sweep), each reduced to one
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
 * 3. U+0000 in a property filter key (`properties=[{"key":"\u0000","value":"x"}]`, every operator,
 *    `event` and `person` types) and in `events/values/?key=%00` answered 500 on both stores
 *    (SQLite: "bad JSON path", the quoted path cut at the NUL; PostgreSQL: "invalid byte sequence
 *    for encoding UTF8: 0x00", as for NUL anywhere in text that reaches SQL: filter values, `event`,
 *    `distinct_id`, `value`, `event_name`, and every string of a body, `config` keys and values
 *    included, which SQLite stored). Now 400 `null_characters_not_allowed` naming the parameter or
 *    field, on both stores, as PostHog's serializers answer; unpaired surrogates (stored as U+FFFD,
 *    i.e. not as sent) answer 400 `surrogate_characters_not_allowed`. Below the HTTP check the
 *    store reads such keys correctly (SQLite through json_each, PostgreSQL as a key no row has).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { invalid, NOT_FOUND } from '../helpers/errors.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import type { PropertyFilter, PropertyGroup } from '../../server/storage/events/filter-tree.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import { usesPostgres } from '../helpers/server.js';

const invalidInteger = (attr: string) => invalid('A valid integer is required.', attr);

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
      {
        uuid: randomUUID(),
        event: '$pageview',
        distinct_id: 'redos',
        properties: { redos: `${'a'.repeat(25_000)}!`, $browser: 'Chrome' },
        timestamp: formatTimestamp(new Date(Date.now() - 60_000)),
        elements_chain: '',
      },
    ]);
    // a person for the event (person-type filters read its properties)
    await new EventsWriteRepository(trx).applyPersonUpdates(1, [{ distinct_id: 'redos', set: { email: 'redos@example.com' } }]);
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

describe('fuzz finding 3: U+0000 and unpaired surrogates answer 400, not 500 (both stores)', () => {
  const nul = (attr: string) => ({
    status: 400,
    body: { type: 'validation_error', code: 'null_characters_not_allowed', detail: 'Null characters are not allowed.', attr },
  });
  const surrogate = (attr: string, hex: string) => ({
    status: 400,
    body: {
      type: 'validation_error',
      code: 'surrogate_characters_not_allowed',
      detail: `Surrogate characters are not allowed: U+${hex}.`,
      attr,
    },
  });
  const props = (filters: unknown) => `/api/environments/1/events/?properties=${encodeURIComponent(JSON.stringify(filters))}`;
  /** a value each operator accepts, so that only the key can be what is refused */
  const valueFor: Record<string, unknown> = {
    exact: 'x',
    is_not: 'x',
    icontains: 'x',
    not_icontains: 'x',
    regex: 'x',
    not_regex: 'x',
    gt: 1,
    lt: 1,
    gte: 1,
    lte: 1,
    is_set: undefined,
    is_not_set: undefined,
    is_date_exact: '2024-01-01',
    is_date_after: '2024-01-01',
    is_date_before: '2024-01-01',
  };

  for (const type of ['event', 'person']) {
    for (const [operator, value] of Object.entries(valueFor)) {
      it(`GET /api/environments/1/events/?properties=[{"key":"\\u0000","operator":"${operator}","type":"${type}"}]`, async () => {
        expect(await get(props([{ key: '\u0000', value, operator, type }]))).toEqual(nul('properties'));
      });
    }
    for (const operator of ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex']) {
      it(`GET /api/environments/1/events/?properties=[{"key":"$browser","value":"a\\u0000b","operator":"${operator}","type":"${type}"}]`, async () => {
        expect(await get(props([{ key: '$browser', value: 'a\u0000b', operator, type }]))).toEqual(nul('properties'));
      });
    }
  }

  it('GET /api/environments/1/events/?properties=[{"key":"\\u0000","value":"x"}] (no operator, no type)', async () => {
    expect(await get(props([{ key: '\u0000', value: 'x' }]))).toEqual(nul('properties'));
  });
  it('GET /api/environments/1/events/?properties= a group with NUL in a nested filter, and in an array value', async () => {
    expect(
      await get(
        props({
          type: 'OR',
          values: [
            { key: '$browser', value: 'Chrome' },
            { type: 'AND', values: [{ key: 'k\u0000', value: 'x' }] },
          ],
        }),
      ),
    ).toEqual(nul('properties'));
    expect(await get(props([{ key: '$browser', value: ['Chrome', '\u0000'] }]))).toEqual(nul('properties'));
  });
  it('GET /api/environments/1/events/?properties= with an unpaired surrogate', async () => {
    expect(await get(props([{ key: '\ud800', value: 'x' }]))).toEqual(surrogate('properties', 'D800'));
    expect(await get(props([{ key: '$browser', value: 'x\udc00' }]))).toEqual(surrogate('properties', 'DC00'));
  });
  for (const param of ['event', 'distinct_id']) {
    it(`GET /api/environments/1/events/?${param}=%00`, async () => {
      expect(await get(`/api/environments/1/events/?${param}=a%00b`)).toEqual(nul(param));
    });
  }

  for (const query of ['key=%00', 'key=%00&event_name=%24pageview', 'key=%00&format=csv', 'key=a%00b&is_column=false']) {
    it(`GET /api/environments/1/events/values/?${query}`, async () => {
      expect(await get(`/api/environments/1/events/values/?${query}`)).toEqual(nul('key'));
    });
  }
  it('GET /api/environments/1/events/values/?key=$browser&value=%00', async () => {
    expect(await get('/api/environments/1/events/values/?key=$browser&value=%00')).toEqual(nul('value'));
  });
  it('GET /api/environments/1/events/values/?key=$browser&event_name=$pageview&event_name=%00', async () => {
    expect(await get('/api/environments/1/events/values/?key=$browser&event_name=$pageview&event_name=%00')).toEqual(nul('event_name'));
  });

  async function send(method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await t.fetch(path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }
  const pluginId = () => (t.boot.plugins.find((p) => p.name === 'Customer.io') as { id: number }).id;

  it('POST …/pipeline_frontend_apps_configs/ with NUL in name, in a config value and in a config key', async () => {
    const url = '/api/environments/1/pipeline_frontend_apps_configs/';
    expect(await send('POST', url, { plugin: pluginId(), order: 1, name: 'x\u0000' })).toEqual(nul('name'));
    expect(await send('POST', url, { plugin: pluginId(), order: 1, config: { api_key: 'k\u0000' } })).toEqual(nul('config__api_key'));
    expect(await send('POST', url, { plugin: pluginId(), order: 1, config: { 'k\u0000': 'v' } })).toEqual(nul('config'));
    expect(await send('POST', url, { plugin: pluginId(), order: 1, config: { nested: { list: ['ok', '\u0000'] } } })).toEqual(
      nul('config__nested__list__1'),
    );
  });
  it('POST …/pipeline_frontend_apps_configs/ with an unpaired surrogate in name', async () => {
    expect(
      await send('POST', '/api/environments/1/pipeline_frontend_apps_configs/', { plugin: pluginId(), order: 1, name: '\ud83d' }),
    ).toEqual(surrogate('name', 'D83D'));
  });
  it('PATCH …/pipeline_destination_configs/{id}/ with NUL in description and config', async () => {
    const url = `/api/environments/1/pipeline_destination_configs/${configId}/`;
    expect(await send('PATCH', url, { description: '\u0000' })).toEqual(nul('description'));
    expect(await send('PATCH', url, { config: { host: 'a\u0000' } })).toEqual(nul('config__host'));
  });
  it('POST …/dashboards/create_from_template_json/ with NUL in a tile body and in dashboard_filters', async () => {
    const url = '/api/environments/1/dashboards/create_from_template_json/';
    const template = (over: Record<string, unknown>) => ({
      template: {
        template_name: 'T',
        dashboard_description: 'D',
        dashboard_filters: {},
        tiles: [
          { type: 'TEXT', body: 'ok' },
          { type: 'TEXT', body: 'b' },
        ],
        ...over,
      },
    });
    expect(
      await send(
        'POST',
        url,
        template({
          tiles: [
            { type: 'TEXT', body: 'ok' },
            { type: 'TEXT', body: 'b\u0000' },
          ],
        }),
      ),
    ).toEqual(nul('template__tiles__1__body'));
    expect(await send('POST', url, template({ dashboard_filters: { date_from: '\u0000' } }))).toEqual(
      nul('template__dashboard_filters__date_from'),
    );
    expect(await send('POST', url, template({ template_name: 'T\u0000' }))).toEqual(nul('template__template_name'));
  });
  it('answers other control characters as ordinary text (U+0001, U+001F, U+007F)', async () => {
    const created = await send('POST', '/api/environments/1/pipeline_frontend_apps_configs/', {
      plugin: pluginId(),
      order: 1,
      config: { '\u0001k': '\u001f\u007f' },
    });
    expect(created.status).toBe(201);
    expect((created.body as { config: unknown }).config).toEqual({ '\u0001k': '\u001f\u007f' });
    expect((await get('/api/environments/1/events/values/?key=%01')).status).toBe(200);
  });
});

describe('fuzz finding 3, below the HTTP check: the store reads keys with NUL and control characters', () => {
  const before = () => formatTimestamp(new Date(Date.now() + 60_000));
  const group = (f: PropertyFilter): PropertyGroup => ({ kind: 'group', type: 'AND', values: [f] });
  const list = async (f: PropertyFilter) =>
    (await new RowEventsStore(t.store.db).list({ teamId: 1, before: before(), offset: 0, limit: 10, properties: group(f) })).map(
      (e) => e.distinct_id,
    );

  for (const type of ['event', 'person'] as const) {
    it(`a ${type} key with U+0000 that no row has: exact, icontains and is_set match nothing, is_not_set matches every row`, async () => {
      expect(await list({ kind: 'filter', key: '\u0000', type, operator: 'exact', texts: ['x'] })).toEqual([]);
      expect(await list({ kind: 'filter', key: 'a\u0000', type, operator: 'icontains', needle: 'x' })).toEqual([]);
      expect(await list({ kind: 'filter', key: '\u0000', type, operator: 'is_set' })).toEqual([]);
      expect(await list({ kind: 'filter', key: '\u0000', type, operator: 'is_not_set' })).toEqual(['redos']);
      expect(await list({ kind: 'filter', key: '\u0000', type, operator: 'gt', number: 0 })).toEqual([]);
    });
  }
  it('a needle with U+0000 is in no property (icontains nothing, not_icontains every row holding the key)', async () => {
    expect(await list({ kind: 'filter', key: '$browser', type: 'event', operator: 'icontains', needle: '\u0000' })).toEqual([]);
    expect(await list({ kind: 'filter', key: '$browser', type: 'event', operator: 'not_icontains', needle: '\u0000' })).toEqual(['redos']);
  });
  it('values of a key with U+0000: none', async () => {
    const since = formatTimestamp(new Date(Date.now() - 86_400_000));
    const rows = await new RowEventsStore(t.store.db).values({
      teamId: 1,
      key: '\u0000',
      isColumn: false,
      since,
      until: before(),
      scan: 100,
      limit: 10,
      order: 'frequency',
    });
    expect(rows).toEqual([]);
  });
  it.skipIf(usesPostgres())('SQLite (which can hold it): a stored key with U+0000 or U+0001 is found exactly', async () => {
    await t.store.db.transaction().execute(async (trx) => {
      await new EventsWriteRepository(trx).insertEvents(1, [
        {
          uuid: randomUUID(),
          event: 'nul key',
          distinct_id: 'nul-key',
          properties: { 'k\u0000x': 'held', '\u0001': 'one' },
          timestamp: formatTimestamp(new Date(Date.now() - 30_000)),
          elements_chain: '',
        },
      ]);
    });
    expect(await list({ kind: 'filter', key: 'k\u0000x', type: 'event', operator: 'exact', texts: ['held'] })).toEqual(['nul-key']);
    expect(await list({ kind: 'filter', key: 'k\u0000x', type: 'event', operator: 'is_set' })).toEqual(['nul-key']);
    expect(await list({ kind: 'filter', key: 'k\u0000y', type: 'event', operator: 'is_set' })).toEqual([]);
    expect(await list({ kind: 'filter', key: '\u0001', type: 'event', operator: 'exact', texts: ['one'] })).toEqual(['nul-key']);
  });
});

describe('a path segment that is not UTF-8 once decoded', () => {
  // express-openapi-validator refuses it ("malformed uri'"), which answered 400 with the raw path as
  // attr, also where the operation declares no 400; it names nothing: 404, as any unknown id.
  it("GET /api/environments/1/dashboards/%ED%A0%80/ (a lone surrogate's bytes) answers 404", async () => {
    expect(await get('/api/environments/1/dashboards/%ED%A0%80/')).toEqual({ status: 404, body: NOT_FOUND });
  });
});

describe('a JSON body sent to an operation that declares none', () => {
  // The NUL check read `requestBody: null` (the validator's mark for "no body") as a declared body
  // and answered 400, which DELETE does not declare; response validation then reported it through
  // a next(err) the request path ignored, and the request never answered.
  for (const body of ['"\\u0000"', '"\\ud800"', '{"a":"\\u0000"}']) {
    it(`DELETE /api/environments/1/explicit_members/{id}/ with the body ${body} answers 404 (the body is not read)`, async () => {
      const res = await t.fetch('/api/environments/1/explicit_members/01934e70-0a1b-7c2d-8e3f-4a5b6c7d8e9f/', {
        method: 'DELETE',
        body,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(res.status).toBe(404);
    });
  }
});
