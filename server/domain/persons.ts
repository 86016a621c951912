/**
 * Persons: the list with PostHog's filters and limit/offset paging, and one person by its integer
 * id or its UUID, read from the persons the events store keeps (server/storage/repositories/
 * persons.ts). Rules from posthog/api/person.py (`PersonViewSet.list`, `safely_get_object`,
 * `get_person_name_helper`, `PersonSerializer`), posthog/queries/person_query.py (`search`,
 * `distinct_id`, `email`, order `created_at desc, id desc`) and posthog/queries/actor_base_query.py
 * (`serialize_people`: the shape of list rows). No HTTP here: methods take validated query values,
 * return wire-shaped objects, and throw `ApiError` 400/404.
 *
 * Two shapes, as PostHog answers them: list rows are PostHog's `SerializedPerson` (`type:
 * "person"`, `id` = the UUID, `is_identified`, `matched_recordings`, `value_at_data_point`);
 * retrieve answers `PersonSerializer`'s shape (`id` = the integer id, no `is_identified`).
 */
import type { components } from '../../generated/api.js';
import { notFound, validationError } from './errors.js';
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { PersonsRepository, type PersonRecord } from '../storage/repositories/persons.js';
import { parsePropertiesParam } from './event-filters.js';
import { DEFAULT_LIMIT, withQuery } from './pagination.js';
import { normalizeUuid } from './uuids.js';

type Schemas = components['schemas'];
/** A person as retrieve answers it (schema `Person`). */
export type PersonWire = Schemas['Person'];
/** A person as a list row (schema `SerializedPerson`). */
export type SerializedPersonWire = Schemas['SerializedPerson'];
/** A page of the list (schema `PaginatedPersonList`). */
export type PersonPageWire = Schemas['PaginatedPersonList'];

/**
 * The person properties a display name is taken from, first non-empty wins (posthog/api/person.py
 * PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES; a project's `person_display_name_properties` is not kept here).
 */
export const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'] as const;

/** PostHog's anonymous distinct id: five dash-separated runs of `[a-z0-9]` (posthog/utils.py `is_anonymous_id`). */
const ANONYMOUS_ID = /^([a-z0-9]+-){4}([a-z0-9]+)$/;

/** The largest integer id a person can have (32-bit serial): a greater id is of no person. */
const MAX_ID = 2_147_483_647;

/** Query parameters of the list, as validated by the spec. */
export interface PersonListParams {
  distinct_id?: string | undefined;
  email?: string | undefined;
  search?: string | undefined;
  properties?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  /** present (any value) to add `count` to the page, as PostHog's undocumented `include_total` */
  include_total?: string | undefined;
}

/** Python's truthiness of a JSON value (what `if person_properties.get(p)` tests). */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** `ids` with non-anonymous ids first, each group in its own order (Python's stable `sorted(key=is_anonymous_id)`). */
export function identifiedFirst(ids: readonly string[]): string[] {
  return [...ids.filter((d) => !ANONYMOUS_ID.test(d)), ...ids.filter((d) => ANONYMOUS_ID.test(d))];
}

/**
 * A person's display name (posthog/api/person.py `get_person_name_helper`): the first non-empty
 * display-name property (non-strings as JSON text), else the first distinct id preferring
 * non-anonymous ones, else the integer id as text.
 */
export function personName(p: Pick<PersonRecord, 'id' | 'properties' | 'distinct_ids'>): string {
  for (const key of DISPLAY_NAME_PROPERTIES) {
    const v = p.properties[key];
    if (truthy(v)) return typeof v === 'string' ? v : JSON.stringify(v);
  }
  return identifiedFirst(p.distinct_ids)[0] ?? String(p.id);
}

/** A list row (posthog/queries/actor_base_query.py `serialize_people`). */
export function serializedPerson(p: PersonRecord): SerializedPersonWire {
  return {
    type: 'person',
    id: p.uuid,
    uuid: p.uuid,
    created_at: p.created_at,
    properties: p.properties,
    is_identified: p.is_identified,
    name: personName(p),
    distinct_ids: identifiedFirst(p.distinct_ids),
    matched_recordings: [],
    value_at_data_point: null,
  };
}

/** The retrieve shape (posthog/api/person.py `PersonSerializer`). */
export function personToWire(p: PersonRecord): PersonWire {
  return {
    id: p.id,
    name: personName(p),
    distinct_ids: identifiedFirst(p.distinct_ids),
    properties: p.properties,
    created_at: p.created_at,
    uuid: p.uuid,
  };
}

/**
 * A person id as PostHog's `get_pk_or_uuid` reads it: a UUID (with or without dashes) first, else
 * an integer; anything else answers 400 with PostHog's message (attr null, code `invalid`).
 */
export function parsePersonKey(id: string): { id: number } | { uuid: string } | undefined {
  const uuid = normalizeUuid(id);
  if (uuid) return { uuid };
  if (/^[0-9]+$/.test(id)) return Number(id) <= MAX_ID ? { id: Number(id) } : undefined;
  throw validationError(
    `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${id} instead.`,
    null,
    'invalid',
  );
}

/** Persons operations of one store. */
export class PersonsService {
  private readonly repo: PersonsRepository;

  constructor(
    store: Store,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.repo = new PersonsRepository(store.db);
  }

  /**
   * A page of the team's persons, newest first. `next` (absolute, every other query parameter
   * kept, `limit` and `offset` set) when more persons follow; `previous` when `offset` > 0;
   * `count` only when `include_total` is present. 400 (attr `properties`) for a filter PostHog
   * would not run on persons (see event-filters.ts, here with `type` `person` only and by default).
   */
  async list(team: Team, params: PersonListParams, url: URL): Promise<PersonPageWire> {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const offset = params.offset ?? 0;
    const properties =
      params.properties !== undefined
        ? parsePropertiesParam(params.properties, { now: this.clock(), timezone: team.timezone, defaultType: 'person', types: ['person'] })
        : undefined;
    const search = params.search ? { text: params.search, uuid: normalizeUuid(params.search) } : undefined;
    const filters = { teamId: team.id, distinctId: params.distinct_id || undefined, email: params.email || undefined, search, properties };
    const rows = await this.repo.list({ ...filters, offset, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const next = rows.length > limit ? withQuery(url, { limit, offset: offset + limit }) : null;
    const previous = offset > 0 ? withQuery(url, { limit, offset: Math.max(0, offset - limit) }) : null;
    const body: PersonPageWire = { next, previous, results: page.map(serializedPerson) };
    if (params.include_total !== undefined) body.count = await this.repo.count(filters);
    return body;
  }

  /** One person by integer id or UUID: 400 for any other id (see `parsePersonKey`), 404 when the team has none such. */
  async retrieve(team: Team, id: string): Promise<PersonWire> {
    const key = parsePersonKey(id);
    const person = key && (await this.repo.find(team.id, key));
    if (!person) throw notFound();
    return personToWire(person);
  }
}
