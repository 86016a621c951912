/**
 * Migration 0010: each distinct elements chain of a project stored once (PostHog's `ElementGroup`
 * of its PostgreSQL events era, posthog/models/element_group.py: a team's elements keyed by their
 * hash). New table `element_groups (id, team_id, hash, elements_chain)`, unique on
 * `(team_id, hash)`; `events` gains `element_group_id` (NULL for an event without a chain). Rows
 * written before keep their chain in `events.elements_chain` with no group; both read the same
 * (storage/events/element-groups.ts). Adds a nullable column only: no row is rewritten, on either store
 * (on PostgreSQL the partitions inherit it).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf, withSerialId } from '../dialect.js';

/** Creates `element_groups` and adds `events.element_group_id`. */
export const migration0010: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    await withSerialId(dialect, db.schema.createTable('element_groups'))
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('elements_chain', 'text', (c) => c.notNull())
      .addUniqueConstraint('element_groups_team_hash', ['team_id', 'hash'])
      .execute();
    await sql`alter table events add column element_group_id integer`.execute(db);
  },
};
