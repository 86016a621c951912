/**
 * Migration 0002: events, persons and person distinct ids.
 *
 * Events are keyed by uuid (the identity an import deduplicates on). `timestamp` is stored as
 * fixed-width ISO 8601 UTC text with microseconds (`2024-11-20T14:03:10.871123Z`) on both
 * dialects, so that ordering by it is chronological and microseconds survive (node-postgres would
 * cut a timestamptz to milliseconds); PostgreSQL stores it with the "C" collation so that the
 * comparison is byte-wise. Indexes serve the events list (newest first with the uuid tie-break),
 * the `event` and `distinct_id` filters, and the person lookups.
 */
import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import { columnTypes, dialectOf, withSerialId } from '../dialect.js';

/** Creates events, persons and person_distinct_ids with their indexes (see the module doc). */
export const migration0002: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    const t = columnTypes(dialect);
    const textC = dialect === 'postgres' ? sql`text collate "C"` : sql`text`;

    await db.schema
      .createTable('events')
      .addColumn('uuid', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('distinct_id', 'text', (c) => c.notNull())
      .addColumn('properties', t.json, (c) => c.notNull())
      .addColumn('timestamp', textC, (c) => c.notNull())
      .addColumn('elements_chain', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_team_time').on('events').columns(['team_id', 'timestamp', 'uuid']).execute();
    await db.schema.createIndex('events_team_event_time').on('events').columns(['team_id', 'event', 'timestamp', 'uuid']).execute();
    await db.schema
      .createIndex('events_team_distinct_id_time')
      .on('events')
      .columns(['team_id', 'distinct_id', 'timestamp', 'uuid'])
      .execute();

    await withSerialId(dialect, db.schema.createTable('persons'))
      .addColumn('uuid', 'text', (c) => c.notNull().unique())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('properties', t.json, (c) => c.notNull())
      .addColumn('is_identified', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('person_distinct_ids')
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('distinct_id', 'text', (c) => c.notNull())
      .addColumn('person_id', 'integer', (c) => c.notNull().references('persons.id'))
      .addPrimaryKeyConstraint('person_distinct_ids_pk', ['team_id', 'distinct_id'])
      .execute();
    await db.schema.createIndex('person_distinct_ids_person').on('person_distinct_ids').columns(['person_id']).execute();
  },
};
