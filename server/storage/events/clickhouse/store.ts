/**
 * The events store on ClickHouse: the reads of `EventsStore` (../store.ts) on PostHog's `events`
 * table (../../clickhouse/schema.ts), through the ClickHouse Kysely dialect
 * (../../clickhouse/kysely-dialect.ts), answering what the row store answers (../row-store.ts).
 *
 * - The events list asks first of the UTC day of the page's newest possible row, as PostHog's
 *   list asks first of the current day (posthog/api/event.py; reference/posthog-behavior.md), and
 *   of the whole range only when that day has fewer than `offset + limit` rows: the day is the
 *   second column of the sort key, so the first query reads that day's granules only.
 * - Times cross as stored-form text (`2024-11-20T14:03:10.871123Z`), uuids as text with dashes.
 * - The persons behind a page are read from the relational store (the persons' source of truth);
 *   person filters read the ClickHouse mirror (./filters.ts).
 * - Materialized columns are PostHog's nullable `mat_*` columns of `events` and `pmat_*` of the
 *   person mirror `person` (./materialize.ts, listed from `system.columns` by PostHog's
 *   `column_materializer::` comments on every call, so a new one is read without a restart), read
 *   by the filters, the values and HogQL bare, as PostHog's printer reads a nullable column: their
 *   value is the property's text, NULL when missing or JSON null, as the JSON reads give it.
 * - Every uuid is stored once (the write path looks it up first: ./write.ts), so no read needs
 *   `FINAL` or a de-duplication of its own.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.js';
import { fromJson } from '../../values.js';
import type { MaterializedColumns } from '../materialized.js';
import { listWindowStart, RowEventsStore } from '../row-store.js';
import type {
  DefinitionOrder,
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
} from '../store.js';
import { chTime } from '../../clickhouse/kysely-dialect.js';
import { compilePropertyGroup, personIs, propertyTextSql } from './filters.js';
import { clickhouseMaterializedColumns } from './materialize.js';
import { clickhouseTimeText, latestDistinctIds } from './mirror.js';
import { clickhouseEventsTable } from './table.js';

/** A stored-form timestamp as a DateTime64(6, 'UTC') value. */
function time(iso: string): Sql {
  return sql`${chTime(iso)}`;
}

/**
 * The columns of a listed row. Their aliases are not the columns' names: ClickHouse resolves a
 * name in WHERE and ORDER BY to a SELECT alias first, so `toString(uuid) AS uuid` would turn
 * `uuid IN (…)` into a comparison of text.
 */
const ROW_COLUMNS = sql`toString(events.uuid) as r_uuid, events.event as r_event, events.distinct_id as r_distinct_id, events.properties as r_properties, ${clickhouseTimeText(sql`events.timestamp`)} as r_timestamp, events.elements_chain as r_elements_chain`;

/** A row of `ROW_COLUMNS`. */
interface ChRow {
  r_uuid: string;
  r_event: string;
  r_distinct_id: string;
  r_properties: string;
  r_timestamp: string;
  r_elements_chain: string;
}

/** A row as listed: `properties` decoded on first read, its stored JSON text kept. */
function toRow(r: ChRow): ListedEventRow {
  let decoded: Record<string, unknown> | undefined;
  return {
    uuid: r.r_uuid,
    event: r.r_event,
    distinct_id: r.r_distinct_id,
    get properties() {
      return (decoded ??= fromJson<Record<string, unknown>>(r.r_properties) ?? {});
    },
    propertiesText: r.r_properties,
    timestamp: r.r_timestamp,
    elements_chain: r.r_elements_chain,
  };
}

/** The events of one ClickHouse database; `rel` the relational store (persons, their integer ids). */
export class ClickHouseEventsStore implements EventsStore {
  readonly dialect = 'clickhouse' as const;

  /** `db`: the ClickHouse database (what HogQL runs on); `rel`: the relational store. */
  /** the row store of `rel`, for the persons of a page (relational) */
  private readonly persons: RowEventsStore;

  constructor(
    readonly db: Kysely<unknown>,
    private readonly rel: Kysely<Database>,
  ) {
    this.persons = new RowEventsStore(rel);
  }

  /** The materialized columns now (`system.columns`: ./materialize.ts `clickhouseMaterializedColumns`). */
  materializedColumns(): Promise<MaterializedColumns> {
    return clickhouseMaterializedColumns(this.db);
  }

  /**
   * HogQL's events table (./table.ts), its materialized columns read bare (module doc): the
   * nullable columns hold the very text the JSON read gives, `''` and `'null'` included, which
   * `nullIf(nullIf(…))`, the read of PostHog's older `String` form, would turn into NULL.
   */
  table(materialized?: MaterializedColumns): EventsTable {
    const table = clickhouseEventsTable(materialized);
    if (!materialized) return table;
    return {
      ...table,
      materializedColumn: (of, property) => {
        const column = materialized[of === 'events' ? 'event' : 'person'].get(property);
        return column === undefined ? undefined : sql`${sql.raw(of)}.${sql.ref(column)}`;
      },
    };
  }

  /** The integer id of a relational person as its uuid (none: a uuid no person has). */
  private async personUuid(person: NonNullable<EventFilters['person']>): Promise<string> {
    if ('uuid' in person) return person.uuid;
    const row = await this.rel.selectFrom('persons').select('uuid').where('id', '=', person.id).executeTakeFirst();
    return row?.uuid ?? '00000000-0000-0000-0000-000000000000';
  }

  conditions(q: EventFilters): Sql[] {
    const out: Sql[] = [sql`events.timestamp < ${time(q.before)}`];
    if (q.after !== undefined) out.push(sql`events.timestamp > ${time(q.after)}`);
    if (q.event !== undefined) out.push(sql`events.event = ${q.event}`);
    if (q.distinctId !== undefined) out.push(sql`events.distinct_id = ${q.distinctId}`);
    if (q.person !== undefined) {
      // an integer id is resolved by the list (`list`); HogQL callers pass uuids, or get none
      out.push('uuid' in q.person ? personIs(q.teamId, q.person.uuid) : sql`0`);
    }
    if (q.properties) out.push(compilePropertyGroup(q.teamId, q.properties, q.materialized));
    if (q.where) out.push(q.where);
    return out;
  }

  async list(q: EventListQuery): Promise<ListedEventRow[]> {
    const person = q.person !== undefined ? { uuid: await this.personUuid(q.person) } : undefined;
    const query = { ...q, person };
    const windowStart = q.ascending ? undefined : listWindowStart(q);
    if (windowStart !== undefined) {
      const rows = await this.page(query, windowStart);
      if (rows.length >= q.limit) return rows;
    }
    return this.page(query);
  }

  private async page(q: EventListQuery, since?: string): Promise<ListedEventRow[]> {
    const where = [sql`events.team_id = ${q.teamId}`, ...this.conditions(q)];
    if (since !== undefined) where.push(sql`events.timestamp >= ${time(`${since}T00:00:00.000000Z`)}`);
    const op = sql.raw(q.ascending ? '>' : '<');
    if (q.cursor) {
      where.push(
        sql`(events.timestamp ${op} ${time(q.cursor.timestamp)} or (events.timestamp = ${time(q.cursor.timestamp)} and toString(events.uuid) ${op} ${q.cursor.uuid}))`,
      );
    }
    const dir = sql.raw(q.ascending ? 'asc' : 'desc');
    const rows =
      await sql<ChRow>`select ${ROW_COLUMNS} from events where ${sql.join(where, sql` and `)} order by events.timestamp ${dir}, toString(events.uuid) ${dir} limit ${q.limit} offset ${q.offset}`.execute(
        this.db,
      );
    return rows.rows.map(toRow);
  }

  async findByUuid(teamId: number, uuid: string): Promise<EventRow | undefined> {
    const rows =
      await sql<ChRow>`select ${ROW_COLUMNS} from events where events.team_id = ${teamId} and events.uuid = toUUIDOrZero(${uuid}) limit 1`.execute(
        this.db,
      );
    const r = rows.rows[0];
    return r && toRow(r);
  }

  /** From the relational store, the persons' source of truth: the row store's read, so the same answer. */
  personsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, EventPerson>> {
    return this.persons.personsByDistinctId(teamId, distinctIds);
  }

  async values(input: EventValuesQuery): Promise<{ value: string; count: number }[]> {
    const columns = input.isColumn ? undefined : await this.materializedColumns();
    const column = columns?.event.get(input.key);
    const byPerson = input.isColumn && input.key === 'person_id';
    const value = input.isColumn
      ? input.key === 'event'
        ? sql`events.event`
        : byPerson
          ? sql`toString(pdi.person_id)`
          : sql`events.distinct_id`
      : column !== undefined
        ? sql`events.${sql.ref(column)}`
        : propertyTextSql(sql`events.properties`, input.key);
    const where = [
      sql`events.team_id = ${input.teamId}`,
      sql`events.timestamp >= ${time(input.since)}`,
      sql`events.timestamp <= ${time(input.until)}`,
    ];
    if (input.eventNames?.length) where.push(sql`events.event in (${sql.join(input.eventNames)})`);
    if (input.excludeDollarEvents) where.push(sql`not startsWith(events.event, '$')`);
    if (input.properties) where.push(compilePropertyGroup(input.teamId, input.properties, input.materialized));
    // an event's person now: its distinct id's row of the mirror (none: no value)
    const personJoin = byPerson
      ? sql` inner join ${latestDistinctIds(sql`${input.teamId}`)} as pdi on pdi.distinct_id = events.distinct_id`
      : sql``;
    const outer = [sql`v is not null`];
    if (input.contains) outer.push(sql`positionCaseInsensitiveUTF8(v, ${input.contains}) > 0`);
    const order = input.order === 'length' ? sql`lengthUTF8(v), v` : input.order === 'value' ? sql`v` : sql`c desc, v`;
    const rows = await sql<{
      v: string;
      c: string;
    }>`select v, count() as c from (select ${value} as v from events${personJoin} where ${sql.join(where, sql` and `)} order by events.timestamp desc limit ${input.scan}) where ${sql.join(outer, sql` and `)} group by v order by ${order} limit ${input.limit}`.execute(
      this.db,
    );
    return rows.rows.map((r) => ({ value: String(r.v), count: Number(r.c) }));
  }

  private definitionWhere(q: EventDefinitionFilters): Sql[] {
    const where = [sql`events.team_id = ${q.teamId}`];
    if (q.kind === 'none') where.push(sql`0`);
    if (q.kind === 'custom') where.push(sql`not startsWith(events.event, '$')`);
    if (q.kind === 'posthog') where.push(sql`startsWith(events.event, '$')`);
    for (const term of q.terms) where.push(sql`positionCaseInsensitiveUTF8(events.event, ${term}) > 0`);
    if (q.excluded.length) where.push(sql`events.event not in (${sql.join(q.excluded)})`);
    if (q.exact !== undefined) where.push(sql`events.event = ${q.exact}`);
    return where;
  }

  async eventDefinitions(q: EventDefinitionQuery): Promise<EventDefinitionRow[]> {
    const lastSeen = clickhouseTimeText(sql`max(events.timestamp)`);
    const sortExpr = (o: DefinitionOrder): Sql =>
      o.key === 'name' ? sql`name` : o.key === 'last_seen_at' ? sql`last_seen` : sql`substring(last_seen, 1, 10)`;
    const order = q.order.map((o) => sql`${sortExpr(o)} ${sql.raw(o.desc ? 'desc' : 'asc')}`);
    if (!q.order.some((o) => o.key === 'name')) order.push(sql`name asc`);
    const rows = await sql<{
      name: string;
      first_seen: string;
      last_seen: string;
      volume: string;
    }>`select events.event as name, ${clickhouseTimeText(sql`min(events.timestamp)`)} as first_seen, ${lastSeen} as last_seen, countIf(events.timestamp >= ${time(q.since)}) as volume from events where ${sql.join(this.definitionWhere(q), sql` and `)} group by events.event order by ${sql.join(order)} limit ${q.limit} offset ${q.offset}`.execute(
      this.db,
    );
    return rows.rows.map((r) => ({ name: r.name, first_seen: r.first_seen, last_seen: r.last_seen, volume: Number(r.volume) }));
  }

  async countEventDefinitions(filters: EventDefinitionFilters): Promise<number> {
    const rows = await sql<{
      n: string;
    }>`select uniqExact(events.event) as n from events where ${sql.join(this.definitionWhere(filters), sql` and `)}`.execute(this.db);
    return Number(rows.rows[0]?.n ?? 0);
  }
}
