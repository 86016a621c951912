/**
 * `exact` property filters written as jsonb containment on PostgreSQL (`jsonTextInByContainment`
 * in server/storage/dialect.ts, answered by the GIN index of migration 0007) select exactly the
 * events the text comparison selects.
 *
 * Over events whose properties are stored as written (raw JSON text, so that 12.0, 1.2e1 and -0
 * keep their form) and take every tricky form — 12 vs 12.0 vs "12", true vs "true" vs "TRUE",
 * objects and arrays and their texts, a key `a.b` beside a nested `a` → `b`, non-ASCII and
 * decomposed Unicode, U+FFFD, empty and blank strings, "null", a quote in a key, numbers beyond
 * 2^53 — every events list request (through the real HTTP stack: every key with every value
 * alone, lists of values, 250 random AND/OR groups mixing `exact` with other operators) must
 * answer the events that the same filter compiled as a text comparison selects (the repository's
 * compiler with a source that has no GIN index, run on the same store). On SQLite filters are
 * always text comparisons and the comparison holds trivially; the file runs on both stores like
 * every other.
 *
 * On PostgreSQL the list's SQL is also checked to use containment for most cases (not for a
 * number's text, an object's text, or a materialized property, whose btree index serves better),
 * and its plan to read the GIN index, so that the comparison does not pass merely because
 * containment is never used.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { EventsWriteRepository, type EventInput } from '../../server/storage/events/write.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import { compilePropertyGroup, jsonFilterSource, type FilterSource } from '../../server/storage/events/filters.js';
import { eventUuidIn, eventUuidOut, type StoredEventUuid } from '../../server/storage/events/uuids.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import { parsePropertiesParam } from '../../server/domain/event-filters.js';
import { dematerializeProperty, loadMaterializedColumns, materializeProperty } from '../../server/storage/events/materialized.js';
import type { PropertyGroup } from '../../server/storage/events/filter-tree.js';

let t: TestServer;
let pid: number;
let fillerPid: number;

/** Each event's properties as stored, JSON text written as is (number forms kept). */
const ROWS: string[] = [
  '{"n": 12, "s": "12", "b": true, "t": "true", "a.b": "dot", "a": {"b": "dot"}, "u": "Zürich", "e": "", "obj": {"x": 1, "y": [1, 2]}, "arr": [1, "a"], "big": 1e21, "k\\"q": "quoted", "città": "München 🚀"}',
  '{"n": 12.0, "s": "12.0", "b": "true", "t": true, "a.b": {"c": 1}, "a": {"b": "x"}, "u": "zürich", "e": null, "obj": {"x": 1}, "arr": [1], "big": 1000000000000000000000, "dec": 1.50}',
  '{"n": "12", "s": 12.5, "b": false, "t": "false", "a.b": ["dot"], "u": "ZÜRICH", "e": " ", "obj": "{\\"x\\": 1}", "arr": "[1, \\"a\\"]", "big": "1e+21", "dec": "1.5", "neg": -0}',
  '{"n": 1.2e1, "s": -12, "b": "false", "t": null, "a.b": "", "u": "\\ufffd", "e": "", "dec": 1.5, "neg": 0, "mixed": [true], "k\\"q": 12}',
  '{"n": -12, "s": "-12", "b": null, "a.b": 0, "u": "Zu\\u0308rich", "obj": {}, "arr": [], "dec": "1.50", "neg": "-0", "mixed": "true"}',
  '{}',
  '{"n": 120e-1, "s": "", "b": "TRUE", "t": "True", "a.b": "dot", "neg": 0.0, "big": 9007199254740993, "città": "12"}',
  '{"n": 12.000, "s": "12", "nested": {"n": 12}, "a": {"b": {"c": 1}}, "list": [{"n": 12}], "mixed": 12}',
  '{"a": {"b": "dot"}, "n": [12], "s": {"12": 12}, "b": [true], "t": {"true": true}, "mixed": {"x": 1}}',
];

const KEYS = [
  'n',
  's',
  'b',
  't',
  'a.b',
  'a',
  'u',
  'e',
  'obj',
  'arr',
  'big',
  'k"q',
  'città',
  'dec',
  'neg',
  'mixed',
  'nested',
  'list',
  'missing',
] as const;

/** Filter values: texts of every JSON form above, and JSON numbers and booleans. */
const VALUES: unknown[] = [
  ...[
    '12',
    '12.0',
    '12.000',
    '12.5',
    '-12',
    '120',
    '',
    ' ',
    'true',
    'false',
    'TRUE',
    'True',
    'dot',
    'x',
    'Zürich',
    'zürich',
    'Zu\u0308rich',
    '\ufffd',
  ],
  ...['München 🚀', 'quoted', '1e+21', '1000000000000000000000', '9007199254740993', '1.5', '1.50', '-0', '0', '0.0', 'null'],
  ...['{"x": 1}', '{"x":1}', '{"x": 1, "y": [1, 2]}', '[1, "a"]', '[1]', '[]', '{}', '{"c": 1}', '["dot"]', '[true]', '{"n": 12}'],
  12,
  12.5,
  -12,
  0,
  1.5,
  1e21,
  120,
  true,
  false,
];

beforeAll(async () => {
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'GIN containment' })).id;
  const now = Date.now();
  const events: EventInput[] = ROWS.map((_, i) => ({
    uuid: `0190b000-0000-7000-8000-${String(i).padStart(12, '0')}`,
    event: 'clicked',
    distinct_id: `user-${i}`,
    properties: {},
    timestamp: formatTimestamp(new Date(now - (i + 1) * 60_000)),
    elements_chain: '',
  }));
  await t.store.db.transaction().execute(async (trx) => {
    await new EventsWriteRepository(trx).insertEvents(pid, events);
    // the stored JSON as written: the write path would normalize 12.0 to 12
    for (let i = 0; i < ROWS.length; i++) {
      const json = t.store.dialect === 'postgres' ? sql`${ROWS[i]}::jsonb` : sql`${ROWS[i]}`;
      await sql`update events set properties = ${json} where uuid = ${eventUuidIn(t.store.dialect, events[i]!.uuid)}`.execute(trx);
    }
  });
  // another project of 3,000 events over 30 browsers, one of them Opera Mini: the plan's check
  fillerPid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'GIN filler' })).id;
  const filler: EventInput[] = [];
  for (let i = 0; i < 3000; i++) {
    filler.push({
      uuid: `0190b001-0000-7000-8000-${String(i).padStart(12, '0')}`,
      event: '$pageview',
      distinct_id: `filler-${i % 50}`,
      properties: { $browser: i === 1234 ? 'Opera Mini' : `Browser ${i % 30}`, $os: `OS ${i % 7}`, n: i },
      timestamp: formatTimestamp(new Date(now - (i + 1) * 1000)),
      elements_chain: '',
    });
  }
  await t.store.db.transaction().execute((trx) => new EventsWriteRepository(trx).insertEvents(fillerPid, filler));
  if (t.store.dialect === 'postgres') await sql`analyze events`.execute(t.store.db);
});

afterAll(async () => {
  await t?.close();
});

// ------------------------------------------------------------------------------------------------
// What is compared

const uuidOf = (i: number) => `0190b000-0000-7000-8000-${String(i).padStart(12, '0')}`;

/** The list's answer over HTTP: the events' uuids, newest first (or the status and body when not 200). */
async function listed(properties: unknown): Promise<string> {
  const res = await t.fetch(`/api/environments/${pid}/events/?limit=100&properties=${encodeURIComponent(JSON.stringify(properties))}`);
  const text = await res.text();
  if (res.status !== 200) return `${res.status} ${text}`;
  return JSON.stringify((JSON.parse(text) as { results: { id: string }[] }).results.map((r) => r.id));
}

/** The events' own properties with no GIN index: the compiler writes text comparisons for it. */
const WITHOUT_GIN: FilterSource = jsonFilterSource(sql`events.properties`, 'event', (name) => sql<string | null>`events.${sql.ref(name)}`);

/** `properties` as the list parses it (the domain's parser; undefined for an empty list). */
function group(properties: unknown): PropertyGroup | undefined {
  return parsePropertiesParam(JSON.stringify(properties), { now: new Date(), timezone: 'UTC' });
}

/** The same filter's answer as text comparisons: the repository's compiler on a source without GIN index. */
async function expected(properties: unknown): Promise<string> {
  const g = group(properties);
  const where = g ? compilePropertyGroup(t.store.dialect, g, () => WITHOUT_GIN) : sql<boolean>`(1 = 1)`;
  const rows = await sql<{
    uuid: StoredEventUuid;
  }>`select uuid from events where team_id = ${pid} and ${where} order by timestamp desc, uuid desc limit 100`.execute(t.store.db);
  return JSON.stringify(rows.rows.map((r) => eventUuidOut(r.uuid)));
}

/** The list's WHERE for `properties`, as the repository builds it, compiled to SQL text. */
async function listSql(properties: unknown): Promise<string> {
  const where = new RowEventsStore(t.store.db).conditions({
    teamId: pid,
    before: formatTimestamp(new Date()),
    properties: group(properties),
    materialized: await loadMaterializedColumns(t.store.db),
  });
  return t.store.db
    .selectFrom('events')
    .select('uuid')
    .where(sql<boolean>`${sql.join(where, sql` and `)}`)
    .compile().sql;
}

type Filter = { key: string; operator?: string; value?: unknown };
type Group = { type: 'AND' | 'OR'; values: (Filter | Group)[] };

const filterArb: fc.Arbitrary<Filter> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      key: fc.constantFrom(...KEYS),
      value: fc.oneof(fc.constantFrom(...VALUES), fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 4 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      key: fc.constantFrom(...KEYS),
      operator: fc.constant('is_not'),
      value: fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('is_set', 'is_not_set') }) },
  {
    weight: 1,
    arbitrary: fc.record({
      key: fc.constantFrom(...KEYS),
      operator: fc.constant('icontains'),
      value: fc.constantFrom('1', 'ü', 'true', 'dot', '"'),
    }),
  },
);
const groupArb: fc.Arbitrary<Group> = fc.letrec<{ g: Group }>((tie) => ({
  g: fc.record({
    type: fc.constantFrom('AND' as const, 'OR' as const),
    values: fc.array(fc.oneof({ depthSize: 'small', maxDepth: 3 }, filterArb, tie('g')), { minLength: 1, maxLength: 3 }),
  }),
})).g;

/** Every key with every value alone, some value lists, and random groups. */
const CASES: unknown[] = [
  ...KEYS.flatMap((key) => VALUES.map((value) => [{ key, value }])),
  ...KEYS.map((key) => [{ key, value: ['12', 12, 'true', true, '', 'dot', '{"x": 1}'] }]),
  ...KEYS.map((key) => [{ key, value: ['12.0', '1.5', '-0', 'Zürich', '1000000000000000000000'] }]),
  ...fc.sample(groupArb, { numRuns: 250, seed: 20261127 }),
];

// ------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/ with exact property filters (jsonb containment)', () => {
  it('answers every case as the same filter compared as texts does', async () => {
    const answers = new Set<string>();
    let contained = 0;
    for (const properties of CASES) {
      const got = await listed(properties);
      expect(got, JSON.stringify(properties)).toBe(await expected(properties));
      answers.add(got);
      if ((await listSql(properties)).includes('@>')) contained++;
    }
    // the comparison means something: the cases select many different sets of events, and on
    // PostgreSQL a good part of them used containment
    expect(answers.size).toBeGreaterThan(40);
    if (t.store.dialect === 'postgres') expect(contained).toBeGreaterThan(CASES.length * 0.3);
  }, 300_000);

  it('matches the text form, not jsonb equality: 12 is not 12.0, true is "true" but not "TRUE", a.b is a key, not a path', async () => {
    const ids = async (properties: unknown) => JSON.parse(await listed(properties)) as string[];
    // n: 12 (row 0), "12" (row 2) match; 12.0 (row 1), -12, [12] and a nested n: 12 (row 7) do not
    for (const value of ['12', 12]) {
      const got = await ids([{ key: 'n', value }]);
      expect(got).toEqual(expect.arrayContaining([uuidOf(0), uuidOf(2)]));
      for (const i of [1, 4, 7, 8]) expect(got).not.toContain(uuidOf(i));
    }
    expect(await ids([{ key: 'n', value: '12.0' }])).toEqual(expect.arrayContaining([uuidOf(1)]));
    // newest first: row 0 is the newest event
    expect(await ids([{ key: 'b', value: 'true' }])).toEqual([uuidOf(0), uuidOf(1)]);
    expect(await ids([{ key: 'b', value: true }])).toEqual([uuidOf(0), uuidOf(1)]);
    expect(await ids([{ key: 'a.b', value: 'dot' }])).toEqual([uuidOf(0), uuidOf(6)]);
    expect(await ids([{ key: 'k"q', value: ['quoted', 12] }])).toEqual([uuidOf(0), uuidOf(3)]);
    expect(await ids([{ key: 'città', value: ['München 🚀', '12'] }])).toEqual([uuidOf(0), uuidOf(6)]);
    expect(await ids([{ key: 'e', value: '' }])).toEqual([uuidOf(0), uuidOf(3)]);
    expect(await ids([{ key: 'b', value: 'TRUE' }])).toEqual([uuidOf(6)]);
    expect(await ids([{ key: 't', value: ['true', 'nothing'] }])).toEqual([uuidOf(0), uuidOf(1)]);
    expect(await ids([{ key: 'mixed', value: 'true' }])).toEqual([uuidOf(4)]);
    expect(await ids([{ key: 'u', value: 'Zürich' }])).toEqual([uuidOf(0)]);
    // PostgreSQL writes a number's text in plain decimals (SQLite: 1.0e+21)
    if (t.store.dialect === 'postgres')
      expect(await ids([{ key: 'big', value: '1000000000000000000000' }])).toEqual([uuidOf(0), uuidOf(1)]);
  });

  it('on PostgreSQL, the list uses containment, which reads the GIN index; not for a number, an object or a materialized property', async () => {
    const filter = [{ key: '$browser', value: ['Opera Mini', true] }];
    const text = await listSql(filter);
    if (t.store.dialect === 'sqlite') {
      expect(text).not.toContain('@>');
      return;
    }
    expect(text).toContain('@>');
    // texts that may be a number's or an object's text are compared as texts
    expect(await listSql([{ key: 'n', value: ['x', 12] }])).not.toContain('@>');
    expect(await listSql([{ key: 'obj', value: '{"x": 1}' }])).not.toContain('@>');
    const plan = await t.store.db.transaction().execute(async (trx) => {
      const where = new RowEventsStore(trx).conditions({
        teamId: fillerPid,
        before: formatTimestamp(new Date()),
        properties: group(filter),
      });
      // the list's query (events-read.ts `list`), PostgreSQL told not to read the whole table
      await sql`set local enable_seqscan = off`.execute(trx);
      const query = sql`select uuid from events where team_id = ${fillerPid} and ${sql.join(where, sql` and `)} order by timestamp desc, uuid desc limit 100`;
      return (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)).rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    // events is partitioned by month on PostgreSQL (migration 0008): each partition has its own
    // copy of events_properties_gin, named after the partition (events_p2024_11_properties_idx)
    expect(plan).toMatch(/Bitmap Index Scan on events_\w+_properties_idx/);
    await materializeProperty(t.store, 'event', '$browser');
    try {
      expect(await listSql(filter)).not.toContain('@>');
    } finally {
      await dematerializeProperty(t.store, 'event', '$browser');
    }
  });
});
