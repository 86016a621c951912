/**
 * The one module that knows which SQL dialect is in use. Everything else is Kysely that runs on
 * SQLite and PostgreSQL alike; what differs (column types in migrations, and later JSON property
 * access and upserts) is answered here.
 */
import type { ColumnDataType, Expression, Kysely } from 'kysely';
import { sql } from 'kysely';

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

/** Reads the dialect a Kysely instance was opened with (recorded by `openDatabase`). */
export function dialectOf(db: Kysely<unknown>): DialectName {
  const name = (db as unknown as { __dialect?: DialectName }).__dialect;
  return name ?? 'sqlite';
}

/** Records the dialect on a Kysely instance (used by `openDatabase`). */
export function tagDialect(db: Kysely<unknown>, name: DialectName): void {
  Object.defineProperty(db, '__dialect', { value: name, enumerable: false });
}

/** `true` when the dialect-level literal for SQL booleans is needed in raw SQL. */
export const sqlTrue = (dialect: DialectName) => (dialect === 'postgres' ? sql`true` : sql`1`);
