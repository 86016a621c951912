/**
 * Migration 0014: `teams.ingested_event`, PostHog's `Team.ingested_event` (posthog/models/team/team.py),
 * set once the project's first event is written. On the row stores a project's events are in the
 * relational store, where `ingested_event` is also read as "any event stored" (so rows written
 * before this migration count); with the events on ClickHouse (`EVENTS_STORE=clickhouse`) the
 * relational store holds none, and this column is what the write path marks
 * (server/ingest/write-events.ts). Adding a column with a default rewrites no row.
 */
import type { Kysely, Migration } from 'kysely';

/** Adds `teams.ingested_event` (boolean, not null, default false). */
export const migration0014: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('teams')
      .addColumn('ingested_event', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
  },
};
