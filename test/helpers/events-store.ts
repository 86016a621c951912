/**
 * Seeding events and persons into a test server's store, whichever events store it has: the row
 * store's `EventsWriteRepository` (SQLite, PostgreSQL), or the ClickHouse events store (npm test's
 * ClickHouse pass, scripts/test-clickhouse.mjs), where the events go through the write path
 * (server/ingest/write-events.ts: stored uuids skipped, each event with its person) and person
 * updates are mirrored to ClickHouse's `person` and `person_distinct_id2` as the write path
 * mirrors them. The suites' data then reaches every store the same way.
 */
import type { Store } from '../../server/storage/db.js';
import { clickhouseEventsOf } from '../../server/storage/events/index.js';
import { EventsWriteRepository, type EventInput, type PersonUpdate } from '../../server/storage/events/write.js';
import { writeEventRows } from '../../server/ingest/write-events.js';

/** Inserts `events` of project `teamId` (a uuid stored already is skipped); returns how many were inserted. */
export async function insertEvents(store: Store, teamId: number, events: readonly EventInput[]): Promise<number> {
  const ch = clickhouseEventsOf(store);
  return store.db.transaction().execute(async (trx) => {
    if (!ch) return new EventsWriteRepository(trx).insertEvents(teamId, events);
    const rows = events.map((event) => ({ event, person: undefined }));
    return (await writeEventRows(trx, teamId, rows, true, ch.writer)).inserted;
  });
}

/**
 * Applies person updates of project `teamId` in order (`$set`, `$set_once`, `$unset`, identify,
 * alias: storage/events/write.ts) in one transaction; on ClickHouse, what changed is mirrored.
 * Returns the persons created.
 */
export async function applyPersonUpdates(store: Store, teamId: number, updates: readonly PersonUpdate[]): Promise<number> {
  const ch = clickhouseEventsOf(store);
  return store.db.transaction().execute(async (trx) => {
    const repo = new EventsWriteRepository(trx);
    if (!ch) return repo.applyPersonUpdates(teamId, [...updates]);
    const ids = new Set<string>();
    for (const u of updates) {
      ids.add(u.distinct_id);
      if (u.identify?.anon_distinct_id) ids.add(u.identify.anon_distinct_id);
      if (u.alias) ids.add(u.alias);
    }
    const before = await ch.writer.personsOf(trx, teamId, [...ids]);
    const created = await repo.applyPersonUpdates(teamId, [...updates]);
    await ch.writer.mirrorPersons(trx, teamId, before, await ch.writer.personsOf(trx, teamId, [...ids]));
    return created;
  });
}

/** After a bulk seed: the row store's statistics refreshed, as `envapi import` does (nothing to do on ClickHouse). */
export async function afterBulkSeed(store: Store): Promise<void> {
  if (!clickhouseEventsOf(store)) await new EventsWriteRepository(store.db).vacuumAfterBulkWrite();
}
