/**
 * Migration 0017, PostgreSQL only: `events.properties` becomes `json` (from `jsonb`), so an event's
 * properties read back as they were sent: keys in their order at every depth, as PostHog's
 * ClickHouse keeps the JSON text (jsonb sorts keys by length, then bytes: PostHog's test_event.py
 * `{"first_name": …, "last_name": …}` came back `last_name` first). Reads that need jsonb's
 * semantics cast (`(properties)::jsonb`: ../dialect.ts); the GIN index is built again on that
 * expression. SQLite, which keeps the order already, is unchanged.
 *
 * Steps, in the migration's transaction (reads and writes of events wait until it commits; the
 * type change rewrites every partition):
 * 1. `events_properties_gin` dropped; each materialized event column dropped (a generated column
 *    pins its source's type), which drops its index and `events_team_time` (it includes them);
 * 2. the type changed, each stored row's jsonb text made compact as the writes write it (keys in
 *    jsonb's order: what was sent is lost for those rows);
 * 3. the materialized columns added again with ../dialect.ts's expression of today (written out
 *    here: a released migration must not change when that module does), their indexes,
 *    `events_team_time` with them, and the GIN index on `((properties)::jsonb) jsonb_path_ops`.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/** jsonb's text without the space after `,` and `:` outside strings (the form JSON.stringify writes). */
const COMPACT = '("(?:[^"\\\\]|\\\\.)*")|([,:]) ';

/** A materialized column's expression: the property's text, objects as written (../dialect.ts `jsonTextLiteral` of 0017). */
function columnExpression(key: string) {
  const k = sql`${sql.lit(key)}::text`;
  return sql`(case when jsonb_typeof((properties)::jsonb -> ${k}) in ('object', 'array') then ((properties)::json -> ${k})::text else ((properties)::jsonb ->> ${k}) end)`;
}

/** Makes `events.properties` json (PostgreSQL only; module doc). */
export const migration0017: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    const materialized = (
      await sql<{
        property: string;
        column_name: string;
      }>`select property, column_name from materialized_columns where kind = 'event' order by created_at, column_name`.execute(db)
    ).rows;
    await sql`drop index if exists events_properties_gin`.execute(db);
    for (const m of materialized) await sql`alter table events drop column if exists ${sql.ref(m.column_name)}`.execute(db);
    await sql`drop index if exists events_team_time`.execute(db);
    await sql`alter table events alter column properties type json using (regexp_replace(properties::text, ${sql.lit(COMPACT)}, '\\1\\2', 'g'))::json`.execute(
      db,
    );
    for (const m of materialized) {
      await sql`alter table events add column ${sql.ref(m.column_name)} text generated always as (${columnExpression(m.property)}) stored`.execute(
        db,
      );
      await sql`create index ${sql.ref(`events_${m.column_name}`)} on events (team_id, ${sql.ref(m.column_name)}, timestamp, uuid)`.execute(
        db,
      );
    }
    const extra = sql.join(materialized.map((m) => sql.ref(m.column_name)));
    await (
      materialized.length
        ? sql`create index events_team_time on events (team_id, timestamp, uuid) include (${extra})`
        : sql`create index events_team_time on events (team_id, timestamp, uuid)`
    ).execute(db);
    await sql`create index events_properties_gin on events using gin (((properties)::jsonb) jsonb_path_ops)`.execute(db);
  },
};
