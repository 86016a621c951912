/**
 * The row store: the events as rows of SQLite or PostgreSQL, in the layout of this directory's
 * modules (microsecond times and 16-byte uuids on SQLite: ./times.ts, ./uuids.ts; property sets:
 * ./property-sets.ts; element groups: ./element-groups.ts; materialized columns:
 * ./materialized.ts; monthly partitions on PostgreSQL: ./partitions.ts). `RowEventsStore` is the
 * `EventsStore` (./store.ts) of both, parameterised by the database's dialect: the events list
 * with its filters and keyset cursor, one event by uuid, the persons behind a page's distinct ids,
 * property value suggestions, the event definitions (./definitions.ts), and HogQL's events table
 * (./table.ts). Each read decodes its rows to
 * PostHog's forms (`toRow`). Property filters compile through ./filters.ts; dialect differences
 * (the keyset cursor, ILIKE) come from `../dialect.ts`. Its writes are ./write.ts.
 */
import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { afterCursor, beforeCursor, dialectOf, icontains, type DialectName } from '../dialect.js';
import type { Database } from '../schema.js';
import { fromJson, toBool } from '../values.js';
import { EventDefinitionsRepository } from './definitions.js';
import { elementsChainOf } from './element-groups.js';
import { compilePropertyGroup, eventPropertySource, eventSources, propertyText } from './filters.js';
import { loadMaterializedColumns, type MaterializedColumns } from './materialized.js';
import { eventPropertiesOut, eventPropertiesWhole, joinSharedProperties } from './property-sets.js';
import type {
  EventDefinitionFilters,
  EventDefinitionQuery,
  EventDefinitionRow,
  EventFilters,
  EventListQuery,
  EventPerson,
  EventRow,
  EventsStore,
  EventsTable,
  EventValuesQuery,
  ListedEventRow,
  Sql,
} from './store.js';
import { rowEventsTable } from './table.js';
import { eventTimeIn, eventTimeText } from './times.js';
import { eventUuidIn, eventUuidOut, type StoredEventUuid } from './uuids.js';

type EventsQuery = SelectQueryBuilder<Database, 'events', object>;

/**
 * The lower bound of the first query of a list page on PostgreSQL (`RowEventsStore.list`):
 * the start of the UTC day of the page's newest possible row (the cursor's timestamp, else
 * `before`), as `YYYY-MM-DD`, which sorts before every stored timestamp of that day (fixed-width
 * ISO 8601 UTC text). Undefined when `after` bounds the page within that day already.
 */
export function listWindowStart(q: Pick<EventListQuery, 'before' | 'after' | 'cursor'>): string | undefined {
  const top = q.cursor !== undefined && q.cursor.timestamp < q.before ? q.cursor.timestamp : q.before;
  const day = top.slice(0, 10);
  return q.after !== undefined && q.after >= day ? undefined : day;
}

/**
 * A row as a read selects it (the uuid as stored; the properties as stored JSON text on SQLite,
 * decoded json on PostgreSQL) decoded to PostHog's forms.
 */
function toRow(r: {
  uuid: StoredEventUuid;
  event: string;
  distinct_id: string;
  properties: unknown;
  timestamp: string;
  elements_chain: string;
}): ListedEventRow {
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

/** The events of one SQLite or PostgreSQL database (module doc). */
export class RowEventsStore implements EventsStore {
  readonly dialect: DialectName;

  /**
   * `readRows`: the store's array-rows reader (SQLite, `Store.readRows`), used for the events
   * list's page when given; rows are then read without one object per row.
   */
  constructor(
    readonly db: Kysely<Database>,
    private readonly readRows?: (query: CompiledQuery) => unknown[][] | undefined,
  ) {
    this.dialect = dialectOf(db);
  }

  /** `materialized_columns`, as the reads use it (./materialized.ts). */
  async materializedColumns(): Promise<MaterializedColumns> {
    return loadMaterializedColumns(this.db);
  }

  /** HogQL's events table on this dialect (./table.ts). */
  table(materialized?: MaterializedColumns): EventsTable {
    return rowEventsTable(this.dialect, materialized);
  }

  private filtered(q: EventListQuery): EventsQuery {
    const time = (text: string) => eventTimeIn(this.dialect, text);
    let query: EventsQuery = this.db
      .selectFrom('events')
      .where('events.team_id', '=', q.teamId)
      .where('events.timestamp', '<', time(q.before));
    if (q.after !== undefined) query = query.where('events.timestamp', '>', time(q.after));
    if (q.event !== undefined) query = query.where('events.event', '=', q.event);
    if (q.distinctId !== undefined) query = query.where('events.distinct_id', '=', q.distinctId);
    if (q.person !== undefined) {
      const person = q.person;
      query = query.where('events.distinct_id', 'in', (eb) => {
        let sub = eb
          .selectFrom('person_distinct_ids as pdi')
          .innerJoin('persons as p', 'p.id', 'pdi.person_id')
          .select('pdi.distinct_id')
          .where('pdi.team_id', '=', q.teamId);
        sub = 'id' in person ? sub.where('p.id', '=', person.id) : sub.where('p.uuid', '=', person.uuid);
        return sub;
      });
    }
    // (timestamp, uuid) < cursor, written so that the index range starts at the cursor (../dialect.ts)
    if (q.cursor)
      query = query.where(
        (q.ascending ? afterCursor : beforeCursor)(this.dialect, sql.ref('events.timestamp'), sql.ref('events.uuid'), {
          timestamp: time(q.cursor.timestamp),
          uuid: eventUuidIn(this.dialect, q.cursor.uuid),
        }),
      );
    if (q.properties) query = query.where(compilePropertyGroup(this.dialect, q.properties, eventSources(this.dialect), q.materialized));
    if (q.where) query = query.where(q.where as RawBuilder<boolean>);
    return query;
  }

  /**
   * The filters of `q` as SQL conditions on `events` rows: what a HogQL query over the filtered
   * events (an EventsQuery, the list's `select`, server/hogql/) adds to its own WHERE. The same
   * filters as `filtered` builds, written out as raw conditions.
   */
  conditions(q: EventFilters): Sql[] {
    const out: Sql[] = [sql`events.timestamp < ${eventTimeIn(this.dialect, q.before)}`];
    if (q.after !== undefined) out.push(sql`events.timestamp > ${eventTimeIn(this.dialect, q.after)}`);
    if (q.event !== undefined) out.push(sql`events.event = ${q.event}`);
    if (q.distinctId !== undefined) out.push(sql`events.distinct_id = ${q.distinctId}`);
    if (q.person !== undefined) {
      const match = 'id' in q.person ? sql`p.id = ${q.person.id}` : sql`p.uuid = ${q.person.uuid}`;
      out.push(
        sql`events.distinct_id in (select pdi.distinct_id from person_distinct_ids pdi inner join persons p on p.id = pdi.person_id where pdi.team_id = ${q.teamId} and ${match})`,
      );
    }
    if (q.properties) out.push(compilePropertyGroup(this.dialect, q.properties, eventSources(this.dialect), q.materialized));
    if (q.where) out.push(q.where);
    return out;
  }

  /**
   * One page of events, newest first (timestamp desc, then uuid desc; `ascending`: oldest first), at most `limit` rows after
   * skipping `offset`. Callers ask for one row more than they show to learn whether more exist.
   * Timestamps come as the stored text form (SQLite formats its microseconds in SQL), uuids as
   * text in the API's form (`eventUuidOut` of SQLite's bytes), properties whole (SQLite: joined
   * from the property sets, `joinSharedProperties`).
   *
   * PostgreSQL: the page is asked first of the UTC day of its newest possible row (`listWindowStart`),
   * as PostHog's events list asked first of the current day (posthog/api/event.py, 2024–25;
   * reference/posthog-behavior.md), and of the whole range only when that day holds fewer than
   * `offset + limit` matching rows. Every row of that day is newer than every row before it, so a
   * full page from the day is the page of the whole range: the answer is the same. What it saves
   * is planning: a bounded query is planned for that day's partition alone (storage/events/partitions.ts),
   * an unbounded one for every partition and each of its indexes (docs/performance.md). Only a page filtered by nothing but `event`
   * and time is asked so: with a person, distinct_id, property or `where` filter, a day's partition
   * may hold none of the few matching rows, and PostgreSQL may walk the whole day in time order to
   * learn it before the second query. SQLite has no partitions and plans the same either way, so
   * it asks once.
   */
  async list(q: EventListQuery): Promise<ListedEventRow[]> {
    const onlyTime = q.person === undefined && q.distinctId === undefined && q.properties === undefined && q.where === undefined;
    const windowStart = this.dialect === 'postgres' && onlyTime && !q.ascending ? listWindowStart(q) : undefined;
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
    // rows only (storage/events/property-sets.ts `joinSharedProperties`); PostgreSQL has no sets
    const shared =
      this.dialect === 'sqlite'
        ? [sql<number | null>`events.property_set_id`.as('set_id'), sql<number | null>`events.key_order_id`.as('order_id')]
        : [];
    const filtered =
      since === undefined ? this.filtered(q) : this.filtered(q).where('events.timestamp', '>=', eventTimeIn(this.dialect, since));
    const query = filtered
      .select([
        'events.uuid',
        'events.event',
        'events.distinct_id',
        eventPropertiesOut(this.dialect, sql.ref('events.properties')).as('properties'),
        eventTimeText(this.dialect, sql.ref('events.timestamp')).as('timestamp'),
        elementsChainOf().as('elements_chain'),
        ...shared,
      ])
      .orderBy(timeOrder, q.ascending ? 'asc' : 'desc')
      .orderBy('events.uuid', q.ascending ? 'asc' : 'desc')
      .limit(q.limit)
      .offset(q.offset);
    // the select list's order: uuid, event, distinct_id, properties, timestamp, elements_chain[, set_id, order_id]
    const arrays = this.readRows?.(query.compile());
    const rows = arrays
      ? arrays.map((r) => ({
          uuid: r[0] as StoredEventUuid,
          event: r[1] as string,
          distinct_id: r[2] as string,
          properties: r[3],
          timestamp: r[4] as string,
          elements_chain: r[5] as string,
          set_id: (r[6] ?? null) as number | null,
          order_id: (r[7] ?? null) as number | null,
        }))
      : (await query.execute()).map((r) => ({
          ...r,
          set_id: (r as { set_id?: number | null }).set_id ?? null,
          order_id: (r as { order_id?: number | null }).order_id ?? null,
        }));
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
      .select([
        'uuid',
        'event',
        'distinct_id',
        eventPropertiesOut(this.dialect, eventPropertiesWhole(this.dialect)).as('properties'),
        eventTimeText(this.dialect, sql.ref('events.timestamp')).as('timestamp'),
        elementsChainOf().as('elements_chain'),
      ])
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
      for (const r of rows)
        out.set(r.distinct_id, {
          is_identified: toBool(r.is_identified),
          properties: fromJson<Record<string, unknown>>(r.properties) ?? {},
        });
    }
    return out;
  }

  /**
   * Distinct values of a property (or of the `event` / `distinct_id` column) among the team's most
   * recent `scan` events in [since, until], with their counts, ordered by `order`: most frequent
   * first, shortest first, or by value. At most `limit` groups; values are the text forms (arrays
   * as JSON text). `contains` keeps values holding that text, case-insensitive.
   */
  async values(input: EventValuesQuery): Promise<{ value: string; count: number }[]> {
    const valueExpr: RawBuilder<string | null> = input.isColumn
      ? input.key === 'event'
        ? sql<string>`events.event`
        : input.key === 'person_id'
          ? sql<string>`(select p.uuid from person_distinct_ids pdi inner join persons p on p.id = pdi.person_id where pdi.team_id = events.team_id and pdi.distinct_id = events.distinct_id)`
          : sql<string>`events.distinct_id`
      : propertyText(this.dialect, eventPropertySource(this.dialect), input.key, await loadMaterializedColumns(this.db));
    let inner = this.db
      .selectFrom('events')
      .select(valueExpr.as('v'))
      .where('events.team_id', '=', input.teamId)
      .where('events.timestamp', '>=', eventTimeIn(this.dialect, input.since))
      .where('events.timestamp', '<=', eventTimeIn(this.dialect, input.until));
    if (input.eventNames?.length) inner = inner.where('events.event', 'in', input.eventNames);
    if (input.excludeDollarEvents) inner = inner.where(sql<boolean>`substr(events.event, 1, 1) <> '$'`);
    if (input.properties)
      inner = inner.where(compilePropertyGroup(this.dialect, input.properties, eventSources(this.dialect), input.materialized));
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

  /** Grouped off the events (./definitions.ts). */
  eventDefinitions(query: EventDefinitionQuery): Promise<EventDefinitionRow[]> {
    return new EventDefinitionsRepository(this.db).list(query);
  }

  /** `count(distinct event)` of the filtered events (./definitions.ts). */
  countEventDefinitions(filters: EventDefinitionFilters): Promise<number> {
    return new EventDefinitionsRepository(this.db).count(filters);
  }
}
