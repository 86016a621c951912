/**
 * Materialized property columns on the ClickHouse events store (`envapi events materialize` with
 * `EVENTS_STORE=clickhouse`), as PostHog makes them (ee/clickhouse/materialized_columns/
 * columns.py; the row stores' are ../materialized.ts, whose limits and errors these keep).
 *
 * What `materializeClickHouseProperty` does, on `events` (kind `event`, column `mat_<property>`)
 * or on the person mirror `person` (kind `person`, `pmat_<property>`, as PostHog materializes
 * person properties on its `person` table):
 * - step `column`: `ALTER TABLE … ADD COLUMN IF NOT EXISTS mat_… Nullable(String) MATERIALIZED
 *   JSONExtract(properties, '<property>', 'Nullable(String)') COMMENT
 *   'column_materializer::properties::<property>'` (../../clickhouse/schema.ts
 *   `materializedColumnDdl`: PostHog's nullable form, whose value is the property's text exactly:
 *   a string unquoted and unescaped, another value its JSON text, NULL when missing or JSON
 *   null; `''` and `'null'` stay strings, where PostHog's older `String` form made both NULL).
 *   From then on every insert computes it, and a part written before it computes it when read:
 *   no read sees a half-filled column.
 * - step `index`: PostHog's `minmax_<column>` skipping index (`TYPE minmax GRANULARITY 1`).
 * - step `backfill`: `ALTER TABLE … MATERIALIZE COLUMN`, then `MATERIALIZE INDEX`: mutations
 *   that write the column and its index into every stored part (PostHog runs `ALTER … UPDATE col
 *   = col` on a `DEFAULT` column; `MATERIALIZE COLUMN` does that for a `MATERIALIZED` one). Each
 *   is started without waiting (`mutations_sync = 0`: an HTTP request would time out on a large
 *   table) and `system.mutations` is polled until it is done; a mutation that fails is killed and
 *   the column dropped again, and the error thrown.
 * What the store reads (`clickhouseMaterializedColumns`, ./store.ts `materializedColumns`) is read
 * from `system.columns` on every call (its comments say which property a column holds), so a
 * server sees a new column at its next read, without a restart. Only envapi's nullable
 * `mat_`/`pmat_` columns are read; a `String` column of PostHog's older form, or one PostHog's
 * comment marks `::disabled`, is left alone (its `''` cannot tell an empty string from a missing
 * property).
 *
 * Errors: `MaterializeError` (the command line prints it) for a key no column expression holds
 * (../materialized.ts `whyNotMaterializable`), a property already materialized and past
 * `MAX_MATERIALIZED_COLUMNS` of a kind (`refuseNewColumn`): the row stores' rules and messages;
 * besides, a property ending in `::disabled` (PostHog's comment would read it as a disabled
 * column) and a cluster (`events` a Distributed table: not supported yet). The engine's error
 * when the DDL fails.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { checkIdentifier, materializedColumnDdl, materializedColumnName, stringLiteral } from '../../clickhouse/schema.js';
import { nowIso } from '../../values.js';
import {
  MaterializeError,
  NO_MATERIALIZED_COLUMNS,
  refuseNewColumn,
  whyNotMaterializable,
  type MaterializedColumn,
  type MaterializedColumns,
  type MaterializedKind,
  type MaterializeStep,
} from '../materialized.js';
import type { ClickHouseConnection } from '../../clickhouse/connection.js';

/** What the materialize functions use of the open store (./open.ts `ClickHouseEvents`; not imported from there: open.ts reaches this module through store.ts). */
interface ClickHouseEvents {
  readonly db: Kysely<unknown>;
  readonly connection: ClickHouseConnection;
}

/** The ClickHouse table of each kind's columns: `events`, or the person mirror `person`. */
export const CLICKHOUSE_TABLE_OF: Record<MaterializedKind, 'events' | 'person'> = { event: 'events', person: 'person' };

/** How often the backfill asks `system.mutations` whether its mutation is done, ms. */
const MUTATION_POLL_MS = 200;

/** PostHog's `column_materializer::` comment (`MaterializedColumnDetails.from_column_comment`). */
const COMMENT_PREFIX = 'column_materializer::';
/** PostHog's trailer of a disabled column's comment. */
const DISABLED = '::disabled';

/** A column with PostHog's `column_materializer::` comment on `events` or `person`, as `system.columns` has it. */
export interface ClickHouseMaterializedColumn {
  kind: MaterializedKind;
  property: string;
  column: string;
  /** `Nullable(String)`: PostHog's nullable form, whose value is the property's text exactly (envapi makes only these) */
  nullable: boolean;
  /** PostHog's comment marks it `::disabled` */
  disabled: boolean;
}

/**
 * The property a `column_materializer::` comment names, and whether it is disabled; undefined for
 * another comment or another source column (`person_properties`, `elements_chain`…). PostHog's
 * forms: `column_materializer::<property>` (its older one, of `properties`),
 * `column_materializer::properties::<property>`, and that followed by `::disabled`.
 */
export function parseMaterializerComment(comment: string): { property: string; disabled: boolean } | undefined {
  if (!comment.startsWith(COMMENT_PREFIX)) return undefined;
  const rest = comment.slice(COMMENT_PREFIX.length);
  const source = 'properties::';
  if (!rest.startsWith(source)) return rest.includes('::') || rest === '' ? undefined : { property: rest, disabled: false };
  const named = rest.slice(source.length);
  const disabled = named.endsWith(DISABLED);
  const property = disabled ? named.slice(0, -DISABLED.length) : named;
  return property === '' ? undefined : { property, disabled };
}

/**
 * Every `mat_` column of `events` and `pmat_` column of `person` with PostHog's comment, by kind
 * then property. One query of `system.columns`. Throws the engine's error.
 */
export async function clickhouseColumnsWithComments(db: Kysely<unknown>): Promise<ClickHouseMaterializedColumn[]> {
  const rows = await sql<{
    table: string;
    name: string;
    type: string;
    comment: string;
  }>`select table, name, type, comment from system.columns where database = currentDatabase() and table in ('events', 'person') and startsWith(comment, ${COMMENT_PREFIX}) order by table, name`.execute(
    db,
  );
  const out: ClickHouseMaterializedColumn[] = [];
  for (const r of rows.rows) {
    const kind: MaterializedKind = r.table === 'person' ? 'person' : 'event';
    if (!r.name.startsWith(kind === 'person' ? 'pmat_' : 'mat_')) continue;
    const parsed = parseMaterializerComment(r.comment);
    if (!parsed) continue;
    out.push({ kind, property: parsed.property, column: r.name, nullable: r.type === 'Nullable(String)', disabled: parsed.disabled });
  }
  return out.sort((a, b) =>
    a.kind === b.kind ? (a.property < b.property ? -1 : a.property > b.property ? 1 : 0) : a.kind < b.kind ? -1 : 1,
  );
}

/** The columns the store reads (module doc): envapi's nullable ones, not disabled. */
async function readableColumns(db: Kysely<unknown>): Promise<ClickHouseMaterializedColumn[]> {
  return (await clickhouseColumnsWithComments(db)).filter((c) => c.nullable && !c.disabled);
}

/**
 * The materialized columns as the store's reads use them (property → column, per kind): events
 * filters and values (./filters.ts, ./store.ts) and HogQL (./store.ts `table`). Read bare: their
 * value is the property's text, NULL when missing or JSON null.
 */
export async function clickhouseMaterializedColumns(db: Kysely<unknown>): Promise<MaterializedColumns> {
  const columns = await readableColumns(db);
  if (columns.length === 0) return NO_MATERIALIZED_COLUMNS;
  const event = new Map<string, string>();
  const person = new Map<string, string>();
  for (const c of columns) (c.kind === 'person' ? person : event).set(c.property, c.column);
  return { event, person };
}

/**
 * Every materialized column of the store, by kind then property (`envapi events materialized`).
 * `createdAt` is absent: ClickHouse keeps no column's creation time.
 */
export async function listClickHouseMaterializedColumns(events: Pick<ClickHouseEvents, 'db'>): Promise<MaterializedColumn[]> {
  return (await readableColumns(events.db)).map((c) => ({ kind: c.kind, property: c.property, column: c.column }));
}

/** `MaterializeError` when `events` is a Distributed table (a cluster): not supported yet. */
async function refuseCluster(db: Kysely<unknown>): Promise<void> {
  const rows = await sql<{
    engine: string;
  }>`select engine from system.tables where database = currentDatabase() and name = 'events'`.execute(db);
  if (rows.rows[0]?.engine === 'Distributed')
    throw new MaterializeError(
      'materialized columns on a ClickHouse cluster (events is a Distributed table) are not supported yet: the DDL would have to run ON CLUSTER on sharded_events and events',
    );
}

/**
 * A name for the column of `property` that `table` does not have yet: PostHog's
 * (`materializedColumnName`), or, when taken, that with `_` and 6 hex digits of the SHA-256 of
 * the property (PostHog adds a random suffix), so that `a b` and `a_b` get two columns.
 */
async function freeColumnName(db: Kysely<unknown>, table: 'events' | 'person', property: string): Promise<string> {
  const rows = await sql<{
    name: string;
  }>`select name from system.columns where database = currentDatabase() and table = ${table}`.execute(db);
  const taken = new Set(rows.rows.map((r) => r.name));
  const plain = materializedColumnName(table, property);
  if (!taken.has(plain)) return plain;
  const suffixed = `${plain}_${createHash('sha256').update(property).digest('hex').slice(0, 6)}`;
  if (!taken.has(suffixed)) return suffixed;
  throw new MaterializeError(`no free column name for the property ${JSON.stringify(property)}: ${plain} and ${suffixed} are taken`);
}

/** The ids of the mutations `system.mutations` holds for `table`. */
async function mutationIds(db: Kysely<unknown>, table: string): Promise<Set<string>> {
  const rows = await sql<{
    mutation_id: string;
  }>`select mutation_id from system.mutations where database = currentDatabase() and table = ${table}`.execute(db);
  return new Set(rows.rows.map((r) => r.mutation_id));
}

/** `table` of the store's database, qualified for DDL. */
function qualified(events: Pick<ClickHouseEvents, 'connection'>, table: string): string {
  return `${checkIdentifier('The database', events.connection.database)}.${table}`;
}

/**
 * Runs `ALTER TABLE <table> <command>` as a mutation and waits until every part is done (module
 * doc). Throws `Error` with the engine's reason when the mutation fails (it is killed first).
 */
async function runMutation(events: Pick<ClickHouseEvents, 'db' | 'connection'>, table: string, command: string): Promise<void> {
  const before = await mutationIds(events.db, table);
  await events.connection.client.command({ query: `ALTER TABLE ${qualified(events, table)} ${command} SETTINGS mutations_sync = 0` });
  for (;;) {
    const rows = await sql<{
      mutation_id: string;
      is_done: number;
      latest_fail_reason: string;
    }>`select mutation_id, is_done, latest_fail_reason from system.mutations where database = currentDatabase() and table = ${table}`.execute(
      events.db,
    );
    const mine = rows.rows.filter((r) => !before.has(r.mutation_id));
    const failed = mine.find((r) => Number(r.is_done) === 0 && r.latest_fail_reason !== '');
    if (failed) {
      await events.connection.client.command({
        query: `KILL MUTATION WHERE database = currentDatabase() AND table = ${stringLiteral(table)} AND mutation_id = ${stringLiteral(failed.mutation_id)}`,
      });
      throw new Error(`ClickHouse could not ${command}: ${failed.latest_fail_reason}`);
    }
    // a table without parts may record no mutation: nothing to write
    if (mine.every((r) => Number(r.is_done) === 1)) return;
    await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
  }
}

/** PostHog's skipping index of a materialized column (`get_minmax_index_name`). */
function minmaxIndexName(column: string): string {
  return `minmax_${column}`;
}

/**
 * Materializes `property` of `kind` on ClickHouse (module doc). Returns the new column (its
 * `createdAt` now, ISO 8601 UTC). Throws `MaterializeError` for what the module doc lists, the
 * engine's error when a statement fails (after a failed backfill the column is dropped again).
 * `onStep` is told when each step starts: `column`, `index`, `backfill`.
 */
export async function materializeClickHouseProperty(
  events: Pick<ClickHouseEvents, 'db' | 'connection'>,
  kind: MaterializedKind,
  property: string,
  onStep?: (step: MaterializeStep) => void,
): Promise<MaterializedColumn> {
  const refused = whyNotMaterializable(property);
  if (refused !== undefined) throw new MaterializeError(refused);
  if (property.endsWith(DISABLED))
    throw new MaterializeError(
      `the property ${JSON.stringify(property)} cannot be materialized on ClickHouse: PostHog's column comment reads a name ending in ${DISABLED} as a disabled column`,
    );
  await refuseCluster(events.db);
  const existing = (await readableColumns(events.db)).filter((c) => c.kind === kind).map((c) => c.property);
  refuseNewColumn(kind, property, existing);
  const table = CLICKHOUSE_TABLE_OF[kind];
  const column = await freeColumnName(events.db, table, property);
  const database = events.connection.database;
  const client = events.connection.client;
  const createdAt = nowIso();
  onStep?.('column');
  for (const query of materializedColumnDdl(table, property, column, { database })) await client.command({ query });
  try {
    onStep?.('index');
    const index = minmaxIndexName(column);
    await client.command({
      query: `ALTER TABLE ${qualified(events, table)} ADD INDEX IF NOT EXISTS \`${index}\` \`${column}\` TYPE minmax GRANULARITY 1`,
    });
    onStep?.('backfill');
    await runMutation(events, table, `MATERIALIZE COLUMN \`${column}\``);
    await runMutation(events, table, `MATERIALIZE INDEX \`${index}\``);
  } catch (err) {
    await dropColumn(events, table, column);
    throw err;
  }
  return { kind, property, column, createdAt };
}

/** Drops `column` of `table` with its minmax index (PostHog's `drop_column`: index first). */
async function dropColumn(events: Pick<ClickHouseEvents, 'connection'>, table: string, column: string): Promise<void> {
  await events.connection.client.command({
    query: `ALTER TABLE ${qualified(events, table)} DROP INDEX IF EXISTS \`${minmaxIndexName(column)}\`, DROP COLUMN IF EXISTS \`${column}\``,
  });
}

/**
 * Drops the materialized column of `property` of `kind` with its minmax index, as PostHog's
 * `drop_column` does; the reads go back to the JSON at once. Returns false when the property is
 * not materialized. Throws `MaterializeError` on a cluster, the engine's error when the DDL fails.
 */
export async function dematerializeClickHouseProperty(
  events: Pick<ClickHouseEvents, 'db' | 'connection'>,
  kind: MaterializedKind,
  property: string,
): Promise<boolean> {
  const found = (await readableColumns(events.db)).find((c) => c.kind === kind && c.property === property);
  if (!found) return false;
  await refuseCluster(events.db);
  await dropColumn(events, CLICKHOUSE_TABLE_OF[kind], found.column);
  return true;
}
