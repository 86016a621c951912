/**
 * Migration 0005: the index the persons list reads through (`GET …/persons/`, newest first:
 * `created_at desc, id desc` within a team, as PostHog's PersonQuery orders them), so that a page
 * at any offset walks the index instead of sorting the team's persons.
 */
import type { Kysely, Migration } from 'kysely';

/** Creates `persons_team_created` on persons (team_id, created_at, id). */
export const migration0005: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex('persons_team_created').on('persons').columns(['team_id', 'created_at', 'id']).execute();
  },
};
