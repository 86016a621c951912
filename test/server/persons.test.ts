/**
 * The `persons` operations through the real HTTP stack (response validation on), under both
 * prefixes: `GET …/persons/` (PostHog's list rows, newest first, filters `distinct_id`, `email`,
 * `search`, `properties`, limit/offset paging with absolute `next` / `previous` links that keep the
 * caller's prefix and parameters, `count` only with `include_total`) and `GET …/persons/{id}/` (by
 * integer id or UUID; a distinct id answers 400 with PostHog's message, an unknown id 404).
 * Persons are made the way the events store makes them: by importing events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { invalid, missingScope, NOT_AUTHENTICATED, NOT_FOUND } from '../helpers/errors.js';
import type { components } from '../../client/index.js';

type Page = components['schemas']['PaginatedPersonList'];
type Row = components['schemas']['SerializedPerson'];
type Person = components['schemas']['Person'];

const ANON = '01934e70-1f2e-7d3c-9b8a-7c6d5e4f3a2b';
const BOB = '01934e71-aaaa-7bbb-8ccc-ddddeeeeffff';
const PREFIXES = ['/api/environments', '/api/projects'] as const;

let t: TestServer;
let P: number;
let Q: number;

/** Every person of project `team`, in the list's order (created_at desc, id desc), read off the store. */
async function storedOrder(team: number): Promise<{ id: number; uuid: string }[]> {
  return t.store.db
    .selectFrom('persons')
    .select(['id', 'uuid'])
    .where('team_id', '=', team)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

async function json<T>(path: string, key?: string | null): Promise<{ status: number; body: T }> {
  const res = await t.fetch(path, key === undefined ? {} : { key });
  return { status: res.status, body: (await res.json()) as T };
}

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Persons second project' })).id;
  await importEvents(t.store, P, [
    { event: '$pageview', distinct_id: ANON, timestamp: '2025-01-01T10:00:00Z', properties: { $browser: 'Chrome' } },
    {
      event: '$identify',
      distinct_id: 'ana@hedgebox.net',
      timestamp: '2025-01-01T10:01:00Z',
      properties: { $anon_distinct_id: ANON, $set: { email: 'ana@hedgebox.net', name: 'Ana Lima', plan: 'pro', age: 31 } },
    },
    { event: '$pageview', distinct_id: BOB, timestamp: '2025-01-01T11:00:00Z', properties: {} },
    {
      event: '$pageview',
      distinct_id: 'carol',
      timestamp: '2025-01-01T12:00:00Z',
      properties: { $set: { Email: 'Carol@Example.COM', plan: 'free', age: 25 } },
    },
  ]);
  await importEvents(t.store, Q, [
    { event: '$pageview', distinct_id: 'dave', timestamp: '2025-01-01T12:00:00Z', properties: { $set: { email: 'dave@hedgebox.net' } } },
  ]);
});

afterAll(async () => {
  await t.close();
});

describe.each(PREFIXES)('GET %s/{project_id}/persons/', (prefix) => {
  const list = (query = '', team = P) => `${prefix}/${team}/persons/${query}`;

  it('answers every person of the project, newest first, in PostHog list rows, without count', async () => {
    const { status, body } = await json<Page>(list());
    expect(status).toBe(200);
    expect(body).not.toHaveProperty('count');
    expect(body.next).toBeNull();
    expect(body.previous).toBeNull();
    expect(body.results.map((r) => r.uuid)).toEqual((await storedOrder(P)).map((p) => p.uuid));
    const ana = body.results.find((r) => r.distinct_ids.includes('ana@hedgebox.net')) as Row;
    expect(ana).toMatchObject({
      type: 'person',
      id: ana.uuid,
      is_identified: true,
      name: 'ana@hedgebox.net',
      distinct_ids: ['ana@hedgebox.net', ANON],
      properties: { email: 'ana@hedgebox.net', name: 'Ana Lima', plan: 'pro', age: 31 },
      matched_recordings: [],
      value_at_data_point: null,
    });
    const bob = body.results.find((r) => r.distinct_ids.includes(BOB)) as Row;
    expect(bob).toMatchObject({ is_identified: false, name: BOB, properties: {} });
    expect(body.results.find((r) => r.distinct_ids.includes('carol'))?.name).toBe('Carol@Example.COM');
    expect(body.results.some((r) => r.distinct_ids.includes('dave'))).toBe(false);
  });

  it('with include_total (even empty), adds count', async () => {
    expect((await json<Page>(list('?include_total'))).body.count).toBe(3);
    expect((await json<Page>(list('?include_total=true&search=carol'))).body.count).toBe(1);
  });

  it('pages with limit and offset: absolute next / previous links keep the prefix and the other parameters', async () => {
    const seen: string[] = [];
    let path: string | null = list('?limit=1&include_total=1');
    let pages = 0;
    while (path) {
      const body: Page = (await json<Page>(path)).body;
      expect(body.count).toBe(3);
      if (pages === 0) expect(body.previous).toBeNull();
      else {
        const previous = new URL(body.previous as string);
        expect(previous.pathname).toBe(`${prefix}/${P}/persons/`);
        expect(Object.fromEntries(previous.searchParams)).toEqual({ limit: '1', include_total: '1', offset: String(pages - 1) });
      }
      seen.push(...body.results.map((r) => r.uuid));
      if (body.next) {
        const next: URL = new URL(body.next);
        expect(next.origin).toBe(new URL(t.url).origin);
        expect(next.pathname).toBe(`${prefix}/${P}/persons/`);
        expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '1', include_total: '1', offset: String(pages + 1) });
        path = next.pathname + next.search;
      } else path = null;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual((await storedOrder(P)).map((p) => p.uuid));
  });

  it('filters by distinct_id, email and search as PostHog does', async () => {
    const uuids = async (q: string) => (await json<Page>(list(q))).body.results.map((r) => r.distinct_ids[0]);
    expect(await uuids(`?distinct_id=${ANON}`)).toEqual(['ana@hedgebox.net']);
    expect(await uuids('?distinct_id=nobody')).toEqual([]);
    expect(await uuids('?distinct_id=')).toHaveLength(3);
    expect(await uuids('?email=ana@hedgebox.net')).toEqual(['ana@hedgebox.net']);
    expect(await uuids('?email=ANA@hedgebox.net')).toEqual([]);
    // search: email contains (any case), or a distinct id exactly; names are not searched
    expect(await uuids('?search=HEDGEBOX')).toEqual(['ana@hedgebox.net']);
    expect(await uuids('?search=carol')).toEqual(['carol']);
    expect(await uuids('?search=caro')).toEqual([]);
    expect(await uuids('?search=Ana%20Lima')).toEqual([]);
    const bob = (await json<Page>(list(`?distinct_id=${BOB}`))).body.results[0] as Row;
    expect(await uuids(`?search=${bob.uuid}`)).toEqual([BOB]);
    expect(await uuids(`?search=${BOB}`)).toEqual([BOB]);
  });

  it('filters by person properties (type person or none)', async () => {
    const names = async (props: unknown) =>
      (await json<Page>(list(`?properties=${encodeURIComponent(JSON.stringify(props))}`))).body.results
        .map((r) => r.distinct_ids[0])
        .sort();
    expect(await names([{ key: 'plan', value: 'pro' }])).toEqual(['ana@hedgebox.net']);
    expect(await names([{ key: 'age', value: 20, operator: 'gt', type: 'person' }])).toEqual(['ana@hedgebox.net', 'carol']);
    expect(
      await names({
        type: 'OR',
        values: [
          { key: 'plan', value: 'free' },
          { key: 'email', operator: 'is_set' },
        ],
      }),
    ).toEqual(['ana@hedgebox.net', 'carol']);
    expect(await names([{ key: 'plan', operator: 'is_not_set' }])).toEqual([BOB]);
  });

  it('answers 400 for properties it cannot read or run on persons', async () => {
    const bad = await json(list('?properties=nope'));
    expect(bad).toEqual({ status: 400, body: invalid('Properties are unparsable!', null) });
    const event = await json(list(`?properties=${encodeURIComponent('[{"key":"$browser","value":"Chrome","type":"event"}]')}`));
    expect(event).toEqual({
      status: 400,
      body: invalid('Property filters of type "event" are not supported; use "person".', 'properties'),
    });
  });

  it('answers 401 without a key and 403 without person:read', async () => {
    expect(await json(list(), null)).toEqual({ status: 401, body: NOT_AUTHENTICATED });
    const key = await t.key(['event_definition:read']);
    expect(await json(list(), key)).toEqual({ status: 403, body: missingScope('person:read') });
    expect((await json(list(), await t.key(['person:read']))).status).toBe(200);
  });
});

describe.each(PREFIXES)('GET %s/{project_id}/persons/{id}/', (prefix) => {
  const one = (id: string | number, team = P) => `${prefix}/${team}/persons/${id}/`;

  it('answers one person by integer id or by UUID (dashes or not), in PersonSerializer shape', async () => {
    const [first] = await storedOrder(P);
    if (!first) throw new Error('no person');
    const byId = await json<Person>(one(first.id));
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({
      id: first.id,
      uuid: first.uuid,
      name: expect.any(String),
      distinct_ids: expect.any(Array),
      properties: expect.any(Object),
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(await json<Person>(one(first.uuid))).toEqual(byId);
    expect(await json<Person>(one(first.uuid.replace(/-/g, '').toUpperCase()))).toEqual(byId);
    // without the trailing slash too
    expect((await json<Person>(one(first.uuid).slice(0, -1))).body).toEqual(byId.body);
  });

  it('answers 400 with PostHog message for an id that is neither an integer nor a UUID', async () => {
    expect(await json(one('ana@hedgebox.net'))).toEqual({
      status: 400,
      body: invalid(
        'The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=ana@hedgebox.net instead.',
        null,
        'invalid',
      ),
    });
    expect((await json(one('12abc'))).status).toBe(400);
  });

  it('answers 404 for an id of no person of the project', async () => {
    const [dave] = await storedOrder(Q);
    if (!dave) throw new Error('no person');
    expect(await json(one(dave.id))).toEqual({ status: 404, body: NOT_FOUND });
    expect(await json(one(dave.uuid))).toEqual({ status: 404, body: NOT_FOUND });
    expect(await json(one(999_999))).toEqual({ status: 404, body: NOT_FOUND });
    expect(await json(one('99999999999999999999'))).toEqual({ status: 404, body: NOT_FOUND });
    expect(await json(one('00000000-0000-0000-0000-000000000000'))).toEqual({ status: 404, body: NOT_FOUND });
    expect((await json(one(dave.id, Q))).status).toBe(200);
  });

  it('answers 403 without person:read', async () => {
    const [first] = await storedOrder(P);
    expect(await json(one(first?.id ?? 1), await t.key(['query:read']))).toEqual({ status: 403, body: missingScope('person:read') });
  });
});

describe('person properties named like members of every JavaScript object', () => {
  it('keeps $set and $set_once keys __proto__, toString, constructor and hasOwnProperty as properties', async () => {
    // JSON.parse: an object literal would make `__proto__` the prototype instead of a key
    const properties = JSON.parse(
      '{"$set":{"__proto__":"p","toString":"t"},"$set_once":{"constructor":"c","hasOwnProperty":"h"}}',
    ) as Record<string, unknown>;
    await importEvents(t.store, Q, [{ event: '$identify', distinct_id: 'members', timestamp: '2025-01-02T10:00:00Z', properties }]);
    const { status, body } = await json<{ results: { properties: Record<string, unknown> }[] }>(
      `/api/environments/${Q}/persons/?distinct_id=members`,
    );
    expect(status).toBe(200);
    expect(Object.entries(body.results[0]!.properties).sort()).toEqual([
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['hasOwnProperty', 'h'],
      ['toString', 't'],
    ]);
  });
});
