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
 * seen on the filtered events first, then verified ones, then name; `limit` (default 100) and
 * `offset` in `{count, next, previous, results}`. Each definition: a stable `id` (a UUID of the
 * project, type and name), `name`, `is_numerical`, `property_type`, `is_seen_on_filtered_events`,
 * and what the project said about it (table `property_definitions`, PostHog's Enterprise
 * serializer ee/api/ee_property_definition.py: description, tags, verification, hidden, a declared
 * `property_type` that wins over the derived one; ./definition-marks.ts), written by `update`.
 * `exclude_hidden=true` leaves the hidden ones out.
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import type { Team } from '../storage/repositories/accounts.js';
import { DefinitionsRepository, type PropertyDefinitionMeta } from '../storage/repositories/definitions.js';
import { applyMarks, marksWire, NO_MARKS, UserBasics, type MarksPatch } from './definition-marks.js';
import { notFound, validationError } from './errors.js';
import { uuidV5 } from './event-definitions.js';
import type { EventsReads } from './events-reads.js';
import { DEFAULT_LIMIT, limitOffsetLinks } from './pagination.js';
import { hogqlString, keyStats, propertiesOf, SAMPLE_ROWS, type KeyStats } from './taxonomy.js';

/** A property definition on the wire (schema `PropertyDefinition`). */
export type PropertyDefinitionWire = components['schemas']['PropertyDefinition'];
/** The body of an update (schema `PatchedPropertyDefinition`). */
export type PropertyDefinitionPatch = MarksPatch & { property_type?: PropertyDefinitionWire['property_type'] | undefined };

/** PostHog's `PropertyDefinition.Type` of the types stored here. */
const TYPE_CODE = { event: 1, person: 2 } as const;

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
  exclude_hidden?: boolean | undefined;
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
  constructor(
    private readonly events: EventsReads,
    private readonly store: Store,
  ) {}

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

  private static id(team: Team, type: string, name: string): string {
    return uuidV5(ID_NAMESPACE, `${team.id}\n${type}\n${name}`);
  }

  /** The definition's wire form: derived `s`, with what is stored (`meta`) over it. */
  private static async wire(
    team: Team,
    type: string,
    name: string,
    s: KeyStats,
    meta: PropertyDefinitionMeta | undefined,
    seen: boolean | null,
    users: UserBasics,
  ): Promise<PropertyDefinitionWire> {
    const propertyType = (meta?.property_type as PropertyDefinitionWire['property_type'] | undefined) ?? s.type;
    return {
      id: PropertyDefinitionsService.id(team, type, name),
      name,
      is_numerical: propertyType === 'Numeric',
      property_type: propertyType,
      ...(await marksWire(meta ?? NO_MARKS, users)),
      is_seen_on_filtered_events: seen,
    };
  }

  /** The type asked: `event` or `person`; 400 for anything else. */
  private static typeOf(raw: string | undefined): 'event' | 'person' {
    const type = raw ?? 'event';
    if (type !== 'event' && type !== 'person')
      throw validationError(
        type === 'group' || type === 'session'
          ? `Property definitions of type "${type}" are not stored here.`
          : `"${type}" is not a valid choice.`,
        'type',
        'invalid_choice',
      );
    return type;
  }

  /** Every definition the parameters select, in PostHog's order (module doc). */
  private async all(team: Team, params: PropertyDefinitionParams): Promise<PropertyDefinitionWire[]> {
    const type = PropertyDefinitionsService.typeOf(params.type);
    const eventNames = jsonNames(params.event_names, 'event_names');
    if (eventNames && type !== 'event') throw validationError('`event_names` can only be set for `event` type');
    const excluded = new Set(jsonNames(params.excluded_properties, 'excluded_properties') ?? []);
    const only = params.properties ? new Set(params.properties.split(',').map((p) => p.trim())) : undefined;
    const terms = (params.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const [stats, seenOn, metas] = await Promise.all([
      this.stats(team, type),
      eventNames ? this.stats(team, type, eventNames) : undefined,
      new DefinitionsRepository(this.store.db).propertyDefinitions(team.id, TYPE_CODE[type]),
    ]);
    const byName = new Map(metas.map((m) => [m.name, m]));
    const users = new UserBasics(this.store);
    const out: Promise<PropertyDefinitionWire>[] = [];
    for (const [name, s] of stats) {
      const meta = byName.get(name);
      if (type === 'event' && NEVER_LISTED.has(name)) continue;
      if (excluded.has(name) || (only && !only.has(name))) continue;
      if (terms.some((term) => !name.toLowerCase().includes(term))) continue;
      if (params.is_numerical === true && (meta?.property_type ?? s.type) !== 'Numeric') continue;
      if (params.exclude_hidden === true && meta?.hidden) continue;
      const seen = seenOn ? seenOn.has(name) : null;
      if (params.filter_by_event_names === true && seenOn && !seen) continue;
      out.push(PropertyDefinitionsService.wire(team, type, name, s, meta, seen, users));
    }
    return (await Promise.all(out)).sort(
      (a, b) =>
        Number(b.is_seen_on_filtered_events === true) - Number(a.is_seen_on_filtered_events === true) ||
        Number(b.verified) - Number(a.verified) ||
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

  /** The type, name and derived values of the definition with this id; 404 for none. */
  private async find(team: Team, id: string): Promise<{ type: 'event' | 'person'; name: string; stats: KeyStats }> {
    const key = id.toLowerCase();
    const types = ['event', 'person'] as const;
    const stats = await Promise.all(types.map((type) => this.stats(team, type)));
    for (const [i, type] of types.entries())
      for (const [name, s] of stats[i]!) {
        if (type === 'event' && NEVER_LISTED.has(name)) continue;
        if (PropertyDefinitionsService.id(team, type, name) === key) return { type, name, stats: s };
      }
    throw notFound();
  }

  /** The definition with this id, of event or person properties; 404 for none. */
  async retrieve(team: Team, id: string): Promise<PropertyDefinitionWire> {
    const { type, name, stats } = await this.find(team, id);
    const meta = await new DefinitionsRepository(this.store.db).propertyDefinition(
      team.id,
      PropertyDefinitionsService.id(team, type, name),
    );
    return PropertyDefinitionsService.wire(team, type, name, stats, meta, null, new UserBasics(this.store));
  }

  /**
   * Edits the definition with this id by user `userId` (module doc; the rules of
   * ./definition-marks.ts; `property_type` null goes back to the derived type). Throws 404 for an
   * id of none, 400 for hidden and verified at once.
   */
  async update(team: Team, userId: number, id: string, body: PropertyDefinitionPatch): Promise<PropertyDefinitionWire> {
    const { type, name, stats } = await this.find(team, id);
    const key = PropertyDefinitionsService.id(team, type, name);
    const now = new Date().toISOString();
    const saved = await this.store.db.transaction().execute(async (trx) => {
      const repo = new DefinitionsRepository(trx);
      const prev = await repo.propertyDefinition(team.id, key);
      const next: PropertyDefinitionMeta = {
        ...applyMarks(prev ?? NO_MARKS, body, userId, now, 'property'),
        id: key,
        team_id: team.id,
        type: TYPE_CODE[type],
        name,
        property_type: body.property_type !== undefined ? body.property_type : (prev?.property_type ?? null),
      };
      await repo.savePropertyDefinition(next);
      return next;
    });
    return PropertyDefinitionsService.wire(team, type, name, stats, saved, null, new UserBasics(this.store));
  }
}
