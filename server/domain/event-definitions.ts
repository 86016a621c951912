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
 */
import { createHash } from 'node:crypto';
import type { components } from '../../generated/api.js';
import { notFound, validationError } from './errors.js';
import { echo } from './echo.js';
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { eventsStoreOf, type DefinitionOrder, type EventDefinitionRow, type EventsStore } from '../storage/events/index.js';
import { DEFAULT_LIMIT, limitOffsetLinks } from './pagination.js';
import { formatTimestamp } from '../storage/timestamps.js';

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

/** A definition on the wire (posthog/api/event_definition.py `EventDefinitionSerializer`, non-EE). */
export function definitionToWire(teamId: number, r: EventDefinitionRow): EventDefinitionWire {
  return {
    id: eventDefinitionId(teamId, r.name),
    name: r.name,
    created_at: r.first_seen,
    last_seen_at: r.last_seen,
    last_updated_at: r.first_seen,
    tags: [],
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: null,
    post_to_slack: false,
    volume_30_day: r.volume,
    query_usage_30_day: null,
  };
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
    store: Store,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.events = eventsStoreOf(store);
  }

  /**
   * A page of the team's event definitions in PostHog's envelope `{count, next, previous,
   * results}` (DRF LimitOffsetPagination: absolute links keeping every other query parameter).
   */
  async list(team: Team, params: EventDefinitionListParams, url: URL): Promise<EventDefinitionPageWire> {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const offset = params.offset ?? 0;
    const type = params.event_type ?? 'event';
    const filters = {
      teamId: team.id,
      terms: (params.search ?? '').split(/\s+/).filter(Boolean),
      kind: type === 'event_custom' ? 'custom' : type === 'event_posthog' ? 'posthog' : type === 'action_event' ? 'none' : 'all',
      excluded: parseExcluded(params.excluded_properties),
    } as const;
    const since = formatTimestamp(new Date(this.clock().getTime() - VOLUME_WINDOW_MS));
    const [count, rows] = await Promise.all([
      this.events.countEventDefinitions(filters),
      this.events.eventDefinitions({ ...filters, since, order: orderOf(params.ordering), offset, limit }),
    ]);
    return { count, ...limitOffsetLinks(url, limit, offset, count), results: rows.map((r) => definitionToWire(team.id, r)) };
  }

  /**
   * The definition of the event named exactly `name` (PostHog's `EventDefinitionViewSet.by_name`,
   * which `@posthog/cli` reads before it edits one), in the list's shape. Throws 400 without a
   * name, 404 when the project has no event of that name.
   */
  async byName(team: Team, name: string | undefined): Promise<EventDefinitionWire> {
    if (name === undefined || name === '') throw validationError('This field is required.', 'name', 'required');
    const since = formatTimestamp(new Date(this.clock().getTime() - VOLUME_WINDOW_MS));
    const [row] = await this.events.eventDefinitions({
      teamId: team.id,
      terms: [],
      kind: 'all',
      excluded: [],
      exact: name,
      since,
      order: [{ key: 'name', desc: false }],
      offset: 0,
      limit: 1,
    });
    if (!row) throw notFound();
    return definitionToWire(team.id, row);
  }
}
