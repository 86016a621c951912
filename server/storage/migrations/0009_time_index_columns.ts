/**
 * Migration 0009: `events_team_time` carries the materialized event columns after its key, as
 * `envapi events materialize` now builds it (storage/events/materialized.ts): SQLite `(team_id,
 * timestamp, uuid, mat_…, …)`, PostgreSQL `(team_id, timestamp, uuid) include (mat_…, …)`, the
 * columns in the order they were added. A store with no materialized event column (most) is left
 * as it is; one with some gets the index built again, which reads every event once (docs/deploy.md).
 * Written out here rather than calling materialized.ts: a released migration must not change when
 * that module does.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/** Builds `events_team_time` again with the recorded materialized event columns, if any. */
export const migration0009: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const recorded = await sql<{
      column_name: string;
    }>`select column_name from materialized_columns where kind = 'event' order by created_at, column_name`.execute(db);
    if (recorded.rows.length === 0) return;
    const extra = sql.join(recorded.rows.map((r) => sql.ref(r.column_name)));
    await sql`drop index events_team_time`.execute(db);
    if (dialectOf(db) === 'postgres')
      await sql`create index events_team_time on events (team_id, timestamp, uuid) include (${extra})`.execute(db);
    else await sql`create index events_team_time on events (team_id, timestamp, uuid, ${extra})`.execute(db);
  },
};
