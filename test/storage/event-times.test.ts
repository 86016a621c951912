/**
 * Event times as integer microseconds on SQLite (server/storage/events/times.ts, migration 0013).
 *
 * - The conversions agree, both ways, in JavaScript and in SQLite's SQL, for 2,000 instants spread
 *   over the accepted years 0001–9999 and for the edges (the epoch and the microsecond before it,
 *   leap days, the first and last microsecond of the range).
 * - Migration 0013 on a store at 0012 that holds text times (before and after 1970, ties, `created_at`
 *   with milliseconds) and two materialized columns (a plain one and a virtual one): every time
 *   becomes an integer, rowids, columns and indexes are kept, and the list, the look-up by uuid and
 *   HogQL answer the very texts stored before; a new event is written as integers; running the
 *   migration again does nothing; docs/deploy.md's rollback statement gives the texts back.
 * - A time that is not a date fails the migration and leaves `events` as it was.
 * On PostgreSQL the migration does nothing and the same reads answer alike.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../server/bootstrap.js';
import { runHogQLQuery } from '../../server/hogql/index.js';
import { migrateToLatest, type Store } from '../../server/storage/db.js';
import { eventPropertiesIn } from '../../server/storage/events/property-sets.js';
import { eventTimeFromText, eventTimeMicros, eventTimeText } from '../../server/storage/events/times.js';
import { materializeProperty, materializedColumnName } from '../../server/storage/events/materialized.js';
import { migration0013 } from '../../server/storage/migrations/0013_event_times_integer.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import { eventsStore } from '../../server/storage/events/index.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';
import { deploySqlBlock } from '../helpers/docs.js';
import { usesPostgres } from '../helpers/pg.js';
import { createTestStoreLocation, openMigratedTo, type TestStoreLocation } from '../helpers/store.js';

let location: TestStoreLocation;
let store: Store;

beforeEach(async () => {
  location = await createTestStoreLocation('envapi-0013-');
  store = await openMigratedTo(location, '0012_event_uuid_bytes');
  await bootstrap(store);
});

afterEach(async () => {
  await store?.close();
  await location?.cleanup();
});

const MIN = eventTimeMicros('0001-01-01T00:00:00.000000Z');
const MAX = eventTimeMicros('9999-12-31T23:59:59.999999Z');

/** The stored text form of `micros`, made from JavaScript's Date (milliseconds) and the rest. */
function textOf(micros: bigint): string {
  const ms = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
  const rest = micros - ms * 1000n;
  return new Date(Number(ms)).toISOString().replace('Z', `${String(rest).padStart(3, '0')}Z`);
}

describe('event times as microseconds', () => {
  it('converts both ways alike in JavaScript and SQL, from 0001 to 9999', async () => {
    let seed = 7n;
    const random = () => {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
      return MIN + (seed % (MAX - MIN + 1n));
    };
    const edges = [
      '0001-01-01T00:00:00.000000Z',
      '0001-01-01T00:00:00.000001Z',
      '0999-12-31T23:59:59.999999Z',
      '1969-12-31T23:59:59.999999Z',
      '1970-01-01T00:00:00.000000Z',
      '1970-01-01T00:00:00.000001Z',
      '2000-02-29T12:00:00.500000Z',
      '2024-02-29T23:59:59.999999Z',
      '9999-12-31T23:59:59.999999Z',
    ].map(eventTimeMicros);
    const all = [...edges, ...Array.from({ length: 2000 }, random)];
    expect(edges[4]).toBe(0n);
    expect(edges[3]).toBe(-1n);
    for (const micros of all) expect(eventTimeMicros(textOf(micros))).toBe(micros);
    if (store.dialect !== 'sqlite') return;
    for (let i = 0; i < all.length; i += 400) {
      const part = all.slice(i, i + 400);
      const rows = await sql<{
        text: string;
        back: bigint | number;
      }>`select ${eventTimeText('sqlite', sql`v.value`)} as text, ${eventTimeFromText('sqlite', eventTimeText('sqlite', sql`v.value`))} = cast(v.value as integer) as back from json_each(${JSON.stringify(part.map(String))}) v`.execute(
        store.db,
      );
      expect(rows.rows.map((r) => r.text)).toEqual(part.map(textOf));
      expect(rows.rows.every((r) => Number(r.back) === 1)).toBe(true);
    }
    // a bare date is the start of its day; the reads refuse anything but the stored form
    expect(eventTimeMicros('2026-03-10')).toBe(eventTimeMicros('2026-03-10T00:00:00.000000Z'));
    expect(eventTimeMicros('2026-03-10T01:02:03Z')).toBe(eventTimeMicros('2026-03-10T01:02:03.000000Z'));
    expect(eventTimeMicros('2026-03-10T01:02:03.5Z')).toBe(eventTimeMicros('2026-03-10T01:02:03.500000Z'));
    expect(() => eventTimeMicros('2026-03-10 01:02:03')).toThrow(RangeError);
    expect(() => eventTimeMicros('yesterday')).toThrow(RangeError);
  });
});

const UUIDS = [
  '0190d000-0000-7000-8000-00000000000a',
  'f190d000-0000-7000-8000-000000000001',
  '0190d000-0000-7000-8000-000000000009',
  'a0000000-0000-7000-8000-000000000000',
  '9fffffff-ffff-7fff-bfff-ffffffffffff',
];
const TIMESTAMPS = [
  '2026-11-01T00:00:00.000001Z',
  '2026-11-01T00:00:00.000001Z',
  '1969-07-20T20:17:40.123456Z',
  '2026-11-02T00:00:00.000000Z',
  '0044-03-15T12:00:00.000000Z',
];
const CREATED = [
  '2026-11-27T20:52:33.636Z',
  '2026-11-27T20:52:33.636Z',
  '2026-11-27T20:52:34.001Z',
  '2026-11-28T00:00:00.000Z',
  '2026-11-28T00:00:00.999Z',
];
const BEFORE = '9999-01-01T00:00:00.000000Z';

/** Rows as 0012 left them: text times, whole properties. */
async function insertTextRows(timestamps = TIMESTAMPS): Promise<void> {
  for (const [n, uuid] of UUIDS.entries()) {
    const properties = eventPropertiesIn(store.dialect, JSON.stringify({ n, $browser: n % 2 ? 'Chrome' : 'Firefox', $pathname: `/p${n}` }));
    const stored = store.dialect === 'sqlite' ? Buffer.from(uuid.replace(/-/g, ''), 'hex') : uuid;
    await sql`insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)
      values (${stored}, 1, ${n % 2 ? 'a' : 'b'}, 'd', ${properties}, ${timestamps[n]!}, '', ${CREATED[n]!})`.execute(store.db);
  }
}

/** What the reads answer: the list in one page and by pages of two, each event by uuid, HogQL's times in order. */
async function answers() {
  const repo = new RowEventsStore(store.db);
  const whole = (await repo.list({ teamId: 1, before: BEFORE, offset: 0, limit: 100 })).map((r) => [r.uuid, r.timestamp]);
  const pages: string[] = [];
  let cursor: { timestamp: string; uuid: string } | undefined;
  for (let n = 0; n <= UUIDS.length + 2; n++) {
    const page = await repo.list({ teamId: 1, before: BEFORE, cursor, offset: 0, limit: 2 });
    pages.push(...page.map((r) => r.uuid));
    if (page.length < 2) break;
    cursor = { timestamp: page[1]!.timestamp, uuid: page[1]!.uuid };
  }
  const byUuid = await Promise.all(UUIDS.map(async (u) => (await repo.findByUuid(1, u))?.timestamp ?? null));
  const hogql = await runHogQLQuery(
    store.db,
    eventsStore(store.db).table(),
    1,
    "select uuid, timestamp, created_at, toStartOfDay(timestamp), toDate(timestamp) from events where timestamp > '1900-01-01' order by timestamp desc, uuid",
    new Date('2026-12-01T00:00:00Z'),
  );
  return { whole, pages, byUuid, hogql: hogql.results };
}

describe('migration 0013: event times as integers on SQLite', () => {
  it('converts every time, keeps rows, columns and indexes, and every read answers the texts stored before', async () => {
    await insertTextRows();
    await materializeProperty(store, 'event', '$browser');
    await materializeProperty(store, 'event', '$pathname');
    const browser = materializedColumnName('event', '$browser');
    const pathname = materializedColumnName('event', '$pathname');
    const before =
      store.dialect === 'sqlite'
        ? {
            indexes: (
              await sql<{
                sql: string;
              }>`select sql from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null order by name`.execute(
                store.db,
              )
            ).rows,
            rows: (await sql.raw(`select rowid, "${browser}" as b, "${pathname}" as p from events order by rowid`).execute(store.db)).rows,
          }
        : undefined;
    await migrateToLatest(store);
    const after = await answers();
    // newest first, the tie by uuid descending
    const order = [3, 1, 0, 2, 4];
    expect(after.whole).toEqual(order.map((i) => [UUIDS[i], TIMESTAMPS[i]]));
    expect(after.pages).toEqual(order.map((i) => UUIDS[i]));
    expect(after.byUuid).toEqual(TIMESTAMPS);
    // HogQL: the texts, created_at with its milliseconds, the day; year 44 is before 1900
    // (ties by uuid ascending, as asked; a DateTime is answered without a fraction, a DateTime64 with six digits)
    expect(after.hogql).toEqual(
      [3, 0, 1, 2].map((i) => [
        UUIDS[i],
        TIMESTAMPS[i],
        CREATED[i]!.replace('Z', '000Z'),
        `${TIMESTAMPS[i]!.slice(0, 10)}T00:00:00Z`,
        TIMESTAMPS[i]!.slice(0, 10),
      ]),
    );
    if (store.dialect !== 'sqlite') return;

    const kinds = await sql<{ t: string; c: string }>`select typeof(timestamp) as t, typeof(created_at) as c from events`.execute(store.db);
    expect(kinds.rows).toEqual(UUIDS.map(() => ({ t: 'integer', c: 'integer' })));
    expect(
      (
        await sql<{
          sql: string;
        }>`select sql from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null order by name`.execute(store.db)
      ).rows,
    ).toEqual(before!.indexes);
    expect(
      (await sql.raw(`select rowid, "${browser}" as b, "${pathname}" as p from events order by rowid`).execute(store.db)).rows,
    ).toEqual(before!.rows);
    const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'events'`.execute(store.db);
    expect(table.rows[0]!.sql).toMatch(/^CREATE TABLE "events" .*"timestamp" integer not null.*"created_at" integer not null/);

    // again (as after a stop before Kysely recorded it): nothing changes
    await migration0013.up(store.db);
    expect((await answers()).whole).toEqual(after.whole);

    // a new event is written as integers and read like the others
    const uuid = '0190d000-0000-7000-8000-00000000000b';
    await store.db
      .transaction()
      .execute((trx) =>
        new EventsWriteRepository(trx).insertEvents(1, [
          { uuid, event: 'e', distinct_id: 'd', properties: {}, timestamp: TIMESTAMPS[0]!, elements_chain: '' },
        ]),
      );
    expect((await answers()).pages.slice(0, 4)).toEqual([UUIDS[3], UUIDS[1], uuid, UUIDS[0]]);
    expect(
      (
        await sql<{
          t: string;
        }>`select typeof(timestamp) as t from events where uuid = ${Buffer.from(uuid.replace(/-/g, ''), 'hex')}`.execute(store.db)
      ).rows,
    ).toEqual([{ t: 'integer' }]);

    // the rollback statement of docs/deploy.md gives back the texts the previous code reads
    for (const statement of deploySqlBlock('typeof(timestamp)')
      .split(/;\n/)
      .filter((s) => s.trim()))
      await sql.raw(statement).execute(store.db);
    const rolledBack = await sql<{ t: string; c: string }>`select timestamp as t, created_at as c from events order by rowid`.execute(
      store.db,
    );
    expect(rolledBack.rows).toEqual([
      ...UUIDS.map((_, i) => ({ t: TIMESTAMPS[i], c: CREATED[i] })),
      { t: TIMESTAMPS[0], c: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
    ]);
    expect(
      (await sql<{ n: number }>`select count(*) as n from kysely_migration where name = '0013_event_times_integer'`.execute(store.db))
        .rows[0]!.n,
    ).toBe(0);

    // upgrading again converts the texts the rollback wrote (the table is not built again)
    await migrateToLatest(store);
    expect(
      (await sql<{ t: string }>`select distinct typeof(timestamp) || typeof(created_at) as t from events`.execute(store.db)).rows,
    ).toEqual([{ t: 'integerinteger' }]);
    expect((await answers()).pages.slice(0, 4)).toEqual([UUIDS[3], UUIDS[1], uuid, UUIDS[0]]);
  });

  it.skipIf(usesPostgres())('a time that is not a date fails the migration and leaves events as it was', async () => {
    await insertTextRows([...TIMESTAMPS.slice(0, 4), 'not a date']);
    const table = async () =>
      (await sql<{ sql: string }>`select sql from sqlite_master where name in ('events', 'events_new') order by name`.execute(store.db))
        .rows;
    const before = await table();
    await expect(migrateToLatest(store)).rejects.toThrow(/NOT NULL/);
    expect(await table()).toEqual(before);
    const rows = await sql<{ t: string }>`select timestamp as t from events order by rowid`.execute(store.db);
    expect(rows.rows.map((r) => r.t)).toEqual([...TIMESTAMPS.slice(0, 4), 'not a date']);
  });
});
