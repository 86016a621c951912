/**
 * Migration 0008: on PostgreSQL, `events` becomes a table partitioned by month on `timestamp`
 * (declarative range partitioning; ../events/partitions.ts has the naming, the bounds and the partitions
 * created ahead by the server). SQLite is unchanged: nothing is done there.
 *
 * A partitioned table's unique indexes must hold the partition key, so `uuid` alone can no longer
 * be the primary key; the global uniqueness of an event's uuid (a capture retry or a re-import
 * stores nothing twice, in any project) moves to a table of its own, `event_uuids (uuid primary
 * key)`, filled here from the stored events, which the write path inserts into first
 * (events/write.ts). `events` gets the primary key `(uuid, timestamp)`.
 *
 * Steps, in the migration's transaction (reads and writes of events wait until it commits; the
 * copy takes about as long as an import of the same rows):
 * 1. `event_uuids` from `events`;
 * 2. `events` renamed to `events_unpartitioned`; a new `events (like events_unpartitioned
 *    including defaults including generated) partition by range (timestamp)`, so the materialized
 *    columns (generated, stored) come along with their expressions;
 * 3. a partition for every month from the oldest stored event's month (at most
 *    `MAX_MONTHS_BACK` months back; a store without events: `EMPTY_MONTHS_BACK`) through
 *    `PARTITION_MONTHS_AHEAD` months after the current one, and the default partition;
 * 4. the rows copied (the 8 base columns: generated columns are computed again), the old table
 *    dropped;
 * 5. the primary key, the `team_id` foreign key, the three btree indexes of 0002, the GIN index of
 *    0007 and each materialized event column's index (`events_<column>`, as
 *    storage/events/materialized.ts names it), under their former names, built once over the copied rows
 *    (an index of a partitioned table is one index per partition).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';
import {
  addMonths,
  createMonthPartition,
  DEFAULT_EVENTS_PARTITION,
  monthOf,
  monthRange,
  PARTITION_MONTHS_AHEAD,
  type Month,
} from '../events/partitions.js';

/** Oldest month given its own partition, in months before the current one; older rows go to the default partition. */
const MAX_MONTHS_BACK = 120;
/** Months back given partitions when no event is stored yet (demo data and imports of the last year). */
const EMPTY_MONTHS_BACK = 12;

const BASE_COLUMNS = sql`uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at`;

/** The first month to partition: the oldest stored event's, within `MAX_MONTHS_BACK` of now. */
async function firstMonth(db: Kysely<unknown>, now: Month): Promise<Month> {
  const r = await sql<{ oldest: string | null }>`select min(timestamp) as oldest from events_unpartitioned`.execute(db);
  const oldest = r.rows[0]?.oldest;
  const limit = addMonths(now, -MAX_MONTHS_BACK);
  const match = oldest ? /^(\d{4})-(\d{2})/.exec(oldest) : null;
  if (!match) return addMonths(now, -EMPTY_MONTHS_BACK);
  const m = { year: Number(match[1]), month: Number(match[2]) };
  const before = (a: Month, b: Month) => a.year * 12 + a.month < b.year * 12 + b.month;
  if (before(m, limit)) return limit;
  return before(now, m) ? now : m;
}

/** Makes `events` partitioned by month (PostgreSQL only; see the module doc). */
export const migration0008: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    await sql`create table event_uuids (uuid text primary key)`.execute(db);
    await sql`insert into event_uuids (uuid) select uuid from events`.execute(db);

    await sql`alter table events rename to events_unpartitioned`.execute(db);
    await sql`create table events (like events_unpartitioned including defaults including generated) partition by range (timestamp)`.execute(
      db,
    );
    const now = monthOf(new Date());
    for (const m of monthRange(await firstMonth(db, now), addMonths(now, PARTITION_MONTHS_AHEAD))) await createMonthPartition(db, m);
    await sql`create table ${sql.table(DEFAULT_EVENTS_PARTITION)} partition of events default`.execute(db);
    await sql`insert into events (${BASE_COLUMNS}) select ${BASE_COLUMNS} from events_unpartitioned`.execute(db);
    await sql`drop table events_unpartitioned`.execute(db);

    await sql`alter table events add constraint events_pkey primary key (uuid, timestamp)`.execute(db);
    await sql`alter table events add constraint events_team_id_fkey foreign key (team_id) references teams (id)`.execute(db);
    await sql`create index events_team_time on events (team_id, timestamp, uuid)`.execute(db);
    await sql`create index events_team_event_time on events (team_id, event, timestamp, uuid)`.execute(db);
    await sql`create index events_team_distinct_id_time on events (team_id, distinct_id, timestamp, uuid)`.execute(db);
    await sql`create index events_properties_gin on events using gin (properties jsonb_path_ops)`.execute(db);
    const materialized = await sql<{
      column_name: string;
    }>`select column_name from materialized_columns where kind = 'event' order by column_name`.execute(db);
    for (const { column_name: column } of materialized.rows) {
      await sql`create index ${sql.ref(`events_${column}`)} on events (team_id, ${sql.ref(column)}, timestamp, uuid)`.execute(db);
    }
  },
};
