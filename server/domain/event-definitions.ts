/**
 * Event definitions: the event names a project has seen, derived from the events store (there is
 * no table of definitions: server/storage/events/definitions.ts groups the project's
 * events by name). Rules from posthog/api/event_definition.py (`EventDefinitionViewSet`,
 * `EventDefinitionSerializer`: query parameters `search`, `event_type`, `excluded_properties`,
 * `ordering`, default order `last_seen_at::date desc nulls last, name`; DRF limit/offset paging)
 * and posthog/filters.py (`term_search_filter_sql`: every whitespace-separated term must be in
 * the name). No HTTP here: methods take validated query values, return wire-shaped objects, and
 * throw `ApiError` 400.
 *
 * Derived values: `id` is a UUID (version 5) of the project id and the name, so the same event
 * name keeps the same id; `created_at` is the first event's `timestamp` and `last_seen_at` the
 * latest one's (PostHog records the ingestion moments instead, which for live data are nearly the
 * same); `volume_30_day` counts the events of the last 30 days (PostHog's serializer dropped the
 * field in 2025; it is kept here because clients still read it); `query_usage_30_day` is null (no
 * queries are counted).
 *
 * Stored values (table `event_definitions`, PostHog's Enterprise serializer
 * ee/api/ee_event_definition.py): description, tags, verification, hidden, owner, `post_to_slack`,
 * `default_columns` (./definition-marks.ts for the rules), written by `create` (a declared name,
 * listed before any event of it: no `created_at`… from events, its `last_seen_at` null, sorted
 * after every seen name whatever the direction) and `update`.
 */
import { createHash } from 'node:crypto';
import type { components } from '../../generated/api.js';
import { notFound, validationError } from './errors.js';
import { echo } from './echo.js';
import type { Store } from '../storage/db.js';
import { AccountsRepository, type Team } from '../storage/repositories/accounts.js';
import { DefinitionsRepository, type EventDefinitionMeta } from '../storage/repositories/definitions.js';
import {
  eventsStoreOf,
  type DefinitionOrder,
  type EventDefinitionFilters,
  type EventDefinitionRow,
  type EventsStore,
} from '../storage/events/index.js';
import { DEFAULT_LIMIT, limitOffsetLinks } from './pagination.js';
import { formatTimestamp } from '../storage/timestamps.js';
import { applyMarks, marksWire, NO_MARKS, UserBasics, type MarksPatch } from './definition-marks.js';

type Schemas = components['schemas'];
/** An event definition on the wire (schema `EventDefinition`). */
export type EventDefinitionWire = Schemas['EventDefinition'];
/** A page of them (schema `PaginatedEventDefinitionList`). */
export type EventDefinitionPageWire = Schemas['PaginatedEventDefinitionList'];

/** The namespace of the definitions' version-5 UUIDs (fixed: changing it changes every id). */
const ID_NAMESPACE = '6b1f1b9e-5a3c-4c2e-9d7a-0e4f3c2b1a90';
/** At most this many names in `excluded_properties`. */
const MAX_EXCLUDED = 1_000;
/** `volume_30_day`'s window, ms. */
const VOLUME_WINDOW_MS = 30 * 86_400_000;
/** The most seen names read at once where declared names are merged in, or a definition is found by id. */
const ALL_NAMES = 100_000;

/** PostHog's `event_type` values (posthog/api/event_definition.py `EventDefinitionType`). */
export type EventDefinitionType = 'event' | 'event_custom' | 'event_posthog' | 'action_event' | 'all';
/** PostHog's `ordering` values (a `-` prefix sorts descending). */
export const ORDERINGS = ['name', '-name', 'last_seen_at', '-last_seen_at', 'last_seen_at::date', '-last_seen_at::date'] as const;

/** Query parameters of the list, as validated by the spec. */
export interface EventDefinitionListParams {
  search?: string | undefined;
  event_type?: EventDefinitionType | undefined;
  excluded_properties?: string | undefined;
  exclude_hidden?: boolean | undefined;
  ordering?: (typeof ORDERINGS)[number][] | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

/** RFC 4122 version-5 UUID of `name` in the namespace `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The stable id of a project's definition of `name`. */
export function eventDefinitionId(teamId: number, name: string): string {
  return uuidV5(ID_NAMESPACE, `${teamId}\n${name}`);
}

/** A seen name's derived values, or a declared name's (no event yet). */
type Derived = Pick<EventDefinitionRow, 'name' | 'volume'> & { first_seen: string | null; last_seen: string | null };

/** The body of a create or an update (schema `EventDefinitionWrite`). */
export type EventDefinitionWrite = MarksPatch & {
  name?: string | undefined;
  owner?: number | null | undefined;
  post_to_slack?: boolean | undefined;
  default_columns?: string[] | undefined;
};

/**
 * A definition on the wire: posthog/api/event_definition.py `EventDefinitionSerializer`'s fields
 * with the Enterprise serializer's (ee/api/ee_event_definition.py) from what is stored, if anything.
 */
async function definitionToWire(
  teamId: number,
  r: Derived,
  meta: EventDefinitionMeta | undefined,
  users: UserBasics,
): Promise<EventDefinitionWire> {
  const marks = await marksWire(meta ?? NO_MARKS, users);
  return {
    id: eventDefinitionId(teamId, r.name),
    name: r.name,
    owner: await users.of(meta?.owner_id ?? null),
    ...marks,
    created_at: r.first_seen ?? meta?.created_at ?? null,
    last_seen_at: r.last_seen,
    last_updated_at: marks.updated_at ?? r.first_seen ?? meta?.created_at ?? null,
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: null,
    post_to_slack: meta?.post_to_slack ?? false,
    default_columns: meta?.default_columns ?? [],
    volume_30_day: r.volume,
    query_usage_30_day: null,
  };
}

/** Names in bytewise (UTF-8) order, as the events stores sort them. */
function compareNames(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The order of `order` over derived values, ties by name; no `last_seen` sorts last either way. */
function comparator(order: DefinitionOrder[]): (a: Derived, b: Derived) => number {
  return (a, b) => {
    for (const o of order) {
      if (o.key === 'name') {
        const c = compareNames(a.name, b.name);
        if (c) return o.desc ? -c : c;
        continue;
      }
      const [x, y] = o.key === 'last_seen_date' ? [a.last_seen?.slice(0, 10), b.last_seen?.slice(0, 10)] : [a.last_seen, b.last_seen];
      if (x === y) continue;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : 1) * (o.desc ? -1 : 1);
    }
    return compareNames(a.name, b.name);
  };
}

/** Whether a declared name passes the list's filters (as the events stores apply them to seen names). */
function passes(name: string, f: EventDefinitionFilters): boolean {
  if (f.kind === 'none' || (f.kind === 'custom' && name.startsWith('$')) || (f.kind === 'posthog' && !name.startsWith('$'))) return false;
  const lower = name.toLowerCase();
  return !f.excluded.includes(name) && f.terms.every((t) => lower.includes(t.toLowerCase())) && (f.exact === undefined || f.exact === name);
}

/** `excluded_properties`: a JSON array of names; 400 (attr `excluded_properties`) for anything else. */
function parseExcluded(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw validationError(`excluded_properties must be a JSON array of event names, got ${echo(raw, 100)}.`, 'excluded_properties');
  }
  if (!Array.isArray(json) || !json.every((n) => typeof n === 'string')) {
    throw validationError('excluded_properties must be a JSON array of event names (strings).', 'excluded_properties');
  }
  if (json.length > MAX_EXCLUDED) throw validationError(`excluded_properties holds at most ${MAX_EXCLUDED} names.`, 'excluded_properties');
  return json as string[];
}

/** The sort keys of `ordering` (default PostHog's: last-seen date, newest first, then name). */
function orderOf(ordering: EventDefinitionListParams['ordering']): DefinitionOrder[] {
  if (!ordering?.length)
    return [
      { key: 'last_seen_date', desc: true },
      { key: 'name', desc: false },
    ];
  return ordering.map((o) => {
    const desc = o.startsWith('-');
    const field = desc ? o.slice(1) : o;
    return { key: field === 'name' ? 'name' : field === 'last_seen_at' ? 'last_seen_at' : 'last_seen_date', desc };
  });
}

/** Event definitions operations of one store. */
export class EventDefinitionsService {
  private readonly events: EventsStore;

  constructor(
    private readonly store: Store,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.events = eventsStoreOf(store);
  }

  private since(): string {
    return formatTimestamp(new Date(this.clock().getTime() - VOLUME_WINDOW_MS));
  }

  /**
   * A page of the team's event definitions in PostHog's envelope `{count, next, previous,
   * results}` (DRF LimitOffsetPagination: absolute links keeping every other query parameter).
   * `exclude_hidden` leaves out the hidden ones; declared names without events are merged in.
   */
  async list(team: Team, params: EventDefinitionListParams, url: URL): Promise<EventDefinitionPageWire> {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const offset = params.offset ?? 0;
    const type = params.event_type ?? 'event';
    const metas = await new DefinitionsRepository(this.store.db).eventDefinitions(team.id);
    const hidden = params.exclude_hidden === true ? metas.filter((m) => m.hidden).map((m) => m.name) : [];
    const filters: EventDefinitionFilters = {
      teamId: team.id,
      terms: (params.search ?? '').split(/\s+/).filter(Boolean),
      kind: type === 'event_custom' ? 'custom' : type === 'event_posthog' ? 'posthog' : type === 'action_event' ? 'none' : 'all',
      excluded: [...parseExcluded(params.excluded_properties), ...hidden],
    };
    const order = orderOf(params.ordering);
    const declared = metas.filter((m) => m.declared && passes(m.name, filters));
    let count: number;
    let page: Derived[];
    if (!declared.length) {
      [count, page] = await Promise.all([
        this.events.countEventDefinitions(filters),
        this.events.eventDefinitions({ ...filters, since: this.since(), order, offset, limit }),
      ]);
    } else {
      const seen = await this.events.eventDefinitions({ ...filters, since: this.since(), order, offset: 0, limit: ALL_NAMES });
      const names = new Set(seen.map((r) => r.name));
      const unseen: Derived[] = declared
        .filter((m) => !names.has(m.name))
        .map((m) => ({ name: m.name, first_seen: null, last_seen: null, volume: 0 }));
      const all = mergeSorted(seen, unseen, comparator(order));
      count = all.length;
      page = all.slice(offset, offset + limit);
    }
    const byName = new Map(metas.map((m) => [m.name, m]));
    const users = new UserBasics(this.store);
    const results = await Promise.all(page.map((r) => definitionToWire(team.id, r, byName.get(r.name), users)));
    return { count, ...limitOffsetLinks(url, limit, offset, count), results };
  }

  /** The derived values of the seen name `name`, or undefined when no event has it. */
  private async seen(teamId: number, name: string): Promise<EventDefinitionRow | undefined> {
    const [row] = await this.events.eventDefinitions({
      teamId,
      terms: [],
      kind: 'all',
      excluded: [],
      exact: name,
      since: this.since(),
      order: [{ key: 'name', desc: false }],
      offset: 0,
      limit: 1,
    });
    return row;
  }

  /** The wire form of the definition of `name` (seen or declared), or undefined for neither. */
  private async byNameOrNone(team: Team, name: string): Promise<EventDefinitionWire | undefined> {
    const [row, meta] = await Promise.all([
      this.seen(team.id, name),
      new DefinitionsRepository(this.store.db).eventDefinition(team.id, eventDefinitionId(team.id, name)),
    ]);
    if (!row && !meta?.declared) return undefined;
    return definitionToWire(team.id, row ?? { name, first_seen: null, last_seen: null, volume: 0 }, meta, new UserBasics(this.store));
  }

  /**
   * The definition of the event named exactly `name` (PostHog's `EventDefinitionViewSet.by_name`,
   * which `@posthog/cli` reads before it edits one), in the list's shape. Throws 400 without a
   * name, 404 when the project has no event of that name and none was declared.
   */
  async byName(team: Team, name: string | undefined): Promise<EventDefinitionWire> {
    if (name === undefined || name === '') throw validationError('This field is required.', 'name', 'required');
    const found = await this.byNameOrNone(team, name);
    if (!found) throw notFound();
    return found;
  }

  /** The name of the definition with this id (stored, or derived from a seen name); 404 for none. */
  private async nameOf(team: Team, id: string): Promise<string> {
    const key = id.toLowerCase();
    const meta = await new DefinitionsRepository(this.store.db).eventDefinition(team.id, key);
    if (meta) return meta.name;
    const rows = await this.events.eventDefinitions({
      teamId: team.id,
      terms: [],
      kind: 'all',
      excluded: [],
      since: this.since(),
      order: [{ key: 'name', desc: false }],
      offset: 0,
      limit: ALL_NAMES,
    });
    const row = rows.find((r) => eventDefinitionId(team.id, r.name) === key);
    if (!row) throw notFound();
    return row.name;
  }

  /** The definition with this id (PostHog's retrieve), in the list's shape; 404 for none. */
  async retrieve(team: Team, id: string): Promise<EventDefinitionWire> {
    const found = await this.byNameOrNone(team, await this.nameOf(team, id));
    if (!found) throw notFound();
    return found;
  }

  /** 400 (`does_not_exist`, attr `owner`) unless `owner` is null or a member of the team's organization. */
  private async checkOwner(team: Team, owner: number | null | undefined): Promise<void> {
    if (owner === undefined || owner === null) return;
    const member = await new AccountsRepository(this.store.db).findMembership(team.organization_id, owner);
    if (!member) throw validationError(`Invalid pk "${owner}" - object does not exist.`, 'owner', 'does_not_exist');
  }

  /**
   * Declares the event `body.name` (PostHog's create, ee/api/ee_event_definition.py): stored with
   * its marks by the caller `userId`, listed from now on; 201 with the definition. Throws 400 for a
   * name the project has seen or declared already (attr `name`), hidden and verified at once, or
   * an owner outside the organization.
   */
  async create(team: Team, userId: number, body: EventDefinitionWrite): Promise<EventDefinitionWire> {
    const name = body.name ?? '';
    if (name === '') throw validationError('This field is required.', 'name', 'required');
    const now = new Date().toISOString();
    const marks = applyMarks(NO_MARKS, body, userId, now, 'event');
    await this.checkOwner(team, body.owner);
    const exists = () => validationError(`Event definition with name '${name}' already exists`, 'name');
    if (await this.seen(team.id, name)) throw exists();
    const meta: EventDefinitionMeta = {
      ...marks,
      id: eventDefinitionId(team.id, name),
      team_id: team.id,
      name,
      declared: true,
      owner_id: body.owner ?? null,
      post_to_slack: body.post_to_slack ?? false,
      default_columns: body.default_columns ?? [],
      created_at: now,
    };
    if (!(await new DefinitionsRepository(this.store.db).createEventDefinition(meta))) throw exists();
    return definitionToWire(team.id, { name, first_seen: null, last_seen: null, volume: 0 }, meta, new UserBasics(this.store));
  }

  /**
   * Edits the definition with this id (PostHog's partial update; `name` cannot change): the marks
   * by the rules of ./definition-marks.ts, `owner`, `post_to_slack`, `default_columns`. Throws 404
   * for an id of none (PostHog answers 500), 400 for hidden and verified at once or a bad owner.
   */
  async update(team: Team, userId: number, id: string, body: EventDefinitionWrite): Promise<EventDefinitionWire> {
    const name = await this.nameOf(team, id);
    await this.checkOwner(team, body.owner);
    const now = new Date().toISOString();
    await this.store.db.transaction().execute(async (trx) => {
      const repo = new DefinitionsRepository(trx);
      const prev = await repo.eventDefinition(team.id, eventDefinitionId(team.id, name));
      await repo.saveEventDefinition({
        ...applyMarks(prev ?? NO_MARKS, body, userId, now, 'event'),
        id: eventDefinitionId(team.id, name),
        team_id: team.id,
        name,
        declared: prev?.declared ?? false,
        owner_id: body.owner !== undefined ? body.owner : (prev?.owner_id ?? null),
        post_to_slack: body.post_to_slack ?? prev?.post_to_slack ?? false,
        default_columns: body.default_columns ?? prev?.default_columns ?? [],
        created_at: prev?.created_at ?? now,
      });
    });
    const found = await this.byNameOrNone(team, name);
    if (!found) throw notFound();
    return found;
  }
}

/** `a` and `b`, each sorted by `cmp`, as one sorted list (`a`'s first on ties: `a` keeps its order). */
function mergeSorted<T>(a: readonly T[], b: readonly T[], cmp: (x: T, y: T) => number): T[] {
  const sortedB = [...b].sort(cmp);
  const out: T[] = [];
  let j = 0;
  for (const x of a) {
    while (j < sortedB.length && cmp(sortedB[j]!, x) < 0) out.push(sortedB[j++]!);
    out.push(x);
  }
  return out.concat(sortedB.slice(j));
}
