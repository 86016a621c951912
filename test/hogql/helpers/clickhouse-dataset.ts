/**
 * The HogQL dataset (../dataset.ts) in a ClickHouse events store: the events of projects P and Q
 * as the import normalises them (`$set` merged into `properties.$set`), in the columns of
 * server/storage/clickhouse/schema.ts, and the person mirror (`person`, `person_distinct_id2`):
 * one person per distinct id, its properties the merged `$set`s. The mirror also holds what a
 * reader must skip: an older version of a person and of a distinct id, and a deleted person.
 * Inserted directly for now; the events store's write path will take its place.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { normalizeEventRow } from '../../../server/ingest/import/normalize.js';
import { P_EVENTS, Q_EVENTS } from '../dataset.js';

/** A stored-form timestamp as ClickHouse's DateTime64 input (`YYYY-MM-DD HH:MM:SS.ffffff`). */
function chTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}

/** The dataset's person uuid of distinct id number `n` of project number `team` (deterministic). */
function personUuid(team: number, n: number): string {
  return `01934e70-0000-7000-9${String(team).padStart(3, '0')}-${String(n).padStart(12, '0')}`;
}

const CREATED = '2024-10-01 00:00:00.000';

/** Inserts the dataset for projects `p` and `q` (their ids), and `more` events of other projects (project id, events). */
export async function seedClickHouseDataset(
  client: ClickHouseClient,
  p: number,
  q: number,
  more: readonly (readonly [number, readonly Record<string, unknown>[]])[] = [],
): Promise<void> {
  const events: Record<string, unknown>[] = [];
  const persons: Record<string, unknown>[] = [];
  const pdis: Record<string, unknown>[] = [];
  for (const [team, rows] of [[p, P_EVENTS] as const, [q, Q_EVENTS] as const, ...more]) {
    const people = new Map<string, { uuid: string; properties: Record<string, unknown> }>();
    for (const raw of rows) {
      const { event, person } = normalizeEventRow(team, raw);
      let who = people.get(event.distinct_id);
      if (!who) {
        who = { uuid: personUuid(team, people.size + 1), properties: {} };
        people.set(event.distinct_id, who);
      }
      Object.assign(who.properties, person?.set ?? {});
      events.push({
        uuid: event.uuid,
        event: event.event,
        properties: JSON.stringify(event.properties),
        timestamp: chTime(event.timestamp),
        team_id: team,
        distinct_id: event.distinct_id,
        elements_chain: event.elements_chain,
        created_at: chTime(event.timestamp),
        person_id: who.uuid,
        person_created_at: CREATED,
        person_properties: JSON.stringify(who.properties),
        person_mode: 'full',
        _timestamp: '2024-12-02 00:00:00',
        _offset: 0,
      });
    }
    for (const [distinctId, who] of people) {
      const base = { id: who.uuid, created_at: CREATED, team_id: team, is_identified: 0, _timestamp: '2024-12-02 00:00:00', _offset: 0 };
      // an older version first, which readers must not take
      persons.push({ ...base, properties: JSON.stringify({ stale: true }), is_deleted: 0, version: 1 });
      persons.push({ ...base, properties: JSON.stringify(who.properties), is_deleted: 0, version: 2 });
      const pdi = { team_id: team, distinct_id: distinctId, is_deleted: 0, _timestamp: '2024-12-02 00:00:00', _offset: 0, _partition: 0 };
      pdis.push({ ...pdi, person_id: personUuid(team, 999), version: 1 });
      pdis.push({ ...pdi, person_id: who.uuid, version: 2 });
    }
    // a deleted person with a distinct id of its own: in no answer
    const ghost = personUuid(team, 998);
    persons.push({
      id: ghost,
      created_at: CREATED,
      team_id: team,
      properties: '{"email":"ghost@example.com"}',
      is_identified: 1,
      is_deleted: 0,
      version: 1,
      _timestamp: '2024-12-02 00:00:00',
      _offset: 0,
    });
    persons.push({
      id: ghost,
      created_at: CREATED,
      team_id: team,
      properties: '{"email":"ghost@example.com"}',
      is_identified: 1,
      is_deleted: 1,
      version: 2,
      _timestamp: '2024-12-02 00:00:00',
      _offset: 0,
    });
  }
  await client.insert({ table: 'events', values: events, format: 'JSONEachRow' });
  await client.insert({ table: 'person', values: persons, format: 'JSONEachRow' });
  await client.insert({ table: 'person_distinct_id2', values: pdis, format: 'JSONEachRow' });
}
