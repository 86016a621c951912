/**
 * Migration 0012 (server/storage/migrations/0012_event_uuid_bytes.ts): on SQLite every event uuid
 * in the API's form becomes its 16 bytes, a uuid in another form keeps its text, and the reads
 * (the events list with its order and cursor, by uuid, the import's look-up of stored uuids,
 * the SQL text form HogQL's `uuid` reads) answer the uuids as text, in the order the text gave
 * before the migration; docs/deploy.md's statement for rolling the code back turns the bytes into
 * the same text again. On PostgreSQL the migration
 * does nothing and the same reads answer alike. Each on a fresh store migrated to 0011 first.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../server/bootstrap.js';
import { migrateToLatest, type Store } from '../../server/storage/db.js';
import { eventPropertiesIn } from '../../server/storage/events/property-sets.js';
import { eventUuidText } from '../../server/storage/events/uuids.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';
import { deploySqlBlock } from '../helpers/docs.js';
import { createTestStoreLocation, openMigratedTo, type TestStoreLocation } from '../helpers/store.js';

let location: TestStoreLocation;
let store: Store;

beforeEach(async () => {
  location = await createTestStoreLocation('envapi-0012-');
  store = await openMigratedTo(location, '0011_property_sets');
  await bootstrap(store);
});

afterEach(async () => {
  await store?.close();
  await location?.cleanup();
});

/** Uuids whose text order differs from their insertion order, several sharing a timestamp; the last is not in the API's form (upper case). */
const UUIDS = [
  '0190d000-0000-7000-8000-00000000000a',
  'f190d000-0000-7000-8000-000000000001',
  '0190d000-0000-7000-8000-000000000009',
  'a0000000-0000-7000-8000-000000000000',
  '9fffffff-ffff-7fff-bfff-ffffffffffff',
  '0190D000-0000-7000-8000-0000000000FF',
];
const TIMESTAMPS = [
  '2026-11-01T00:00:00.000001Z',
  '2026-11-01T00:00:00.000001Z',
  '2026-11-01T00:00:00.000001Z',
  '2026-11-02T00:00:00.000000Z',
  '2026-11-01T00:00:00.000001Z',
  '2026-10-31T00:00:00.000000Z',
];
const BEFORE = '9999-01-01T00:00:00.000000Z';

/** Each uuid as the list answers it, newest first, paged two at a time through the cursor. */
async function listedByPages(): Promise<string[]> {
  const repo = new RowEventsStore(store.db);
  const out: string[] = [];
  let cursor: { timestamp: string; uuid: string } | undefined;
  // at most one page an event and one more: a cursor that does not move fails instead of looping
  for (let n = 0; n <= UUIDS.length + 2; n++) {
    const page = await repo.list({ teamId: 1, before: BEFORE, cursor, offset: 0, limit: 2 });
    out.push(...page.map((r) => r.uuid));
    if (page.length < 2) return out;
    cursor = { timestamp: page[1]!.timestamp, uuid: page[1]!.uuid };
  }
  throw new Error(`the cursor walk did not end: ${out.join(', ')}`);
}

/** What the reads answer: the list in one page and by pages, each event by uuid, the stored-uuid look-up, the SQL text form. */
async function answers() {
  const repo = new RowEventsStore(store.db);
  const whole = (await repo.list({ teamId: 1, before: BEFORE, offset: 0, limit: 100 })).map((r) => [r.uuid, r.timestamp]);
  const byUuid = await Promise.all(UUIDS.map(async (u) => (await repo.findByUuid(1, u))?.uuid ?? null));
  const stored = await new EventsWriteRepository(store.db).storedUuids([...UUIDS, '00000000-0000-7000-8000-000000000000']);
  const texts = await sql<{ u: string }>`select ${eventUuidText(store.dialect, sql`uuid`)} as u from events order by uuid desc`.execute(
    store.db,
  );
  return { whole, pages: await listedByPages(), byUuid, stored: [...stored].sort(), texts: texts.rows.map((r) => r.u) };
}

describe('migration 0012: event uuids as 16 bytes on SQLite', () => {
  it('converts the uuids in the API form, keeps the other as text, and every read answers as before; the rollback statement gives the text back', async () => {
    for (const [n, uuid] of UUIDS.entries()) {
      await sql`insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)
        values (${uuid}, 1, 'e', 'd', ${eventPropertiesIn(store.dialect, JSON.stringify({ n }))}, ${TIMESTAMPS[n]!}, '', ${new Date().toISOString()})`.execute(
        store.db,
      );
    }
    const texts = (await sql<{ u: string }>`select uuid as u from events order by uuid desc`.execute(store.db)).rows.map((r) => r.u);
    await migrateToLatest(store);
    const kinds =
      store.dialect === 'sqlite'
        ? await sql<{ k: string }>`select typeof(uuid) as k from events order by rowid`.execute(store.db)
        : await sql<{ k: string }>`select pg_typeof(uuid)::text as k from events`.execute(store.db);
    expect(kinds.rows.map((r) => r.k)).toEqual(
      store.dialect === 'sqlite' ? ['blob', 'blob', 'blob', 'blob', 'blob', 'text'] : UUIDS.map(() => 'text'),
    );
    const after = await answers();
    // newest first, ties by uuid descending in the text's order, each page's rows once
    const order = [UUIDS[3], UUIDS[1], UUIDS[4], UUIDS[0], UUIDS[2], UUIDS[5]];
    expect(after.whole).toEqual(order.map((u) => [u, TIMESTAMPS[UUIDS.indexOf(u!)]]));
    expect(after.pages).toEqual(order);
    expect(after.byUuid).toEqual(UUIDS);
    expect(after.stored).toEqual(UUIDS.map((u) => [u, 1]).sort());
    // the bytes sort as their text did (the text row, not in the API's form, sorts apart on SQLite)
    expect(after.texts.filter((u) => u !== UUIDS[5])).toEqual(texts.filter((u) => u !== UUIDS[5]));

    // a new event is written as bytes and read like the others
    await store.db.transaction().execute((trx) =>
      new EventsWriteRepository(trx).insertEvents(1, [
        {
          uuid: '0190d000-0000-7000-8000-00000000000b',
          event: 'e',
          distinct_id: 'd',
          properties: {},
          timestamp: TIMESTAMPS[0]!,
          elements_chain: '',
        },
      ]),
    );
    expect((await listedByPages()).slice(0, 5)).toEqual([UUIDS[3], UUIDS[1], UUIDS[4], '0190d000-0000-7000-8000-00000000000b', UUIDS[0]]);

    if (store.dialect !== 'sqlite') return;
    await sql.raw(deploySqlBlock('typeof(uuid)')).execute(store.db);
    const rolledBack = await sql<{ uuid: string; k: string }>`select uuid, typeof(uuid) as k from events order by uuid desc`.execute(
      store.db,
    );
    expect(rolledBack.rows.every((r) => r.k === 'text')).toBe(true);
    expect(rolledBack.rows.map((r) => r.uuid).filter((u) => u !== UUIDS[5])).toEqual(
      ['0190d000-0000-7000-8000-00000000000b', ...texts]
        .filter((u) => u !== UUIDS[5])
        .sort()
        .reverse(),
    );
  });
});
