/**
 * The persons API besides the list and retrieve (posthog/api/person.py `PersonViewSet`, as
 * `@posthog/cli`'s persons tools call it): property values, a person's cohorts, setting and
 * removing a person's properties, and deleting persons.
 *
 * - `values`: PostHog's 2025 shape `{results: [{name, count}], refreshing: false}`, at most 20
 *   values, most persons first (`PropertyValuesQueryRunner`); `key=distinct_id` the distinct ids
 *   (count 1 each); no key, or a `$virt…` one: no results.
 * - `cohorts`: envapi has no cohorts, so none for a person of the project; 404 otherwise.
 * - `updateProperty` / `deleteProperty`: PostHog captures a `$set` event (`{"$set": {key: value}}`)
 *   or a `$delete_person_property` event (`{"$unset": [keys]}`) for the person's first distinct
 *   id, and ingestion applies it; envapi stores the same event through its write path
 *   (`PersonWrites`, server/ingest/person-writes.ts) before it answers.
 * - `bulkDelete`: PostHog's checks and summary; persons (and, asked, their events) deleted at once.
 *
 * No HTTP here: methods take validated bodies, return wire-shaped objects, throw `ApiError`.
 */
import { ApiError, notFound, validationError } from './errors.js';
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { PersonsRepository, type PersonRecord } from '../storage/repositories/persons.js';
import { parsePersonKey } from './persons.js';
import { normalizeUuid } from './uuids.js';

/** An event the API captures on a person's behalf. */
export interface PersonEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
}

/** Where the person writes go (implemented over the store by server/ingest/person-writes.ts). */
export interface PersonWrites {
  /** stores the events and applies their person updates (one transaction) */
  capture(teamId: number, events: readonly PersonEvent[]): Promise<void>;
  /** deletes the persons (`persons`) and their events (`events`); at least one is true */
  deletePersons(
    teamId: number,
    persons: readonly { id: number; distinct_ids: string[] }[],
    opts: { persons: boolean; events: boolean },
  ): Promise<void>;
}

/** The most values `values` answers (PostHog's). */
const VALUES_LIMIT = 20;
/** The most ids or distinct ids one bulk delete takes (PostHog's). */
const BULK_LIMIT = 1000;

/** PostHog's hand-built 400 for a missing field of `update_property`, `code` and `detail` swapped as it sends them. */
function fieldRequired(attr: 'key' | 'value'): ApiError {
  return new ApiError(400, { type: 'validation_error', code: 'This field is required.', detail: 'required', attr });
}

/** The persons actions of one store. */
export class PersonActionsService {
  private readonly repo: PersonsRepository;

  constructor(
    store: Store,
    private readonly writes: PersonWrites | undefined,
  ) {
    this.repo = new PersonsRepository(store.db);
  }

  private writer(): PersonWrites {
    if (!this.writes) throw new Error('the person writes are not wired (createServices needs personWrites)');
    return this.writes;
  }

  /** The person `rawId` names (integer id or UUID): 400 for another id, 404 for none of the team. */
  private async person(team: Team, rawId: string): Promise<PersonRecord> {
    const key = parsePersonKey(rawId);
    const person = key && (await this.repo.find(team.id, key));
    if (!person) throw notFound();
    return person;
  }

  /** Values of person property `key` (module doc). */
  async values(team: Team, key: string | undefined, value: string | undefined) {
    if (key === undefined || key === '' || key.startsWith('$virt')) return { results: [], refreshing: false };
    const results =
      key === 'distinct_id'
        ? (await this.repo.distinctIdValues(team.id, value, VALUES_LIMIT)).map((name) => ({ name, count: 1 }))
        : (await this.repo.propertyValues(team.id, key, value, VALUES_LIMIT)).map((r) => ({ name: r.value, count: r.count }));
    return { results, refreshing: false };
  }

  /** The cohorts of person `personId` (none: envapi has no cohorts). 400 without an id or for a malformed one, 404 for none of the team. */
  async cohorts(team: Team, personId: string | undefined) {
    if (personId === undefined || personId === '') throw validationError('This field is required.', 'person_id', 'required');
    await this.person(team, personId);
    return { results: [] as never[] };
  }

  /** Sets `key` to `value` on the person (module doc). */
  async updateProperty(team: Team, rawId: string, body: { key?: unknown; value?: unknown }): Promise<void> {
    if (!('value' in body)) throw fieldRequired('value');
    if (body.key === undefined || body.key === null) throw fieldRequired('key');
    if (typeof body.key !== 'string' || body.key === '') throw validationError('Not a valid string.', 'key', 'invalid');
    const person = await this.person(team, rawId);
    const distinctId = person.distinct_ids[0];
    if (distinctId === undefined) throw notFound();
    await this.writer().capture(team.id, [{ event: '$set', distinct_id: distinctId, properties: { $set: { [body.key]: body.value } } }]);
  }

  /** Removes the properties `$unset` names from the person (module doc). */
  async deleteProperty(team: Team, rawId: string, body: { $unset?: unknown }): Promise<{ success: true }> {
    const raw = body.$unset;
    const keys = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : undefined;
    if (keys === undefined || keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === ''))
      throw validationError('This field is required.', '$unset', 'required');
    const person = await this.person(team, rawId);
    const distinctId = person.distinct_ids[0];
    if (distinctId === undefined) throw notFound();
    await this.writer().capture(team.id, [
      { event: '$delete_person_property', distinct_id: distinctId, properties: { $unset: keys as string[] } },
    ]);
    return { success: true };
  }

  /** The persons of these distinct ids, each once (several distinct ids may name one person). */
  private async personsOfDistinctIds(teamId: number, distinctIds: string[]): Promise<PersonRecord[]> {
    const seen = new Set<number>();
    const persons: PersonRecord[] = [];
    for (const person of (await this.repo.findByDistinctIds(teamId, distinctIds)).values()) {
      if (seen.has(person.id)) continue;
      seen.add(person.id);
      persons.push(person);
    }
    return persons;
  }

  /** Deletes persons by UUID or distinct id (module doc); PostHog's 400s for the lists. */
  async bulkDelete(
    team: Team,
    body: { ids?: string[]; distinct_ids?: string[]; delete_events?: boolean; delete_recordings?: boolean; keep_person?: boolean },
  ) {
    const ids = body.ids ?? [];
    const distinctIds = body.distinct_ids ?? [];
    if (ids.length && distinctIds.length) throw validationError('You must provide either distinct_ids or ids, not both');
    if (distinctIds.length > BULK_LIMIT) throw validationError(`You can only pass ${BULK_LIMIT} distinct_ids in one call`);
    if (ids.length > BULK_LIMIT) throw validationError(`You can only pass ${BULK_LIMIT} ids in one call`);
    if (!ids.length && !distinctIds.length) throw validationError('You need to specify either distinct_ids or ids');
    const found = ids.length
      ? await this.repo.findByUuids(
          team.id,
          ids.map((id) => normalizeUuid(id)).filter((u): u is string => u !== undefined),
        )
      : await this.personsOfDistinctIds(team.id, distinctIds);
    const keep = body.keep_person === true;
    const events = body.delete_events === true;
    if (found.length && (!keep || events)) await this.writer().deletePersons(team.id, found, { persons: !keep, events });
    return {
      persons_found: found.length,
      persons_deleted: keep ? 0 : found.length,
      events_queued_for_deletion: events && found.length > 0,
      recordings_queued_for_deletion: false,
      deletion_errors: [] as { person_uuid: string }[],
    };
  }
}
