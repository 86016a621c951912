/**
 * Person processing of a batch of events, as PostHog's ingestion does it (nodejs/src/worker/
 * ingestion/persons/: person-update.ts for `$set` / `$set_once` / `$unset`, person-merge-service.ts
 * for `$identify` / `$create_alias`), on the rows of one team, inside the caller's transaction.
 * The one code path for persons of every way events come in (`envapi import`, the capture
 * endpoints): events/write-events.ts calls it.
 *
 * Per update, in order:
 * 1. Merge (`merge`: `$identify` with `$anon_distinct_id`, `$create_alias` with `alias`; the
 *    callers have already refused PostHog's illegal ids): neither id has a person → one person with
 *    both ids; one has → the other id joins it; both the same person → nothing; different persons →
 *    the `other` person is merged into the `into` person only when it is not identified yet
 *    (PostHog's `cannot_merge_already_identified` refusal otherwise): properties
 *    `{...other, ...into}`, the other's distinct ids move, the other person is deleted, created_at
 *    the earlier. A merge that happens or is refused marks the resulting person identified.
 *    `identify` without `merge` (PostHog: a plain `$identify`) marks the person identified.
 * 2. The person of `distinct_id` is created if missing (properties from this event's updates).
 * 3. `$set_once` (keys not present), then `$set` (keys whose value differs), then `$unset` (keys
 *    present are removed), as person-update.ts orders them.
 * Persons are written once at the end (only those that changed).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toIso } from '../values.js';

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

/** Ids per `IN (…)` list, well under SQLite's variable limit. */
const IDS_PER_QUERY = 500;

interface LoadedPerson {
  properties: Record<string, unknown>;
  is_identified: boolean;
  created_at: string;
  dirty: boolean;
}

/**
 * Applies `updates` in order to the persons of team `teamId` (module doc). Returns the number of
 * persons created. Run it inside a transaction: a merge is several statements.
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
  for (let i = 0; i < all.length; i += IDS_PER_QUERY) {
    const rows = await db
      .selectFrom('person_distinct_ids')
      .select(['distinct_id', 'person_id'])
      .where('team_id', '=', teamId)
      .where('distinct_id', 'in', all.slice(i, i + IDS_PER_QUERY))
      .execute();
    for (const r of rows) personOf.set(r.distinct_id, r.person_id);
  }
  const persons = new Map<number, LoadedPerson>();
  const personIds = [...new Set(personOf.values())];
  for (let i = 0; i < personIds.length; i += IDS_PER_QUERY) {
    const rows = await db
      .selectFrom('persons')
      .select(['id', 'properties', 'is_identified', 'created_at'])
      .where('id', 'in', personIds.slice(i, i + IDS_PER_QUERY))
      .execute();
    for (const r of rows) {
      persons.set(r.id, { properties: fromJson<Record<string, unknown>>(r.properties) ?? {}, is_identified: toBool(r.is_identified), created_at: toIso(r.created_at), dirty: false });
    }
  }
  let created = 0;
  const link = async (distinctId: string, personId: number): Promise<void> => {
    await db.insertInto('person_distinct_ids').values({ team_id: teamId, distinct_id: distinctId, person_id: personId }).execute();
    personOf.set(distinctId, personId);
  };
  const ensure = async (distinctId: string): Promise<number> => {
    const known = personOf.get(distinctId);
    if (known !== undefined) return known;
    const createdAt = nowIso();
    const row = await db
      .insertInto('persons')
      .values({ uuid: randomUUID(), team_id: teamId, properties: jsonValue({}), is_identified: boolValue(false), created_at: createdAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    await link(distinctId, row.id);
    persons.set(row.id, { properties: {}, is_identified: false, created_at: createdAt, dirty: true });
    created += 1;
    return row.id;
  };
  /** Moves every distinct id of `fromId` to `intoId` and deletes `fromId` (PostHog's mergePeople). */
  const mergeInto = async (fromId: number, intoId: number): Promise<void> => {
    const from = persons.get(fromId)!;
    const into = persons.get(intoId)!;
    into.properties = { ...from.properties, ...into.properties };
    if (from.created_at < into.created_at) into.created_at = from.created_at;
    into.dirty = true;
    await db.updateTable('person_distinct_ids').set({ person_id: intoId }).where('team_id', '=', teamId).where('person_id', '=', fromId).execute();
    for (const [d, p] of personOf) if (p === fromId) personOf.set(d, intoId);
    await db.deleteFrom('persons').where('id', '=', fromId).execute();
    persons.delete(fromId);
  };

  for (const u of updates) {
    const other = otherIdOf(u);
    let identified = u.identify !== undefined;
    if (other !== undefined && other !== u.distinct_id) {
      const intoPerson = personOf.get(u.distinct_id);
      const otherPerson = personOf.get(other);
      if (intoPerson === undefined && otherPerson === undefined) await link(other, await ensure(u.distinct_id));
      else if (intoPerson === undefined) await link(u.distinct_id, otherPerson!);
      else if (otherPerson === undefined) await link(other, intoPerson);
      else if (otherPerson !== intoPerson && !persons.get(otherPerson)!.is_identified) await mergeInto(otherPerson, intoPerson);
      identified = true;
    }
    const person = persons.get(await ensure(u.distinct_id))!;
    if (identified && !person.is_identified) {
      person.is_identified = true;
      person.dirty = true;
    }
    for (const [k, v] of Object.entries(u.set_once ?? {})) {
      if (!(k in person.properties)) {
        person.properties[k] = v;
        person.dirty = true;
      }
    }
    for (const [k, v] of Object.entries(u.set ?? {})) {
      if (JSON.stringify(person.properties[k]) !== JSON.stringify(v)) {
        person.properties[k] = v;
        person.dirty = true;
      }
    }
    for (const k of u.unset ?? []) {
      if (k in person.properties) {
        delete person.properties[k];
        person.dirty = true;
      }
    }
  }
  for (const [id, p] of persons) {
    if (!p.dirty) continue;
    await db
      .updateTable('persons')
      .set({ properties: jsonValue(p.properties), is_identified: boolValue(p.is_identified), created_at: p.created_at })
      .where('id', '=', id)
      .execute();
  }
  return created;
}

/** The id an update merges into its person: `$identify`'s `$anon_distinct_id` or `$create_alias`'s `alias`. */
function otherIdOf(u: PersonUpdate): string | undefined {
  return u.identify?.anon_distinct_id || u.alias || undefined;
}
