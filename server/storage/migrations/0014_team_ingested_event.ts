/**
 * Migration 0014: `teams.ingested_event`, PostHog's `Team.ingested_event` (posthog/models/team/team.py),
 * set once the project's first event is written. On the row stores a project's events are in the
 * relational store, where `ingested_event` is also read as "any event stored" (so rows written
 * before this migration count); with the events on ClickHouse (`EVENTS_STORE=clickhouse`) the
 * relational store holds none, and this column is what the write path marks
 * (server/ingest/write-events.ts). Adding a column with a default rewrites no row.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * Adds `teams.ingested_event` (boolean, not null, default false), unless the column is there: a
 * store rolled back past this migration by docs/deploy.md's statements keeps the column and loses
 * only the record, and the next upgrade then runs this again.
 */
export const migration0014: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const found =
      dialectOf(db) === 'postgres'
        ? await sql`select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'teams' and column_name = 'ingested_event'`.execute(
            db,
          )
        : await sql`select 1 from pragma_table_info('teams') where name = 'ingested_event'`.execute(db);
    if (found.rows.length) return;
    await db.schema
      .alterTable('teams')
      .addColumn('ingested_event', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
  },
};
