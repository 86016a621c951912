/**
 * The read side of the event store: the events list with its filters and keyset cursor, one event
 * by uuid, the persons behind a page's distinct ids, and property value suggestions. Property
 * filters compile through ./filters.ts; dialect differences (the keyset cursor, ILIKE) come from
 * `../dialect.ts`.
 */
import { sql, type CompiledQuery, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { PropertyGroup } from './filter-tree.js';
import { beforeCursor, dialectOf, icontains, type DialectName } from '../dialect.js';
import { compilePropertyGroup, eventPropertySource, eventSources, propertyText } from './filters.js';
import { elementsChainOf } from './element-groups.js';
import { eventTimeIn, eventTimeText } from './times.js';
import { eventUuidIn, eventUuidOut, type StoredEventUuid } from './uuids.js';
import { eventPropertiesOut, eventPropertiesWhole, joinSharedProperties } from './property-sets.js';
import type { Database } from '../schema.js';
import type { EventInput } from './write.js';
import { fromJson, toBool } from '../values.js';
import { loadMaterializedColumns, type MaterializedColumns } from './materialized.js';

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
  /** the store's materialized columns, which `properties` filters read instead of the JSON (storage/events/materialized.ts); none when absent */
  materialized?: MaterializedColumns | undefined;
  offset: number;
  limit: number;
}

type EventsQuery = SelectQueryBuilder<Database, 'events', object>;

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
    // (timestamp, uuid) < cursor, written so that the index range starts at the cursor (../dialect.ts)
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
   * is planning: a bounded query is planned for that day's partition alone (storage/events/partitions.ts),
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
    // rows only (storage/events/property-sets.ts `joinSharedProperties`); PostgreSQL has no sets
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
      : propertyText(this.dialect, eventPropertySource(this.dialect), input.key, await loadMaterializedColumns(this.db));
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
