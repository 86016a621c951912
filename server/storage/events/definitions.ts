/**
 * Event definitions derived from the row store's events (./row-store.ts `eventDefinitions`): one
 * per event name seen in a team, with the
 * first and last `timestamp` of its events and how many it had since a given moment. There is no
 * table of definitions: every read groups the team's events by name through the
 * `events_team_event_time` index (team_id, event, timestamp, uuid), which covers the whole query.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { bytewise, dialectOf, icontains, type DialectName } from '../dialect.js';
import { eventTimeIn, eventTimeText } from './times.js';
import type { Database } from '../schema.js';
import type { DefinitionOrder, EventDefinitionFilters, EventDefinitionQuery, EventDefinitionRow } from './store.js';
import { toInt } from '../values.js';

type EventsQuery = SelectQueryBuilder<Database, 'events', object>;

/** Reads event definitions off the events. */
export class EventDefinitionsRepository {
  private readonly dialect: DialectName;

  constructor(private readonly db: Kysely<Database>) {
    this.dialect = dialectOf(db);
  }

  private filtered(q: EventDefinitionFilters): EventsQuery {
    let query: EventsQuery = this.db.selectFrom('events').where('events.team_id', '=', q.teamId);
    if (q.kind === 'none') query = query.where(sql<boolean>`1 = 0`);
    if (q.kind === 'custom') query = query.where(sql<boolean>`substr(events.event, 1, 1) <> '$'`);
    if (q.kind === 'posthog') query = query.where(sql<boolean>`substr(events.event, 1, 1) = '$'`);
    for (const term of q.terms) query = query.where(icontains(this.dialect, sql`events.event`, term));
    if (q.excluded.length) query = query.where('events.event', 'not in', q.excluded);
    if (q.exact !== undefined) query = query.where('events.event', '=', q.exact);
    return query;
  }

  /** A page of definitions in the order asked (ties broken by name, bytewise). */
  async list(q: EventDefinitionQuery): Promise<EventDefinitionRow[]> {
    const lastSeen = eventTimeText(this.dialect, sql`max(events.timestamp)`);
    const sortExpr = (o: DefinitionOrder): RawBuilder<unknown> =>
      o.key === 'name' ? bytewise(this.dialect, sql`events.event`) : o.key === 'last_seen_at' ? lastSeen : sql`substr(${lastSeen}, 1, 10)`;
    let query = this.filtered(q)
      .select([
        'events.event as name',
        eventTimeText(this.dialect, sql`min(events.timestamp)`).as('first_seen'),
        lastSeen.as('last_seen'),
        sql<number | string>`sum(case when events.timestamp >= ${eventTimeIn(this.dialect, q.since)} then 1 else 0 end)`.as('volume'),
      ])
      .groupBy('events.event');
    for (const o of q.order) query = query.orderBy(sortExpr(o), o.desc ? 'desc' : 'asc');
    if (!q.order.some((o) => o.key === 'name')) query = query.orderBy(bytewise(this.dialect, sql`events.event`), 'asc');
    const rows = await query.limit(q.limit).offset(q.offset).execute();
    return rows.map((r) => ({ name: r.name, first_seen: r.first_seen, last_seen: r.last_seen, volume: toInt(r.volume) }));
  }

  /** How many definitions match (the page envelope's `count`). */
  async count(q: EventDefinitionFilters): Promise<number> {
    const row = await this.filtered(q)
      .select(sql<number | string>`count(distinct events.event)`.as('n'))
      .executeTakeFirstOrThrow();
    return toInt(row.n);
  }
}
