/**
 * Table shapes as Kysely sees them. Both dialects store the same logical values; the storage
 * boundary (`./values.ts`) normalises the physical differences:
 * - booleans: SQLite INTEGER 0/1, PostgreSQL boolean (written as 1/0 on both, read with `toBool`);
 * - JSON: SQLite TEXT, PostgreSQL jsonb (written as JSON text on both, read with `fromJson`);
 *   except `events.properties`: on PostgreSQL `json`, the text as written, keys in the order they
 *   were sent (migration 0017; reads needing jsonb cast, ./dialect.ts), and on SQLite written as
 *   SQLite's binary JSONB and read through
 *   `json()` (`eventPropertiesIn` / `eventPropertiesOut` in ./events/property-sets.ts; rows written before
 *   2026-11-27 hold the text, which SQLite's JSON functions read as well);
 * - timestamps: SQLite TEXT holding ISO 8601 UTC with milliseconds and `Z`, PostgreSQL timestamptz
 *   (written as ISO strings on both, read with `toIso`);
 * - counts: a string from `pg` (bigint), a number from SQLite (read with `toInt`).
 */
import type { Generated } from 'kysely';
import type { StoredEventUuid } from './events/uuids.js';
import type { StoredEventTime } from './events/times.js';

/** A boolean column as written (1/0) and as read (number from SQLite, boolean from PostgreSQL). */
export type BoolColumn = number | boolean;
/** A JSON column: written as JSON text, read as text (SQLite) or a parsed value (PostgreSQL). */
export type JsonColumn = string | unknown;
/** A timestamp column: written as an ISO string, read as a string (SQLite) or a Date (PostgreSQL). */
export type TimestampColumn = string | Date;

/** An `organizations` row: one organization (posthog/models/organization.py `Organization`). */
export interface OrganizationTable {
  id: string; // UUID
  name: string;
  /** PostHog's plugins_access_level: NONE 0, CONFIG 3, INSTALL 6, ROOT 9 (posthog/models/organization.py) */
  plugins_access_level: number;
  created_at: TimestampColumn;
}

/** A `users` row: one user account, email unique (posthog/models/user.py `User`). */
export interface UserTable {
  id: Generated<number>;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: BoolColumn | null;
  is_active: BoolColumn;
  is_staff: BoolColumn;
  hedgehog_config: JsonColumn | null;
  current_team_id: number | null;
  created_at: TimestampColumn;
}

/**
 * An `organization_memberships` row: a user's membership of an organization, unique per (organization_id, user_id)
 * (posthog/models/organization.py `OrganizationMembership`).
 */
export interface OrganizationMembershipTable {
  id: string; // UUID
  organization_id: string;
  user_id: number;
  /** member 1, admin 8, owner 15 (posthog/models/organization.py OrganizationMembership.Level) */
  level: number;
  joined_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** A `teams` row: one project of an organization, api_token unique (posthog/models/team/team.py `Team`). */
export interface TeamTable {
  id: Generated<number>;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  access_control: BoolColumn;
  created_at: TimestampColumn;
  /** set by the write path once an event of the team is written (migration 0014; PostHog's `Team.ingested_event`) */
  ingested_event: Generated<BoolColumn>;
}

/** A `personal_api_keys` row: one user's personal API key, stored hashed (posthog/models/personal_api_key.py `PersonalAPIKey`). */
export interface PersonalApiKeyTable {
  id: string;
  user_id: number;
  label: string;
  /** `sha256$<hex>` of the key; the key itself is never stored (posthog/models/personal_api_key.py) */
  secure_value: string;
  /** `phx_...abcd` */
  mask_value: string;
  /** JSON array of scopes, e.g. ["plugin:read","query:read"] or ["*"] */
  scopes: JsonColumn;
  /** JSON array of team ids the key is limited to, or null for every project of the user */
  scoped_teams: JsonColumn | null;
  created_at: TimestampColumn;
  last_used_at: TimestampColumn | null;
}

/** A `plugins` row: a plugin installed in an organization, unique per (organization_id, url) (posthog/models/plugin.py `Plugin`). */
export interface PluginTable {
  id: Generated<number>;
  organization_id: string;
  plugin_type: string;
  name: string;
  description: string;
  url: string;
  icon: string | null;
  config_schema: JsonColumn;
  tag: string | null;
  latest_tag: string | null;
  is_global: BoolColumn;
  capabilities: JsonColumn;
  metrics: JsonColumn;
  public_jobs: JsonColumn;
  frontend_source: string | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** A `plugin_configs` row: one team's config of a plugin, soft-deleted via `deleted` (posthog/models/plugin.py `PluginConfig`). */
export interface PluginConfigTable {
  id: Generated<number>;
  team_id: number;
  plugin_id: number;
  enabled: BoolColumn;
  order: number;
  config: JsonColumn;
  web_token: string | null;
  name: string | null;
  description: string | null;
  deleted: BoolColumn;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/**
 * A `plugin_config_jobs` row: a job triggered on a plugin config. No PostHog model mirrors it: the `job` action of
 * posthog/api/plugin.py `PluginConfigViewSet` only queues the job for the plugin server.
 */
export interface PluginConfigJobTable {
  id: string; // UUID: the job id
  team_id: number;
  plugin_config_id: number;
  type: string;
  payload: JsonColumn;
  operation: string;
  status: string;
  created_by_id: number | null;
  created_at: TimestampColumn;
}

/**
 * A `hog_functions` row: a destination function created by `migrate` from a plugin config
 * (posthog/models/hog_functions/hog_function.py `HogFunction`).
 */
export interface HogFunctionTable {
  id: string; // UUID
  team_id: number;
  type: string;
  name: string;
  description: string;
  template_id: string;
  enabled: BoolColumn;
  inputs: JsonColumn;
  filters: JsonColumn;
  plugin_config_id: number | null;
  created_by_id: number | null;
  created_at: TimestampColumn;
}

/**
 * An `activity_log` row: one recorded change to an item, `user_id` null for system activity
 * (posthog/models/activity_logging/activity_log.py `ActivityLog`).
 */
export interface ActivityLogTable {
  id: string; // UUID
  team_id: number;
  organization_id: string;
  user_id: number | null;
  is_system: BoolColumn;
  scope: string;
  item_id: string;
  activity: string;
  detail: JsonColumn;
  created_at: TimestampColumn;
}

/** An analytics event (PostHog's ClickHouse `events` table, posthog/models/event/sql.py). */
export interface EventTable {
  /** text on PostgreSQL; the 16 bytes on SQLite since migration 0012 (storage/events/uuids.ts) */
  uuid: StoredEventUuid;
  team_id: number;
  event: string;
  distinct_id: string;
  properties: JsonColumn;
  /**
   * PostgreSQL: fixed-width ISO 8601 UTC with microseconds, e.g. `2024-11-20T14:03:10.871123Z`;
   * SQLite since migration 0013: INTEGER microseconds since the epoch, bound as BigInt and read
   * through storage/events/times.ts `eventTimeText`, never into JavaScript
   */
  timestamp: StoredEventTime;
  /**
   * the chain inline: `''` when the event has none or when `element_group_id` holds it (every row
   * written since migration 0010); read it through storage/events/element-groups.ts `elementsChainOf`
   */
  elements_chain: string;
  /** `timestamptz` on PostgreSQL; INTEGER microseconds on SQLite since migration 0013, as `timestamp` */
  created_at: TimestampColumn | bigint;
  /** the event's elements chain in `element_groups`; NULL without a chain or for rows written before migration 0010 */
  element_group_id: number | null;
  /**
   * SQLite only (migration 0011): the event's session-constant properties in `property_sets`, its
   * `properties` holding the rest; NULL when they are all its own (storage/events/property-sets.ts)
   */
  property_set_id?: number | null;
  /** SQLite only (migration 0011): the order of all the event's keys in `property_key_orders`, set with `property_set_id` */
  key_order_id?: number | null;
}

/**
 * One distinct elements chain of a project (PostHog's `ElementGroup`,
 * posthog/models/element_group.py), unique on `(team_id, hash)`.
 */
export interface ElementGroupTable {
  id: Generated<number>;
  team_id: number;
  /** SHA-256 of `elements_chain` (UTF-8), lowercase hex */
  hash: string;
  elements_chain: string;
}

/**
 * SQLite only (migration 0011): one distinct set of session-constant properties of a project
 * (storage/events/property-sets.ts), unique on `(team_id, hash)`.
 */
export interface PropertySetTable {
  id: Generated<number>;
  team_id: number;
  /** SHA-256 of the set's JSON text (keys sorted), lowercase hex */
  hash: string;
  /** the set as SQLite's JSONB */
  properties: unknown;
}

/** SQLite only (migration 0011): one distinct order of an event's property keys, unique on `(team_id, hash)`. */
export interface PropertyKeyOrderTable {
  id: Generated<number>;
  team_id: number;
  /** SHA-256 of the keys' JSON array text, lowercase hex */
  hash: string;
  /** the keys, a JSON array as SQLite's JSONB */
  keys: unknown;
}

/** A person (posthog/models/person/person.py `Person`). */
export interface PersonTable {
  id: Generated<number>;
  uuid: string;
  team_id: number;
  properties: JsonColumn;
  is_identified: BoolColumn;
  created_at: TimestampColumn;
}

/**
 * A materialized property column (storage/events/materialized.ts; PostHog's materialized columns,
 * posthog/clickhouse/materialized_columns/): `kind` `event` is a column of `events` made of
 * `properties.<property>`, `person` a column of `persons` made of its `properties.<property>`.
 */
export interface MaterializedColumnTable {
  kind: 'event' | 'person';
  property: string;
  /** the generated column's name, e.g. `mat_browser_1a2b3c` */
  column_name: string;
  created_at: TimestampColumn;
}

/** A distinct id of a person (posthog/models/person/person.py `PersonDistinctId`). */
export interface PersonDistinctIdTable {
  team_id: number;
  distinct_id: string;
  person_id: number;
}

/** An explicit project membership (ee/models/explicit_team_membership.py `ExplicitTeamMembership`). */
export interface ExplicitTeamMembershipTable {
  id: string; // UUID
  team_id: number;
  parent_membership_id: string;
  /** member 1, admin 8 */
  level: number;
  joined_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/**
 * What a project says about one event name (ee/models/event_definition.py
 * `EnterpriseEventDefinition`; migration 0016). `id` is the derived definition id.
 */
export interface EventDefinitionTable {
  id: string;
  team_id: number;
  name: string;
  /** created through the API: listed even before an event of that name is stored */
  declared: BoolColumn;
  description: Generated<string>;
  /** JSON array of tag names, or null for none */
  tags: JsonColumn | null;
  owner_id: number | null;
  verified: Generated<BoolColumn>;
  verified_at: TimestampColumn | null;
  verified_by_id: number | null;
  hidden: Generated<BoolColumn>;
  post_to_slack: Generated<BoolColumn>;
  /** JSON array of column names, or null for none */
  default_columns: JsonColumn | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
  updated_by_id: number | null;
}

/**
 * What a project says about one event or person property (ee/models/property_definition.py
 * `EnterprisePropertyDefinition`; migration 0016). `id` is the derived definition id.
 */
export interface PropertyDefinitionTable {
  id: string;
  team_id: number;
  /** PostHog's `PropertyDefinition.Type`: 1 event, 2 person */
  type: number;
  name: string;
  description: Generated<string>;
  tags: JsonColumn | null;
  /** the declared type (`String`, `Numeric`, `Boolean`, `DateTime`, `Duration`), null: as derived */
  property_type: string | null;
  verified: Generated<BoolColumn>;
  verified_at: TimestampColumn | null;
  verified_by_id: number | null;
  hidden: Generated<BoolColumn>;
  updated_at: TimestampColumn;
  updated_by_id: number | null;
}

/** A dashboard (posthog/models/dashboard.py `Dashboard`). */
export interface DashboardTable {
  id: Generated<number>;
  team_id: number;
  name: string | null;
  description: string;
  pinned: BoolColumn;
  deleted: BoolColumn;
  /** default | template | duplicate */
  creation_mode: string;
  /** 21 everyone in the project can edit, 37 only those invited (and project admins) */
  restriction_level: number;
  filters: JsonColumn;
  /** JSON array of tag names */
  tags: JsonColumn;
  created_by_id: number | null;
  created_at: TimestampColumn;
}

/** An insight (posthog/models/insight.py `Insight`). */
export interface InsightTable {
  id: Generated<number>;
  short_id: string;
  team_id: number;
  name: string | null;
  description: string | null;
  query: JsonColumn | null;
  is_sample: BoolColumn;
  deleted: BoolColumn;
  created_by_id: number | null;
  created_at: TimestampColumn;
  /** migration 0015 */
  derived_name: string | null;
  favorited: Generated<BoolColumn>;
  saved: Generated<BoolColumn>;
  /** JSON array of tag names, or null for none */
  tags: JsonColumn | null;
  /** PostHog's `order` */
  position: number | null;
  /** null: `created_at` */
  last_modified_at: TimestampColumn | null;
  last_modified_by_id: number | null;
}

/** A text card (posthog/models/dashboard_tile.py `Text`). */
export interface TextTable {
  id: Generated<number>;
  team_id: number;
  body: string | null;
  created_by_id: number | null;
  created_at: TimestampColumn;
}

/** A tile of a dashboard holding an insight or a text (posthog/models/dashboard_tile.py `DashboardTile`). */
export interface DashboardTileTable {
  id: Generated<number>;
  dashboard_id: number;
  insight_id: number | null;
  text_id: number | null;
  layouts: JsonColumn;
  color: string | null;
  deleted: BoolColumn;
  created_at: TimestampColumn;
}

/** The whole database as Kysely's type parameter. */
export interface Database {
  organizations: OrganizationTable;
  users: UserTable;
  organization_memberships: OrganizationMembershipTable;
  teams: TeamTable;
  personal_api_keys: PersonalApiKeyTable;
  plugins: PluginTable;
  plugin_configs: PluginConfigTable;
  plugin_config_jobs: PluginConfigJobTable;
  hog_functions: HogFunctionTable;
  activity_log: ActivityLogTable;
  events: EventTable;
  element_groups: ElementGroupTable;
  property_sets: PropertySetTable;
  property_key_orders: PropertyKeyOrderTable;
  persons: PersonTable;
  person_distinct_ids: PersonDistinctIdTable;
  explicit_team_memberships: ExplicitTeamMembershipTable;
  dashboards: DashboardTable;
  insights: InsightTable;
  texts: TextTable;
  dashboard_tiles: DashboardTileTable;
  materialized_columns: MaterializedColumnTable;
  event_definitions: EventDefinitionTable;
  property_definitions: PropertyDefinitionTable;
}
