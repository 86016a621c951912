/**
 * The write side of the ClickHouse events store: events into PostHog's `events` table, and the
 * mirror of the persons (`person`, `person_distinct_id2`) that queries read, in the one write
 * path of events (server/ingest/write-events.ts). The relational store stays the persons' source
 * of truth: their updates are applied there first, in the caller's transaction, and what they
 * changed is then written to the mirror.
 *
 * The same uuid sent twice is stored once: de-duplication at insert. Before a batch is inserted
 * its uuids are looked up among the team's events of the batch's days (`storedUuids`; the team
 * and the day are the sort key's first two columns, so the look-up reads those days' granules
 * only), and the stored ones are skipped with their person updates, as the row store skips them.
 * Why not leave it to the engine: `events` is a ReplacingMergeTree, as PostHog's, but it replaces
 * duplicates only when it merges parts, at a time of its choosing, so every read would need
 * `FINAL` or a de-duplication of its own (HogQL forbids `FINAL`), and counts would change when a
 * merge ran. The engine's replacing stays as the backstop for the one case the look-up cannot
 * see: two processes writing the same uuid at the same moment to a ClickHouse server. Within a
 * process, writes of one store are serialised (the capture queue and the importer write one batch
 * at a time). Unlike the row store, a uuid is per project, as PostHog's sort key makes it: the same
 * uuid in another project is another event.
 *
 * Mirror rows carry a `version` that grows with every write of this process (microseconds since
 * 1970, at least one more than the last), so a reader's `argMax(…, version)` sees the latest.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { sql, type Kysely } from 'kysely';
import type { ClickHouseConnection } from '../../clickhouse/connection.js';
import type { Database } from '../../schema.js';
import { chunks } from '../../chunks.js';
import { jsonValue } from '../../values.js';
import { chParam, clickhouseDateTime } from '../../clickhouse/kysely-dialect.js';
import type { EventInput } from '../write.js';

/** A person as the mirror holds it. */
interface MirroredPerson {
  uuid: string;
  properties: string;
  isIdentified: boolean;
  createdAt: string;
}

/** What the relational store holds of the persons of some distinct ids: distinct id → person. */
export type PersonsOf = Map<string, MirroredPerson>;

/** One write of the mirror: its version (ReplacingMergeTree's) and its time, seconds. */
interface MirrorWrite {
  teamId: number;
  version: number;
  seconds: number;
}

/** A row of the `person` mirror table for `p`, deleted or not. */
function personRow(p: MirroredPerson, w: MirrorWrite, deleted: boolean) {
  return {
    id: p.uuid,
    created_at: clickhouseDateTime(p.createdAt),
    team_id: w.teamId,
    properties: p.properties,
    is_identified: !deleted && p.isIdentified ? 1 : 0,
    is_deleted: deleted ? 1 : 0,
    version: w.version,
    _timestamp: w.seconds,
    _offset: 0,
  };
}

/** A row of the `person_distinct_id2` mirror table: `distinctId` → person `personId`, deleted or not. */
function distinctIdRow(distinctId: string, personId: string, w: MirrorWrite, deleted: boolean) {
  return {
    team_id: w.teamId,
    distinct_id: distinctId,
    person_id: personId,
    is_deleted: deleted ? 1 : 0,
    version: w.version,
    _timestamp: w.seconds,
    _offset: 0,
    _partition: 0,
  };
}

/** The columns of an events insert, in the order `insertEvents` writes them. */
const EVENT_INSERT_COLUMNS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'distinct_id',
  'elements_chain',
  'created_at',
  'person_id',
  'person_created_at',
  'person_properties',
  'person_mode',
  '_timestamp',
  '_offset',
] as const;

const TSV_SPECIAL = /[\\\t\n\r]/;
const TSV_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * `value` as a TabSeparated field: backslash, tab, line feed and carriage return escaped
 * (ClickHouse's TabSeparated escapes; every other character, NUL included, is read as it is).
 */
function tsvField(value: string): string {
  return TSV_SPECIAL.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => TSV_ESCAPES[c]!) : value;
}

let lastVersion = 0;

/** The next mirror version (see the module doc). */
function nextVersion(): number {
  lastVersion = Math.max(Date.now() * 1000, lastVersion + 1);
  return lastVersion;
}

/** Writes events and the person mirror of one ClickHouse database. */
export class ClickHouseEventsWriter {
  private readonly client: ClickHouseClient;

  constructor(
    private readonly connection: ClickHouseConnection,
    private readonly ch: Kysely<unknown>,
  ) {
    this.client = connection.client;
  }

  /** Which of `events` (of team `teamId`) are stored already: their uuids. */
  async storedUuids(teamId: number, events: readonly EventInput[]): Promise<Set<string>> {
    const found = new Set<string>();
    if (events.length === 0) return found;
    const days = [...new Set(events.map((e) => e.timestamp.slice(0, 10)))];
    for (const slice of chunks(
      events.map((e) => e.uuid),
      5_000,
    )) {
      // the alias is not `uuid`: ClickHouse would read `uuid` in WHERE as the alias (store.ts). The
      // uuids are one Array(UUID) parameter: as one toUUID(parameter) each, a batch of 2,000 took
      // about 5× as long (the engine analyses every one; docs/performance.md, issue 39)
      const rows = await sql<{
        stored: string;
      }>`select toString(events.uuid) as stored from events where events.team_id = ${teamId} and toDate(events.timestamp) in (${sql.join(days.map((d) => sql`toDate(${d})`))}) and events.uuid in ${chParam(slice, 'Array(UUID)')}`.execute(
        this.ch,
      );
      for (const r of rows.rows) found.add(r.stored);
    }
    return found;
  }

  /**
   * Inserts `events` of team `teamId`, each with its person as `persons` has it (none: a zero
   * person id), as one `TabSeparated` insert (`ClickHouseConnection.insertTabSeparated`). Why
   * TabSeparated and not the client's JSONEachRow objects: `properties` and `person_properties`
   * are JSON text, which JSONEachRow writes as a JSON string of a JSON string (every quote
   * escaped, then unescaped by the engine); here the text goes as it is, with only
   * TabSeparated's escapes (`tsvField`), and on embedded chDB straight to its parser.
   */
  async insertEvents(teamId: number, events: readonly EventInput[], persons: PersonsOf): Promise<void> {
    if (events.length === 0) return;
    const now = new Date();
    const team = `\t${teamId}\t`;
    const createdAt = `\t${clickhouseDateTime(now.toISOString())}\t`;
    const tail = `\t${Math.floor(now.getTime() / 1000)}\t0\n`;
    let text = '';
    for (const e of events) {
      const person = persons.get(e.distinct_id);
      text +=
        e.uuid +
        '\t' +
        tsvField(e.event) +
        '\t' +
        tsvField(jsonValue(e.properties)) +
        '\t' +
        clickhouseDateTime(e.timestamp) +
        team +
        tsvField(e.distinct_id) +
        '\t' +
        tsvField(e.elements_chain) +
        createdAt +
        (person
          ? `${person.uuid}\t${clickhouseDateTime(person.createdAt)}\t${tsvField(person.properties)}\tfull`
          : '00000000-0000-0000-0000-000000000000\t1970-01-01 00:00:00\t\tpropertyless') +
        tail;
    }
    await this.connection.insertTabSeparated('events', EVENT_INSERT_COLUMNS, text);
  }

  /**
   * Mirrors a bulk delete (domain/person-actions.ts): `before` (the persons of the deleted
   * distinct ids, read before the relational delete) written as deleted persons and deleted
   * distinct ids; with `events`, the team's events of those distinct ids deleted too (a
   * lightweight `DELETE`, seen by every read at once).
   */
  async deletePersons(teamId: number, before: PersonsOf, events: boolean): Promise<void> {
    const w: MirrorWrite = { teamId, version: nextVersion(), seconds: Math.floor(Date.now() / 1000) };
    const persons = new Map<string, MirroredPerson>();
    for (const p of before.values()) persons.set(p.uuid, p);
    const personRows = [...persons.values()].map((p) => personRow(p, w, true));
    const distinctRows = [...before].map(([distinctId, p]) => distinctIdRow(distinctId, p.uuid, w, true));
    if (personRows.length) await this.client.insert({ table: 'person', values: personRows, format: 'JSONEachRow' });
    if (distinctRows.length) await this.client.insert({ table: 'person_distinct_id2', values: distinctRows, format: 'JSONEachRow' });
    if (events) await this.deleteEventsOf(teamId, [...before.keys()]);
  }

  /** Deletes the team's events of `distinctIds` (a lightweight `DELETE`). */
  async deleteEventsOf(teamId: number, distinctIds: readonly string[]): Promise<void> {
    for (const slice of chunks([...distinctIds], 500))
      await this.client.command({
        query: 'DELETE FROM events WHERE team_id = {team:Int64} AND distinct_id IN {ids:Array(String)}',
        query_params: { team: teamId, ids: slice },
      });
  }

  /**
   * The persons of `distinctIds` (team `teamId`) as the relational store holds them now, read
   * with `db` (the caller's transaction, so that its updates are seen).
   */
  async personsOf(db: Kysely<Database>, teamId: number, distinctIds: readonly string[]): Promise<PersonsOf> {
    const out: PersonsOf = new Map();
    for (const slice of chunks([...new Set(distinctIds)], 500)) {
      const rows = await db
        .selectFrom('person_distinct_ids as pdi')
        .innerJoin('persons as p', 'p.id', 'pdi.person_id')
        .select(['pdi.distinct_id', 'p.uuid', 'p.properties', 'p.is_identified', 'p.created_at'])
        .where('pdi.team_id', '=', teamId)
        .where('pdi.distinct_id', 'in', slice)
        .execute();
      for (const r of rows) {
        out.set(r.distinct_id, {
          uuid: r.uuid,
          properties: typeof r.properties === 'string' ? r.properties : jsonValue(r.properties),
          isIdentified: Boolean(r.is_identified),
          createdAt: r.created_at instanceof Date ? r.created_at.toISOString() : String(r.created_at),
        });
      }
    }
    return out;
  }

  /**
   * Writes to the mirror what changed between `before` and `after` (the persons of the same
   * distinct ids before and after the updates): persons new or changed, distinct ids that moved
   * or are new, and persons no distinct id leads to any more and the store no longer holds (merged
   * away) as deleted.
   */
  async mirrorPersons(db: Kysely<Database>, teamId: number, before: PersonsOf, after: PersonsOf): Promise<void> {
    const w: MirrorWrite = { teamId, version: nextVersion(), seconds: Math.floor(Date.now() / 1000) };
    const persons = new Map<string, MirroredPerson>();
    const previous = new Map<string, MirroredPerson>();
    for (const p of before.values()) previous.set(p.uuid, p);
    for (const p of after.values()) {
      const was = previous.get(p.uuid);
      if (!was || was.properties !== p.properties || was.isIdentified !== p.isIdentified) persons.set(p.uuid, p);
    }
    const personRows = [...persons.values()].map((p) => personRow(p, w, false));
    const kept = new Set([...after.values()].map((p) => p.uuid));
    const gone = [...previous.keys()].filter((uuid) => !kept.has(uuid));
    if (gone.length) {
      const still = new Set((await db.selectFrom('persons').select('uuid').where('uuid', 'in', gone).execute()).map((r) => r.uuid));
      for (const uuid of gone) {
        if (still.has(uuid)) continue;
        personRows.push(personRow(previous.get(uuid)!, w, true));
      }
    }
    const distinctRows = [];
    for (const [distinctId, p] of after) {
      if (before.get(distinctId)?.uuid === p.uuid) continue;
      distinctRows.push(distinctIdRow(distinctId, p.uuid, w, false));
    }
    if (personRows.length) await this.client.insert({ table: 'person', values: personRows, format: 'JSONEachRow' });
    if (distinctRows.length) await this.client.insert({ table: 'person_distinct_id2', values: distinctRows, format: 'JSONEachRow' });
  }
}
