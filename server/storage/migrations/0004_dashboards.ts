/**
 * Migration 0004: dashboards, insights, text cards and dashboard tiles (posthog/models/dashboard.py,
 * posthog/models/insight.py, posthog/models/dashboard_tile.py `DashboardTile` and `Text`). A tile
 * holds either an insight or a text, with its layouts and colour.
 */
import type { Kysely, Migration } from 'kysely';
import { columnTypes, dialectOf, withSerialId } from '../dialect.js';

/** Creates dashboards, insights, texts and dashboard_tiles (see the module doc). */
export const migration0004: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    const t = columnTypes(dialect);
    await withSerialId(dialect, db.schema.createTable('dashboards'))
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text')
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('pinned', t.bool, (c) => c.notNull())
      .addColumn('deleted', t.bool, (c) => c.notNull())
      .addColumn('creation_mode', 'text', (c) => c.notNull())
      .addColumn('restriction_level', 'integer', (c) => c.notNull())
      .addColumn('filters', t.json, (c) => c.notNull())
      .addColumn('tags', t.json, (c) => c.notNull())
      .addColumn('created_by_id', 'integer', (c) => c.references('users.id'))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dashboards_team').on('dashboards').columns(['team_id', 'deleted', 'id']).execute();

    await withSerialId(dialect, db.schema.createTable('insights'))
      .addColumn('short_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('name', 'text')
      .addColumn('description', 'text')
      .addColumn('query', t.json)
      .addColumn('is_sample', t.bool, (c) => c.notNull())
      .addColumn('deleted', t.bool, (c) => c.notNull())
      .addColumn('created_by_id', 'integer', (c) => c.references('users.id'))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('insights_team_short_id', ['team_id', 'short_id'])
      .execute();

    await withSerialId(dialect, db.schema.createTable('texts'))
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('body', 'text')
      .addColumn('created_by_id', 'integer', (c) => c.references('users.id'))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await withSerialId(dialect, db.schema.createTable('dashboard_tiles'))
      .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id'))
      .addColumn('insight_id', 'integer', (c) => c.references('insights.id'))
      .addColumn('text_id', 'integer', (c) => c.references('texts.id'))
      .addColumn('layouts', t.json, (c) => c.notNull())
      .addColumn('color', 'text')
      .addColumn('deleted', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dashboard_tiles_dashboard').on('dashboard_tiles').columns(['dashboard_id']).execute();
  },
};
