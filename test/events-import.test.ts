/**
 * The event import pipeline (server/ingest/import.ts), the Hedgebox demo generator
 * (server/ingest/demo.ts) and their commands (`envapi import events`, `envapi demo`), on a fresh
 * store per test with project 1 from `bootstrap`: a SQLite store in a temporary directory, or in
 * the PostgreSQL pass a fresh PostgreSQL schema (the commands reach it through DATABASE_URL).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { bootstrap } from '../server/bootstrap.js';
import { generateDemoEvents, type DemoEventRow } from '../server/ingest/demo.js';
import { ImportError, importEvents, importEventsFile, type RawEventRow } from '../server/ingest/import.js';
import { migrateToLatest, type Store } from '../server/storage/db.js';
import { elementsChainOf } from '../server/storage/events/element-groups.js';
import { eventTimeText } from '../server/storage/events/times.js';
import { eventUuidOut } from '../server/storage/events/uuids.js';
import { eventPropertiesOut, eventPropertiesWhole } from '../server/storage/events/property-sets.js';
import { fromJson, toBool } from '../server/storage/values.js';
import { childEnv, createTestStoreLocation, refuseInserts, type TestStoreLocation } from './helpers/store.js';
import { usesPostgres } from './helpers/pg.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'envapi.js');
const run = promisify(execFile);
const STORED_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let location: TestStoreLocation;
/** the test's temporary directory: its files (and the SQLite store) */
let dir: string;
let store: Store;

beforeEach(async () => {
  location = await createTestStoreLocation('envapi-import-test-');
  dir = location.dir;
  store = location.open();
  await migrateToLatest(store);
  await bootstrap(store);
});

afterEach(async () => {
  await store.close();
  await location.cleanup();
});

function writeFile(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

function jsonl(rows: unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

async function events() {
  const rows = await store.db
    .selectFrom('events')
    .select([
      'uuid',
      'team_id',
      'event',
      'distinct_id',
      eventPropertiesOut(store.dialect, eventPropertiesWhole(store.dialect)).as('properties'),
      eventTimeText(store.dialect, sql.ref('timestamp')).as('timestamp'),
      elementsChainOf().as('elements_chain'),
      eventTimeText(store.dialect, sql.ref('created_at')).as('created_at'),
    ])
    .orderBy('timestamp')
    .orderBy('uuid')
    .execute();
  return rows.map((r) => ({ ...r, uuid: eventUuidOut(r.uuid), properties: fromJson<Record<string, unknown>>(r.properties) }));
}

async function countEvents(): Promise<number> {
  const r = await store.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function countPersons(): Promise<number> {
  const r = await store.db
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The person of a distinct id, with all its distinct ids. */
async function personOf(distinctId: string) {
  const link = await store.db
    .selectFrom('person_distinct_ids')
    .selectAll()
    .where('team_id', '=', 1)
    .where('distinct_id', '=', distinctId)
    .executeTakeFirst();
  if (!link) return undefined;
  const person = await store.db.selectFrom('persons').selectAll().where('id', '=', link.person_id).executeTakeFirstOrThrow();
  const ids = await store.db
    .selectFrom('person_distinct_ids')
    .select('distinct_id')
    .where('person_id', '=', person.id)
    .orderBy('distinct_id')
    .execute();
  return {
    id: person.id,
    properties: fromJson<Record<string, unknown>>(person.properties),
    is_identified: toBool(person.is_identified),
    distinct_ids: ids.map((i) => i.distinct_id),
  };
}

/** What `importEventsFile` rejects with. */
async function importFailure(file: string, opts: Parameters<typeof importEventsFile>[3] = {}): Promise<ImportError> {
  const err = await importEventsFile(store, 1, file, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportError);
  return err as ImportError;
}

const ANON = '01932a4e-6b1c-7c3e-9a55-2f1e0c9b8a11';
const SAMPLE = [
  {
    uuid: '0193A4E1-0001-7000-8000-00000000000A',
    event: '$pageview',
    distinct_id: ANON,
    properties: { $current_url: 'https://hedgebox.net/', $browser: 'Chrome', $set_once: { $initial_referrer: '$direct' } },
    timestamp: '2024-11-20T15:03:10.871123+01:00',
  },
  {
    uuid: '0193a4e1-0002-7000-8000-00000000000b',
    event: '$autocapture',
    distinct_id: ANON,
    properties: { $event_type: 'click' },
    timestamp: '2024-11-20 14:03:12.5',
    elements_chain: 'button.btn.btn-primary:attr__class="btn btn-primary"nth-child="2"nth-of-type="1"text="Sign up"',
  },
  {
    uuid: '0193a4e1-0003-7000-8000-00000000000c',
    event: '$identify',
    distinct_id: 'user-42',
    properties: { $anon_distinct_id: ANON },
    $set: { email: 'ada@example.com', plan: 'free' },
    $set_once: { $initial_referrer: 'https://google.com/' },
    timestamp: '2024-11-20T14:03:15Z',
  },
  {
    uuid: '0193a4e1-0004-7000-8000-00000000000d',
    event: 'upgraded_plan',
    distinct_id: 'user-42',
    properties: { plan: 'standard', $set: { plan: 'standard' } },
    timestamp: '2024-11-20T14:10:00.000Z',
  },
  {
    uuid: '0193a4e1-0005-7000-8000-00000000000e',
    event: 'signed_up',
    distinct_id: 1234,
    timestamp: '2024-11-21T09:00:00Z',
  },
];

describe('importEventsFile: JSON Lines', () => {
  it('stores exactly the rows, timestamps in UTC with microseconds, properties as objects', async () => {
    const file = writeFile('events.jsonl', jsonl(SAMPLE));
    const summary = await importEventsFile(store, 1, file);
    expect(summary).toMatchObject({ source: file, rows_read: 5, inserted: 5, skipped: 0, skipped_reasons: {}, persons_created: 2 });
    expect(summary.duration_ms).toBeGreaterThanOrEqual(0);
    expect(summary.events_per_second).toBeGreaterThan(0);

    const rows = await events();
    expect(rows.map((r) => [r.uuid, r.event, r.distinct_id, r.timestamp, r.team_id])).toEqual([
      ['0193a4e1-0001-7000-8000-00000000000a', '$pageview', ANON, '2024-11-20T14:03:10.871123Z', 1],
      ['0193a4e1-0002-7000-8000-00000000000b', '$autocapture', ANON, '2024-11-20T14:03:12.500000Z', 1],
      ['0193a4e1-0003-7000-8000-00000000000c', '$identify', 'user-42', '2024-11-20T14:03:15.000000Z', 1],
      ['0193a4e1-0004-7000-8000-00000000000d', 'upgraded_plan', 'user-42', '2024-11-20T14:10:00.000000Z', 1],
      ['0193a4e1-0005-7000-8000-00000000000e', 'signed_up', '1234', '2024-11-21T09:00:00.000000Z', 1],
    ]);
    for (const r of rows) expect(r.timestamp).toMatch(STORED_TS);
    expect(rows[0]!.properties).toEqual(SAMPLE[0]!.properties);
    expect(rows[1]!.elements_chain).toBe(SAMPLE[1]!.elements_chain);
    expect(rows[0]!.elements_chain).toBe('');
    expect(rows[4]!.properties).toEqual({});
    // Top-level $set / $set_once are kept in the event's properties, as PostHog's ingestion does.
    expect(rows[2]!.properties).toEqual({
      $anon_distinct_id: ANON,
      $set: { email: 'ada@example.com', plan: 'free' },
      $set_once: { $initial_referrer: 'https://google.com/' },
    });
  });

  it('creates persons and distinct ids and applies $set, $set_once and $identify', async () => {
    await importEventsFile(store, 1, writeFile('events.jsonl', jsonl(SAMPLE)));
    expect(await countPersons()).toBe(2);
    const user = await personOf('user-42');
    expect(user).toEqual({
      id: expect.any(Number),
      // $identify linked the anonymous id, which had a person already, to the same person.
      distinct_ids: [ANON, 'user-42'].sort(),
      is_identified: true,
      properties: {
        $initial_referrer: '$direct', // $set_once of the first event wins over the later one
        email: 'ada@example.com',
        plan: 'standard', // the later $set wins
      },
    });
    expect((await personOf(ANON))?.id).toBe(user?.id);
    expect(await personOf('1234')).toMatchObject({ distinct_ids: ['1234'], is_identified: false, properties: {} });
  });

  it('reports progress: the whole file validated, then each batch', async () => {
    const calls: [number, number | undefined, string][] = [];
    await importEventsFile(store, 1, writeFile('events.jsonl', jsonl(SAMPLE)), {
      batchSize: 2,
      onProgress: (d, t, p) => calls.push([d, t, p]),
    });
    expect(calls).toEqual([
      [5, undefined, 'validating'],
      [2, 5, 'importing'],
      [4, 5, 'importing'],
      [5, 5, 'importing'],
      // PostgreSQL only: the vacuum of the tables written
      ...(store.dialect === 'postgres' ? [[5, 5, 'vacuuming']] : []),
    ]);
  });

  it.skipIf(!usesPostgres())('on PostgreSQL, vacuums and analyzes what it wrote: every events partition that got rows', async () => {
    // vacuum_count counts VACUUMs run by a session (autovacuum's are counted apart), per partition
    // (relkind 'r': the partitioned parent itself has no rows to vacuum)
    await importEventsFile(store, 1, writeFile('events.jsonl', jsonl(SAMPLE)));
    const after = (
      await sql<{ relname: string; vacuums: string; analyzes: string }>`
        select s.relname, s.vacuum_count as vacuums, s.analyze_count as analyzes
        from pg_stat_user_tables s join pg_class c on c.oid = s.relid
        where s.schemaname = current_schema() and (s.relname like 'events%' or s.relname in ('persons', 'person_distinct_ids')) and c.relkind = 'r' and c.reltuples > 0`.execute(
        store.db,
      )
    ).rows;
    expect(after.map((r) => r.relname)).toEqual(expect.arrayContaining(['persons', 'person_distinct_ids']));
    expect(after.some((r) => r.relname.startsWith('events_'))).toBe(true);
    for (const r of after)
      expect({ table: r.relname, vacuums: Number(r.vacuums) > 0, analyzes: Number(r.analyzes) > 0 }).toEqual({
        table: r.relname,
        vacuums: true,
        analyzes: true,
      });
  });

  it('skips blank lines and a byte order mark, and counts lines as a text editor does', async () => {
    const lines = jsonl(SAMPLE.slice(0, 2)).replace('\n', '\r\n\r\n');
    const file = writeFile('events.ndjson', `\ufeff${lines}\n{"event": "x"}\n`);
    const err = await importFailure(file);
    expect(err.line).toBe(5);
    expect(err.message).toBe(`${file}:5: missing "distinct_id"`);
  });

  it('when the same file is imported again, inserts nothing and reports the duplicates', async () => {
    const file = writeFile('events.jsonl', jsonl(SAMPLE));
    await importEventsFile(store, 1, file);
    const persons = await personOf('user-42');
    const again = await importEventsFile(store, 1, file, { batchSize: 2 });
    expect(again).toMatchObject({ rows_read: 5, inserted: 0, skipped: 5, skipped_reasons: { 'duplicate uuid': 5 }, persons_created: 0 });
    expect(await countEvents()).toBe(5);
    expect(await countPersons()).toBe(2);
    expect(await personOf('user-42')).toEqual(persons);
  });

  it('when part of a file is stored already, inserts the rest and replays person updates only for new rows', async () => {
    await importEventsFile(store, 1, writeFile('first.jsonl', jsonl(SAMPLE.slice(0, 2))));
    const file = writeFile('all.jsonl', jsonl([...SAMPLE, SAMPLE[4]]));
    const summary = await importEventsFile(store, 1, file);
    expect(summary).toMatchObject({ rows_read: 6, inserted: 3, skipped: 3, skipped_reasons: { 'duplicate uuid': 3 } });
    expect(await countEvents()).toBe(5);
  });

  it('counts a uuid stored in another project apart', async () => {
    await importEventsFile(store, 1, writeFile('events.jsonl', jsonl(SAMPLE)));
    const org = await store.db.selectFrom('teams').select('organization_id').where('id', '=', 1).executeTakeFirstOrThrow();
    const { AccountsRepository } = await import('../server/storage/repositories/accounts.js');
    const other = await new AccountsRepository(store.db).createTeam({ organization_id: org.organization_id, name: 'Other' });
    const summary = await importEventsFile(store, other.id, writeFile('again.jsonl', jsonl(SAMPLE)));
    expect(summary).toMatchObject({ inserted: 0, skipped: 5, skipped_reasons: { 'uuid used by another project': 5 } });
  });

  it('gives rows without a uuid a deterministic one, so that a second import inserts nothing', async () => {
    const rows = SAMPLE.map(({ uuid: _uuid, ...rest }) => rest);
    const file = writeFile('no-uuid.jsonl', jsonl([...rows, rows[0]]));
    const first = await importEventsFile(store, 1, file);
    // The repeated last line is the same event: same uuid.
    expect(first).toMatchObject({ rows_read: 6, inserted: 5, skipped: 1, skipped_reasons: { 'duplicate uuid': 1 } });
    const stored = await events();
    for (const r of stored) expect(r.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Key order in properties does not matter.
    const reordered = rows.map((r) =>
      'properties' in r && r.properties ? { ...r, properties: Object.fromEntries(Object.entries(r.properties).reverse()) } : r,
    );
    const second = await importEventsFile(store, 1, writeFile('no-uuid-again.jsonl', jsonl(reordered)));
    expect(second).toMatchObject({ rows_read: 5, inserted: 0, skipped: 5 });
    expect((await events()).map((r) => r.uuid)).toEqual(stored.map((r) => r.uuid));
  });

  it('reads gzipped files', async () => {
    const { gzipSync } = await import('node:zlib');
    const file = path.join(dir, 'events.jsonl.gz');
    fs.writeFileSync(file, gzipSync(jsonl(SAMPLE)));
    expect(await importEventsFile(store, 1, file)).toMatchObject({ rows_read: 5, inserted: 5 });
  });

  it('accepts `id` as the uuid (rows of the events list)', async () => {
    const file = writeFile(
      'list.jsonl',
      jsonl([
        {
          id: '0193A4E1-0009-7000-8000-000000000001',
          event: 'x',
          distinct_id: 'a',
          timestamp: '2024-11-20T14:00:00Z',
          person: null,
          elements: [],
        },
      ]),
    );
    await importEventsFile(store, 1, file);
    expect((await events()).map((r) => r.uuid)).toEqual(['0193a4e1-0009-7000-8000-000000000001']);
  });
});

describe('importEventsFile: malformed input leaves nothing behind', () => {
  const good = (i: number) => JSON.stringify({ event: '$pageview', distinct_id: `d${i}`, timestamp: `2024-11-20T14:00:0${i}Z` });

  it('when line 5 is not valid JSON, fails naming line 5 and writes nothing', async () => {
    const file = writeFile(
      'events.jsonl',
      [good(1), good(2), good(3), good(4), '{"event": "$pageview", "distinct_id": ', good(6)].join('\n'),
    );
    const err = await importFailure(file, { batchSize: 2 });
    expect(err.line).toBe(5);
    expect(err.reason).toMatch(/^invalid JSON: /);
    expect(err.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5: invalid JSON: `));
    expect(await countEvents()).toBe(0);
    expect(await countPersons()).toBe(0);
  });

  it.each([
    ['a missing "event"', { distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z' }, 'missing "event"'],
    ['an empty "event"', { event: '', distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z' }, 'missing "event"'],
    ['a non-string "event"', { event: 7, distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z' }, '"event" must be a string, got a number'],
    ['a missing "distinct_id"', { event: 'e', timestamp: '2024-11-20T14:00:00Z' }, 'missing "distinct_id"'],
    [
      'an object "distinct_id"',
      { event: 'e', distinct_id: { a: 1 }, timestamp: '2024-11-20T14:00:00Z' },
      '"distinct_id" must be a string or a number, got an object',
    ],
    ['a missing "timestamp"', { event: 'e', distinct_id: 'd' }, 'missing "timestamp"'],
    [
      'an unparsable "timestamp"',
      { event: 'e', distinct_id: 'd', timestamp: 'yesterday' },
      'unparsable "timestamp": "yesterday" (expected ISO 8601, e.g. 2024-11-20T14:03:10.871Z)',
    ],
    [
      'an impossible date',
      { event: 'e', distinct_id: 'd', timestamp: '2024-02-30T10:00:00Z' },
      'unparsable "timestamp": "2024-02-30T10:00:00Z" (expected ISO 8601, e.g. 2024-11-20T14:03:10.871Z)',
    ],
    [
      'a bad "uuid"',
      { uuid: 'not-a-uuid', event: 'e', distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z' },
      '"uuid" is not a UUID: "not-a-uuid"',
    ],
    [
      'array "properties"',
      { event: 'e', distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z', properties: [1] },
      '"properties" must be an object, got an array',
    ],
    [
      'a string "$set"',
      { event: 'e', distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z', $set: 'x' },
      '"$set" must be an object, got a string',
    ],
    [
      'a numeric "elements_chain"',
      { event: 'e', distinct_id: 'd', timestamp: '2024-11-20T14:00:00Z', elements_chain: 3 },
      '"elements_chain" must be a string, got a number',
    ],
  ])('when line 3 has %s, fails naming line 3 and writes nothing', async (_name, row, reason) => {
    const file = writeFile('events.jsonl', [good(1), good(2), JSON.stringify(row), good(4)].join('\n'));
    const err = await importFailure(file, { batchSize: 1 });
    expect(err.line).toBe(3);
    expect(err.reason).toBe(reason);
    expect(err.message).toBe(`${file}:3: ${reason}`);
    expect(await countEvents()).toBe(0);
  });

  it('when a line is a JSON value other than an object, says so', async () => {
    const err = await importFailure(writeFile('events.jsonl', `${good(1)}\n[1, 2]\n`));
    expect([err.line, err.reason]).toEqual([2, 'expected a JSON object, got an array']);
  });

  it.each([
    ['on several lines', `[\n${good(1)},\n${good(2)}\n]\n`],
    ['on one line', `[${good(1)}, ${good(2)}]\n`],
  ])('when the file is a JSON array (%s), says it reads JSON Lines', async (_name, content) => {
    const err = await importFailure(writeFile('events.json', content));
    expect(err.line).toBe(1);
    expect(err.reason).toMatch(/^a JSON array: the importer reads JSON Lines/);
  });

  it('when the store fails in the middle of an import, the failing batch leaves no row behind', async () => {
    await refuseInserts(store, 'events', 'event', 'boom', 'boom refused');
    const rows: RawEventRow[] = [1, 2, 3, 4, 5].map((i) => ({
      event: i === 5 ? 'boom' : 'ok',
      distinct_id: `d${i}`,
      timestamp: `2024-11-20T14:00:0${i}Z`,
    }));
    await expect(importEvents(store, 1, rows, { batchSize: 3 })).rejects.toThrow(/boom refused/);
    // The first batch (rows 1–3) committed; the second (rows 4–5) rolled back whole, persons too.
    expect((await events()).map((r) => r.distinct_id)).toEqual(['d1', 'd2', 'd3']);
    expect(await personOf('d4')).toBeUndefined();
  });
});

describe('importEventsFile: CSV', () => {
  it('reads the header row, the properties JSON column and flattened properties.<key> columns', async () => {
    const csv = [
      'uuid,event,distinct_id,timestamp,elements_chain,properties,properties.$browser,properties.$current_url,$set',
      `0193a4e1-0101-7000-8000-000000000001,$pageview,anon-1,2024-11-20T14:00:00.123456Z,,"{""$os"": ""Mac OS X"", ""$browser"": ""Safari""}",Chrome,https://hedgebox.net/,`,
      `0193a4e1-0102-7000-8000-000000000002,$autocapture,anon-1,2024-11-20T14:00:05Z,"a.nav-link:nth-child=""1""nth-of-type=""1""text=""Pricing""",,Firefox,,"{""email"": ""a@example.com""}"`,
      '',
      // A properties cell spanning two lines, inside quotes.
      `0193a4e1-0103-7000-8000-000000000003,note,anon-2,2024-11-20T14:00:06Z,,"{""text"": ""two"",\r\n""n"": 2}",,,`,
    ].join('\r\n');
    const file = writeFile('events.csv', csv + '\r\n');
    const summary = await importEventsFile(store, 1, file);
    expect(summary).toMatchObject({ rows_read: 3, inserted: 3, persons_created: 2 });
    const rows = await events();
    expect(rows[0]).toMatchObject({
      uuid: '0193a4e1-0101-7000-8000-000000000001',
      timestamp: '2024-11-20T14:00:00.123456Z',
      elements_chain: '',
      properties: { $os: 'Mac OS X', $browser: 'Chrome', $current_url: 'https://hedgebox.net/' },
    });
    expect(rows[1]).toMatchObject({
      elements_chain: 'a.nav-link:nth-child="1"nth-of-type="1"text="Pricing"',
      properties: { $browser: 'Firefox', $set: { email: 'a@example.com' } },
    });
    expect(rows[2]!.properties).toEqual({ text: 'two', n: 2 });
    expect((await personOf('anon-1'))?.properties).toEqual({ email: 'a@example.com' });
  });

  it('when a properties cell is not JSON, fails naming its line and writes nothing', async () => {
    const csv = [
      'event,distinct_id,timestamp,properties',
      'a,d1,2024-11-20T14:00:00Z,{}',
      'b,d2,2024-11-20T14:00:01Z,"{""x"": 1}"',
      'c,d3,2024-11-20T14:00:02Z,{oops}',
    ].join('\n');
    const err = await importFailure(writeFile('events.csv', csv), { batchSize: 1 });
    expect(err.line).toBe(4);
    expect(err.reason).toMatch(/^invalid JSON in column "properties": /);
    expect(await countEvents()).toBe(0);
  });

  it.each([
    ['CRLF', '\r\n'],
    ['LF', '\n'],
  ])('counts a record spanning lines from its first line (%s)', async (_name, eol) => {
    const csv = [
      'event,distinct_id,timestamp,properties',
      `a,d1,2024-11-20T14:00:00Z,"{${eol}""x"": 1${eol}}"`,
      'b,,2024-11-20T14:00:01Z,',
    ].join(eol);
    const err = await importFailure(writeFile('events.csv', csv));
    expect([err.line, err.reason]).toEqual([5, 'missing "distinct_id"']);
  });

  it('when a row has more cells than the header, fails naming its line', async () => {
    const csv = ['event,distinct_id,timestamp', 'a,d1,2024-11-20T14:00:00Z', 'b,d2,2024-11-20T14:00:01Z,extra'].join('\n');
    const err = await importFailure(writeFile('events.csv', csv));
    expect(err.line).toBe(3);
    expect(err.reason).toMatch(/^invalid CSV: /);
  });

  it('when the header lacks a required column, fails on line 1', async () => {
    const err = await importFailure(writeFile('events.csv', 'event,timestamp\na,2024-11-20T14:00:00Z\n'));
    expect([err.line, err.reason]).toEqual([1, 'the header row lacks column "distinct_id"']);
  });

  it('when a value is bad, names the line and the problem', async () => {
    const csv = ['event,distinct_id,timestamp', 'a,d1,2024-11-20T14:00:00Z', 'b,d2,20/11/2024'].join('\n');
    const err = await importFailure(writeFile('events.csv', csv));
    expect(err.message).toMatch(/events\.csv:3: unparsable "timestamp": "20\/11\/2024"/);
  });

  it('reads CSV from a file of another name when told the format', async () => {
    const file = writeFile('export.txt', 'event,distinct_id,timestamp\na,d1,2024-11-20T14:00:00Z\n');
    await expect(importEventsFile(store, 1, file)).rejects.toThrow(/Cannot tell the format of .*export\.txt/);
    expect(await importEventsFile(store, 1, file, { format: 'csv' })).toMatchObject({ inserted: 1 });
  });
});

describe('importEvents / importEventsFile: bad arguments', () => {
  it('when the project does not exist, fails clearly and writes nothing', async () => {
    const file = writeFile('events.jsonl', jsonl(SAMPLE));
    await expect(importEventsFile(store, 99, file)).rejects.toThrow('Project 99 does not exist.');
    await expect(importEvents(store, 99, SAMPLE)).rejects.toThrow('Project 99 does not exist.');
    expect(await countEvents()).toBe(0);
  });

  it('when the file does not exist, says so', async () => {
    await expect(importEventsFile(store, 1, path.join(dir, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: no such file/);
  });

  it('when a .gz file is not gzip, says so', async () => {
    await expect(importEventsFile(store, 1, writeFile('events.csv.gz', 'event,distinct_id,timestamp\n'))).rejects.toThrow(
      /events\.csv\.gz: not a valid gzip file/,
    );
  });

  it('when the batch size is out of range, throws RangeError', async () => {
    await expect(importEvents(store, 1, SAMPLE, { batchSize: 0 })).rejects.toThrow(RangeError);
  });

  it('names the row of an iterable by its position and the given source', async () => {
    const rows: RawEventRow[] = [SAMPLE[0]!, { event: 'e', distinct_id: 'd', timestamp: 'soon' }];
    const err = await importEvents(store, 1, rows, { source: 'api' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportError);
    expect((err as ImportError).message).toBe('api:2: unparsable "timestamp": "soon" (expected ISO 8601, e.g. 2024-11-20T14:03:10.871Z)');
  });
});

describe('generateDemoEvents', () => {
  const NOW = new Date('2025-01-15T12:00:00.000Z');
  const take = (seed: number, count = 5_000): DemoEventRow[] => [...generateDemoEvents({ count, seed, now: NOW })];

  it('is reproducible: the same seed gives the same rows, another seed other rows', () => {
    const a = take(42).slice(0, 1_000);
    expect(take(42).slice(0, 1_000)).toEqual(a);
    const b = take(43).slice(0, 1_000);
    expect(b.map((r) => r.uuid)).not.toEqual(a.map((r) => r.uuid));
    expect(b.map((r) => r.distinct_id)).not.toEqual(a.map((r) => r.distinct_id));
  });

  it('yields exactly `count` events with unique UUIDv7s, in time order, within the last 30 days', () => {
    const rows = take(7, 20_000);
    expect(rows).toHaveLength(20_000);
    expect(new Set(rows.map((r) => r.uuid)).size).toBe(20_000);
    const from = NOW.getTime() - 30 * 86_400_000;
    let previous = -Infinity;
    for (const r of rows) {
      expect(r.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const t = Date.parse(r.timestamp);
      expect(t).toBeGreaterThanOrEqual(from);
      expect(t).toBeLessThanOrEqual(NOW.getTime());
      expect(t).toBeGreaterThanOrEqual(previous);
      previous = t;
    }
    // Spread over the period, not bunched at one end.
    expect(Date.parse(rows[0]!.timestamp) - from).toBeLessThan(3 * 86_400_000);
    expect(NOW.getTime() - Date.parse(rows.at(-1)!.timestamp)).toBeLessThan(86_400_000);
    expect(take(7, 0)).toEqual([]);
  });

  it('produces the Hedgebox event mix: pageviews first, autocaptures with elements chains, custom events, identified users', () => {
    const rows = take(1, 20_000);
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.event, (counts.get(r.event) ?? 0) + 1);
    const byCount = [...counts].sort((x, y) => y[1] - x[1]).map(([e]) => e);
    expect(byCount[0]).toBe('$pageview');
    expect(byCount[1]).toBe('$autocapture');
    expect(counts.get('$pageview')! / rows.length).toBeGreaterThan(0.3);
    for (const e of ['$pageleave', '$identify', 'signed_up', 'uploaded_file', 'downloaded_file', 'deleted_file', 'upgraded_plan'])
      expect(counts.get(e), e).toBeGreaterThan(0);

    for (const r of rows) {
      expect(r.properties).toMatchObject({ $lib: 'web', $host: 'hedgebox.net', $session_id: expect.stringMatching(UUID) });
      expect(r.properties.$current_url).toMatch(/^https:\/\/hedgebox\.net\//);
      if (r.event === '$autocapture') {
        expect(r.elements_chain).toMatch(/^[a-z]+(\.[\w-]+)*:(attr__[\w-]+="[^"]*")*.*nth-child="\d+"nth-of-type="\d+"/);
        expect(r.elements_chain).toMatch(/;body:nth-child="2"nth-of-type="1"$/);
      } else expect(r.elements_chain).toBe('');
      if (r.event === '$identify') {
        expect(r.properties.$anon_distinct_id).toMatch(UUID);
        expect(r.properties.$set).toMatchObject({
          email: expect.stringMatching(/^[^@\s]+@[^@\s]+\.[a-z]+$/),
          name: expect.stringMatching(/\S \S/),
        });
      }
      if (r.event === 'uploaded_file')
        expect(r.properties).toMatchObject({ file_type: expect.any(String), file_size_b: expect.any(Number) });
      if (r.event === 'upgraded_plan') expect(['standard', 'professional']).toContain(r.properties.plan);
    }
    const chrome = rows.filter((r) => r.properties.$browser === 'Chrome').length / rows.length;
    expect(chrome).toBeGreaterThan(0.45);
    expect(chrome).toBeLessThan(0.75);
    const landing = rows.filter((r) => r.properties.utm_source);
    expect(new Set(landing.map((r) => r.properties.utm_source))).toEqual(expect.objectContaining({ size: expect.any(Number) }));
    expect([...new Set(landing.map((r) => r.properties.utm_source))]).toEqual(
      expect.arrayContaining(['google', 'twitter', 'newsletter', 'producthunt']),
    );
    for (const r of landing) expect(r.event).toBe('$pageview');
    const persons = new Set(rows.filter((r) => r.event !== '$identify').map((r) => r.distinct_id)).size;
    expect(persons).toBeGreaterThan(20_000 / 80);
    expect(persons).toBeLessThan(20_000 / 15);
  });

  it('rejects a bad count, days or now', () => {
    expect(() => take(1, -1)).toThrow(RangeError);
    expect(() => [...generateDemoEvents({ count: 1, seed: 1, days: 0 })]).toThrow(RangeError);
    expect(() => [...generateDemoEvents({ count: 1, seed: 1, now: new Date('nope') })]).toThrow(RangeError);
  });

  it('lets the event loop turn after each batch of a synchronous source, so that timers run during the import', async () => {
    // Before, SQLite's synchronous writes and the generator held the loop until the end: the
    // CLI's progress line every 5 s never came. A callback queued at one batch's progress must
    // have run by the next batch's.
    let queued = 0;
    let ran = 0;
    const seenAtProgress: [number, number][] = [];
    await importEvents(store, 1, generateDemoEvents({ count: 2_000, seed: 3, now: NOW }), {
      batchSize: 500,
      onProgress: (_done, _total, phase) => {
        if (phase !== 'importing') return;
        seenAtProgress.push([queued, ran]);
        queued += 1;
        setImmediate(() => (ran += 1));
      },
    });
    expect(seenAtProgress).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('imports through importEvents: anonymous and identified persons, identified ones with their anonymous ids', async () => {
    const summary = await importEvents(store, 1, generateDemoEvents({ count: 3_000, seed: 5, now: NOW }), {
      source: 'demo',
      batchSize: 500,
    });
    expect(summary).toMatchObject({ source: 'demo', rows_read: 3_000, inserted: 3_000, skipped: 0 });
    expect(summary.persons_created).toBe(await countPersons());
    const persons = (await store.db.selectFrom('persons').selectAll().execute()).map((p) => ({
      ...p,
      properties: fromJson<Record<string, unknown>>(p.properties),
    }));
    const identified = persons.filter((p) => toBool(p.is_identified));
    expect(identified.length).toBeGreaterThan(0);
    expect(identified.length).toBeLessThan(persons.length);
    for (const p of identified) expect(p.properties.email).toMatch(/@/);
    const identify = (await events()).find((e) => e.event === '$identify')!;
    const person = await personOf(identify.distinct_id);
    expect(person?.distinct_ids).toContain(identify.properties.$anon_distinct_id);
    // A second run of the same seed and time inserts nothing.
    const again = await importEvents(store, 1, generateDemoEvents({ count: 3_000, seed: 5, now: NOW }));
    expect(again).toMatchObject({ inserted: 0, skipped: 3_000, skipped_reasons: { 'duplicate uuid': 3_000 } });
  });
});

describe('envapi import events / envapi demo', () => {
  const CLI_TIMEOUT_MS = 60_000;
  const cli = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      // `--data-dir DIR` on SQLite; DATABASE_URL (the test's schema) on PostgreSQL
      const { stdout, stderr } = await run(process.execPath, [BIN, ...location.cliArgs, ...args], {
        cwd: ROOT,
        env: childEnv(location.cliEnv),
        timeout: CLI_TIMEOUT_MS,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };

  it(
    'import events --json prints the summary and exits 0; a second run skips every row',
    async () => {
      const file = writeFile('events.jsonl', jsonl(SAMPLE));
      const first = await cli('import', 'events', file, '--project', '1', '--json');
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({
        source: file,
        rows_read: 5,
        inserted: 5,
        skipped: 0,
        persons_created: 2,
        project_id: 1,
      });
      const second = await cli('import', 'events', file, '--project', '1');
      expect(second.code).toBe(0);
      expect(second.stdout).toMatch(/5 rows read, 0 inserted, 5 skipped \(duplicate uuid: 5\)/);
      expect(await countEvents()).toBe(5);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'import events exits 1 with FILE:LINE: reason on a bad file, and imports nothing',
    async () => {
      const file = writeFile('bad.jsonl', `${JSON.stringify(SAMPLE[0])}\n{"event": oops}\n`);
      const r = await cli('import', 'events', file, '--project', '1', '--json');
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`${file}:2: invalid JSON`);
      expect(await countEvents()).toBe(0);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'import events exits non-zero on an unknown project or a bad --format',
    async () => {
      const file = writeFile('events.jsonl', jsonl(SAMPLE));
      const unknown = await cli('import', 'events', file, '--project', '99');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/Project 99 does not exist/);
      const badFormat = await cli('import', 'events', file, '--project', '1', '--format', 'xml');
      expect(badFormat.code).not.toBe(0);
      expect(badFormat.stderr).toMatch(/jsonl, csv/);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'demo --events 2000 --seed 7 --json inserts 2000 events and exits 0',
    async () => {
      const r = await cli('demo', '--project', '1', '--events', '2000', '--seed', '7', '--now', '2025-01-15T12:00:00Z', '--json');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        source: 'demo',
        rows_read: 2000,
        inserted: 2000,
        skipped: 0,
        seed: 7,
        now: '2025-01-15T12:00:00.000Z',
        days: 30,
      });
      expect(await countEvents()).toBe(2000);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'both commands have --help',
    async () => {
      const imp = await cli('import', 'events', '--help');
      expect(imp.code).toBe(0);
      expect(imp.stdout).toMatch(/--project <id>[\s\S]*--format <format>[\s\S]*--batch-size <n>[\s\S]*--json/);
      const demo = await cli('demo', '--help');
      expect(demo.code).toBe(0);
      expect(demo.stdout).toMatch(/--events <n>[\s\S]*--seed <n>[\s\S]*--days <n>[\s\S]*--json/);
    },
    CLI_TIMEOUT_MS,
  );
});
