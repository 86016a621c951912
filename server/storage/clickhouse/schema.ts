/**
 * The ClickHouse schema of the events store: PostHog's `events`, `person` and
 * `person_distinct_id2` tables, as DDL statements, for one server (or embedded chDB) or for a
 * cluster.
 *
 * Taken from PostHog (posthog/models/event/sql.py, posthog/models/person/sql.py,
 * posthog/clickhouse/table_engines.py; docs/research/clickhouse-chdb.md has the facts read there):
 * - `events`: PostHog's columns in PostHog's order and types (`timestamp` and `created_at`
 *   DateTime64(6, 'UTC'), `properties` JSON text compressed with ZSTD(3), `person_id`,
 *   `person_properties` and `person_created_at` written with the event, `_timestamp` the write
 *   time), the materialized `$session_id` and `$window_id` columns with their minmax indexes,
 *   `ReplacingMergeTree(_timestamp)`, monthly partitions (`toYYYYMM(timestamp)`), PostHog's sort
 *   key `(team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))` and
 *   `SAMPLE BY cityHash64(distinct_id)`. Left out: the group columns (this server has no groups),
 *   the Kafka `_offset`/`_partition` bookkeeping beyond `_offset`, and the property-group maps.
 * - `person` (`ReplacingMergeTree(version) ORDER BY (team_id, id)`) and `person_distinct_id2`
 *   (`ReplacingMergeTree(version) ORDER BY (team_id, distinct_id)`), both with `is_deleted`: the
 *   mirror of the relational persons that queries read (the relational store stays their source
 *   of truth; the events store writes the mirror in the events' write path).
 * - On a cluster: the data tables are `sharded_events` on `ReplicatedReplacingMergeTree`
 *   (`/clickhouse/tables/{shard}/<database>.events`, `{replica}`), `events` a `Distributed` table
 *   over them sharded by `sipHash64(distinct_id)`, as PostHog lays it out; the person tables are
 *   replicated (`ReplicatedReplacingMergeTree`, `/clickhouse/tables/noshard/<database>.<table>`,
 *   `{replica}-{shard}`) across the whole cluster, as PostHog keeps them whole on every node.
 *   Every statement carries `ON CLUSTER`.
 *
 * Materialized property columns (`envapi events materialize`, ../events/clickhouse/materialize.ts)
 * are added later, by `materializedColumnDdl`: PostHog's `mat_<property>` (`pmat_` on `person`),
 * in PostHog's nullable form (a `Nullable(String)` column of the property's text, NULL when missing
 * or JSON null), with PostHog's `column_materializer::properties::<property>` comment.
 */

/** Where the DDL goes: one server (or embedded chDB), or every node of a cluster. */
export interface SchemaOptions {
  /** the database that holds the tables (default `default`) */
  database?: string;
  /** the cluster's name in the servers' `remote_servers` (none: one server) */
  cluster?: string;
}

/** A name ClickHouse takes unquoted, or a clear error: the names go into DDL text. */
export function checkIdentifier(what: string, name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new Error(
      `${what} ${JSON.stringify(name)} is not a plain ClickHouse name: use letters, digits and _, starting with a letter or _.`,
    );
  }
  return name;
}

/** PostHog's `trim_quotes_expr` (posthog/clickhouse/kafka_engine.py): a property's text with its JSON quotes trimmed. */
export function trimQuotesExpr(source: string, key: string): string {
  return `replaceRegexpAll(JSONExtractRaw(${source}, ${stringLiteral(key)}), '^"|"$', '')`;
}

/** `value` as a ClickHouse string literal (backslash and quote escaped). */
export function stringLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The columns of `events`, as PostHog's `EVENTS_TABLE_BASE_SQL` has them (those this server writes). */
const EVENTS_COLUMNS = [
  '`uuid` UUID',
  '`event` String',
  '`properties` String CODEC(ZSTD(3))',
  "`timestamp` DateTime64(6, 'UTC')",
  '`team_id` Int64',
  '`distinct_id` String',
  '`elements_chain` String',
  "`created_at` DateTime64(6, 'UTC')",
  '`person_id` UUID',
  "`person_created_at` DateTime64(3, 'UTC')",
  '`person_properties` String CODEC(ZSTD(3))',
  "`person_mode` Enum8('full' = 0, 'propertyless' = 1, 'force_upgrade' = 2)",
];

/** PostHog's default materialized columns of `sharded_events` that this server's reads use. */
const EVENTS_DEFAULT_MATERIALIZED = ['$session_id', '$window_id'];

const EVENTS_BOOKKEEPING = ['`_timestamp` DateTime', '`_offset` UInt64', "`inserted_at` Nullable(DateTime64(6, 'UTC')) DEFAULT now64()"];

function onCluster(o: SchemaOptions): string {
  return o.cluster ? ` ON CLUSTER ${checkIdentifier('The cluster', o.cluster)}` : '';
}

/**
 * The engine of a data table: `ReplacingMergeTree(version)` on one server; on a cluster its
 * replicated form with PostHog's Keeper paths (posthog/clickhouse/table_engines.py): a `sharded`
 * table has one replicated table per shard (`/clickhouse/tables/{shard}/…`, replica `{replica}`),
 * a table kept whole on every node one for the cluster (`/clickhouse/tables/noshard/…`, replica
 * `{replica}-{shard}`). PostHog writes `posthog.<table>` in the path; here the database stands in
 * for `posthog`, so that two databases on one cluster get their own paths.
 */
function engine(o: SchemaOptions, db: string, table: string, version: string, scheme: 'sharded' | 'replicated'): string {
  if (!o.cluster) return `ReplacingMergeTree(${version})`;
  const [shard, replica] = scheme === 'sharded' ? ['{shard}', '{replica}'] : ['noshard', '{replica}-{shard}'];
  return `ReplicatedReplacingMergeTree('/clickhouse/tables/${shard}/${db}.${table}', '${replica}', ${version})`;
}

/** `CREATE TABLE IF NOT EXISTS <db>.<name> [ON CLUSTER …] (<columns>)` followed by the `clauses` (engine, keys), one per line. */
function createTable(o: SchemaOptions, db: string, name: string, columns: readonly string[], clauses: readonly string[]): string {
  return [`CREATE TABLE IF NOT EXISTS ${db}.${name}${onCluster(o)}`, '(', columns.map((c) => `    ${c}`).join(',\n'), ')', ...clauses].join(
    '\n',
  );
}

/** The data table of events (`events` on one server, `sharded_events` on a cluster). */
function eventsDataTable(o: SchemaOptions, db: string, name: string): string {
  const materialized = EVENTS_DEFAULT_MATERIALIZED.map(
    (p) => `\`${p}\` String MATERIALIZED ${trimQuotesExpr('properties', p)} COMMENT 'column_materializer::${p}'`,
  );
  const indexes = [
    ...EVENTS_DEFAULT_MATERIALIZED.map((p) => `INDEX \`minmax_${p}\` \`${p}\` TYPE minmax GRANULARITY 1`),
    'INDEX kafka_timestamp_minmax_events _timestamp TYPE minmax GRANULARITY 3',
  ];
  return createTable(
    o,
    db,
    name,
    [...EVENTS_COLUMNS, ...materialized, ...EVENTS_BOOKKEEPING, ...indexes],
    [
      `ENGINE = ${engine(o, db, 'events', '_timestamp', 'sharded')}`,
      'PARTITION BY toYYYYMM(timestamp)',
      'ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))',
      'SAMPLE BY cityHash64(distinct_id)',
    ],
  );
}

/** The Distributed `events` of a cluster, over `sharded_events`, sharded by `sipHash64(distinct_id)`. */
function eventsDistributedTable(o: SchemaOptions, db: string): string {
  const materialized = EVENTS_DEFAULT_MATERIALIZED.map((p) => `\`${p}\` String COMMENT 'column_materializer::${p}'`);
  return createTable(
    o,
    db,
    'events',
    [...EVENTS_COLUMNS, ...materialized, ...EVENTS_BOOKKEEPING],
    [`ENGINE = Distributed('${o.cluster}', '${db}', 'sharded_events', sipHash64(distinct_id))`],
  );
}

function personTable(o: SchemaOptions, db: string): string {
  return createTable(
    o,
    db,
    'person',
    [
      '`id` UUID',
      "`created_at` DateTime64(3, 'UTC')",
      '`team_id` Int64',
      '`properties` String CODEC(ZSTD(3))',
      '`is_identified` Int8',
      '`is_deleted` Int8 DEFAULT 0',
      '`version` UInt64',
      '`_timestamp` DateTime',
      '`_offset` UInt64',
    ],
    [`ENGINE = ${engine(o, db, 'person', 'version', 'replicated')}`, 'ORDER BY (team_id, id)'],
  );
}

function personDistinctIdTable(o: SchemaOptions, db: string): string {
  return createTable(
    o,
    db,
    'person_distinct_id2',
    [
      '`team_id` Int64',
      '`distinct_id` String',
      '`person_id` UUID',
      '`is_deleted` Int8',
      '`version` Int64 DEFAULT 1',
      '`_timestamp` DateTime',
      '`_offset` UInt64',
      '`_partition` UInt64',
    ],
    [
      `ENGINE = ${engine(o, db, 'person_distinct_id2', 'version', 'replicated')}`,
      'ORDER BY (team_id, distinct_id)',
      'SETTINGS index_granularity = 512',
    ],
  );
}

/**
 * The DDL of the events store, one statement per entry (no trailing `;`), in the order to run:
 * the database, the events table(s), `person`, `person_distinct_id2`. Every statement is
 * idempotent (`IF NOT EXISTS`). Throws `Error` for a database or cluster name that is not a plain
 * ClickHouse identifier.
 */
export function clickhouseSchema(options: SchemaOptions = {}): string[] {
  const db = checkIdentifier('The database', options.database ?? 'default');
  const statements = [`CREATE DATABASE IF NOT EXISTS ${db}${onCluster(options)}`];
  if (options.cluster) statements.push(eventsDataTable(options, db, 'sharded_events'), eventsDistributedTable(options, db));
  else statements.push(eventsDataTable(options, db, 'events'));
  statements.push(personTable(options, db), personDistinctIdTable(options, db));
  return statements;
}

/**
 * PostHog's name of the materialized column of `property` (ee/clickhouse/materialized_columns/
 * columns.py `_materialized_column_name`): `mat_` on `events` (`pmat_` on `person`), then the
 * property with every character but letters, digits and `$` turned into `_` (`mat_$browser`).
 * Two properties that map to one name get the second a suffix from the caller.
 */
export function materializedColumnName(table: 'events' | 'person', property: string): string {
  return `${table === 'person' ? 'pmat_' : 'mat_'}${property.replace(/[^0-9a-zA-Z$]/g, '_')}`;
}

/**
 * PostHog's expression of a nullable materialized column (ee/clickhouse/materialized_columns/
 * columns.py, `MaterializedColumn.get_expression_and_parameters` with `is_nullable`): property
 * `key` of JSON text `source` as `Nullable(String)`: a string unquoted and unescaped, any other
 * value its JSON text (as ClickHouse writes it again), NULL when the key is missing or JSON null —
 * the text the events store's reads take out of the JSON (../events/clickhouse/filters.ts
 * `propertyTextSql`), value for value.
 */
export function nullablePropertyExpr(source: string, key: string): string {
  return `JSONExtract(${source}, ${stringLiteral(key)}, 'Nullable(String)')`;
}

/** PostHog's comment on the materialized column of event or person property `property` (`MaterializedColumnDetails.as_column_comment`). */
export function materializedColumnComment(property: string): string {
  return `column_materializer::properties::${property}`;
}

/**
 * The DDL that materializes `property` as `column`: `ADD COLUMN IF NOT EXISTS <column>
 * Nullable(String) MATERIALIZED <nullablePropertyExpr> COMMENT '<materializedColumnComment>'`.
 * PostHog's nullable column, but `MATERIALIZED` where PostHog's data nodes say `DEFAULT` (which
 * its `ALTER … UPDATE col = col` backfill needs): no insert can write another value into it,
 * `SELECT *` leaves it out, and `ALTER … MATERIALIZE COLUMN` writes it into the parts stored
 * before it (a part without it computes it when read). On a cluster the data table gets the
 * expression and the Distributed `events` the bare column with the comment.
 */
export function materializedColumnDdl(table: 'events' | 'person', property: string, column: string, options: SchemaOptions = {}): string[] {
  const db = checkIdentifier('The database', options.database ?? 'default');
  const comment = stringLiteral(materializedColumnComment(property));
  const type = 'Nullable(String)';
  const data = options.cluster && table === 'events' ? 'sharded_events' : table;
  const out = [
    `ALTER TABLE ${db}.${data}${onCluster(options)} ADD COLUMN IF NOT EXISTS \`${column}\` ${type} MATERIALIZED ${nullablePropertyExpr('properties', property)} COMMENT ${comment}`,
  ];
  if (options.cluster && table === 'events') {
    out.push(`ALTER TABLE ${db}.events${onCluster(options)} ADD COLUMN IF NOT EXISTS \`${column}\` ${type} COMMENT ${comment}`);
  }
  return out;
}
