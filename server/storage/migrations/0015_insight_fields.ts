/**
 * Migration 0015: the insight fields PostHog's insights API reads and writes
 * (posthog/models/insight.py `Insight`): `derived_name`, `favorited`, `saved`, `tags`, `position`
 * (PostHog's `order`, a reserved word in SQL), `last_modified_at` and `last_modified_by_id`. Until
 * now insights came only from dashboard templates; from here they are a resource of their own
 * (server/domain/insights.ts). Adding columns with defaults rewrites no row; `last_modified_at`
 * null reads as `created_at`.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { columnTypes, dialectOf } from '../dialect.js';

/** The columns added, each with its type builder. */
const COLUMNS = ['derived_name', 'favorited', 'saved', 'tags', 'position', 'last_modified_at', 'last_modified_by_id'] as const;

/** Adds the columns (module doc) that are not there yet, so that a store rolled back past this migration can run it again. */
export const migration0015: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const dialect = dialectOf(db);
    const t = columnTypes(dialect);
    const found =
      dialect === 'postgres'
        ? await sql<{
            name: string;
          }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'insights'`.execute(
            db,
          )
        : await sql<{ name: string }>`select name from pragma_table_info('insights')`.execute(db);
    const have = new Set(found.rows.map((r) => r.name));
    const no = dialect === 'postgres' ? sql`false` : sql`0`;
    for (const name of COLUMNS) {
      if (have.has(name)) continue;
      const alter = db.schema.alterTable('insights');
      switch (name) {
        case 'derived_name':
          await alter.addColumn(name, 'text').execute();
          break;
        case 'favorited':
        case 'saved':
          await alter.addColumn(name, t.bool, (c) => c.notNull().defaultTo(no)).execute();
          break;
        case 'tags':
          await alter.addColumn(name, t.json).execute();
          break;
        case 'position':
        case 'last_modified_by_id':
          await alter.addColumn(name, 'integer').execute();
          break;
        case 'last_modified_at':
          await alter.addColumn(name, t.timestamp).execute();
          break;
      }
    }
  },
};
