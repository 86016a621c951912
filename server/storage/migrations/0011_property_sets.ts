/**
 * Migration 0011, SQLite only: the properties that do not change within a session stored once per
 * distinct set (storage/property-sets.ts). New tables `property_sets (id, team_id, hash,
 * properties)` and `property_key_orders (id, team_id, hash, keys)`, each unique on
 * `(team_id, hash)`, their JSON held as SQLite's JSONB; `events` gains `property_set_id` and
 * `key_order_id` (both NULL for an event whose properties are all its own, and for every row
 * written before). Adds nullable columns only: no row is rewritten. Nothing changes on PostgreSQL,
 * whose events keep their whole properties (the migration is recorded there and does nothing).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/** Creates `property_sets`, `property_key_orders` and the two `events` columns, on SQLite. */
export const migration0011: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'sqlite') return;
    for (const [table, column] of [
      ['property_sets', 'properties'],
      ['property_key_orders', 'keys'],
    ] as const) {
      await db.schema
        .createTable(table)
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn(column, 'blob', (c) => c.notNull())
        .addUniqueConstraint(`${table}_team_hash`, ['team_id', 'hash'])
        .execute();
    }
    await sql`alter table events add column property_set_id integer`.execute(db);
    await sql`alter table events add column key_order_id integer`.execute(db);
  },
};
