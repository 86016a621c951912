/**
 * Migration 0016: what a project says about its events and properties (PostHog's
 * `EnterpriseEventDefinition` and `EnterprisePropertyDefinition`, ee/models/): description, tags,
 * verification, hidden, owner, and a property's declared type. The names themselves are still
 * derived from the stored events and persons; a row here exists once a definition was created
 * (`POST …/event_definitions/`, `declared` 1: listed even before any event of that name) or
 * edited. `id` is the definition's derived UUID (server/domain/event-definitions.ts
 * `eventDefinitionId`, property-definitions.ts), so a row and its derived definition meet by id.
 * Property `type`: PostHog's `PropertyDefinition.Type` (1 event, 2 person).
 */
import type { Kysely, Migration } from 'kysely';
import { columnTypes, dialectOf } from '../dialect.js';

/** Creates event_definitions and property_definitions (see the module doc). */
export const migration0016: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    const t = columnTypes(dialect);
    const no = dialect === 'postgres' ? false : 0;
    await db.schema
      .createTable('event_definitions')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('declared', t.bool, (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('tags', t.json)
      .addColumn('owner_id', 'integer')
      .addColumn('verified', t.bool, (c) => c.notNull().defaultTo(no))
      .addColumn('verified_at', t.timestamp)
      .addColumn('verified_by_id', 'integer')
      .addColumn('hidden', t.bool, (c) => c.notNull().defaultTo(no))
      .addColumn('post_to_slack', t.bool, (c) => c.notNull().defaultTo(no))
      .addColumn('default_columns', t.json)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_by_id', 'integer')
      .addUniqueConstraint('event_definitions_team_name', ['team_id', 'name'])
      .execute();
    await db.schema
      .createTable('property_definitions')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('tags', t.json)
      .addColumn('property_type', 'text')
      .addColumn('verified', t.bool, (c) => c.notNull().defaultTo(no))
      .addColumn('verified_at', t.timestamp)
      .addColumn('verified_by_id', 'integer')
      .addColumn('hidden', t.bool, (c) => c.notNull().defaultTo(no))
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_by_id', 'integer')
      .addUniqueConstraint('property_definitions_team_type_name', ['team_id', 'type', 'name'])
      .execute();
  },
};
