/**
 * The read side of the event store: the events list with its filters and keyset cursor, one event
 * by uuid, the persons behind a page's distinct ids, and property value suggestions. Dialect
 * differences (JSON access, regex, ILIKE) come from `../dialect.ts`.
 */
import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { PropertyFilter, PropertyGroup } from '../event-filter-tree.js';
import { beforeCursor, dialectOf, eventPropertiesOut, icontains, jsonHas, jsonText, jsonTextInByContainment, regexMatch, type DialectName, type JsonSource } from '../dialect.js';
import { textToNumber, textToTimestamp } from '../text-values.js';
import { elementsChainOf } from '../element-groups.js';
import { eventTimeIn, eventTimeText } from '../event-times.js';
import { eventUuidIn, eventUuidOut, type StoredEventUuid } from '../event-uuids.js';
import { eventPropertiesWhole, joinSharedProperties, readEventProperty } from '../property-sets.js';
import type { Database } from '../schema.js';
import type { EventInput } from './events-write.js';
import { fromJson, toBool } from '../values.js';
import { loadMaterializedColumns, NO_MATERIALIZED_COLUMNS, type MaterializedColumns, type MaterializedKind } from '../materialized.js';

/** A stored event as the list reads it: the shape it was written in (`EventInput`). */
export type EventRow = EventInput;

/** A person as the events list shows it. */
export interface EventPerson {
  is_identified: boolean;
  properties: Record<string, unknown>;
}

/** The filters of one events list request (all optional but the team, bounds and paging). */
export interface EventListQuery {
  teamId: number;
  /** exclusive upper bound, stored form */
  before: string;
  /** exclusive lower bound, stored form */
  after?: string | undefined;
  event?: string | undefined;
  distinctId?: string | undefined;
  person?: { id: number } | { uuid: string } | undefined;
  properties?: PropertyGroup | undefined;
  /** the last event of the previous page: rows strictly after it in (timestamp desc, uuid desc) order */
  cursor?: { timestamp: string; uuid: string } | undefined;
  /** a condition on the `events` row besides these (the list's HogQL `where`, server/hogql/) */
  where?: RawBuilder<unknown> | undefined;
  /** the store's materialized columns, which `properties` filters read instead of the JSON (storage/materialized.ts); none when absent */
  materialized?: MaterializedColumns | undefined;
  offset: number;
  limit: number;
}

type EventsQuery = SelectQueryBuilder<Database, 'events', object>;

/** A column of the event's person (NULL without a person): `properties`, or a materialized column. */
function personColumn(column: string): RawBuilder<unknown> {
  return sql`(select p.${sql.ref(column)} from person_distinct_ids pdi inner join persons p on p.id = pdi.person_id where pdi.team_id = events.team_id and pdi.distinct_id = events.distinct_id)`;
}

/**
 * Where a filter reads its properties: how to read a key out of the JSON that holds it (`read`,
 * `where`), which of the store's materialized columns belong to it (storage/materialized.ts), and
 * how to read one of those. `ginIndexed`: the JSON is a column of the filtered row with a GIN
 * `jsonb_path_ops` index on PostgreSQL (migration 0007), so `exact` filters are written as
 * containment, which it answers.
 */
export interface FilterSource {
  /** `read(json)` for property `key`, `json` the JSON holding it (the event's may be its property set: storage/property-sets.ts) */
  read<T>(key: string, read: (json: JsonSource) => RawBuilder<T>): RawBuilder<T>;
  /** the condition `where(json)` on property `key`, for a WHERE clause (a NULL answer counts as false) */
  where(key: string, where: (json: JsonSource) => RawBuilder<boolean>): RawBuilder<boolean>;
  kind: MaterializedKind;
  column(name: string): RawBuilder<string | null>;
  ginIndexed?: boolean;
}

/** The source of a filter of each `type`. */
export type FilterSources = (type: PropertyFilter['type']) => FilterSource;

/** A source whose keys are all in one JSON column or subquery (`json`). */
export function jsonFilterSource(json: JsonSource, kind: MaterializedKind, column: FilterSource['column'], ginIndexed?: boolean): FilterSource {
  return { read: (_key, read) => read(json), where: (_key, where) => where(json), kind, column, ...(ginIndexed ? { ginIndexed } : {}) };
}

/** The event's own properties on `dialect` (storage/property-sets.ts). */
function eventSource(dialect: DialectName): FilterSource {
  return {
    read: (key, read) => readEventProperty(dialect, key, read),
    where: (key, where) => readEventProperty(dialect, key, where),
    kind: 'event',
    column: (name) => sql<string | null>`events.${sql.ref(name)}`,
    ginIndexed: true,
  };
}
const PERSON_OF_EVENT_SOURCE = jsonFilterSource(personColumn('properties'), 'person', (name) => personColumn(name) as RawBuilder<string | null>);

const EVENT_SOURCES: Record<DialectName, FilterSource> = { sqlite: eventSource('sqlite'), postgres: eventSource('postgres') };

/** The events list's sources on `dialect`: the event's own properties, or its person's. */
export function eventSources(dialect: DialectName): FilterSources {
  return (type) => (type === 'person' ? PERSON_OF_EVENT_SOURCE : EVENT_SOURCES[dialect]);
}

/**
 * The text of property `key` of `source` (`jsonText`'s semantics): its materialized column when
 * it has one, which holds that very text (storage/materialized.ts), else out of the JSON.
 */
export function propertyText(dialect: DialectName, source: FilterSource, key: string, columns: MaterializedColumns): RawBuilder<string | null> {
  const column = columns[source.kind].get(key);
  return column !== undefined ? source.column(column) : source.read(key, (json) => jsonText(dialect, json, key));
}

/** SQL for one property filter (see domain/event-filters.ts for the semantics). */
function compileFilter(dialect: DialectName, f: PropertyFilter, sources: FilterSources, columns: MaterializedColumns): RawBuilder<boolean> {
  const from = sources(f.type);
  const column = columns[from.kind].get(f.key);
  // set-ness reads the JSON; any other operator the materialized column, when there is one
  if (column !== undefined && f.operator !== 'is_set' && f.operator !== 'is_not_set') return filterCondition(dialect, f, from.column(column), undefined);
  return from.where(f.key, (json) => filterCondition(dialect, f, jsonText(dialect, json, f.key), from.ginIndexed && column === undefined ? json : undefined, json));
}

/**
 * One filter's condition on the property's `text`; `containable`: the JSON, when `exact` may be
 * written as jsonb containment (PostgreSQL's GIN index; dialect.ts); `json`: the JSON, for set-ness.
 */
function filterCondition(dialect: DialectName, f: PropertyFilter, text: RawBuilder<string | null>, containable: JsonSource | undefined, json?: JsonSource): RawBuilder<boolean> {
  switch (f.operator) {
    case 'exact': {
      // PostgreSQL: the same condition as jsonb containment, which the GIN index answers
      // (dialect.ts); not where a materialized column answers: its btree index serves better
      const contained = containable !== undefined ? jsonTextInByContainment(dialect, containable, f.key, f.texts) : undefined;
      return contained ?? sql<boolean>`(${text} in (${sql.join(f.texts)}))`;
    }
    case 'is_not':
      return sql<boolean>`(${text} is null or ${text} not in (${sql.join(f.texts)}))`;
    case 'icontains':
      return sql<boolean>`(${text} is not null and ${icontains(dialect, text, f.needle)})`;
    case 'not_icontains':
      return sql<boolean>`(${text} is null or not ${icontains(dialect, text, f.needle)})`;
    case 'regex':
      return sql<boolean>`(${text} is not null and ${regexMatch(dialect, text, f.pattern)})`;
    case 'not_regex':
      return sql<boolean>`(${text} is null or not ${regexMatch(dialect, text, f.pattern)})`;
    case 'gt':
      return sql<boolean>`(${textToNumber(dialect, text)} > ${f.number})`;
    case 'gte':
      return sql<boolean>`(${textToNumber(dialect, text)} >= ${f.number})`;
    case 'lt':
      return sql<boolean>`(${textToNumber(dialect, text)} < ${f.number})`;
    case 'lte':
      return sql<boolean>`(${textToNumber(dialect, text)} <= ${f.number})`;
    case 'is_set':
      return jsonHas(dialect, json!, f.key);
    case 'is_not_set':
      return sql<boolean>`(not ${jsonHas(dialect, json!, f.key)})`;
    case 'is_date_exact': {
      const d = textToTimestamp(dialect, text);
      return f.dayEnd ? sql<boolean>`(${d} >= ${f.date} and ${d} < ${f.dayEnd})` : sql<boolean>`(substr(${d}, 1, 19) = ${f.date.slice(0, 19)})`;
    }
    case 'is_date_after':
      return sql<boolean>`(${textToTimestamp(dialect, text)} > ${f.date})`;
    case 'is_date_before':
      return sql<boolean>`(${textToTimestamp(dialect, text)} < ${f.date})`;
  }
}

/**
 * SQL for a group of property filters; an empty group is true. `sources` says where each filter
 * `type` reads (the events list: the event's properties or its person's; the persons list: the
 * person's own, server/storage/repositories/persons.ts).
 */
export function compilePropertyGroup(dialect: DialectName, g: PropertyGroup, sources: FilterSources, columns: MaterializedColumns = NO_MATERIALIZED_COLUMNS): RawBuilder<boolean> {
  if (g.values.length === 0) return sql<boolean>`(1 = 1)`;
  const parts = g.values.map((v) => (v.kind === 'group' ? compilePropertyGroup(dialect, v, sources, columns) : compileFilter(dialect, v, sources, columns)));
  return sql<boolean>`(${sql.join(parts, g.type === 'AND' ? sql` and ` : sql` or `)})`;
}

/**
 * An event as listed: `properties` is decoded on first read, and `propertiesText` keeps the stored
 * JSON text when the store returned text (SQLite; PostgreSQL's driver returns jsonb decoded), so a
 * page can be serialized without decoding and encoding every event's properties again.
 */
export interface ListedEventRow extends EventRow {
  readonly propertiesText: string | undefined;
}

/**
 * The lower bound of the first query of a list page on PostgreSQL (`EventsReadRepository.list`):
 * the start of the UTC day of the page's newest possible row (the cursor's timestamp, else
 * `before`), as `YYYY-MM-DD`, which sorts before every stored timestamp of that day (fixed-width
 * ISO 8601 UTC text). Undefined when `after` bounds the page within that day already.
 */
export function listWindowStart(q: Pick<EventListQuery, 'before' | 'after' | 'cursor'>): string | undefined {
  const top = q.cursor !== undefined && q.cursor.timestamp < q.before ? q.cursor.timestamp : q.before;
  const day = top.slice(0, 10);
  return q.after !== undefined && q.after >= day ? undefined : day;
}

function toRow(r: { uuid: StoredEventUuid; event: string; distinct_id: string; properties: unknown; timestamp: string; elements_chain: string }): ListedEventRow {
  const stored = r.properties;
  let decoded: Record<string, unknown> | undefined;
  return {
    uuid: eventUuidOut(r.uuid),
    event: r.event,
    distinct_id: r.distinct_id,
    get properties() {
      return (decoded ??= fromJson<Record<string, unknown>>(stored) ?? {});
    },
    propertiesText: typeof stored === 'string' ? stored : undefined,
    timestamp: r.timestamp,
    elements_chain: r.elements_chain,
  };
}

/** Reads events and persons of the store. */
export class EventsReadRepository {
  private readonly dialect: DialectName;

  /**
   * `readRows`: the store's array-rows reader (SQLite, `Store.readRows`), used for the events
   * list's page when given; rows are then read without one object per row.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly readRows?: (query: CompiledQuery) => unknown[][] | undefined,
  ) {
    this.dialect = dialectOf(db);
  }

  private filtered(q: EventListQuery): EventsQuery {
    const time = (text: string) => eventTimeIn(this.dialect, text);
    let query: EventsQuery = this.db.selectFrom('events').where('events.team_id', '=', q.teamId).where('events.timestamp', '<', time(q.before));
    if (q.after !== undefined) query = query.where('events.timestamp', '>', time(q.after));
    if (q.event !== undefined) query = query.where('events.event', '=', q.event);
    if (q.distinctId !== undefined) query = query.where('events.distinct_id', '=', q.distinctId);
    if (q.person !== undefined) {
      const person = q.person;
      query = query.where('events.distinct_id', 'in', (eb) => {
        let sub = eb.selectFrom('person_distinct_ids as pdi').innerJoin('persons as p', 'p.id', 'pdi.person_id').select('pdi.distinct_id').where('pdi.team_id', '=', q.teamId);
        sub = 'id' in person ? sub.where('p.id', '=', person.id) : sub.where('p.uuid', '=', person.uuid);
        return sub;
      });
    }
    // (timestamp, uuid) < cursor, written so that the index range starts at the cursor (dialect.ts)
    if (q.cursor) query = query.where(beforeCursor(this.dialect, sql.ref('events.timestamp'), sql.ref('events.uuid'), { timestamp: time(q.cursor.timestamp), uuid: eventUuidIn(this.dialect, q.cursor.uuid) }));
    if (q.properties) query = query.where(compilePropertyGroup(this.dialect, q.properties, eventSources(this.dialect), q.materialized));
    if (q.where) query = query.where(q.where as RawBuilder<boolean>);
    return query;
  }

  /**
   * The filters of `q` but paging (cursor, offset, limit) as SQL conditions on `events` rows: what
   * a HogQL query over the list's events (the list's `select`, server/hogql/) adds to its own
   * WHERE. The same filters as `filtered` builds, written out as raw conditions.
   */
  conditions(q: Omit<EventListQuery, 'offset' | 'limit' | 'cursor'>): RawBuilder<unknown>[] {
    const out: RawBuilder<unknown>[] = [sql`events.timestamp < ${eventTimeIn(this.dialect, q.before)}`];
    if (q.after !== undefined) out.push(sql`events.timestamp > ${eventTimeIn(this.dialect, q.after)}`);
    if (q.event !== undefined) out.push(sql`events.event = ${q.event}`);
    if (q.distinctId !== undefined) out.push(sql`events.distinct_id = ${q.distinctId}`);
    if (q.person !== undefined) {
      const match = 'id' in q.person ? sql`p.id = ${q.person.id}` : sql`p.uuid = ${q.person.uuid}`;
      out.push(sql`events.distinct_id in (select pdi.distinct_id from person_distinct_ids pdi inner join persons p on p.id = pdi.person_id where pdi.team_id = ${q.teamId} and ${match})`);
    }
    if (q.properties) out.push(compilePropertyGroup(this.dialect, q.properties, eventSources(this.dialect), q.materialized));
    if (q.where) out.push(q.where);
    return out;
  }

  /**
   * One page of events, newest first (timestamp desc, then uuid desc), at most `limit` rows after
   * skipping `offset`. Callers ask for one row more than they show to learn whether more exist.
   *
   * PostgreSQL: the page is asked first of the UTC day of its newest possible row (`listWindowStart`),
   * as PostHog's events list asked first of the current day (posthog/api/event.py, 2024–25;
   * reference/posthog-behavior.md), and of the whole range only when that day holds fewer than
   * `offset + limit` matching rows. Every row of that day is newer than every row before it, so a
   * full page from the day is the page of the whole range: the answer is the same. What it saves
   * is planning: a bounded query is planned for that day's partition alone (storage/partitions.ts),
   * an unbounded one for every partition and each of its indexes (0.89 → 0.09 ms with 17 monthly
   * partitions and 10 indexes, docs/performance.md). Only a page filtered by nothing but `event`
   * and time is asked so: with a person, distinct_id, property or `where` filter, a day's partition
   * may hold none of the few matching rows, and PostgreSQL may walk the whole day in time order to
   * learn it before the second query. SQLite has no partitions and plans the same either way, so
   * it asks once.
   */
  async list(q: EventListQuery): Promise<ListedEventRow[]> {
    const onlyTime = q.person === undefined && q.distinctId === undefined && q.properties === undefined && q.where === undefined;
    const windowStart = this.dialect === 'postgres' && onlyTime ? listWindowStart(q) : undefined;
    if (windowStart !== undefined) {
      const rows = await this.page(q, windowStart);
      if (rows.length >= q.limit) return rows;
    }
    return this.page(q);
  }

  /** `list`'s query, with the rows at or after `since` (stored form) only when given. */
  private async page(q: EventListQuery, since?: string): Promise<ListedEventRow[]> {
    // With a person filter, SQLite would walk the whole time index looking for the person's few
    // events; ordering by an expression lets it read them through the distinct_id index and sort.
    const timeOrder = q.person && this.dialect === 'sqlite' ? sql`+events.timestamp` : sql`events.timestamp`;
    // SQLite: the own properties and the ids of the set and key order, joined below for the page's
    // rows only (storage/property-sets.ts `joinSharedProperties`); PostgreSQL has no sets
    const shared = this.dialect === 'sqlite' ? [sql<number | null>`events.property_set_id`.as('set_id'), sql<number | null>`events.key_order_id`.as('order_id')] : [];
    const filtered = since === undefined ? this.filtered(q) : this.filtered(q).where('events.timestamp', '>=', eventTimeIn(this.dialect, since));
    const query = filtered
      .select(['events.uuid', 'events.event', 'events.distinct_id', eventPropertiesOut(this.dialect, sql.ref('events.properties')).as('properties'), eventTimeText(this.dialect, sql.ref('events.timestamp')).as('timestamp'), elementsChainOf().as('elements_chain'), ...shared])
      .orderBy(timeOrder, 'desc')
      .orderBy('events.uuid', 'desc')
      .limit(q.limit)
      .offset(q.offset);
    // the select list's order: uuid, event, distinct_id, properties, timestamp, elements_chain[, set_id, order_id]
    const arrays = this.readRows?.(query.compile());
    const rows = arrays
      ? arrays.map((r) => ({ uuid: r[0] as StoredEventUuid, event: r[1] as string, distinct_id: r[2] as string, properties: r[3], timestamp: r[4] as string, elements_chain: r[5] as string, set_id: (r[6] ?? null) as number | null, order_id: (r[7] ?? null) as number | null }))
      : (await query.execute()).map((r) => ({ ...r, set_id: (r as { set_id?: number | null }).set_id ?? null, order_id: (r as { order_id?: number | null }).order_id ?? null }));
    if (this.dialect === 'sqlite') await joinSharedProperties(rows, (q) => this.fetchArrays(q));
    return rows.map(toRow);
  }

  /** Rows of a read-only query as arrays, in its select list's order: through `readRows` when given. */
  private async fetchArrays(query: RawBuilder<unknown>): Promise<unknown[][]> {
    const compiled = query.compile(this.db);
    return this.readRows?.(compiled) ?? (await this.db.executeQuery(compiled)).rows.map((r) => Object.values(r as object));
  }

  /** The team's event with this uuid (lowercase, with dashes), or undefined. */
  async findByUuid(teamId: number, uuid: string): Promise<EventRow | undefined> {
    const r = await this.db
      .selectFrom('events')
      .select(['uuid', 'event', 'distinct_id', eventPropertiesOut(this.dialect, eventPropertiesWhole(this.dialect)).as('properties'), eventTimeText(this.dialect, sql.ref('events.timestamp')).as('timestamp'), elementsChainOf().as('elements_chain')])
      .where('team_id', '=', teamId)
      .where('uuid', '=', eventUuidIn(this.dialect, uuid))
      .executeTakeFirst();
    return r && toRow(r);
  }

  /** The persons behind these distinct ids of a team, by distinct id (ids without a person are absent). */
  async personsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, EventPerson>> {
    const out = new Map<string, EventPerson>();
    const unique = [...new Set(distinctIds)];
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await this.db
        .selectFrom('person_distinct_ids as pdi')
        .innerJoin('persons as p', 'p.id', 'pdi.person_id')
        .select(['pdi.distinct_id', 'p.properties', 'p.is_identified'])
        .where('pdi.team_id', '=', teamId)
        .where('pdi.distinct_id', 'in', unique.slice(i, i + 500))
        .execute();
      for (const r of rows) out.set(r.distinct_id, { is_identified: toBool(r.is_identified), properties: fromJson<Record<string, unknown>>(r.properties) ?? {} });
    }
    return out;
  }

  /**
   * Distinct values of a property (or of the `event` / `distinct_id` column) among the team's most
   * recent `scan` events in [since, until], with their counts, ordered by `order`: most frequent
   * first, shortest first, or by value. At most `limit` groups; values are the text forms (arrays
   * as JSON text). `contains` keeps values holding that text, case-insensitive.
   */
  async values(input: {
    teamId: number;
    key: string;
    isColumn: boolean;
    since: string;
    until: string;
    eventNames?: string[] | undefined;
    contains?: string | undefined;
    excludeDollarEvents?: boolean;
    scan: number;
    limit: number;
    order: 'frequency' | 'length' | 'value';
  }): Promise<{ value: string; count: number }[]> {
    const valueExpr: RawBuilder<string | null> = input.isColumn
      ? input.key === 'event'
        ? sql<string>`events.event`
        : sql<string>`events.distinct_id`
      : propertyText(this.dialect, EVENT_SOURCES[this.dialect], input.key, await loadMaterializedColumns(this.db));
    let inner = this.db
      .selectFrom('events')
      .select(valueExpr.as('v'))
      .where('events.team_id', '=', input.teamId)
      .where('events.timestamp', '>=', eventTimeIn(this.dialect, input.since))
      .where('events.timestamp', '<=', eventTimeIn(this.dialect, input.until));
    if (input.eventNames?.length) inner = inner.where('events.event', 'in', input.eventNames);
    if (input.excludeDollarEvents) inner = inner.where(sql<boolean>`substr(events.event, 1, 1) <> '$'`);
    const recent = inner.orderBy('events.timestamp', 'desc').limit(input.scan).as('recent');
    let outer = this.db
      .selectFrom(recent)
      .select(['recent.v', (eb) => eb.fn.countAll().as('c')])
      .where('recent.v', 'is not', null)
      .groupBy('recent.v');
    if (input.contains) outer = outer.where(icontains(this.dialect, sql`recent.v`, input.contains));
    const ordered =
      input.order === 'length'
        ? outer.orderBy(sql`length(recent.v)`).orderBy('recent.v')
        : input.order === 'value'
          ? outer.orderBy('recent.v')
          : outer.orderBy('c', 'desc').orderBy('recent.v');
    const rows = await ordered.limit(input.limit).execute();
    return rows.map((r) => ({ value: String(r.v), count: Number(r.c) }));
  }
}
