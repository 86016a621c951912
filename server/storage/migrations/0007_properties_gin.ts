/**
 * Migration 0007: on PostgreSQL, a GIN index on `events.properties` with the `jsonb_path_ops`
 * operator class (one hash per key path and value; smaller and faster than the default `jsonb_ops`,
 * and it serves exactly the `@>` containment that the events filters' `exact` operator is written
 * as: `jsonTextInByContainment` in ../dialect.ts). SQLite has no such index: nothing is done there.
 *
 * The index is built under a lock that makes writes to `events` wait (a migration runs in a
 * transaction, where `create index concurrently` cannot); `if not exists` lets an operator build it
 * beforehand, concurrently, under the same name (docs/deploy.md).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/** Creates `events_properties_gin` (PostgreSQL only). */
export const migration0007: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    await sql`create index if not exists events_properties_gin on events using gin (properties jsonb_path_ops)`.execute(db);
  },
};
