/**
 * The ClickHouse events store (server/storage/events/clickhouse/) on embedded chDB, through the
 * real HTTP stack: events captured with `/batch/` land in PostHog's `events` table, once per uuid
 * (an SDK's retry changes nothing), with their person; the events list (newest first, keyset
 * cursor, filters on event, distinct_id, person and properties, the person's own properties), one
 * event by uuid, the values suggestions and the event definitions answer as on the row store; and
 * the person mirror follows `$set` and `$identify` merges. Skipped, and said so, when the optional
 * `chdb` cannot be loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseEventsOf } from '../../server/storage/events/index.js';
import { capture, listEvents, type ListedEvent } from '../capture/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { reportSkip } from '../helpers/skips.js';

const chdb = await import('chdb').then(
  () => true,
  () => false,
);
if (!chdb)
  reportSkip(
    'test/storage/clickhouse-events.test.ts',
    'the optional package chdb cannot be loaded',
    'npm install chdb (Linux x64/arm64 glibc, macOS)',
  );

let t: TestServer;
let token: string;

const uuidOf = (n: number) => `01934e70-0000-7000-8000-${String(n).padStart(12, '0')}`;

async function batch(events: Record<string, unknown>[]): Promise<void> {
  const res = await capture(t, '/batch/', { api_key: token, historical_migration: true, batch: events });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe.runIf(chdb)('the events store on ClickHouse (embedded chDB)', () => {
  beforeAll(async () => {
    t = await startTestServer({ eventsStore: 'clickhouse' });
    token = t.boot.team.api_token;
    await batch([
      {
        uuid: uuidOf(1),
        event: '$pageview',
        distinct_id: 'anon-1',
        timestamp: '2024-11-01T10:00:00Z',
        properties: { $browser: 'Chrome', plan: 'pro', price: 10 },
      },
      {
        uuid: uuidOf(2),
        event: '$pageview',
        distinct_id: 'anon-1',
        timestamp: '2024-11-02T10:00:00Z',
        properties: { $browser: 'Firefox', price: 2.5 },
      },
      {
        uuid: uuidOf(3),
        event: '$identify',
        distinct_id: 'alice',
        timestamp: '2024-11-02T11:00:00Z',
        properties: { $anon_distinct_id: 'anon-1', $set: { email: 'alice@example.com' } },
      },
      {
        uuid: uuidOf(4),
        event: 'signup',
        distinct_id: 'bob',
        timestamp: '2024-11-03T09:00:00Z',
        properties: { $set: { email: 'bob@example.com' } },
      },
      { uuid: uuidOf(5), event: 'signup', distinct_id: 'carol', timestamp: '2024-11-03T09:00:00Z', properties: {} },
    ]);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lists the captured events newest first, ties by uuid descending, in PostHog shape', async () => {
    const events = await listEvents(t, '&after=2024-01-01T00:00:00Z&before=2025-01-01T00:00:00Z');
    expect(events.map((e) => e.id)).toEqual([uuidOf(5), uuidOf(4), uuidOf(3), uuidOf(2), uuidOf(1)]);
    const first = events.find((e) => e.id === uuidOf(1)) as ListedEvent;
    expect(first).toMatchObject({ event: '$pageview', distinct_id: 'anon-1', timestamp: '2024-11-01T10:00:00.000000Z' });
    expect(first.properties).toMatchObject({ $browser: 'Chrome', plan: 'pro', price: 10 });
    // the person of anon-1 is alice's after the $identify merge
    expect(first.person?.properties).toEqual({ email: 'alice@example.com' });
  });

  it('stores a uuid sent twice once, and applies its $set once', async () => {
    await batch([
      {
        uuid: uuidOf(4),
        event: 'signup',
        distinct_id: 'bob',
        timestamp: '2024-11-03T09:00:00Z',
        properties: { $set: { email: 'bob2@example.com' } },
      },
    ]);
    const events = await listEvents(t, '&after=2024-01-01T00:00:00Z&before=2025-01-01T00:00:00Z&event=signup');
    expect(events.map((e) => e.id)).toEqual([uuidOf(5), uuidOf(4)]);
    expect(events[1]!.person?.properties).toEqual({ email: 'bob@example.com' });
  });

  it('pages with the keyset cursor', async () => {
    const first = (await t.json(`/api/environments/1/events/?after=2024-01-01T00:00:00Z&before=2025-01-01T00:00:00Z&limit=2`)) as {
      results: ListedEvent[];
      next: string;
    };
    expect(first.results.map((e) => e.id)).toEqual([uuidOf(5), uuidOf(4)]);
    const next = new URL(first.next);
    const second = (await t.json(next.pathname + next.search)) as { results: ListedEvent[] };
    expect(second.results.map((e) => e.id)).toEqual([uuidOf(3), uuidOf(2)]);
  });

  it('filters by distinct_id, person, event properties and person properties', async () => {
    const ids = async (q: string) => (await listEvents(t, `&after=2024-01-01T00:00:00Z&before=2025-01-01T00:00:00Z${q}`)).map((e) => e.id);
    expect(await ids('&distinct_id=anon-1')).toEqual([uuidOf(2), uuidOf(1)]);
    const person = (await t.json(`/api/environments/1/persons/?distinct_id=alice`)) as { results: { uuid: string; id: number }[] };
    const alice = person.results[0]!;
    expect(await ids(`&person_id=${alice.uuid}`)).toEqual([uuidOf(3), uuidOf(2), uuidOf(1)]);
    expect(await ids(`&person_id=${alice.id}`)).toEqual([uuidOf(3), uuidOf(2), uuidOf(1)]);
    const props = (p: unknown) => `&properties=${encodeURIComponent(JSON.stringify(p))}`;
    expect(await ids(props([{ key: '$browser', value: 'Firefox', operator: 'exact', type: 'event' }]))).toEqual([uuidOf(2)]);
    expect(await ids(props([{ key: 'price', value: 5, operator: 'gt', type: 'event' }]))).toEqual([uuidOf(1)]);
    expect(await ids(props([{ key: 'plan', value: 'pro', operator: 'is_not', type: 'event' }]))).toEqual([
      uuidOf(5),
      uuidOf(4),
      uuidOf(3),
      uuidOf(2),
    ]);
    expect(await ids(props([{ key: 'email', value: 'alice', operator: 'icontains', type: 'person' }]))).toEqual([
      uuidOf(3),
      uuidOf(2),
      uuidOf(1),
    ]);
    // carol has a person without the property; is_not holds for her (and for no-person events)
    expect(await ids(props([{ key: 'email', value: 'bob@example.com', operator: 'is_not', type: 'person' }]))).toEqual([
      uuidOf(5),
      uuidOf(3),
      uuidOf(2),
      uuidOf(1),
    ]);
  });

  it('retrieves one event by uuid, and 404s for an unknown one', async () => {
    const e = (await t.json(`/api/environments/1/events/${uuidOf(2)}/`)) as ListedEvent;
    expect(e).toMatchObject({ id: uuidOf(2), event: '$pageview', distinct_id: 'anon-1' });
    const res = await t.fetch(`/api/environments/1/events/${uuidOf(99)}/`);
    expect(res.status).toBe(404);
  });

  it('answers values and event definitions off the events', async () => {
    // values look at the last 7 days
    const now = new Date().toISOString();
    await batch([
      { uuid: uuidOf(6), event: 'recent', distinct_id: 'dave', timestamp: now, properties: { $browser: 'Safari' } },
      { uuid: uuidOf(7), event: 'recent', distinct_id: 'dave', timestamp: now, properties: { $browser: 'Safari' } },
      { uuid: uuidOf(8), event: 'recent', distinct_id: 'erin', timestamp: now, properties: { $browser: 'Edge' } },
    ]);
    const values = (await t.json(`/api/environments/1/events/values/?key=$browser`)) as { name: string }[];
    expect(values.map((v) => v.name)).toEqual(['Safari', 'Edge']);
    const names = (await t.json(`/api/environments/1/events/values/?key=distinct_id&is_column=true&value=DA`)) as { name: string }[];
    expect(names.map((v) => v.name)).toEqual(['dave']);
    const defs = (await t.json(`/api/projects/1/event_definitions/`)) as { results: { name: string }[]; count: number };
    expect(defs.results.map((d) => d.name).sort()).toEqual(['$identify', '$pageview', 'recent', 'signup']);
    expect(defs.count).toBe(4);
  });

  it('answers HogQL on ClickHouse through the query endpoint, with the team guard and persons', async () => {
    const rows = await t.hogql(1, "select event, count() from events where timestamp < '2025-01-01' group by event order by event");
    expect(rows).toEqual([
      ['$identify', 1],
      ['$pageview', 2],
      ['signup', 2],
    ]);
    const people = await t.hogql(
      1,
      "select person.properties.email as email, count() from events where timestamp < '2025-01-01' group by email order by email",
    );
    expect(people).toEqual([
      ['alice@example.com', 3],
      ['bob@example.com', 1],
      [null, 1],
    ]);
  });

  it('keeps the person mirror in ClickHouse: the latest version of each person and distinct id', async () => {
    const ch = clickhouseEventsOf(t.store)!.connection.client;
    const rows = (await (
      await ch.query({
        query:
          'SELECT distinct_id, toString(argMax(person_id, version)) AS person FROM person_distinct_id2 WHERE team_id = 1 GROUP BY distinct_id ORDER BY distinct_id',
        format: 'JSONEachRow',
      })
    ).json()) as { distinct_id: string; person: string }[];
    const byId = new Map(rows.map((r) => [r.distinct_id, r.person]));
    expect(byId.get('anon-1')).toBe(byId.get('alice'));
    expect(new Set(byId.values()).size).toBe(5);
    const persons = (await (
      await ch.query({
        query: 'SELECT argMax(properties, version) AS p FROM person WHERE team_id = 1 GROUP BY id HAVING argMax(is_deleted, version) = 0',
        format: 'JSONEachRow',
      })
    ).json()) as { p: string }[];
    expect(persons.map((r) => JSON.parse(r.p) as unknown)).toEqual(
      expect.arrayContaining([{ email: 'alice@example.com' }, { email: 'bob@example.com' }, {}]),
    );
    // alice (with anon-1), bob, carol, dave, erin: the person anon-1 had before the merge is gone
    expect(persons).toHaveLength(5);
  });
  it('keeps text exactly: tabs, line breaks, backslashes and quotes in the name, distinct id, properties and person properties', async () => {
    const odd = 'a\tb\nc\r\nd\\e\\tf\u0000g"h\'i\\N é😀';
    // capture stores NUL as U+FFFD (server/capture/process.ts), on every store
    const stored = odd.replace('\u0000', '\uFFFD');
    await batch([
      {
        uuid: uuidOf(20),
        event: `odd ${odd}`,
        distinct_id: `odd-${odd}`,
        timestamp: '2024-11-05T10:00:00Z',
        properties: { note: odd, $set: { note: odd } },
      },
    ]);
    const e = (await t.json(`/api/environments/1/events/${uuidOf(20)}/`)) as ListedEvent & { properties: Record<string, unknown> };
    expect(e).toMatchObject({ event: `odd ${stored}`, distinct_id: `odd-${stored}` });
    expect(e.properties.note).toBe(stored);
    const ch = clickhouseEventsOf(t.store)!.connection.client;
    const rows = (await (
      await ch.query({ query: `SELECT person_properties FROM events WHERE uuid = '${uuidOf(20)}'`, format: 'JSONEachRow' })
    ).json()) as { person_properties: string }[];
    expect(JSON.parse(rows[0]!.person_properties)).toEqual({ note: stored });
  });
});
