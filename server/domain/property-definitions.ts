/**
 * Property definitions (`GET /api/projects/{project_id}/property_definitions/` and one by id,
 * PostHog's `PropertyDefinitionViewSet`, posthog/taxonomy/property_definition_api.py;
 * `@posthog/cli`'s `property-definition-update` looks them up): the event or person properties the
 * project has, derived from what it stores (PostHog keeps a definitions table filled at ingestion):
 * the keys of the latest `SAMPLE_ROWS` events (or persons), each typed as `read_taxonomy` types
 * it (./taxonomy.ts: `Numeric`, `Boolean`, `DateTime`, `String`; objects and arrays get null).
 *
 * PostHog's rules kept: `type` `event` (default) or `person` (`group` and `session` are not stored
 * here: 400); event properties PostHog never lists (`distinct_id`, `$set`, `$set_once`, `$groups`, …)
 * left out; `search` (every whitespace-separated term in the name, any case), `properties` (a comma
 * list of exact names), `excluded_properties` (a JSON list), `is_numerical=true`,
 * `event_names` (a JSON list: `is_seen_on_filtered_events` says whether the property is on those
 * events' latest rows; null without it) and `filter_by_event_names` (only those); order:
 * seen on the filtered events first, then name; `limit` (default 100) and `offset` in
 * `{count, next, previous, results}`. Each definition: a stable `id` (a UUID of the project, type
 * and name), `name`, `is_numerical`, `property_type`, `tags` (empty), `is_seen_on_filtered_events`.
 */
import type { components } from '../../generated/api.js';
import type { Team } from '../storage/repositories/accounts.js';
import { notFound, validationError } from './errors.js';
import { uuidV5 } from './event-definitions.js';
import type { EventsReads } from './events-reads.js';
import { DEFAULT_LIMIT, limitOffsetLinks } from './pagination.js';
import { hogqlString, keyStats, propertiesOf, SAMPLE_ROWS, type KeyStats } from './taxonomy.js';

/** A property definition on the wire (schema `PropertyDefinition`). */
export type PropertyDefinitionWire = components['schemas']['PropertyDefinition'];

/** The namespace of definition ids (a fixed UUID: the same id for the same project, type and name). */
const ID_NAMESPACE = '6c1f7a52-8b3e-4d0a-9f6e-2b7d4c8a1e35';

/** Event properties PostHog's definitions never list (its `HIDDEN_PROPERTY_DEFINITIONS`-like exclusions). */
const NEVER_LISTED = new Set([
  'distinct_id',
  '$set',
  '$set_once',
  '$unset',
  '$initial_referrer',
  '$initial_referring_domain',
  '$groups',
  '$group_type',
  '$group_key',
  '$group_set',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
]);

/** The query parameters of the list. */
export interface PropertyDefinitionParams {
  type?: string | undefined;
  search?: string | undefined;
  properties?: string | undefined;
  excluded_properties?: string | undefined;
  is_numerical?: boolean | undefined;
  event_names?: string | undefined;
  filter_by_event_names?: boolean | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

/** A JSON list of names, or 400 naming the parameter. */
function jsonNames(raw: string | undefined, attr: string): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw validationError(`${attr} must be a JSON list of names.`, attr);
  }
  if (!Array.isArray(parsed) || parsed.some((n) => typeof n !== 'string'))
    throw validationError(`${attr} must be a JSON list of names.`, attr);
  return parsed as string[];
}

/** The property definitions of one project (module doc). */
export class PropertyDefinitionsService {
  constructor(private readonly events: EventsReads) {}

  private async rows(team: Team, hogql: string): Promise<Record<string, unknown>[]> {
    const answer = await this.events.query(team, { kind: 'HogQLQuery', query: hogql });
    const results = 'results' in answer && Array.isArray(answer.results) ? (answer.results as unknown[][]) : [];
    return results.map((r) => propertiesOf(r[0]));
  }

  private async stats(team: Team, type: 'event' | 'person', eventNames?: string[]): Promise<Map<string, KeyStats>> {
    if (type === 'person')
      return keyStats(await this.rows(team, `select properties from persons order by created_at desc limit ${SAMPLE_ROWS}`));
    const where = eventNames ? ` where event in (${eventNames.map(hogqlString).join(', ') || "''"})` : '';
    return keyStats(await this.rows(team, `select properties from events${where} order by timestamp desc limit ${SAMPLE_ROWS}`));
  }

  private wire(team: Team, type: string, name: string, s: KeyStats, seen: boolean | null): PropertyDefinitionWire {
    return {
      id: uuidV5(ID_NAMESPACE, `${team.id}\n${type}\n${name}`),
      name,
      is_numerical: s.type === 'Numeric',
      property_type: s.type,
      tags: [],
      is_seen_on_filtered_events: seen,
    };
  }

  /** Every definition the parameters select, in PostHog's order (module doc). */
  private async all(team: Team, params: PropertyDefinitionParams): Promise<PropertyDefinitionWire[]> {
    const type = params.type ?? 'event';
    if (type !== 'event' && type !== 'person')
      throw validationError(
        type === 'group' || type === 'session'
          ? `Property definitions of type "${type}" are not stored here.`
          : `"${type}" is not a valid choice.`,
        'type',
        'invalid_choice',
      );
    const eventNames = jsonNames(params.event_names, 'event_names');
    if (eventNames && type !== 'event') throw validationError('`event_names` can only be set for `event` type');
    const excluded = new Set(jsonNames(params.excluded_properties, 'excluded_properties') ?? []);
    const only = params.properties ? new Set(params.properties.split(',').map((p) => p.trim())) : undefined;
    const terms = (params.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const stats = await this.stats(team, type);
    const seenOn = eventNames ? await this.stats(team, type, eventNames) : undefined;
    const out: PropertyDefinitionWire[] = [];
    for (const [name, s] of stats) {
      if (type === 'event' && NEVER_LISTED.has(name)) continue;
      if (excluded.has(name) || (only && !only.has(name))) continue;
      if (terms.some((term) => !name.toLowerCase().includes(term))) continue;
      if (params.is_numerical === true && s.type !== 'Numeric') continue;
      const seen = seenOn ? seenOn.has(name) : null;
      if (params.filter_by_event_names === true && seenOn && !seen) continue;
      out.push(this.wire(team, type, name, s, seen));
    }
    return out.sort(
      (a, b) =>
        Number(b.is_seen_on_filtered_events === true) - Number(a.is_seen_on_filtered_events === true) ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
  }

  /** One page of the definitions (module doc); 400 for a bad parameter. */
  async list(team: Team, params: PropertyDefinitionParams, url: URL) {
    const limit = params.limit ?? DEFAULT_LIMIT;
    const offset = params.offset ?? 0;
    const all = await this.all(team, params);
    return { count: all.length, ...limitOffsetLinks(url, limit, offset, all.length), results: all.slice(offset, offset + limit) };
  }

  /** The definition with this id, of event or person properties; 404 for none. */
  async retrieve(team: Team, id: string): Promise<PropertyDefinitionWire> {
    for (const type of ['event', 'person'] as const) {
      const found = (await this.all(team, { type })).find((d) => d.id === id.toLowerCase());
      if (found) return found;
    }
    throw notFound();
  }
}
