/**
 * Kysely's database introspection on PostgreSQL, limited to the connection's own schema
 * (`current_schema()`, the first schema of its search_path that exists).
 *
 * Why: Kysely's Migrator looks for its bookkeeping tables (`kysely_migration`,
 * `kysely_migration_lock`) through `db.introspection.getTables()` at every run. Kysely's own
 * PostgreSQL introspector reads every column of every table of every schema of the database and
 * calls `pg_get_serial_sequence` and `has_schema_privilege` for each. Those functions read the
 * catalog as it is now, not as the scan's snapshot saw it, so a column, table or schema that
 * another session drops during the scan fails it with SQLSTATE 42703 (`column "…" of relation
 * "…" does not exist`), 42P01 or 3F000: seen when one test dematerialized a column in its schema
 * while another test's `envapi import` started, and possible in any database shared with an
 * application that changes its own tables. Measured before this module: 44 of 126 introspections
 * failed while another schema added and dropped a column of a partitioned table in a loop. It
 * also made every command's start slower in a database holding many tables.
 *
 * This introspector reads only the tables, views and columns of the connection's own schema,
 * which only envapi's migrations change, and calls no function that reads the live catalog.
 * Partitions are not listed (their partitioned table is).
 * `isAutoIncrementing` is true for identity columns and for columns whose default is `nextval(…)`
 * (`serial`), as Kysely's reports it.
 */
import {
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/** Kysely's Migrator's own tables, hidden unless `withInternalKyselyTables` (as Kysely does). */
const KYSELY_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

/** One column of `columnsOfCurrentSchema`. */
interface ColumnRow {
  table: string;
  kind: string;
  schema: string;
  column: string | null;
  type: string | null;
  type_schema: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
  auto_increment: boolean | null;
  comment: string | null;
}

/** The introspector: tables and columns of `current_schema()` only (module doc). */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  /** The connection's own schema, alone; empty when its search_path names no existing schema. */
  async getSchemas(): Promise<SchemaMetadata[]> {
    const r = await sql<{ name: string | null }>`select current_schema() as name`.execute(this.db);
    const name = r.rows[0]?.name;
    return name ? [{ name }] : [];
  }

  /** Tables (plain and partitioned) and views of the own schema, with their columns in order. */
  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const r = await sql<ColumnRow>`
      select c.relname as table, c.relkind as kind, n.nspname as schema, a.attname as column,
        t.typname as type, tn.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
        (a.attidentity <> '' or coalesce(pg_get_expr(d.adbin, d.adrelid) like 'nextval(%', false)) as auto_increment,
        col_description(c.oid, a.attnum) as comment
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      left join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_catalog.pg_type t on t.oid = a.atttypid
      left join pg_catalog.pg_namespace tn on tn.oid = t.typnamespace
      left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm') and not c.relispartition
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, { name: string; isView: boolean; schema: string; columns: TableMetadata['columns'][number][] }>();
    for (const row of r.rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.has(row.table)) continue;
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, isView: row.kind === 'v' || row.kind === 'm', schema: row.schema, columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.type ?? '',
        ...(row.type_schema ? { dataTypeSchema: row.type_schema } : {}),
        isNullable: !row.not_null,
        isAutoIncrementing: Boolean(row.auto_increment),
        hasDefaultValue: Boolean(row.has_default),
        ...(row.comment !== null ? { comment: row.comment } : {}),
      });
    }
    return [...tables.values()];
  }

  /** @deprecated by Kysely in favour of `getTables`; the same tables. */
  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect with `CurrentSchemaIntrospector` as its introspector (module doc). */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
