/**
 * Migration 0011, SQLite only: the properties that do not change within a session stored once per
 * distinct set (storage/events/property-sets.ts). New tables `property_sets (id, team_id, hash,
 * properties)` and `property_key_orders (id, team_id, hash, keys)`, each unique on
 * `(team_id, hash)`, their JSON held as SQLite's JSONB; `events` gains `property_set_id` and
 * `key_order_id` (both NULL for an event whose properties are all its own, and for every row
 * written before). Adds nullable columns only: no row is rewritten, unless a key of
 * `SHARED_PROPERTY_KEYS_0011` is materialized already: its column was a virtual generated column
 * computed from `events.properties`, which a shared key of a new event is no longer in, so it
 * becomes a plain column holding the same values (copied from the virtual one, which is then
 * dropped: every event that has the property is rewritten), with its index and `events_team_time`
 * built again (storage/events/materialized.ts `isStoredColumn`; the inserts fill it from then on). Nothing
 * changes on PostgreSQL, whose events keep their whole properties (the migration is recorded there
 * and does nothing). Written out rather than calling materialized.ts: a released migration must
 * not change when that module does.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * The keys stored in the property sets: what PostHog's web SDK sends unchanged for every event of
 * a page load or session (posthog-js src/utils/event-utils.ts `getEventProperties`: device,
 * browser, screen, library, referrer; src/sessionid.ts: session and window; the `$geoip_…` keys
 * PostHog's GeoIP transformation adds from the client's address), and the demo's session keys
 * (server/ingest/demo/sessions.ts). Part of the storage format (storage/events/property-sets.ts reads by
 * it): changing it takes a migration that moves the keys between the sets and the events.
 */
export const SHARED_PROPERTY_KEYS_0011: ReadonlySet<string> = new Set([
  '$os',
  '$os_version',
  '$browser',
  '$browser_version',
  '$browser_language',
  '$browser_language_prefix',
  '$device',
  '$device_type',
  '$device_id',
  '$raw_user_agent',
  '$timezone',
  '$screen_width',
  '$screen_height',
  '$viewport_width',
  '$viewport_height',
  '$lib',
  '$lib_version',
  '$session_id',
  '$window_id',
  '$referrer',
  '$referring_domain',
  '$host',
  '$geoip_country_code',
  '$geoip_country_name',
  '$geoip_city_name',
  '$geoip_continent_code',
  '$geoip_continent_name',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_postal_code',
  '$geoip_time_zone',
  '$geoip_latitude',
  '$geoip_longitude',
]);

/** Creates `property_sets`, `property_key_orders` and the two `events` columns, on SQLite; makes shared keys' materialized columns plain. */
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
    await storeSharedMaterializedColumns(db);
  },
};

/** A virtual materialized column of a shared key made plain, with the same values (module doc). */
async function storeSharedMaterializedColumns(db: Kysely<unknown>): Promise<void> {
  const recorded = await sql<{
    property: string;
    column_name: string;
  }>`select property, column_name from materialized_columns where kind = 'event' order by created_at, column_name`.execute(db);
  const shared = recorded.rows.filter((r) => SHARED_PROPERTY_KEYS_0011.has(r.property));
  if (shared.length === 0) return;
  await sql`drop index events_team_time`.execute(db);
  for (const { column_name: column } of shared) {
    const copy = `${column}__stored`;
    await sql`alter table events add column ${sql.ref(copy)} text`.execute(db);
    await sql`update events set ${sql.ref(copy)} = ${sql.ref(column)} where ${sql.ref(column)} is not null`.execute(db);
    await sql`drop index ${sql.ref(`events_${column}`)}`.execute(db);
    await sql`alter table events drop column ${sql.ref(column)}`.execute(db);
    await sql`alter table events rename column ${sql.ref(copy)} to ${sql.ref(column)}`.execute(db);
    await sql`create index ${sql.ref(`events_${column}`)} on events (team_id, ${sql.ref(column)}, timestamp, uuid)`.execute(db);
  }
  await sql`create index events_team_time on events (team_id, timestamp, uuid, ${sql.join(recorded.rows.map((r) => sql.ref(r.column_name)))})`.execute(
    db,
  );
}
