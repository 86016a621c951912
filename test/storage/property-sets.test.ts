/**
 * Session-constant properties stored once per distinct set (migration 0011,
 * server/storage/events/property-sets.ts), on both stores through the real HTTP stack. The same events
 * are written to two projects: `pid` through the store's write path (on SQLite: split into the
 * event's own keys, a property set and a key order) and `legacyPid` as rows written before the
 * migration hold them (all the properties in the event). Then:
 * - what the tables hold (SQLite): one set per distinct set, no shared key left in an event;
 * - every read gives the properties back as captured, key for key: the events list, by uuid,
 *   HogQL `properties`, and on SQLite the rebuilt object's very text;
 * - both projects answer alike: fixed and ~120 random filter groups over shared and own keys,
 *   `values` of every key, HogQL over shared keys; again with shared and own keys materialized
 *   (stored columns on SQLite, filled by the backfill and by later inserts), and after
 *   dematerializing them;
 * - a filter on a shared key walks the events in time order, each set read by primary key (SQLite's plan);
 * - a captured event is stored through a set;
 * - the statement docs/deploy.md gives for rolling the code back puts every property back in its
 *   event, reading the same.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../capture/helpers.js';
import { deploySqlBlock } from '../helpers/docs.js';
import { answerText, randomFilterGroups } from '../helpers/filter-groups.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import { eventTimeIn } from '../../server/storage/events/times.js';
import { eventUuidIn, eventUuidText } from '../../server/storage/events/uuids.js';
import { dematerializeProperty, materializedColumnName, materializeProperty } from '../../server/storage/events/materialized.js';
import { eventPropertiesIn, eventPropertiesWhole, SHARED_PROPERTY_KEYS } from '../../server/storage/events/property-sets.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import { EventsWriteRepository, type EventInput } from '../../server/storage/events/write.js';

let t: TestServer;
let pid: number;
let legacyPid: number;

/** Events' properties: shared keys ($os, $browser, …) and own keys interleaved, every JSON kind. */
const PROPS: Record<string, unknown>[] = [
  {
    $os: 'Mac OS X',
    n: 5,
    $browser: 'Chrome',
    $session_id: 's1',
    tags: ['a', 'b'],
    $screen_width: 1440,
    $current_url: 'https://a.test/x',
    obj: { a: 1, b: [2, 'c'] },
    $geoip_latitude: 52.52,
    "it's": 'yes',
  },
  // the same set as the first (its keys in the same order), its own keys elsewhere
  {
    n: 15,
    $os: 'Mac OS X',
    $browser: 'Chrome',
    $session_id: 's1',
    $screen_width: 1440,
    $current_url: 'https://a.test/y',
    $geoip_latitude: 52.52,
  },
  JSON.parse(
    '{"$browser":"Firefox","10":"ten","2":"two","__proto__":"a key","$referrer":"$direct","$os":null,"n":1e21,"s":"10"}',
  ) as Record<string, unknown>,
  { n: 0, s: 'only own keys', when: '2024-03-11T08:30:00Z' },
  { $os: 'Windows', $browser: 'chrome' },
  {},
  {
    $screen_width: 9007199254740992,
    $session_id: '',
    $referrer: 'https://www.google.com/?q=é😀',
    mixed: [1, 2],
    when: '2024-03-10T12:00:00Z',
    $os: 'Windows',
  },
  { $browser: 'Opera Mini', $os: { nested: true }, $session_id: 's2', flag: true, $geoip_latitude: -0.5, when: '2024-03-10', n: '7' },
  { $os: 'Windows', $browser: 'chrome', s: 'Zürich', $screen_width: 0.1, $lib: 'web', $lib_version: '1.200.0' },
  // the set's keys first: the same set again, in a third key order
  {
    $os: 'Mac OS X',
    $browser: 'Chrome',
    $session_id: 's1',
    $screen_width: 1440,
    $geoip_latitude: 52.52,
    $current_url: 'https://a.test/z',
    n: 16,
  },
  // keys a JSON path must quote or cannot hold: read through json_each
  { 'q"k': 1, $os: 'Linux', 'b\\s': [null], 'a.b': { c: 1 }, '': 'empty key', $session_id: 's3' },
];
const KEYS = [
  '$os',
  '$browser',
  '$session_id',
  '$screen_width',
  '$referrer',
  '$geoip_latitude',
  '$lib',
  'n',
  's',
  'tags',
  'obj',
  'when',
  'mixed',
  'flag',
  '$current_url',
  "it's",
  '10',
  'q"k',
  'a.b',
];
/** What a project's answers are compared in: the legacy project's uuids as the other's. */
const uuidOf = (prefix: '8000' | '8001', n: number) => `0190c000-0000-7000-${prefix}-${String(n).padStart(12, '0')}`;
const sameIds = (text: string) => text.replaceAll('0190c000-0000-7000-8001-', '0190c000-0000-7000-8000-');

const base = Date.now() - 3_600_000;
const timestampOf = (n: number) => formatTimestamp(new Date(base + n * 60_000));

function event(n: number, properties: Record<string, unknown>, prefix: '8000' | '8001' = '8000'): EventInput {
  return {
    uuid: uuidOf(prefix, n),
    event: n % 2 ? 'clicked' : '$pageview',
    distinct_id: `d${n % 3}`,
    properties,
    timestamp: timestampOf(n),
    elements_chain: '',
  };
}

/** Writes event `n` to the legacy project as a row written before migration 0011 (all its properties in the event). */
async function writeLegacy(n: number, properties: Record<string, unknown>): Promise<void> {
  const old = event(n, properties, '8001');
  await t.store.db
    .insertInto('events')
    .values({
      uuid: eventUuidIn(t.store.dialect, old.uuid),
      team_id: legacyPid,
      event: old.event,
      distinct_id: old.distinct_id,
      properties: eventPropertiesIn(t.store.dialect, JSON.stringify(properties)) as string,
      timestamp: eventTimeIn(t.store.dialect, old.timestamp),
      elements_chain: '',
      created_at: eventTimeIn(t.store.dialect, new Date().toISOString()),
    })
    .execute();
}

beforeAll(async () => {
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Sets' })).id;
  legacyPid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Sets, written before' })).id;
  await t.store.db.transaction().execute((trx) =>
    new EventsWriteRepository(trx).insertEvents(
      pid,
      PROPS.map((p, n) => event(n, p)),
    ),
  );
  for (let n = 0; n < PROPS.length; n++) await writeLegacy(n, PROPS[n]!);
});

afterAll(async () => {
  await t?.close();
});

/** One request's answer as text (`answerText`), the legacy project's uuids as the other's. */
const answer = async (path: string) => sameIds(await answerText(t, path));

const FIXED = KEYS.flatMap((key) => [
  [{ key, value: 'Windows' }],
  [{ key, operator: 'is_not', value: ['Chrome', '7'] }],
  [{ key, operator: 'icontains', value: 'i' }],
  [{ key, operator: 'regex', value: '^[0-9.]+$' }],
  [{ key, operator: 'gt', value: 3 }],
  [{ key, operator: 'is_set' }],
  [{ key, operator: 'is_not_set' }],
  [{ key, operator: 'is_date_after', value: '2024-03-10' }],
]);
const RANDOM = randomFilterGroups(KEYS, [], 120, 20261127);
const HOGQL = [
  'select properties.$os, properties.n, count() from events group by properties.$os, properties.n order by properties.$os, properties.n',
  'select uuid, properties.$browser, properties.$geoip_latitude, properties.$screen_width, properties.tags from events order by timestamp',
  "select count() from events where properties.$screen_width > 1000 or properties['$os'] = 'Windows'",
  'select properties.$session_id, count() from events where properties.$session_id is not null group by properties.$session_id order by properties.$session_id',
  'select uuid, properties from events order by timestamp',
  "select uuid from events where properties.$referrer like '%google%' order by uuid",
];

/** Every answer of project `teamId` (filters, values, HogQL), the legacy project's uuids as the other's. */
async function answers(teamId: number): Promise<string[]> {
  const out: string[] = [];
  for (const f of [...FIXED, ...RANDOM])
    out.push(await answer(`/api/environments/${teamId}/events/?limit=100&properties=${encodeURIComponent(JSON.stringify(f))}`));
  for (const key of KEYS) out.push(await answer(`/api/environments/${teamId}/events/values/?key=${encodeURIComponent(key)}`));
  for (const q of HOGQL) out.push(sameIds(JSON.stringify(await t.hogql(teamId, q))));
  return out;
}

async function expectAlike(): Promise<void> {
  const [mine, legacy] = [await answers(pid), await answers(legacyPid)];
  const requests = [...FIXED, ...RANDOM, ...KEYS, ...HOGQL].map((r) => JSON.stringify(r));
  for (let i = 0; i < mine.length; i++) expect(mine[i], requests[i]).toBe(legacy[i]);
}

/** The properties of each of the project's events as the list answers them, by uuid, as JSON text. */
async function listed(teamId: number): Promise<Map<string, string>> {
  const page = (await t.json(`/api/environments/${teamId}/events/?limit=100`)) as { results: { id: string; properties: unknown }[] };
  return new Map(page.results.map((e) => [e.id, JSON.stringify(e.properties)]));
}

describe('session-constant properties stored once per distinct set', () => {
  it('keeps each distinct set once (SQLite): the events hold their own keys and the ids; events without a shared key hold them all', async (ctx) => {
    if (t.store.dialect !== 'sqlite') ctx.skip();
    const sets = await sql<{ n: number }>`select count(*) as n from property_sets where team_id = ${pid}`.execute(t.store.db);
    // a set: the shared keys in the order captured
    const sharedOf = (p: Record<string, unknown>) => Object.entries(p).filter(([k]) => SHARED_PROPERTY_KEYS.has(k));
    const distinct = new Set(PROPS.map((p) => JSON.stringify(sharedOf(p))).filter((s) => s !== '[]'));
    expect(Number(sets.rows[0]!.n)).toBe(distinct.size);
    const rows = await sql<{ uuid: string; own: string; property_set_id: number | null; key_order_id: number | null }>`
      select ${eventUuidText(t.store.dialect, sql`uuid`)} as uuid, json(properties) as own, property_set_id, key_order_id from events where team_id = ${pid} order by uuid`.execute(
      t.store.db,
    );
    rows.rows.forEach((r, n) => {
      const keys = Object.keys(PROPS[n]!);
      const hasShared = keys.some((k) => SHARED_PROPERTY_KEYS.has(k));
      expect(r.property_set_id === null, r.uuid).toBe(!hasShared);
      expect(r.key_order_id === null, r.uuid).toBe(!hasShared);
      expect(Object.keys(JSON.parse(r.own) as object), r.uuid).toEqual(keys.filter((k) => !SHARED_PROPERTY_KEYS.has(k)));
    });
    expect(new Set([0, 1, 9].map((n) => rows.rows[n]!.property_set_id)).size).toBe(1);
    // three orders of one set, one order of two sets
    expect(new Set([0, 1, 9].map((n) => rows.rows[n]!.key_order_id)).size).toBe(3);
    expect(rows.rows[4]!.key_order_id).not.toBeNull();
    expect(rows.rows[4]!.property_set_id).not.toBe(rows.rows[8]!.property_set_id);
    const legacy = await sql<{
      n: number;
    }>`select count(*) as n from events where team_id = ${legacyPid} and property_set_id is not null`.execute(t.store.db);
    expect(Number(legacy.rows[0]!.n)).toBe(0);
  });

  it('gives every event its properties back as captured: the list, by uuid, HogQL; on SQLite key for key, and the very text', async () => {
    const expected = new Map(PROPS.map((p, n) => [uuidOf('8000', n), JSON.stringify(p)]));
    // PostgreSQL's jsonb keeps an object's keys in its own order (shorter keys first), sets or not:
    // there the objects are compared
    const asStored = (text: string) => (t.store.dialect === 'sqlite' ? text : (JSON.parse(text) as unknown));
    const asStoredAll = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [k, asStored(v)]));
    expect(asStoredAll(await listed(pid))).toEqual(asStoredAll(expected));
    for (const [uuid, text] of expected)
      expect(
        asStored(JSON.stringify(((await t.json(`/api/environments/${pid}/events/${uuid}/`)) as { properties: unknown }).properties)),
      ).toEqual(asStored(text));
    // HogQL answers the object as JSON text with its keys sorted, on both stores (server/hogql/run.ts)
    const rows = await t.hogql(pid, 'select uuid, properties from events order by uuid');
    expect(rows.map(([uuid, p]) => [uuid, JSON.parse(p as string) as unknown])).toEqual(PROPS.map((p, n) => [uuidOf('8000', n), p]));
    if (t.store.dialect === 'sqlite') {
      const texts = await sql<{
        uuid: string;
        p: string;
      }>`select ${eventUuidText('sqlite', sql`uuid`)} as uuid, json(${eventPropertiesWhole('sqlite')}) as p from events where team_id = ${pid}`.execute(
        t.store.db,
      );
      expect(new Map(texts.rows.map((r) => [r.uuid, r.p]))).toEqual(expected);
    }
  });

  it('answers filters, values and HogQL as the same events written before migration 0011 do', async () => {
    await expectAlike();
  }, 300_000);

  it('filters on a shared key while walking the events in time order, reading each set by its primary key (SQLite)', async (ctx) => {
    if (t.store.dialect !== 'sqlite') ctx.skip();
    // the list stops at its page's end: a common value costs a page's worth of look-ups, not a pass over the project's sets
    const group = {
      kind: 'group' as const,
      type: 'AND' as const,
      values: [{ kind: 'filter' as const, key: '$browser', type: 'event' as const, operator: 'exact' as const, texts: ['Chrome'] }],
    };
    const where = new RowEventsStore(t.store.db).conditions({ teamId: pid, before: formatTimestamp(new Date()), properties: group });
    const plan = await sql<{
      detail: string;
    }>`explain query plan select uuid from events where team_id = ${pid} and ${sql.join(where, sql` and `)} order by timestamp desc limit 100`.execute(
      t.store.db,
    );
    const steps = plan.rows.map((r) => r.detail);
    expect(steps[0]).toMatch(/^SEARCH events USING INDEX events_team_time/);
    expect(steps).toContain('SEARCH s USING INTEGER PRIMARY KEY (rowid=?)');
    expect(steps.join('; ')).not.toMatch(/SCAN s|TEMP B-TREE/);
  });

  it('answers alike with shared and own keys materialized, new events included, and after dematerializing', async () => {
    const keys = ['$os', '$browser', '$screen_width', 'n'];
    const later: Record<string, unknown>[] = [
      { $os: 'Linux', n: 3, $browser: 'Firefox', $screen_width: 1920, $session_id: 's9' },
      { $browser: 'Firefox', n: 4 },
    ];
    // the legacy project's rows exist before the columns, as every such row does
    for (const [i, p] of later.entries()) await writeLegacy(20 + i, p);
    for (const key of keys) await materializeProperty(t.store, 'event', key);
    try {
      // written after: on SQLite the stored columns are filled by the insert
      await t.store.db.transaction().execute((trx) =>
        new EventsWriteRepository(trx).insertEvents(
          pid,
          later.map((p, i) => event(20 + i, p)),
        ),
      );
      const cells = await sql<{
        team_id: number;
        v: string | null;
      }>`select team_id, ${sql.ref(materializedColumnName('event', '$os'))} as v from events where team_id in (${pid}, ${legacyPid}) order by timestamp, team_id`.execute(
        t.store.db,
      );
      const mine = cells.rows.filter((r) => r.team_id === pid).map((r) => r.v);
      expect(mine).toEqual(cells.rows.filter((r) => r.team_id === legacyPid).map((r) => r.v));
      expect(mine).toContain('Linux');
      await expectAlike();
    } finally {
      for (const key of keys) await dematerializeProperty(t.store, 'event', key);
    }
    await expectAlike();
  }, 300_000);

  it('stores a captured event through its set and answers it as sent', async () => {
    const properties = { $os: 'iOS', $browser: 'Mobile Safari', $session_id: 'cap', step: 2, $current_url: 'https://a.test/cap' };
    const uuid = uuidOf('8000', 30);
    const res = await capture(t, '/batch/', {
      api_key: t.boot.team.api_token,
      batch: [{ event: 'captured', distinct_id: 'cap', uuid, properties }],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const stored = ((await t.json(`/api/environments/${t.boot.team.id}/events/${uuid}/`)) as { properties: Record<string, unknown> })
      .properties;
    expect(stored).toEqual(expect.objectContaining(properties));
    const row = await t.store.db
      .selectFrom('events')
      .select([
        sql<unknown>`${t.store.dialect === 'sqlite' ? sql`json(properties)` : sql`properties`}`.as('own'),
        sql<number | null>`${t.store.dialect === 'sqlite' ? sql`property_set_id` : sql`null`}`.as('set_id'),
      ])
      .where('uuid', '=', eventUuidIn(t.store.dialect, uuid))
      .executeTakeFirstOrThrow();
    const own = (typeof row.own === 'string' ? JSON.parse(row.own) : row.own) as Record<string, unknown>;
    if (t.store.dialect === 'sqlite') {
      // the shared keys are in the set, the others in the row
      expect(row.set_id).not.toBeNull();
      expect(Object.keys(own).filter((k) => SHARED_PROPERTY_KEYS.has(k))).toEqual([]);
      expect(own).toEqual(expect.objectContaining({ step: 2, $current_url: 'https://a.test/cap' }));
    } else {
      // PostgreSQL has no sets: the row holds them all
      expect(own).toEqual(expect.objectContaining(properties));
    }
  });

  // last: it puts every property back in its event
  it("docs/deploy.md's statement for rolling the code back puts the properties back in the events, reading the same (SQLite)", async (ctx) => {
    if (t.store.dialect !== 'sqlite') ctx.skip();
    const before = await listed(pid);
    await sql.raw(deploySqlBlock('property_key_orders')).execute(t.store.db);
    const left = await sql<{
      n: number;
    }>`select count(*) as n from events where property_set_id is not null or key_order_id is not null`.execute(t.store.db);
    expect(Number(left.rows[0]!.n)).toBe(0);
    const texts = await sql<{
      uuid: string;
      p: string;
    }>`select ${eventUuidText('sqlite', sql`uuid`)} as uuid, json(properties) as p from events where team_id = ${pid}`.execute(t.store.db);
    expect(new Map(texts.rows.map((r) => [r.uuid, r.p]))).toEqual(before);
    expect(await listed(pid)).toEqual(before);
    await expectAlike();
  }, 300_000);
});
