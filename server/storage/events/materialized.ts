/**
 * Materialized property columns: a hot property copied into a real, indexed column, as PostHog
 * does on ClickHouse (posthog/clickhouse/materialized_columns/; its columns are named
 * `mat_<property>`). An operator chooses them (`envapi events materialize <property> [--person]`,
 * server/cli/materialize.ts); every read that would take the property out of the JSON then reads
 * the column instead (the events filters and values, ./filters.ts and ./row-store.ts; HogQL,
 * through the events table's `materializedColumn`, ./table.ts), and gives the same answers, because the column is defined by the very
 * expression it replaces (`jsonTextLiteral` in ../dialect.ts: the property's text as PostHog
 * compares it, NULL when missing or JSON null).
 *
 * What `materializeProperty` does, in ONE transaction (all of it or none of it lands):
 * - SQLite: `ALTER TABLE events ADD COLUMN mat_… TEXT GENERATED ALWAYS AS (…) VIRTUAL` (SQLite can
 *   add only virtual generated columns: the value is computed when read, and stored in the index),
 *   then `CREATE INDEX events_mat_… ON events (team_id, mat_…, timestamp, uuid)`, which computes the
 *   value of every existing row: that is the backfill. `uuid` ends it as it ends the other events
 *   indexes: a filter on one value then reads its events already in the list's order (timestamp
 *   desc, uuid desc), the newest first, and stops at the page's end.
 * - PostgreSQL: `ALTER TABLE events ADD COLUMN mat_… text GENERATED ALWAYS AS (<jsonTextLiteral>)
 *   STORED` (the property's text through `(properties)::jsonb`, objects as written) (PostgreSQL computes it for every existing row, rewriting the table under an exclusive
 *   lock: reads and writes of events wait until it commits; docs/deploy.md says when to run it),
 *   then the same index.
 * - kind `event`: `events_team_time`, the index of the events in time order, is built again with
 *   every materialized event column after its key (`timeIndexColumns`): SQLite `(team_id,
 *   timestamp, uuid, mat_…, …)`, PostgreSQL `(team_id, timestamp, uuid) include (mat_…, …)`. The
 *   reads that take a property of the most recent events in time order (the events `values`; HogQL
 *   over a time range) then read it from that index alone, without visiting the rows (SQLite's
 *   virtual column would otherwise parse each row's JSON again; docs/performance.md). Its key is unchanged, so every
 *   read it served before it serves as before. Each event write updates it as before; its entries
 *   are longer by the columns' values (what that costs an import was not measured).
 * - the record in `materialized_columns`.
 * Person properties (`kind` `person`) are the same on `persons`, indexed `(team_id, mat_…)`.
 * On SQLite, an event property kept in the property sets (storage/events/property-sets.ts
 * `SHARED_PROPERTY_KEYS`: `$browser`, `$os`, …) cannot be a generated column, whose expression may
 * read only its own row: its column is a plain `TEXT` column (`isStoredColumn`), filled in the same
 * transaction by one `UPDATE` of the rows that have the property (step `backfill`, the same
 * expression as the reads use), and by every insert after (`storedMaterializedValues`, called by
 * the insert inside its write transaction, so that no insert after the commit misses the column).
 * On SQLite the WAL, which then holds the whole new index, is checkpointed and truncated right
 * after the commit (`truncateWal` in ../db.ts; best effort while a server reads the store). On
 * PostgreSQL the table is then vacuumed and analyzed (step `vacuum`, outside the transaction):
 * the rewrite left its visibility map empty, so no read could use the new index alone (HogQL's
 * `count()` over a materialized property of 500,000 events: 557 ms before, ~100 ms after,
 * docs/performance.md), and the planner had no statistics for the new column.
 * There is no batched backfill: the engine computes the column itself, inside the transaction, so
 * no read ever sees a half-filled column. Progress is reported per step (`onStep`).
 *
 * Keys a column expression cannot hold (`"`, `\`, control characters: SQLite reads those through
 * a subquery) are refused with `MaterializeError`, as are a property already materialized and
 * more than `MAX_MATERIALIZED_COLUMNS` columns of a kind.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { truncateWal, type Store } from '../db.js';
import { chunks } from '../chunks.js';
import { canBeLiteralKey, jsonTextLiteral, type DialectName } from '../dialect.js';
import { readEventProperty, SHARED_PROPERTY_KEYS } from './property-sets.js';
import type { Database } from '../schema.js';
import { nowIso, toIso } from '../values.js';

/** Which properties: an event's own (`events.properties`) or its person's (`persons.properties`). */
export type MaterializedKind = 'event' | 'person';

/** One materialized column, as recorded. */
export interface MaterializedColumn {
  kind: MaterializedKind;
  property: string;
  /** the column's name in `events` (kind `event`) or `persons` (kind `person`; on ClickHouse the person mirror `person`) */
  column: string;
  /** when it was added, ISO 8601 UTC; absent in the list of the ClickHouse store, which keeps no column's creation time */
  createdAt?: string;
}

/** Property → column name, per kind: what the read paths look a property up in. */
export interface MaterializedColumns {
  event: ReadonlyMap<string, string>;
  person: ReadonlyMap<string, string>;
}

/** No materialized column (the reads then take every property out of the JSON). */
export const NO_MATERIALIZED_COLUMNS: MaterializedColumns = { event: new Map(), person: new Map() };

/** At most this many materialized columns of each kind (each one is an index every write updates). */
export const MAX_MATERIALIZED_COLUMNS = 32;

/** A request the store refuses (the command line prints the message). */
export class MaterializeError extends Error {}

const TABLE_OF: Record<MaterializedKind, 'events' | 'persons'> = { event: 'events', person: 'persons' };

/**
 * The column name of a property: `mat_` (PostHog's prefix), the property's letters, digits and
 * underscores (at most 32, lowercased), `_`, and 6 hex digits of the SHA-256 of kind and property,
 * so that two properties never share a name (`$browser` → `mat_browser_…`, `Browser` another).
 */
export function materializedColumnName(kind: MaterializedKind, property: string): string {
  const slug = property
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 32);
  const hash = createHash('sha256').update(`${kind}\u0000${property}`).digest('hex').slice(0, 6);
  return `mat_${slug ? `${slug}_` : ''}${hash}`;
}

/** The index of a materialized column: `<table>_<column>`. */
function indexName(kind: MaterializedKind, column: string): string {
  return `${TABLE_OF[kind]}_${column}`;
}

/**
 * The columns of `events_team_time` after its key `(team_id, timestamp, uuid)`: the materialized
 * event columns, in the order they were added (then by name). Module doc.
 */
async function timeIndexColumns(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('materialized_columns')
    .select('column_name')
    .where('kind', '=', 'event')
    .orderBy('created_at')
    .orderBy('column_name')
    .execute();
  return rows.map((r) => r.column_name);
}

/**
 * Builds `events_team_time` again over `columns` (module doc), inside the caller's transaction.
 * Throws the store's error when the DDL fails.
 */
async function rebuildTimeIndex(db: Kysely<Database>, dialect: Store['dialect'], columns: readonly string[]): Promise<void> {
  const extra = sql.join(columns.map((c) => sql.ref(c)));
  const definition =
    columns.length === 0
      ? sql`(team_id, timestamp, uuid)`
      : dialect === 'postgres'
        ? sql`(team_id, timestamp, uuid) include (${extra})`
        : sql`(team_id, timestamp, uuid, ${extra})`;
  await sql`drop index events_team_time`.execute(db);
  await sql`create index events_team_time on events ${definition}`.execute(db);
}

/** Every materialized column, by kind then property. */
export async function listMaterializedColumns(db: Kysely<Database>): Promise<MaterializedColumn[]> {
  const rows = await db
    .selectFrom('materialized_columns')
    .select(['kind', 'property', 'column_name', 'created_at'])
    .orderBy('kind')
    .orderBy('property')
    .execute();
  return rows.map((r) => ({ kind: r.kind, property: r.property, column: r.column_name, createdAt: toIso(r.created_at) }));
}

/** The materialized columns as the read paths use them (one small query). */
export async function loadMaterializedColumns(db: Kysely<Database>): Promise<MaterializedColumns> {
  const rows = await db.selectFrom('materialized_columns').select(['kind', 'property', 'column_name']).execute();
  if (rows.length === 0) return NO_MATERIALIZED_COLUMNS;
  const event = new Map<string, string>();
  const person = new Map<string, string>();
  for (const r of rows) (r.kind === 'person' ? person : event).set(r.property, r.column_name);
  return { event, person };
}

/**
 * Why `property` cannot be materialized (its name is empty, or holds a double quote, a backslash or
 * a control character, which no column expression can hold), or undefined when it can.
 */
export function whyNotMaterializable(property: string): string | undefined {
  if (property === '') return 'the property name is empty';
  if (!canBeLiteralKey(property))
    return `the property ${JSON.stringify(property)} cannot be materialized: its name holds a double quote, a backslash or a control character`;
  return undefined;
}

/**
 * Throws `MaterializeError` when `property` of `kind` may not get a column beside `existing` (the
 * properties of that kind materialized now): it is one of them, or there are
 * `MAX_MATERIALIZED_COLUMNS` already. The rule of every store (here and ./clickhouse/materialize.ts).
 */
export function refuseNewColumn(kind: MaterializedKind, property: string, existing: readonly string[]): void {
  if (existing.includes(property)) throw new MaterializeError(`the ${kind} property ${JSON.stringify(property)} is materialized already`);
  if (existing.length >= MAX_MATERIALIZED_COLUMNS)
    throw new MaterializeError(`at most ${MAX_MATERIALIZED_COLUMNS} ${kind} properties can be materialized; dematerialize one first`);
}

/** The steps of `materializeProperty`, in order, for progress lines. */
export type MaterializeStep = 'column' | 'backfill' | 'index' | 'record' | 'time index' | 'vacuum';

/**
 * Whether the materialized column of `property` of `kind` is a stored, plain column instead of a
 * generated one (module doc): on SQLite, an event property of the property sets.
 */
export function isStoredColumn(dialect: DialectName, kind: MaterializedKind, property: string): boolean {
  return dialect === 'sqlite' && kind === 'event' && SHARED_PROPERTY_KEYS.has(property);
}

/**
 * SQLite: the materialized event columns that are stored columns (`isStoredColumn`), and their
 * values for each property set of `setIds` (set id → the values in `columns`' order), computed by
 * the very expression the generated columns and the reads use. No column: no query past the list.
 * Throws the driver's error.
 */
export async function storedMaterializedValues(
  db: Kysely<Database>,
  setIds: Iterable<number>,
): Promise<{ columns: string[]; bySet: Map<number, (string | null)[]> }> {
  const stored = [...(await loadMaterializedColumns(db)).event]
    .filter(([property]) => isStoredColumn('sqlite', 'event', property))
    .map(([property, column_name]) => ({ property, column_name }));
  const bySet = new Map<number, (string | null)[]>();
  if (stored.length === 0) return { columns: [], bySet };
  const values = stored.map((r, i) => sql`${jsonTextLiteral('sqlite', sql`s.properties`, r.property)} as ${sql.ref(`v${i}`)}`);
  for (const slice of chunks([...new Set(setIds)])) {
    const found = await sql<
      Record<string, string | null> & { id: number }
    >`select s.id, ${sql.join(values)} from property_sets s where s.id in (${sql.join(slice)})`.execute(db);
    for (const r of found.rows)
      bySet.set(
        r.id,
        stored.map((_, i) => r[`v${i}`] ?? null),
      );
  }
  return { columns: stored.map((r) => r.column_name), bySet };
}

/**
 * Materializes `property` of `kind` (module doc). Returns the new column. Throws
 * `MaterializeError` for a key no column expression can hold, a property already materialized, or
 * past `MAX_MATERIALIZED_COLUMNS`; the store's own error when the DDL fails (nothing is changed).
 * `onStep` is told when each step starts.
 */
export async function materializeProperty(
  store: Store,
  kind: MaterializedKind,
  property: string,
  onStep?: (step: MaterializeStep) => void,
): Promise<MaterializedColumn> {
  const refused = whyNotMaterializable(property);
  if (refused !== undefined) throw new MaterializeError(refused);
  const column = materializedColumnName(kind, property);
  const table = TABLE_OF[kind];
  const createdAt = nowIso();
  await store.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('materialized_columns').select('property').where('kind', '=', kind).execute();
    refuseNewColumn(
      kind,
      property,
      existing.map((r) => r.property),
    );
    onStep?.('column');
    if (isStoredColumn(store.dialect, kind, property)) {
      await sql`alter table events add column ${sql.ref(column)} text`.execute(trx);
      onStep?.('backfill');
      const value = readEventProperty('sqlite', property, (json) => jsonTextLiteral('sqlite', json, property));
      await sql`update events set ${sql.ref(column)} = ${value} where ${value} is not null`.execute(trx);
    } else {
      const expression = jsonTextLiteral(store.dialect, sql.ref('properties'), property);
      const storage = store.dialect === 'postgres' ? sql`stored` : sql`virtual`;
      await sql`alter table ${sql.table(table)} add column ${sql.ref(column)} text generated always as (${expression}) ${storage}`.execute(
        trx,
      );
    }
    onStep?.('index');
    const columns = kind === 'event' ? sql`team_id, ${sql.ref(column)}, timestamp, uuid` : sql`team_id, ${sql.ref(column)}`;
    await sql`create index ${sql.ref(indexName(kind, column))} on ${sql.table(table)} (${columns})`.execute(trx);
    onStep?.('record');
    await trx.insertInto('materialized_columns').values({ kind, property, column_name: column, created_at: createdAt }).execute();
    if (kind === 'event') {
      onStep?.('time index');
      await rebuildTimeIndex(trx, store.dialect, await timeIndexColumns(trx));
    }
  });
  await truncateWal(store);
  if (store.dialect === 'postgres') {
    // the rewrite left the table's visibility map empty and the new column without statistics
    onStep?.('vacuum');
    await sql`vacuum (analyze) ${sql.table(table)}`.execute(store.db);
  }
  return { kind, property, column, createdAt };
}

/**
 * Drops the materialized column of `property` of `kind` with its index and record, in one
 * transaction (kind `event`: `events_team_time` is built again without it); the reads go back to
 * the JSON. Returns false when the property is not materialized.
 */
export async function dematerializeProperty(store: Store, kind: MaterializedKind, property: string): Promise<boolean> {
  const dropped = await store.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('materialized_columns')
      .select('column_name')
      .where('kind', '=', kind)
      .where('property', '=', property)
      .executeTakeFirst();
    if (!row) return false;
    await trx.deleteFrom('materialized_columns').where('kind', '=', kind).where('property', '=', property).execute();
    if (kind === 'event') await rebuildTimeIndex(trx, store.dialect, await timeIndexColumns(trx));
    await sql`drop index ${sql.ref(indexName(kind, row.column_name))}`.execute(trx);
    await sql`alter table ${sql.table(TABLE_OF[kind])} drop column ${sql.ref(row.column_name)}`.execute(trx);
    return true;
  });
  if (dropped) await truncateWal(store);
  return dropped;
}
