/**
 * Migration 0003: explicit project memberships (ee/models/explicit_team_membership.py
 * `ExplicitTeamMembership`): an organization membership given a level (member 1, admin 8) on one
 * project, unique per (project, organization membership).
 */
import type { Kysely, Migration } from 'kysely';
import { columnTypes, dialectOf } from '../dialect.js';

/** Creates explicit_team_memberships (see the module doc). */
export const migration0003: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const t = columnTypes(dialectOf(db));
    await db.schema
      .createTable('explicit_team_memberships')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('parent_membership_id', 'text', (c) => c.notNull().references('organization_memberships.id').onDelete('cascade'))
      .addColumn('level', 'integer', (c) => c.notNull())
      .addColumn('joined_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('explicit_team_memberships_team_parent', ['team_id', 'parent_membership_id'])
      .execute();
  },
};
