/**
 * The MCP tool `read_taxonomy` (PostHog's ee/hogai/tools/read_taxonomy/core.py
 * `execute_taxonomy_query` and ee/hogai/chat_agent/query_planner/toolkit.py
 * `TaxonomyAgentToolkit`): the project's events, their properties and property types, and
 * sample values, as the texts PostHog writes for language models. PostHog reads its event and
 * property definition tables and its taxonomy query runners; this server derives the same from
 * what it stores, with HogQL through the events reads (`EventsReads.query`, so in the read pool
 * and on every events store alike):
 *
 * - event names: the events grouped by name, the most frequent first, then by name;
 * - properties and types: the latest `SAMPLE_ROWS` events of the name (or persons), each key's
 *   type that of its earliest non-null value among them (`Numeric`, `Boolean`, `DateTime` for an
 *   ISO 8601 text, `String`; objects and arrays have none and are left out, as PostHog leaves out
 *   properties without a type), the keys held by most rows first;
 * - values: the same rows' values of the key, the most frequent first, at most 25.
 *
 * Texts (PostHog's, word for word): `events:` + lines ``- `name` ``; the properties preamble
 * (`PROPERTIES_PREAMBLE`) + `<Type>` blocks; values joined by `, ` (texts quoted when the type is
 * String) + ` and N more distinct value(s).`; and the "does not exist" sentences below. Actions
 * are not stored here: both action kinds answer PostHog's "No actions exist in the project.".
 * Throws `ApiError` 400 (`validationError`, attr `args__query__<field>`) for a field the kind
 * needs that is missing, and the query errors of `EventsReads.query` (504, busy).
 */
import type { components } from '../../generated/api.js';
import type { Team } from '../storage/repositories/accounts.js';
import { validationError } from './errors.js';
import type { EventsReads } from './events-reads.js';

/** The `query` of `read_taxonomy`'s args (schema `McpTaxonomyQuery`). */
export type TaxonomyQuery = components['schemas']['McpTaxonomyQuery'];

/** How many of the latest rows (events of a name, or persons) properties and values are read from. */
export const SAMPLE_ROWS = 10_000;
/** At most this many sample values (PostHog's `maxPropertyValues=25`). */
export const MAX_VALUES = 25;

/** PostHog's `PROPERTIES_EXAMPLE_PROMPT` before `{{{result}}}`. */
export const PROPERTIES_PREAMBLE = [
  'The data format is as follows:',
  '<Data type>',
  '- $event – description text here',
  '- another_event',
  '</Data type>',
  '...',
  '---',
  'Results:',
].join('\n');

/** PostHog's answer for a project without actions (toolkit `retrieve_event_or_action_properties`). */
export const NO_ACTIONS = 'No actions exist in the project.';

/** Keys PostHog's property definitions never record: the person updates and groups an event carries. */
const SKIPPED_KEYS = new Set(['$set', '$set_once', '$unset', '$groups']);

/** PostHog's session properties (posthog/taxonomy/taxonomy.py `CORE_FILTER_DEFINITIONS_BY_GROUP["session_properties"]`, those with a type), by type. */
const SESSION_PROPERTIES: readonly [string, PropertyType][] = [
  ['$start_timestamp', 'DateTime'],
  ['$end_timestamp', 'DateTime'],
  ['$entry_current_url', 'String'],
  ['$entry_pathname', 'String'],
  ['$end_current_url', 'String'],
  ['$end_pathname', 'String'],
  ['$entry_referring_domain', 'String'],
  ['$entry_utm_source', 'String'],
  ['$entry_utm_campaign', 'String'],
  ['$entry_utm_medium', 'String'],
  ['$channel_type', 'String'],
  ['$last_external_click_url', 'String'],
  ['$session_duration', 'Numeric'],
  ['$pageview_count', 'Numeric'],
  ['$autocapture_count', 'Numeric'],
  ['$screen_count', 'Numeric'],
  ['$is_bounce', 'Boolean'],
];

/** PostHog's channel types (posthog/hogql/database/schema/channel_type.py `DEFAULT_CHANNEL_TYPES`), the sample values of `$channel_type`. */
const CHANNEL_TYPES = [
  'Cross Network',
  'Paid Search',
  'Paid Social',
  'Paid Video',
  'Paid Shopping',
  'Paid Unknown',
  'Direct',
  'Organic Search',
  'Organic Social',
  'Organic Video',
  'Organic Shopping',
  'Push',
  'SMS',
  'Audio',
  'Email',
  'Referral',
  'Affiliate',
  'Unknown',
];

/** A property type as PostHog names them. */
/** The property types PostHog's taxonomy knows (of those envapi infers). */
export type PropertyType = 'String' | 'Numeric' | 'Boolean' | 'DateTime';

/** What a sample says of one key: how many rows hold it, its type, and its non-null values' counts. */
export interface KeyStats {
  rows: number;
  type: PropertyType | null;
  values: Map<string, { value: unknown; count: number }>;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** The type PostHog gives a property from a value (null for objects and arrays, which get none). */
function typeOf(value: unknown): PropertyType | null {
  if (typeof value === 'number') return 'Numeric';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'string') return ISO_DATE.test(value) ? 'DateTime' : 'String';
  return null;
}

/** A HogQL string literal of `text`. */
export function hogqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The `properties` cell of a row as an object (the store answers JSON text, or the object). */
export function propertiesOf(cell: unknown): Record<string, unknown> {
  let value = cell;
  if (typeof cell === 'string') {
    try {
      value = JSON.parse(cell);
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Each key's stats over rows of properties, newest first: the type is its earliest (last seen
 * here) non-null value's; keys ordered by how many rows hold them, then by name.
 */
export function keyStats(rows: Record<string, unknown>[]): Map<string, KeyStats> {
  const stats = new Map<string, KeyStats>();
  for (const props of rows) {
    for (const [key, value] of Object.entries(props)) {
      if (SKIPPED_KEYS.has(key)) continue;
      let s = stats.get(key);
      if (!s) stats.set(key, (s = { rows: 0, type: null, values: new Map() }));
      s.rows += 1;
      if (value === null || value === undefined) continue;
      s.type = typeOf(value);
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      const seen = s.values.get(text);
      if (seen) seen.count += 1;
      else s.values.set(text, { value, count: 1 });
    }
  }
  return new Map([...stats.entries()].sort(([a, x], [b, y]) => y.rows - x.rows || (a < b ? -1 : a > b ? 1 : 0)));
}

/** The properties text: the preamble, then per type (in order of first appearance) `<Type>` … `</Type>` around `- name` lines. */
function propertiesText(props: readonly [string, PropertyType | null][]): string {
  const byType = new Map<PropertyType, string[]>();
  for (const [name, type] of props) {
    if (type === null) continue;
    const list = byType.get(type) ?? [];
    list.push(name);
    byType.set(type, list);
  }
  const parts: string[] = [];
  for (const [type, names] of byType) parts.push(`<${type}>`, ...names.map((n) => `- ${n}`), `</${type}>`);
  return `${PROPERTIES_PREAMBLE}\n${parts.join('\n')}`;
}

/**
 * Sample values as PostHog's `_format_property_values` writes them: texts quoted when the
 * property is string-like, integral numbers without a fraction, then how many more distinct
 * values there are (`total` null: "many more").
 */
function valuesText(values: readonly unknown[], total: number | null, quoted: boolean): string {
  if (values.length === 0 || total === 0) return 'The property does not have any values in the taxonomy.';
  const shown = values.map((v) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return quoted ? `"${text}"` : text;
  });
  const joined = shown.join(', ');
  if (total === null) return `${joined} and many more distinct values.`;
  if (total > values.length) {
    const diff = total - values.length;
    return `${joined} and ${diff} more distinct value${diff === 1 ? '' : 's'}.`;
  }
  return joined;
}

/** The values text of one key's stats: the 25 most frequent (then in text order), quoted when its type is String. */
function statsValuesText(s: KeyStats): string {
  const sorted = [...s.values.entries()].sort(([a, x], [b, y]) => y.count - x.count || (a < b ? -1 : a > b ? 1 : 0));
  return valuesText(
    sorted.slice(0, MAX_VALUES).map(([, v]) => v.value),
    sorted.length,
    s.type === 'String',
  );
}

/** A field the kind needs: present, or 400 `required` naming it. */
function need<T>(query: TaxonomyQuery, field: keyof TaxonomyQuery): T {
  const value = query[field];
  if (value === undefined || value === null)
    throw validationError(`This field is required for kind ${query.kind}.`, `args__query__${field}`, 'required');
  return value as T;
}

/** `read_taxonomy` for one project. */
export class TaxonomyReader {
  constructor(
    private readonly events: EventsReads,
    private readonly team: Team,
  ) {}

  /** The rows of a HogQL query on the project. */
  private async rows(hogql: string): Promise<unknown[][]> {
    const answer = await this.events.query(this.team, { kind: 'HogQLQuery', query: hogql });
    return 'results' in answer && Array.isArray(answer.results) ? (answer.results as unknown[][]) : [];
  }

  /** The text `query` asks for (PostHog's `execute_taxonomy_query`). */
  async read(query: TaxonomyQuery): Promise<string> {
    switch (query.kind) {
      case 'events':
        return this.eventNames(query.limit ?? 500, query.offset ?? 0);
      case 'event_properties':
        return this.eventProperties(need(query, 'event_name'));
      case 'event_property_values':
        return this.eventPropertyValues(need(query, 'event_name'), need(query, 'property_name'));
      case 'entity_properties':
        return this.entityProperties(need(query, 'entity'));
      case 'entity_property_values':
        return this.entityPropertyValues(need(query, 'entity'), need(query, 'property_name'));
      case 'action_properties':
        need(query, 'action_id');
        return NO_ACTIONS;
      case 'action_property_values':
        need(query, 'action_id');
        need(query, 'property_name');
        return NO_ACTIONS;
    }
  }

  /** `events:` and one line per event name, the most frequent first (PostHog's `format_events_yaml`). */
  private async eventNames(limit: number, offset: number): Promise<string> {
    const rows = await this.rows(
      `select event, count() as c from events group by event order by c desc, event asc limit ${limit} offset ${offset}`,
    );
    return ['events:', ...rows.map((r) => `- \`${String(r[0])}\``)].join('\n');
  }

  /** The stats of the latest events of `event`. */
  private async eventStats(event: string): Promise<Map<string, KeyStats>> {
    const rows = await this.rows(
      `select properties from events where event = ${hogqlString(event)} order by timestamp desc limit ${SAMPLE_ROWS}`,
    );
    return keyStats(rows.map((r) => propertiesOf(r[0])));
  }

  /** The stats of the latest persons. */
  private async personStats(): Promise<Map<string, KeyStats>> {
    const rows = await this.rows(`select properties from persons order by created_at desc limit ${SAMPLE_ROWS}`);
    return keyStats(rows.map((r) => propertiesOf(r[0])));
  }

  private async eventProperties(event: string): Promise<string> {
    const stats = await this.eventStats(event);
    const props = [...stats.entries()].map(([name, s]) => [name, s.type] as [string, PropertyType | null]);
    if (!props.some(([, type]) => type !== null)) return `Properties do not exist in the taxonomy for the event ${event}.`;
    return propertiesText(props);
  }

  private async eventPropertyValues(event: string, property: string): Promise<string> {
    const known = await this.rows(`select count() from events where properties[${hogqlString(property)}] is not null`);
    if (Number(known[0]?.[0] ?? 0) === 0) return `The property ${property} does not exist in the taxonomy.`;
    const stats = await this.eventStats(event);
    if (stats.size === 0) return `Property values for ${property} do not exist in the taxonomy for the event ${event}.`;
    const s = stats.get(property);
    if (!s) return `The property ${property} does not exist in the taxonomy for the event ${event}.`;
    return statsValuesText(s);
  }

  private async entityProperties(entity: string): Promise<string> {
    if (entity === 'session') return propertiesText(SESSION_PROPERTIES);
    if (entity !== 'person') return `Entity ${entity} does not exist in the taxonomy.`;
    const props = [...(await this.personStats()).entries()].map(([name, s]) => [name, s.type] as [string, PropertyType | null]);
    if (!props.some(([, type]) => type !== null)) return `Properties do not exist in the taxonomy for the entity ${entity}.`;
    return propertiesText(props);
  }

  private async entityPropertyValues(entity: string, property: string): Promise<string> {
    if (entity === 'session') {
      if (!SESSION_PROPERTIES.some(([name]) => name === property)) return `The property ${property} does not exist in the taxonomy.`;
      if (property === '$channel_type') return valuesText(CHANNEL_TYPES, CHANNEL_TYPES.length, true);
      return `Property values for ${property} do not exist in the taxonomy for the session entity.`;
    }
    if (entity !== 'person')
      return `The entity ${entity} does not exist in the taxonomy. You must use one of the following: person, session.`;
    const s = (await this.personStats()).get(property);
    if (!s) return `The property ${property} does not exist in the taxonomy for the entity ${entity}.`;
    return statsValuesText(s);
  }
}
