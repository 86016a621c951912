/**
 * Migration 0013, SQLite only: each event's `timestamp` and `created_at` stored as INTEGER
 * microseconds since the epoch instead of ISO 8601 text (storage/events/times.ts). SQLite cannot
 * change a column's declared type, and a `text` column turns every integer written into it back
 * into text, so the table is built again, as SQLite's documentation gives it (sqlite.org/lang_altertable.html,
 * "Making Other Kinds Of Table Schema Changes"):
 *
 * 1. `events_new` from `events`' own `CREATE TABLE` statement with those two columns declared
 *    `integer` (every other column, materialized ones included, as it is);
 * 2. every row copied in rowid order, the times converted in SQL (a time that is not a date
 *    fails the NOT NULL constraint, and the migration with it: nothing is half-converted);
 * 3. `events` dropped (its indexes with it), `events_new` renamed `events`, and each index of
 *    `events` created again from its own statement.
 *
 * The steps run in one transaction of their own (Kysely runs SQLite's migrations outside one), so
 * a failure leaves `events` as it was. A store whose columns are `integer` already is not built
 * again: the process stopped between the commit and Kysely's record of the migration, or the code
 * was rolled back with docs/deploy.md's statements (which write text into those columns and delete
 * the record): only its rows holding text are converted, in one `UPDATE`.
 *
 * No other table refers to `events` and it has no trigger. The copy and the index builds read and
 * write every event once (docs/deploy.md gives the time); the file then holds the old pages as
 * free space, which later writes reuse (`VACUUM` gives it back to the disk). Nothing changes on
 * PostgreSQL, whose times stay text (the migration is recorded there and does nothing).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * SQL microseconds of a stored text time `column`: `YYYY-MM-DDTHH:MM:SS` then `.` and 1–6 digits
 * and `Z` (timestamps have six digits, `created_at` three), or no fraction; an integer (a row
 * converted already) as it is. NULL for text that is not a date. Written out here rather than
 * taken from ../events/times.ts: a released migration must not change when that module does.
 */
function micros(column: string): string {
  const c = `"${column}"`;
  return `(case when typeof(${c}) = 'integer' then ${c} else unixepoch(substr(${c}, 1, 19)) * 1000000 + (case when substr(${c}, 20, 1) = '.' then cast(substr(rtrim(substr(${c}, 21), 'Z') || '000000', 1, 6) as integer) else 0 end) end)`;
}

/** The declared-type change, in `events`' CREATE TABLE statement as SQLite keeps it. */
function integerTimes(createSql: string): string {
  let out = createSql.replace(/^CREATE TABLE "events"/, 'CREATE TABLE "events_new"');
  for (const column of ['timestamp', 'created_at']) {
    const declared = `"${column}" text not null`;
    if (out.split(declared).length !== 2)
      throw new Error(`migration 0013: events.${column} is not declared as ${declared} in ${createSql}`);
    out = out.replace(declared, `"${column}" integer not null`);
  }
  if (!out.startsWith('CREATE TABLE "events_new"'))
    throw new Error(`migration 0013: unexpected CREATE TABLE statement of events: ${createSql}`);
  return out;
}

/** Rebuilds SQLite's `events` with integer times (module doc). */
export const migration0013: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'sqlite') return;
    const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'events'`.execute(db);
    const createSql = table.rows[0]?.sql;
    if (!createSql) throw new Error('migration 0013: no events table');
    // rebuilt already (the process stopped before Kysely recorded the migration, or the store was
    // rolled back with docs/deploy.md's statements, which leave text in the integer columns):
    // only the rows holding text are converted
    if (createSql.includes('"timestamp" integer not null')) {
      await sql
        .raw(
          `update events set "timestamp" = ${micros('timestamp')}, "created_at" = ${micros('created_at')} where typeof("timestamp") = 'text' or typeof("created_at") = 'text'`,
        )
        .execute(db);
      return;
    }
    const indexes = await sql<{
      sql: string;
    }>`select sql from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null order by name`.execute(db);
    // hidden 0: an ordinary column; 2 and 3: generated (virtual, stored), which SQLite computes
    const columns = await sql<{ name: string; hidden: number }>`select name, hidden from pragma_table_xinfo('events')`.execute(db);
    const copied = columns.rows.filter((c) => c.hidden === 0).map((c) => c.name);
    const names = copied.map((c) => `"${c}"`).join(', ');
    const values = copied.map((c) => (c === 'timestamp' || c === 'created_at' ? micros(c) : `"${c}"`)).join(', ');
    // one transaction (Kysely runs SQLite's migrations outside one): a failure leaves `events` as it was
    await db.transaction().execute(async (trx) => {
      await sql.raw(integerTimes(createSql)).execute(trx);
      await sql.raw(`insert into events_new (rowid, ${names}) select rowid, ${values} from events order by rowid`).execute(trx);
      await sql`drop table events`.execute(trx);
      await sql`alter table events_new rename to events`.execute(trx);
      for (const index of indexes.rows) await sql.raw(index.sql).execute(trx);
    });
  },
};
