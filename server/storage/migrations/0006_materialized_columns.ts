/**
 * Migration 0006: the record of materialized property columns (storage/events/materialized.ts). The
 * columns themselves and their indexes are added and dropped by `envapi events materialize` /
 * `dematerialize`, not by a migration: which properties are hot is an operator's choice.
 */
import type { Kysely, Migration } from 'kysely';
import { columnTypes, dialectOf } from '../dialect.js';

/** Creates `materialized_columns` (kind, property) → column_name. */
export const migration0006: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const t = columnTypes(dialectOf(db));
    await db.schema
      .createTable('materialized_columns')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('property', 'text', (c) => c.notNull())
      .addColumn('column_name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('materialized_columns_pk', ['kind', 'property'])
      .execute();
  },
};
