/**
 * The one module that knows which SQL dialect is in use. Everything else is Kysely that runs on
 * SQLite and PostgreSQL alike; what differs (column types in migrations, and later JSON property
 * access and upserts) is answered here.
 */
import type { ColumnDataType, Expression, Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';

/** The dialect names this project supports. */
export type DialectName = 'sqlite' | 'postgres';

/** Column types per dialect, for migrations. */
export interface ColumnTypes {
  bool: ColumnDataType;
  json: ColumnDataType;
  timestamp: ColumnDataType;
}

/** Column types for `dialect`: SQLite stores booleans as integer, JSON and timestamps as text. */
export function columnTypes(dialect: DialectName): ColumnTypes {
  return dialect === 'postgres'
    ? { bool: 'boolean', json: 'jsonb', timestamp: 'timestamptz' }
    : { bool: 'integer', json: 'text', timestamp: 'text' };
}

/**
 * The dialect of a Kysely instance or transaction, read from its adapter (so it also holds for the
 * instances Kysely's Migrator and transactions hand out).
 */
export function dialectOf<DB>(db: Kysely<DB>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

