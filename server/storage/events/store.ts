/**
 * The events-store interface: what the domain (the events list, values, the query endpoint) and
 * the HogQL compiler ask of the store that holds the events, and nothing of how it lays out their
 * rows. `./index.ts` is the one entry point other layers import (this interface, its factory, the
 * data types); the row layout stays behind it, in the other modules of this directory.
 *
 * Two parts:
 * - `EventsStore`: the reads of one database's events (the events list with its filters and
 *   cursor, one event by uuid, the persons of a page, value suggestions, the event definitions), its materialized
 *   columns, and the SQL conditions of the events filters (`conditions`) that an EventsQuery and
 *   the list's `select` add to their HogQL.
 * - `EventsTable`: PostHog's `events` table as HogQL reads it on that store, per field the SQL of
 *   its value (`uuid`, `timestamp`, `properties`, …) on the query's `events` row, and, where the
 *   store keeps a column in another form than its value, that form (`storedUuid`, `storedTime`),
 *   which comparisons, GROUP BY and ORDER BY read so that the store's indexes serve them.
 *
 * Values cross it in PostHog's forms: timestamps as fixed-width ISO 8601 UTC text with
 * microseconds (`2024-11-20T14:03:10.871123Z`, what every write path normalises to), uuids as
 * lowercase hex with dashes, properties as JSON objects. One implementation today, the row store
 * of SQLite and PostgreSQL (`./row-store.ts`, parameterised by dialect); another store is one more
 * implementation of these two interfaces.
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { DialectName } from '../dialect.js';
import type { PropertyGroup } from './filter-tree.js';
import type { MaterializedColumns } from './materialized.js';

/** The SQL dialect of an events store: a row store's (SQLite, PostgreSQL), or ClickHouse's (./clickhouse/). */
export type EventsDialectName = DialectName | 'clickhouse';

/** SQL as the store writes it: a Kysely raw builder whose values are all bound parameters. */
export type Sql = RawBuilder<unknown>;

/** A stored event, in the shape it was written in (PostHog's fields). */
export interface EventRow {
  /** lowercase hex with dashes */
  uuid: string;
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  /** fixed-width ISO 8601 UTC with microseconds, e.g. `2024-11-20T14:03:10.871123Z` */
  timestamp: string;
  elements_chain: string;
}

/**
 * An event as listed: `properties` is decoded on first read, and `propertiesText` keeps the stored
 * JSON text when the store returned text (SQLite; PostgreSQL's driver returns its json decoded), so a
 * page can be serialized without decoding and encoding every event's properties again.
 */
export interface ListedEventRow extends EventRow {
  readonly propertiesText: string | undefined;
}

/** A person as the events list shows it. */
export interface EventPerson {
  is_identified: boolean;
  properties: Record<string, unknown>;
}

/** The filters of an events read (all optional but the team and the upper bound). Timestamps in the stored form. */
export interface EventFilters {
  teamId: number;
  /** exclusive upper bound */
  before: string;
  /** exclusive lower bound */
  after?: string | undefined;
  event?: string | undefined;
  distinctId?: string | undefined;
  person?: { id: number } | { uuid: string } | undefined;
  properties?: PropertyGroup | undefined;
  /** a condition on the `events` row besides these (the list's HogQL `where`, compiled by server/hogql/ against this store's `EventsTable`) */
  where?: Sql | undefined;
  /** the store's materialized columns, which `properties` filters read instead of the JSON; none when absent */
  materialized?: MaterializedColumns | undefined;
}

/** One page of the events list: the filters, a keyset cursor, and paging. */
export interface EventListQuery extends EventFilters {
  /** oldest first (timestamp asc, uuid asc) instead of newest first */
  ascending?: boolean | undefined;
  /** the last event of the previous page: rows strictly after it in the list's order */
  cursor?: { timestamp: string; uuid: string } | undefined;
  offset: number;
  limit: number;
}

/** What `EventsStore.values` counts (the events `values` operation). */
export interface EventValuesQuery {
  teamId: number;
  /** a property, or the column `event` / `distinct_id` / `person_id` (the person's uuid now) with `isColumn` */
  key: string;
  isColumn: boolean;
  /** the window, both ends included, stored form */
  since: string;
  until: string;
  eventNames?: string[] | undefined;
  /** keep values holding this text, case-insensitive */
  contains?: string | undefined;
  /** leave out events whose name begins with `$` */
  excludeDollarEvents?: boolean;
  /** property filters the events must pass (the values' `properties_<key>` parameters) */
  properties?: PropertyGroup | undefined;
  /** the store's materialized columns, which `properties` read instead of the JSON */
  materialized?: MaterializedColumns | undefined;
  /** how many of the window's most recent events to look at */
  scan: number;
  limit: number;
  order: 'frequency' | 'length' | 'value';
}

/** One event name of a team with what its events say of it. */
export interface EventDefinitionRow {
  name: string;
  /** the earliest event's `timestamp`, stored form (`YYYY-MM-DDTHH:MM:SS.ffffffZ`) */
  first_seen: string;
  /** the latest event's `timestamp`, stored form */
  last_seen: string;
  /** events of this name with `timestamp >= since` */
  volume: number;
}

/** A sort key of the list: the name, the last-seen instant, or its UTC date (`last_seen_at::date`). */
export interface DefinitionOrder {
  key: 'name' | 'last_seen_at' | 'last_seen_date';
  desc: boolean;
}

/** Which event definitions a read keeps. */
export interface EventDefinitionFilters {
  teamId: number;
  /** every term must be in the name (any case) */
  terms: string[];
  /** `custom`: names not starting with `$`; `posthog`: names starting with `$`; `none`: no definitions */
  kind: 'all' | 'custom' | 'posthog' | 'none';
  /** names left out */
  excluded: string[];
  /** only the definition of exactly this name (`by_name`) */
  exact?: string | undefined;
}

/** The filters, order and page of one event definitions read. */
export interface EventDefinitionQuery extends EventDefinitionFilters {
  /** `volume` counts events at or after this stored-form timestamp */
  since: string;
  order: DefinitionOrder[];
  offset: number;
  limit: number;
}

/** The events of one database. Throws the driver's errors. */
export interface EventsStore {
  /** the SQL dialect of the store's database (HogQL picks its own dialect by it) */
  readonly dialect: EventsDialectName;
  /** the database that holds the events: what HogQL's compiled queries run on */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the row store's or ClickHouse's tables
  readonly db: Kysely<any>;
  /** The materialized property columns, now (one small query): what `table` and the filters read instead of the JSON. */
  materializedColumns(): Promise<MaterializedColumns>;
  /** The events table as HogQL reads it, with these materialized columns (none when absent). */
  table(materialized?: MaterializedColumns): EventsTable;
  /**
   * The filters as SQL conditions on the `events` rows, all of which must hold: what a HogQL query
   * over the filtered events (an EventsQuery, the list's `select`) adds to its WHERE.
   */
  conditions(filters: EventFilters): Sql[];
  /** One page of events, newest first (timestamp desc, then uuid desc): `limit` rows at most after skipping `offset`. */
  list(query: EventListQuery): Promise<ListedEventRow[]>;
  /** The team's event with this uuid (lowercase, with dashes), or undefined. */
  findByUuid(teamId: number, uuid: string): Promise<EventRow | undefined>;
  /** The persons behind these distinct ids of a team, by distinct id (ids without a person are absent). */
  personsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, EventPerson>>;
  /**
   * Distinct values of a property (or column) among the team's most recent `scan` events of the
   * window, with their counts, in `order`; at most `limit`. Values are text (arrays as JSON text).
   */
  values(query: EventValuesQuery): Promise<{ value: string; count: number }[]>;
  /**
   * A page of the team's event definitions (PostHog's EventDefinition, derived from the events:
   * one per event name, with its first and last `timestamp` and its volume since `since`), in
   * `order`, then by name in byte order.
   */
  eventDefinitions(query: EventDefinitionQuery): Promise<EventDefinitionRow[]>;
  /** How many event definitions the filters keep. */
  countEventDefinitions(filters: EventDefinitionFilters): Promise<number>;
}

/**
 * The events table as HogQL reads it (PostHog's `events`: posthog/hogql/database/schema/events.py):
 * the SQL of each field on the query's `events` row (`FROM events`), in the form HogQL's types are
 * held in (server/hogql/types.ts): text for `uuid` and the times, the store's JSON for
 * `properties`. `event`, `distinct_id` and `team_id` are plain columns of that name.
 */
export interface EventsTable {
  readonly dialect: EventsDialectName;
  /** `uuid`, as text in the API's form */
  readonly uuid: Sql;
  /** `timestamp`, as text in the stored form (`2024-11-20T14:03:10.871123Z`) */
  readonly timestamp: Sql;
  /** `created_at` (when the store wrote the event), as text in the stored form */
  readonly createdAt: Sql;
  /** `elements_chain`, as text (`''` without a chain) */
  readonly elementsChain: Sql;
  /** `properties`, the whole object as the store's JSON (json on PostgreSQL, SQLite's JSONB or JSON text): read it out with a JSON function */
  readonly properties: Sql;
  /** `read(json)` for property `key`: `json` is the JSON that holds that key for the row (`read` is, e.g., a `->>`) */
  property<T>(key: string, read: (json: Sql) => RawBuilder<T>): RawBuilder<T>;
  /**
   * The materialized column of property `property` of `events` (the event's own) or `persons`
   * (the row of `FROM persons`), or undefined: text, the property's text as PostHog compares it
   * (NULL when missing or JSON null), indexed.
   */
  materializedColumn(table: 'events' | 'persons', property: string): Sql | undefined;
  /** `column` (`uuid`, `created_at`, `properties`) of the event's person, NULL when it has none */
  personColumn(column: 'uuid' | 'created_at' | 'properties'): Sql;
  /**
   * Conditions true of every row, added beside the team filter of `FROM events` to steer the
   * store's choice of index; no answer depends on them.
   */
  readonly hints: readonly Sql[];
  /**
   * A JOIN (SQL beginning with a space) that the compiler adds after `FROM events` when the query
   * reads the event's person (`personColumn`), given the team id's SQL: for a store whose
   * `personColumn` reads a joined table rather than a subquery of its own (ClickHouse, which has
   * no fast correlated subquery). Undefined: `personColumn` needs no join.
   */
  personJoin?(teamId: Sql): Sql;
  /**
   * The table expression `FROM persons` reads (the compiler aliases it `persons`), given the team
   * id's SQL: its columns `uuid` (text), `created_at`, `is_identified`, `properties`, `team_id` and
   * the persons' materialized columns. Undefined: the relational table `persons` itself.
   */
  personsSource?(teamId: Sql): Sql;
  /** how the store keeps `uuid` when not as its text (undefined: as its text) */
  readonly storedUuid?: StoredUuid;
  /** how the store keeps `timestamp` when not as its text (undefined: as its text) */
  readonly storedTime?: StoredTime;
}

/** `uuid` kept in another form than its text: equality with a uuid is the stored column `=` the uuid's stored form, which the uuid's key serves. */
export interface StoredUuid {
  /** the stored column */
  readonly column: Sql;
  /** the SQL literal of `uuid`'s stored form, or undefined when it has none (text not in the API's form: compare the text) */
  literal(uuid: string): Sql | undefined;
}

/**
 * `timestamp` kept in another form than its text: a key (an SQL value) that orders and compares
 * as the instants do, so comparisons, GROUP BY and ORDER BY read it and the time indexes serve them.
 */
export interface StoredTime {
  /** the stored column: each row's key */
  readonly column: Sql;
  /** the text, in the stored form, of a key (or of an expression of keys, such as `max(…)`); NULL stays NULL */
  text(key: Sql): Sql;
  /** the key of SQL text in the stored form, or a bare `YYYY-MM-DD` (the start of that day); NULL for text that is not a date */
  fromText(text: Sql): Sql;
  /** the key of the start of the UTC day or hour of a key (HogQL's `toStartOfDay`, `toDate`, `toStartOfHour` group by it) */
  startOf(key: Sql, unit: 'day' | 'hour'): Sql;
}
