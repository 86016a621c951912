/**
 * Person processing of a batch of events, as PostHog's ingestion does it (nodejs/src/worker/
 * ingestion/persons/: person-update.ts for `$set` / `$set_once` / `$unset`, person-merge-service.ts
 * for `$identify` / `$create_alias`), on the rows of one team, inside the caller's transaction.
 * The one code path for persons of every way events come in (`envapi import`, the capture
 * endpoints): ingest/write-events.ts calls it.
 *
 * Per update, in order:
 * 1. Merge (`merge`: `$identify` with `$anon_distinct_id`, `$create_alias` with `alias`; the
 *    callers have already refused PostHog's illegal ids): neither id has a person → one person with
 *    both ids; one has → the other id joins it; both the same person → nothing; different persons →
 *    the `other` person is merged into the `into` person only when it is not identified yet
 *    (PostHog's `cannot_merge_already_identified` refusal otherwise): properties
 *    `{...other, ...into}`, the other's distinct ids move, the other person is deleted, created_at
 *    the earlier. A merge that happens or is refused marks the resulting person identified.
 *    (A plain `$identify`, without `$anon_distinct_id`, carries no `identify`: person-rules.ts.)
 * 2. The person of `distinct_id` is created if missing (properties from this event's updates).
 * 3. `$set_once` (keys not present), then `$set` (keys whose value differs), then `$unset` (keys
 *    present are removed), as person-update.ts orders them.
 * Persons are written once at the end (only those that changed), with few statements (see
 * `applyPersonUpdates`).
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { chunks } from '../chunks.js';
import type { Database } from '../schema.js';
import { dialectOf } from '../dialect.js';
import { boolValue, fromJson, jsonValue, nowIso, setOwn, toBool, toIso } from '../values.js';

/** What an event does to its person. */
export interface PersonUpdate {
  distinct_id: string;
  /** `$set`: overwrite these person properties */
  set?: Record<string, unknown> | undefined;
  /** `$set_once`: set these person properties only where not set yet */
  set_once?: Record<string, unknown> | undefined;
  /** `$unset`: remove these person properties */
  unset?: readonly string[] | undefined;
  /** `$identify`: the person becomes identified; `anon_distinct_id` is merged into it (see `merge`) */
  identify?: { anon_distinct_id?: string | undefined } | undefined;
  /** `$create_alias`: `alias` (the other id) is merged into the person of `distinct_id` */
  alias?: string | undefined;
}

/**
 * Rows per multi-row statement: on PostgreSQL 500 (at most 7 parameters a row), one round trip
 * for many rows; on SQLite 1, because there a statement is no round trip, and each distinct row
 * count would be another SQL text held by the store's cache of prepared statements (storage/db.ts,
 * 500 of them): prepared once for each size from 1 to 500, the persons INSERT and the CASE update
 * would hold tens of MB each (docs/performance.md).
 */
const rowsPerStatement = (db: Kysely<Database>): number => (dialectOf(db) === 'sqlite' ? 1 : 500);

interface LoadedPerson {
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: string;
  dirty: boolean;
  /** a person created by this call: not stored yet, its key is negative and its uuid is new */
  uuid?: string;
}

/**
 * Applies `updates` in order to the persons of team `teamId` (module doc). Returns the number of
 * persons created. Run it inside a transaction: it is several statements.
 *
 * The updates are worked out in memory first, then written in this order: the new persons (with
 * their final properties), the distinct ids of merged stored persons moved and those persons
 * deleted, the new distinct ids, the changed stored persons. New persons carry negative keys until
 * they are inserted. On PostgreSQL, where each statement is a round trip and a group of captured
 * events names hundreds of persons, new persons, new distinct ids and changed persons are written
 * up to 500 rows a statement; on SQLite one row a statement (`rowsPerStatement`).
 */
export async function applyPersonUpdates(db: Kysely<Database>, teamId: number, updates: readonly PersonUpdate[]): Promise<number> {
  if (updates.length === 0) return 0;
  const ids = new Set<string>();
  for (const u of updates) {
    ids.add(u.distinct_id);
    const other = otherIdOf(u);
    if (other !== undefined) ids.add(other);
  }
  const personOf = new Map<string, number>();
  const all = [...ids];
  for (const slice of chunks(all)) {
    const rows = await db
      .selectFrom('person_distinct_ids')
      .select(['distinct_id', 'person_id'])
      .where('team_id', '=', teamId)
      .where('distinct_id', 'in', slice)
      .execute();
    for (const r of rows) personOf.set(r.distinct_id, r.person_id);
  }
  // Only the persons an update changes are read (most events only make sure their person exists,
  // which the distinct id look-up above answers): those of the ids of updates that set, unset,
  // identify or merge.
  const touched = new Set<number>();
  for (const u of updates) {
    if (!changesPerson(u)) continue;
    for (const id of [u.distinct_id, otherIdOf(u)]) {
      const p = id === undefined ? undefined : personOf.get(id);
      if (p !== undefined) touched.add(p);
    }
  }
  const persons = new Map<number, LoadedPerson>();
  const personIds = [...touched];
  for (const slice of chunks(personIds)) {
    const rows = await db
      .selectFrom('persons')
      .select(['id', 'properties', 'is_identified', 'created_at'])
      .where('id', 'in', slice)
      .execute();
    for (const r of rows) {
      persons.set(r.id, {
        properties: fromJson<Record<string, unknown>>(r.properties) ?? {},
        is_identified: toBool(r.is_identified),
        created_at: toIso(r.created_at),
        dirty: false,
      });
    }
  }
  let created = 0;
  /** distinct ids not stored yet → the key of their person */
  const newLinks = new Map<string, number>();
  /** stored persons merged into another → the key of the person that took their distinct ids */
  const mergedStored = new Map<number, number>();
  const link = (distinctId: string, key: number): void => {
    newLinks.set(distinctId, key);
    personOf.set(distinctId, key);
  };
  const ensure = (distinctId: string): number => {
    const known = personOf.get(distinctId);
    if (known !== undefined) return known;
    const key = -(created + 1);
    persons.set(key, { properties: {}, is_identified: false, created_at: nowIso(), dirty: true, uuid: randomUUID() });
    link(distinctId, key);
    created += 1;
    return key;
  };
  /** Moves every distinct id of `fromKey` to `intoKey` and deletes `fromKey` (PostHog's mergePeople). */
  const mergeInto = (fromKey: number, intoKey: number): void => {
    const from = persons.get(fromKey)!;
    const into = persons.get(intoKey)!;
    into.properties = { ...from.properties, ...into.properties };
    if (from.created_at < into.created_at) into.created_at = from.created_at;
    into.dirty = true;
    for (const [d, p] of personOf) if (p === fromKey) personOf.set(d, intoKey);
    for (const [d, p] of newLinks) if (p === fromKey) newLinks.set(d, intoKey);
    for (const [s, p] of mergedStored) if (p === fromKey) mergedStored.set(s, intoKey);
    if (fromKey > 0) mergedStored.set(fromKey, intoKey);
    persons.delete(fromKey);
  };

  for (const u of updates) {
    const other = otherIdOf(u);
    let identified = u.identify !== undefined;
    if (other !== undefined && other !== u.distinct_id) {
      const intoPerson = personOf.get(u.distinct_id);
      const otherPerson = personOf.get(other);
      if (intoPerson === undefined && otherPerson === undefined) link(other, ensure(u.distinct_id));
      else if (intoPerson === undefined) link(u.distinct_id, otherPerson!);
      else if (otherPerson === undefined) link(other, intoPerson);
      else if (otherPerson !== intoPerson && !persons.get(otherPerson)!.is_identified) mergeInto(otherPerson, intoPerson);
      identified = true;
    }
    const key = ensure(u.distinct_id);
    if (!changesPerson(u)) continue;
    const person = persons.get(key)!;
    if (identified && !person.is_identified) {
      person.is_identified = true;
      person.dirty = true;
    }
    // own keys only: `toString` or `__proto__` are keys like any other (`in` and `[k] =` would see the prototype's)
    for (const [k, v] of Object.entries(u.set_once ?? {})) {
      if (!Object.hasOwn(person.properties, k)) {
        setOwn(person.properties, k, v);
        person.dirty = true;
      }
    }
    for (const [k, v] of Object.entries(u.set ?? {})) {
      if (!Object.hasOwn(person.properties, k) || JSON.stringify(person.properties[k]) !== JSON.stringify(v)) {
        setOwn(person.properties, k, v);
        person.dirty = true;
      }
    }
    for (const k of u.unset ?? []) {
      if (Object.hasOwn(person.properties, k)) {
        delete person.properties[k];
        person.dirty = true;
      }
    }
  }

  // the store: new persons (in creation order), merges, new distinct ids, changed stored persons
  const stored = new Map<number, number>();
  const fresh = [...persons].filter(([key]) => key < 0);
  const perStatement = rowsPerStatement(db);
  for (let i = 0; i < fresh.length; i += perStatement) {
    const chunk = fresh.slice(i, i + perStatement);
    const rows = await db
      .insertInto('persons')
      .values(
        chunk.map(([, p]) => ({
          uuid: p.uuid!,
          team_id: teamId,
          properties: jsonValue(p.properties),
          is_identified: boolValue(p.is_identified),
          created_at: p.created_at,
        })),
      )
      .returning(['id', 'uuid'])
      .execute();
    const idOfUuid = new Map(rows.map((r) => [r.uuid, r.id]));
    for (const [key, p] of chunk) stored.set(key, idOfUuid.get(p.uuid!)!);
  }
  const idOf = (key: number): number => (key > 0 ? key : stored.get(key)!);
  for (const [fromId, intoKey] of mergedStored) {
    await db
      .updateTable('person_distinct_ids')
      .set({ person_id: idOf(intoKey) })
      .where('team_id', '=', teamId)
      .where('person_id', '=', fromId)
      .execute();
    await db.deleteFrom('persons').where('id', '=', fromId).execute();
  }
  const links = [...newLinks];
  for (let i = 0; i < links.length; i += perStatement) {
    await db
      .insertInto('person_distinct_ids')
      .values(
        links.slice(i, i + perStatement).map(([distinctId, key]) => ({ team_id: teamId, distinct_id: distinctId, person_id: idOf(key) })),
      )
      .execute();
  }
  const changed = [...persons].filter(([key, p]) => key > 0 && p.dirty);
  for (let i = 0; i < changed.length; i += perStatement) await updatePersons(db, changed.slice(i, i + perStatement));
  return created;
}

/**
 * One UPDATE of several stored persons: each column set to `CASE id WHEN … THEN … ELSE column
 * END`. The ELSE branch gives the parameters the column's type on PostgreSQL (jsonb, boolean,
 * timestamptz), so the statement is the same on both stores.
 */
async function updatePersons(db: Kysely<Database>, changed: readonly (readonly [number, LoadedPerson])[]): Promise<void> {
  const column = <T>(name: 'properties' | 'is_identified' | 'created_at', value: (p: LoadedPerson) => T) =>
    sql<T>`case ${sql.ref('id')} ${sql.join(
      changed.map(([id, p]) => sql`when ${id} then ${value(p)}`),
      sql` `,
    )} else ${sql.ref(name)} end`;
  await db
    .updateTable('persons')
    .set({
      properties: column('properties', (p) => jsonValue(p.properties)),
      is_identified: column('is_identified', (p) => boolValue(p.is_identified)),
      created_at: column('created_at', (p) => p.created_at),
    })
    .where(
      'id',
      'in',
      changed.map(([id]) => id),
    )
    .execute();
}

/** Whether `u` may change its person beyond making sure it exists (`$set`, `$set_once`, `$unset`, `$identify`, a merge). */
function changesPerson(u: PersonUpdate): boolean {
  return u.set !== undefined || u.set_once !== undefined || u.unset !== undefined || u.identify !== undefined || u.alias !== undefined;
}

/** The id an update merges into its person: `$identify`'s `$anon_distinct_id` or `$create_alias`'s `alias`. */
function otherIdOf(u: PersonUpdate): string | undefined {
  return u.identify?.anon_distinct_id || u.alias || undefined;
}
