/**
 * Migration 0001: accounts (organizations, users, memberships, teams, personal API keys), plugins,
 * plugin configs with their jobs, destination functions created by `migrate`, and the activity log.
 */
import type { Kysely, Migration } from 'kysely';
import { columnTypes, dialectOf, withSerialId } from '../dialect.js';

/**
 * Migration 0001 (`up` only, no `down`): creates the tables of `../schema.ts` and their indexes, with the
 * dialect's column types (`columnTypes`). Throws the driver's error when a table already exists.
 */
export const migration0001: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    const t = columnTypes(dialect);

    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('plugins_access_level', 'integer', (c) => c.notNull().defaultTo(9))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await withSerialId(dialect, db.schema.createTable('users'))
      .addColumn('uuid', 'text', (c) => c.notNull().unique())
      .addColumn('distinct_id', 'text', (c) => c.notNull().unique())
      .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('is_email_verified', t.bool)
      .addColumn('is_active', t.bool, (c) => c.notNull())
      .addColumn('is_staff', t.bool, (c) => c.notNull())
      .addColumn('hedgehog_config', t.json)
      .addColumn('current_team_id', 'integer')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('organization_memberships')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('level', 'integer', (c) => c.notNull())
      .addColumn('joined_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('organization_memberships_org_user', ['organization_id', 'user_id'])
      .execute();

    await withSerialId(dialect, db.schema.createTable('teams'))
      .addColumn('uuid', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('api_token', 'text', (c) => c.notNull().unique())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('access_control', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('personal_api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('secure_value', 'text', (c) => c.notNull().unique())
      .addColumn('mask_value', 'text', (c) => c.notNull())
      .addColumn('scopes', t.json, (c) => c.notNull())
      .addColumn('scoped_teams', t.json)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('last_used_at', t.timestamp)
      .execute();

    await withSerialId(dialect, db.schema.createTable('plugins'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('plugin_type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('icon', 'text')
      .addColumn('config_schema', t.json, (c) => c.notNull())
      .addColumn('tag', 'text')
      .addColumn('latest_tag', 'text')
      .addColumn('is_global', t.bool, (c) => c.notNull())
      .addColumn('capabilities', t.json, (c) => c.notNull())
      .addColumn('metrics', t.json, (c) => c.notNull())
      .addColumn('public_jobs', t.json, (c) => c.notNull())
      .addColumn('frontend_source', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('plugins_org_url', ['organization_id', 'url'])
      .execute();

    await withSerialId(dialect, db.schema.createTable('plugin_configs'))
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('plugin_id', 'integer', (c) => c.notNull().references('plugins.id'))
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('order', 'integer', (c) => c.notNull())
      .addColumn('config', t.json, (c) => c.notNull())
      .addColumn('web_token', 'text')
      .addColumn('name', 'text')
      .addColumn('description', 'text')
      .addColumn('deleted', t.bool, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('plugin_configs_team_order').on('plugin_configs').columns(['team_id', 'order', 'plugin_id']).execute();

    await db.schema
      .createTable('plugin_config_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('plugin_config_id', 'integer', (c) => c.notNull().references('plugin_configs.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', t.json, (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_by_id', 'integer', (c) => c.references('users.id'))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('hog_functions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('enabled', t.bool, (c) => c.notNull())
      .addColumn('inputs', t.json, (c) => c.notNull())
      .addColumn('filters', t.json, (c) => c.notNull())
      .addColumn('plugin_config_id', 'integer', (c) => c.references('plugin_configs.id'))
      .addColumn('created_by_id', 'integer', (c) => c.references('users.id'))
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('activity_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id'))
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.references('users.id'))
      .addColumn('is_system', t.bool, (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('item_id', 'text', (c) => c.notNull())
      .addColumn('activity', 'text', (c) => c.notNull())
      .addColumn('detail', t.json, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('activity_log_scope_item')
      .on('activity_log')
      .columns(['team_id', 'scope', 'item_id', 'created_at'])
      .execute();
  },
};
