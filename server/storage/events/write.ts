/**
 * The write side of the row store (./row-store.ts): inserting events (idempotent on uuid) in the
 * layout of this directory, and keeping persons and their distinct ids up to date from `$set` /
 * `$set_once` / `$unset` / `$identify` / `$create_alias`, as PostHog's ingestion does (the rules
 * are in ../repositories/person-updates.ts).
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';
import { chunks, chunksAt } from '../chunks.js';
import { elementGroupIds } from './element-groups.js';
import { eventUuidIn, eventUuidOut } from './uuids.js';
import { eventTimeIn } from './times.js';
import { eventPropertiesIn, propertySetIds, splitProperties } from './property-sets.js';
import type { Database, EventTable } from '../schema.js';
import { storedMaterializedValues } from './materialized.js';
import { jsonValue, nowIso } from '../values.js';
import type { EventRow } from './store.js';
import { applyPersonUpdates, type PersonUpdate } from '../repositories/person-updates.js';

/**
 * One event ready to store, in the shape every read gives it back (`EventRow`, ./store.ts): the
 * uuid lowercase with dashes, `timestamp` already normalised to the stored form (capture and
 * import normalise it: server/capture/process.ts, server/ingest/import/normalize.ts).
 */
export type EventInput = EventRow;

export type { PersonUpdate } from '../repositories/person-updates.js';

/** Writes events and persons of one team; use inside a transaction for atomic batches. */
export class EventsWriteRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * After a bulk write: on PostgreSQL, `VACUUM (ANALYZE)` of events, persons and
   * person_distinct_ids. ANALYZE, so that the planner knows the new rows at once instead of after
   * autovacuum's next pass (up to a minute): without statistics PostgreSQL reads a page of the
   * events list through a bitmap scan and a sort of every matching row instead of the few rows of
   * the index range. VACUUM, so that the
   * new pages are marked all-visible in the visibility map: until they are, an index-only scan
   * must visit every row it counts, and PostgreSQL reads the table instead. HogQL's `count()`
   * over a materialized property reads its index alone after it (docs/performance.md). VACUUM skips the pages the map
   * marks already, so after a small import it reads only the new ones. A no-op on SQLite, whose
   * planner uses no statistics for these queries and whose index-only reads need no map. Call it
   * outside a transaction (PostgreSQL cannot vacuum inside one). `onStart` is called just before the
   * vacuum starts, so never on SQLite (the import's `vacuuming` progress line).
   */
  async vacuumAfterBulkWrite(onStart?: () => void): Promise<void> {
    if (dialectOf(this.db) !== 'postgres') return;
    onStart?.();
    await sql`vacuum (analyze) events, persons, person_distinct_ids`.execute(this.db);
  }

  /**
   * Deletes persons `personIds` of team `teamId` with their distinct ids (a bulk delete,
   * domain/person-actions.ts); with `events`, also the team's events of `distinctIds` (the
   * persons' distinct ids) in the row store. Use inside a transaction.
   */
  async deletePersons(teamId: number, personIds: readonly number[], distinctIds: readonly string[], events: boolean): Promise<void> {
    for (const slice of chunks([...distinctIds])) {
      if (events) await this.db.deleteFrom('events').where('team_id', '=', teamId).where('distinct_id', 'in', slice).execute();
    }
    for (const slice of chunks([...personIds])) {
      await this.db.deleteFrom('person_distinct_ids').where('team_id', '=', teamId).where('person_id', 'in', slice).execute();
      await this.db.deleteFrom('persons').where('team_id', '=', teamId).where('id', 'in', slice).execute();
    }
  }

  /** Deletes the team's events of `distinctIds` in the row store (a bulk delete keeping the persons). */
  async deleteEventsOf(teamId: number, distinctIds: readonly string[]): Promise<void> {
    for (const slice of chunks([...distinctIds]))
      await this.db.deleteFrom('events').where('team_id', '=', teamId).where('distinct_id', 'in', slice).execute();
  }

  /**
   * Which of `uuids` are stored already, in any project: uuid → the project (`team_id`) that holds
   * it; uuids not stored are absent. The import's look-up before writing a batch that met stored
   * uuids (ingest/import/write.ts). Reads `ITEMS_PER_STATEMENT` ids per query (storage/chunks.ts).
   */
  async storedUuids(uuids: readonly string[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    const dialect = dialectOf(this.db);
    for (const slice of chunks(uuids)) {
      const rows = await this.db
        .selectFrom('events')
        .select(['uuid', 'team_id'])
        .where(
          'uuid',
          'in',
          slice.map((u) => eventUuidIn(dialect, u)),
        )
        .execute();
      for (const r of rows) found.set(eventUuidOut(r.uuid), r.team_id);
    }
    return found;
  }

  /**
   * Inserts events, skipping any whose uuid is stored already (in any project); of several events
   * of `events` with one uuid, the first is stored. Returns how many rows were inserted. Throws
   * the driver's error on a constraint violation other than the uuid.
   *
   * Each elements chain is stored once per project (storage/events/element-groups.ts): the event gets its
   * group's id and `elements_chain` `''`. On SQLite the session-constant properties are stored once
   * per distinct set (storage/events/property-sets.ts), and the materialized columns of those keys, which
   * are stored columns, are filled from the set (storage/events/materialized.ts `storedMaterializedValues`).
   *
   * SQLite: `insert … on conflict (uuid) do nothing` (uuid is the primary key). PostgreSQL, where
   * `events` is partitioned (migration 0008) and its primary key is `(uuid, timestamp)`: the
   * global guard is `event_uuids`, written first in the same statement, and only the uuids it
   * accepted go into `events` (`insertChunkPostgres`).
   */
  async insertEvents(teamId: number, events: readonly EventInput[]): Promise<number> {
    let inserted = 0;
    const createdAt = nowIso();
    const postgres = dialectOf(this.db) === 'postgres';
    const groups = await elementGroupIds(
      this.db,
      teamId,
      events.map((e) => e.elements_chain),
    );
    const groupOf = (e: EventInput) => (e.elements_chain === '' ? null : groups.get(e.elements_chain)!);
    if (postgres) {
      for (const slice of chunks(events)) inserted += await this.insertChunkPostgres(teamId, slice, slice.map(groupOf), createdAt);
      return inserted;
    }
    const createdMicros = eventTimeIn('sqlite', createdAt);
    const orders = new Map<string, string>();
    const splits = events.map((e) => splitProperties(e.properties, orders));
    const sets = await propertySetIds(this.db, teamId, splits);
    const stored = await storedMaterializedValues(this.db, sets.sets.values());
    for (const [first, slice] of chunksAt(events)) {
      const chunk = slice.map((e, i) => {
        const split = splits[first + i]!;
        const setId = split.shared === undefined ? null : sets.sets.get(split.shared)!;
        const row: Record<string, unknown> = {
          uuid: eventUuidIn('sqlite', e.uuid),
          team_id: teamId,
          event: e.event,
          distinct_id: e.distinct_id,
          properties: eventPropertiesIn('sqlite', split.own),
          timestamp: eventTimeIn('sqlite', e.timestamp),
          elements_chain: '',
          element_group_id: groupOf(e),
          created_at: createdMicros,
          property_set_id: setId,
          key_order_id: split.keys === undefined ? null : sets.orders.get(split.keys)!,
        };
        if (setId !== null) {
          const values = stored.bySet.get(setId)!;
          stored.columns.forEach((column, j) => (row[column] = values[j]));
        }
        return row as Insertable<EventTable>;
      });
      const r = await this.db
        .insertInto('events')
        .values(chunk)
        .onConflict((oc) => oc.column('uuid').doNothing())
        .executeTakeFirst();
      inserted += Number(r.numInsertedOrUpdatedRows ?? 0n);
    }
    return inserted;
  }

  /**
   * One chunk on PostgreSQL, in one statement: the rows arrive as one array a column (`unnest …
   * with ordinality`: 6 parameters whatever the chunk's size), `event_uuids` takes the uuids it
   * does not hold yet (`on conflict do nothing returning uuid`; a concurrent writer of the same
   * uuid waits for the other's commit and then skips it), and `events` gets the first row of each
   * accepted uuid, in input order. Returns the rows inserted into `events`.
   */
  private async insertChunkPostgres(
    teamId: number,
    chunk: readonly EventInput[],
    groupIds: readonly (number | null)[],
    createdAt: string,
  ): Promise<number> {
    const col = <K extends keyof EventInput>(k: K) => chunk.map((e) => e[k]);
    const r = await sql`
      with v as (
        select * from unnest(${col('uuid')}::text[], ${col('event')}::text[], ${col('distinct_id')}::text[],
          ${chunk.map((e) => jsonValue(e.properties))}::text[], ${col('timestamp')}::text[], ${groupIds}::integer[])
          with ordinality as v(uuid, event, distinct_id, properties, timestamp, element_group_id, ord)
      ),
      fresh as (insert into event_uuids (uuid) select distinct uuid from v on conflict do nothing returning uuid),
      firsts as (select distinct on (uuid) * from v order by uuid, ord)
      insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, element_group_id, created_at)
      select f.uuid, ${teamId}::integer, f.event, f.distinct_id, f.properties::json, f.timestamp, '', f.element_group_id, ${createdAt}::timestamptz
      from firsts f join fresh using (uuid) order by f.ord`.execute(this.db);
    return Number(r.numAffectedRows ?? 0n);
  }

  /**
   * Applies person updates in order (`$set` / `$set_once` / `$unset`, `$identify` and
   * `$create_alias` merges; person-updates.ts). Returns the number of persons created.
   */
  async applyPersonUpdates(teamId: number, updates: readonly PersonUpdate[]): Promise<number> {
    return applyPersonUpdates(this.db, teamId, updates);
  }
}
