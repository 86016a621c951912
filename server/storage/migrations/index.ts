/**
 * The ordered list of migrations. A migration, once released, is never edited: add a new one.
 * Names sort in the order they run.
 */
import type { Migration, MigrationProvider } from 'kysely';
import { migration0001 } from './0001_initial.js';
import { migration0002 } from './0002_events.js';
import { migration0003 } from './0003_explicit_members.js';
import { migration0004 } from './0004_dashboards.js';
import { migration0005 } from './0005_persons_list.js';
import { migration0006 } from './0006_materialized_columns.js';
import { migration0007 } from './0007_properties_gin.js';
import { migration0008 } from './0008_events_partitions.js';
import { migration0009 } from './0009_time_index_columns.js';
import { migration0010 } from './0010_element_groups.js';
import { migration0011 } from './0011_property_sets.js';
import { migration0012 } from './0012_event_uuid_bytes.js';
import { migration0013 } from './0013_event_times_integer.js';
import { migration0014 } from './0014_team_ingested_event.js';
import { migration0015 } from './0015_insight_fields.js';
import { migration0016 } from './0016_taxonomy_definitions.js';
import { migration0017 } from './0017_event_properties_json.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': migration0001,
  '0002_events': migration0002,
  '0003_explicit_members': migration0003,
  '0004_dashboards': migration0004,
  '0005_persons_list': migration0005,
  '0006_materialized_columns': migration0006,
  '0007_properties_gin': migration0007,
  '0008_events_partitions': migration0008,
  '0009_time_index_columns': migration0009,
  '0010_element_groups': migration0010,
  '0011_property_sets': migration0011,
  '0012_event_uuid_bytes': migration0012,
  '0013_event_times_integer': migration0013,
  '0014_team_ingested_event': migration0014,
  '0015_insight_fields': migration0015,
  '0016_taxonomy_definitions': migration0016,
  '0017_event_properties_json': migration0017,
};

/** Kysely migration provider over the static list above (no filesystem scanning). */
export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return MIGRATIONS;
  },
};
