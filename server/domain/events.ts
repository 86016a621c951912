/**
 * Events: the list (with PostHog's filters and a keyset cursor that never skips or repeats an
 * event), one event by uuid, and property value suggestions. Rules from posthog/api/event.py and
 * posthog/models/event/query_event_list.py, with the fixes the spec describes (openapi.yaml, tag
 * `events`). No HTTP here: methods take validated query values, return wire-shaped objects, and
 * throw `ApiError` 400/404.
 */
import type { components } from '../../generated/api.js';
import { notFound, validationError, withHogQLErrors } from './errors.js';
import { JsonText, Utf8Builder } from './json-text.js';
import type { Store } from '../storage/db.js';
import { eventsStoreOf, type EventPerson, type EventRow, type EventsStore, type ListedEventRow } from '../storage/events/index.js';
import type { Team } from '../storage/repositories/accounts.js';
import { eventsToCsv, rowsToCsv } from './csv.js';
import { echo } from './echo.js';
import { parseElementsChain } from './elements-chain.js';
import { parsePropertiesParam } from './event-filters.js';
import { withQuery } from './pagination.js';
import { parseEventDateParam } from './relative-dates.js';
import { formatTimestamp } from '../storage/timestamps.js';
import { normalizeUuid } from './uuids.js';
import { eventsWhereCondition, runEventsQuery } from '../hogql/index.js';

/** A `select`/`where` parameter: a JSON array of HogQL expressions (strings). Throws 400 naming `attr`. */
function hogqlList(raw: string, attr: 'select' | 'where'): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw validationError(`${attr} must be a JSON array of HogQL expressions, e.g. ["event", "count()"].`, attr);
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string' && x.trim() !== '')) {
    throw validationError(`${attr} must be a JSON array of HogQL expressions (non-empty strings), e.g. ["event", "count()"].`, attr);
  }
  if (attr === 'select' && parsed.length === 0) throw validationError('select needs at least one expression.', attr);
  return parsed as string[];
}

/**
 * Whether an `orderBy` parameter lists oldest first: PostHog's list is descending only for exactly
 * `["-timestamp"]` (posthog/api/event.py), ascending for any other array. Throws 400 (attr
 * `orderBy`) for text that is not a JSON array of strings.
 */
export function listsAscending(raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string'))
    throw validationError('orderBy must be a JSON array of strings, e.g. ["timestamp"] (oldest first) or ["-timestamp"].', 'orderBy');
  return !(parsed.length === 1 && parsed[0] === '-timestamp');
}

type Schemas = components['schemas'];
/** An event on the wire (schema `ClickhouseEvent`). */
export type EventWire = Schemas['ClickhouseEvent'];

/** PostHog's default page size of the events list (DEFAULT_RETURNED_ROWS). */
export const EVENTS_DEFAULT_LIMIT = 100;
/** PostHog's cap on the events list (MAX_SELECT_RETURNED_ROWS, 2023–24). */
export const EVENTS_MAX_LIMIT = 10_000;
/** How far past now the default upper bound reaches (PostHog: now() + 5 seconds), ms. */
const BEFORE_SLACK_MS = 5_000;
/** Values suggestions look at this many most recent events of the window (keeps them fast). */
export const VALUES_SCAN_LIMIT = 20_000;
/** At most this many suggestions (PostHog: LIMIT 10). */
const VALUES_LIMIT = 10;
/** Person properties the events list shows (PostHog's ClickhouseEventSerializer). */
const PERSON_PROPERTIES = ['email', 'name', 'username'] as const;

const STORED_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The opaque cursor of a `next` link: base64url of `<timestamp>|<uuid>` of the page's last event. */
export function encodeCursor(row: { timestamp: string; uuid: string }): string {
  return Buffer.from(`${row.timestamp}|${row.uuid}`, 'utf8').toString('base64url');
}

/** Reads a cursor; 400 with attr `cursor` for anything this server did not issue. */
export function decodeCursor(cursor: string): { timestamp: string; uuid: string } {
  const [timestamp, uuid, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || !timestamp || !uuid || !STORED_TS.test(timestamp) || normalizeUuid(uuid) !== uuid) {
    throw validationError('This cursor is not valid; use the `next` link of a previous page as it is.', 'cursor');
  }
  return { timestamp, uuid };
}

/** Query parameters of the events list, as validated by the spec. */
export interface EventListParams {
  after?: string | undefined;
  before?: string | undefined;
  event?: string | undefined;
  distinct_id?: string | undefined;
  person_id?: string | undefined;
  properties?: string | undefined;
  format?: 'csv' | 'json' | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  cursor?: string | undefined;
  /** JSON array of HogQL expressions to return (PostHog's 2023 `select`): answered by `select` instead of `list` */
  select?: string | undefined;
  /** JSON array of HogQL conditions that must all pass */
  where?: string | undefined;
  /** `true` / `1` (any case): each event with its person (PostHog's `include_person`, default off since 2026) */
  include_person?: string | undefined;
  /** PostHog's JSON array: oldest first unless exactly `["-timestamp"]` (`listsAscending`) */
  orderBy?: string | undefined;
}

/** Whether an `include_person` value asks for the person (PostHog: `true` or `1`, any case). */
export function includesPerson(value: string | undefined): boolean {
  return value !== undefined && ['true', '1'].includes(value.toLowerCase());
}

/** Query parameters of values suggestions. */
export interface EventValuesParams {
  key?: string | undefined;
  value?: string | undefined;
  event_name?: string[] | undefined;
  is_column?: boolean | undefined;
  /** the `properties_<key>=<value>` parameters, by `<key>` (PostHog's ad-hoc filters of the values) */
  property_filters?: Record<string, string> | undefined;
}

/**
 * The `properties_<key>=<value>` parameters of a values request (PostHog's posthog/api/event.py
 * `_event_property_values_filtered`), from the request's parsed query: each a filter the events
 * must pass. Parameters given twice (not a string) are left out, as PostHog reads only strings.
 */
export function valuesPropertyParams(query: Record<string, unknown>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let any = false;
  for (const [name, value] of Object.entries(query))
    if (name.startsWith('properties_') && name.length > 'properties_'.length && typeof value === 'string') {
      out[name.slice('properties_'.length)] = value;
      any = true;
    }
  return any ? out : undefined;
}

/**
 * The values' property filters as the events list's filters: each `<key>` equal to its value, a
 * JSON array meaning any of its values (PostHog's `create_property_conditions`), text that is not
 * JSON the text itself; `true` / `false` in any case are the booleans. All must hold.
 */
function valuesPropertyFilters(params: Record<string, string>): Record<string, unknown>[] {
  return Object.entries(params).map(([key, raw]) => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = /^(true|false)$/i.test(raw) ? raw.toLowerCase() === 'true' : raw;
    }
    if (value === null || (typeof value === 'object' && !Array.isArray(value))) value = raw;
    return { key, value, operator: 'exact', type: 'event' };
  });
}

/** The answer of the list: JSON page or CSV text. */
export type EventListResult = { format: 'json'; body: JsonText<Schemas['PaginatedClickhouseEventList']> } | { format: 'csv'; body: string };

/** Events operations of one store. */
/**
 * The event columns `values` answers with `is_column`: PostHog's HogQL `events` fields a filter
 * picker asks for (`person_id` is the uuid of the event's person now, as PostHog's person-id
 * overrides make it).
 */
const EVENT_VALUE_COLUMNS = new Set(['event', 'distinct_id', 'person_id']);

export class EventsService {
  private readonly read: EventsStore;

  constructor(
    store: Store,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.read = eventsStoreOf(store);
  }

  /** `after`/`before` in the stored form, 400 naming the parameter when unreadable. */
  private bound(name: 'after' | 'before', raw: string, team: Team, now: Date): string {
    const parsed = parseEventDateParam(raw, { now, timezone: team.timezone });
    if (parsed === undefined) {
      throw validationError(
        `The ${name} date ${echo(raw, 100)} cannot be read; use ISO 8601 (2024-11-20T14:00:00Z) or a relative date (-1d, -24h, -30M, dStart).`,
        name,
      );
    }
    return parsed;
  }

  /** The list's filters but paging, read and checked (400 naming the parameter). */
  private filters(team: Team, params: EventListParams, now: Date) {
    const before =
      params.before !== undefined
        ? this.bound('before', params.before, team, now)
        : formatTimestamp(new Date(now.getTime() + BEFORE_SLACK_MS));
    const after = params.after !== undefined ? this.bound('after', params.after, team, now) : undefined;
    const properties =
      params.properties !== undefined ? parsePropertiesParam(params.properties, { now, timezone: team.timezone }) : undefined;
    let person: { id: number } | { uuid: string } | undefined;
    if (params.person_id !== undefined) {
      const uuid = normalizeUuid(params.person_id);
      if (uuid) person = { uuid };
      else if (/^\d+$/.test(params.person_id)) person = { id: Number(params.person_id) };
      else throw validationError('person_id must be a person id (an integer) or a person UUID.', 'person_id');
      if ('id' in person && person.id > 2_147_483_647) person = { uuid: '00000000-0000-0000-0000-000000000000' };
    }
    return { before, after, properties, person };
  }

  /**
   * The list with `select` (PostHog's 2023 events list, posthog/models/event/query_event_list.py;
   * today's EventsQuery): the HogQL expressions of `select` over the events the other filters
   * keep (`after`, `before`, `event`, `distinct_id`, `person_id`, `properties`), non-aggregates
   * grouped when any aggregates, `where` before grouping or (with an aggregate) after it, newest
   * first without aggregates, else by `count()` or the first aggregate, descending; `limit`
   * (default 100, at most 10,000) and `offset` page it. Answers `{columns, types, results,
   * hasMore}`. Throws `ApiError` 400 (attr `select`, `where` or the filter; HogQL's errors turned
   * into `ApiError` by `withHogQLErrors`).
   */
  async select(
    team: Team,
    params: EventListParams,
  ): Promise<{ columns: string[]; types: string[]; results: unknown[][]; hasMore: boolean }> {
    const now = this.clock();
    if (params.format === 'csv') throw validationError('format=csv is not available with select; ask for JSON.', 'format');
    if (params.cursor !== undefined) throw validationError('cursor pages the plain list; with select, use offset.', 'cursor');
    const limit = Math.min(params.limit ?? EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    const f = this.filters(team, params, now);
    // the store's materialized columns, read by property filters and by the HogQL
    const materialized = await this.read.materializedColumns();
    const conditions = this.read.conditions({ teamId: team.id, ...f, event: params.event, distinctId: params.distinct_id, materialized });
    const parts = {
      select: hogqlList(params.select ?? '[]', 'select'),
      where: params.where !== undefined ? hogqlList(params.where, 'where') : undefined,
      limit,
      offset: params.offset ?? 0,
    };
    const answer = await withHogQLErrors(() =>
      runEventsQuery(this.read.db, this.read.table(materialized), team.id, parts, conditions, now),
    );
    return { columns: answer.columns, types: answer.types, results: answer.results, hasMore: answer.hasMore };
  }

  /** The events' wire rows, each with its person when `withPerson` (else `person` null). */
  private async toWire(rows: EventRow[], teamId: number, withPerson: boolean): Promise<EventWire[]> {
    const persons = await this.personsOf(rows, teamId, withPerson);
    return rows.map((r) => eventToWire(r, persons.get(r.distinct_id)));
  }

  /** The persons of the events' distinct ids, or none when not asked for. */
  private async personsOf(rows: EventRow[], teamId: number, withPerson: boolean) {
    if (!withPerson) return new Map<string, EventPerson>();
    return this.read.personsByDistinctId(
      teamId,
      rows.map((r) => r.distinct_id),
    );
  }

  /**
   * A page of the team's events, newest first. `next` keeps every query parameter but `offset`
   * and `cursor` and adds the cursor of the page's last event; null on the last page; none for CSV.
   */
  async list(team: Team, params: EventListParams, url: URL): Promise<EventListResult> {
    const now = this.clock();
    const limit = Math.min(params.limit ?? EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT);
    const { before, after, properties, person } = this.filters(team, params, now);
    const cursor = params.cursor !== undefined ? decodeCursor(params.cursor) : undefined;
    // the store's materialized columns, read by property filters and `where`
    const materialized = properties || params.where !== undefined ? await this.read.materializedColumns() : undefined;
    const whereList = params.where !== undefined ? hogqlList(params.where, 'where') : undefined;
    const where =
      whereList !== undefined
        ? await withHogQLErrors(() => eventsWhereCondition(whereList, this.read.table(materialized), now))
        : undefined;
    const ascending = listsAscending(params.orderBy);
    const rows = await this.read.list({
      ascending,
      teamId: team.id,
      before,
      after,
      event: params.event,
      distinctId: params.distinct_id,
      person,
      properties,
      materialized: properties ? materialized : undefined,
      cursor,
      where,
      offset: params.offset ?? 0,
      limit: limit + 1,
    });
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const withPerson = includesPerson(params.include_person);
    if (params.format === 'csv')
      return { format: 'csv', body: eventsToCsv((await this.toWire(page, team.id, withPerson)) as unknown as Record<string, unknown>[]) };
    const persons = await this.personsOf(page, team.id, withPerson);
    const last = page[page.length - 1];
    const next = hasMore && last ? withQuery(url, { offset: null, cursor: encodeCursor(last) }) : null;
    return { format: 'json', body: new JsonText(eventsPageJson(page, persons, next)) };
  }

  /** One event by uuid (with or without dashes): 400 "Invalid UUID" (attr id), 404 when unknown. */
  async retrieve(
    team: Team,
    id: string,
    format: 'csv' | 'json' | undefined,
    includePerson?: string,
  ): Promise<{ format: 'json'; body: EventWire } | { format: 'csv'; body: string }> {
    const uuid = normalizeUuid(id);
    if (!uuid) throw validationError('Invalid UUID', 'id');
    const row = await this.read.findByUuid(team.id, uuid);
    if (!row) throw notFound(`No events exist for event UUID ${id}`);
    const [event] = await this.toWire([row], team.id, includesPerson(includePerson));
    if (!event) throw notFound(`No events exist for event UUID ${id}`);
    return format === 'csv'
      ? { format: 'csv', body: eventsToCsv([event as unknown as Record<string, unknown>]) }
      : { format: 'json', body: event };
  }

  /**
   * Up to 10 values of a property (or column) seen from the start of the UTC day 7 days ago to the
   * end of today, among the most recent VALUES_SCAN_LIMIT events of that window; see the spec.
   */
  async values(
    team: Team,
    params: EventValuesParams,
    format: 'csv' | 'json' | undefined,
  ): Promise<{ format: 'json'; body: { name: string }[] } | { format: 'csv'; body: string }> {
    const key = params.key;
    if (key === undefined || key === '') throw validationError('You must provide a key', 'key', 'required');
    const now = this.clock();
    const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const since = formatTimestamp(new Date(day - 7 * 86_400_000));
    const until = new Date(day + 86_400_000 - 1).toISOString().slice(0, 23) + '999Z';
    let names: string[];
    if (key === 'custom_event') {
      const rows = await this.read.values({
        teamId: team.id,
        key: 'event',
        isColumn: true,
        since,
        until,
        excludeDollarEvents: true,
        scan: VALUES_SCAN_LIMIT,
        limit: VALUES_LIMIT,
        order: 'value',
      });
      names = rows.map((r) => r.value);
    } else {
      if (params.is_column && !EVENT_VALUE_COLUMNS.has(key))
        throw validationError('With is_column, key must be an event column: event, distinct_id or person_id.', 'key');
      const properties = params.property_filters
        ? parsePropertiesParam(JSON.stringify(valuesPropertyFilters(params.property_filters)), { now, timezone: team.timezone })
        : undefined;
      const rows = await this.read.values({
        teamId: team.id,
        key,
        isColumn: params.is_column === true,
        since,
        until,
        properties,
        materialized: properties ? await this.read.materializedColumns() : undefined,
        eventNames: params.event_name,
        contains: params.value,
        scan: VALUES_SCAN_LIMIT,
        limit: VALUES_LIMIT * 5,
        order: params.value ? 'length' : 'frequency',
      });
      names = flattenValues(
        rows.map((r) => r.value),
        params.value,
      ).slice(0, VALUES_LIMIT);
    }
    const body = names.map((name) => ({ name }));
    return format === 'csv' ? { format: 'csv', body: rowsToCsv(body) } : { format: 'json', body };
  }
}

/** Values whose text is a JSON array contribute each element (PostHog flattens them), distinct. */
function flattenValues(values: string[], contains: string | undefined): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const needle = contains?.toLowerCase();
  const add = (v: string) => {
    if (seen.has(v) || (needle !== undefined && !v.toLowerCase().includes(needle))) return;
    seen.add(v);
    out.push(v);
  };
  for (const v of values) {
    if (v.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(v);
        if (Array.isArray(parsed)) {
          for (const item of parsed) if (item !== null) add(typeof item === 'string' ? item : JSON.stringify(item));
          continue;
        }
      } catch {
        // not JSON: a plain string that starts with "["
      }
    }
    add(v);
  }
  return out;
}

/** Python's `str.strip('"')`: leading and trailing double quotes removed. */
function stripQuotes(v: string): string {
  let start = 0;
  let end = v.length;
  while (start < end && v.charCodeAt(start) === 34) start += 1;
  while (end > start && v.charCodeAt(end - 1) === 34) end -= 1;
  return start === 0 && end === v.length ? v : v.slice(start, end);
}

/**
 * The tail of an event on the wire from its chain, `"elements":[…],"elements_chain":"…"`, kept by
 * chain (a page repeats the same few chains, so each is parsed and escaped once); bounded. Keeping
 * the escaped chain with the elements measured no faster than keeping the elements alone (one Map
 * lookup either way); it is kept for the single lookup.
 */
const elementsTailByChain = new Map<string, string>();
const ELEMENTS_TAIL_MAX = 5_000;

function elementsTail(chain: string): string {
  if (!chain) return '"elements":[],"elements_chain":""';
  let tail = elementsTailByChain.get(chain);
  if (tail === undefined) {
    tail = `"elements":${JSON.stringify(parseElementsChain(chain))},"elements_chain":${JSON.stringify(chain)}`;
    if (elementsTailByChain.size >= ELEMENTS_TAIL_MAX) elementsTailByChain.clear();
    elementsTailByChain.set(chain, tail);
  }
  return tail;
}

/**
 * A page of the list as UTF-8 JSON bytes, `{"next", "results"}`, the same document as
 * `JSON.stringify({next, results: rows.map(eventToWire)})` (the tests compare them through the
 * response validator, which parses this text back): each event's stored properties text is
 * copied as it is when no value in it holds a double quote (written `\"` in JSON), because then
 * stripping quotes changes nothing (`eventToWire`); otherwise the event goes through
 * `eventToWire`. Elements and the chain are serialized once per distinct chain, persons once per page. The
 * pieces are encoded one by one into one buffer (`Utf8Builder`), never joined into one string.
 */
export function eventsPageJson(rows: readonly ListedEventRow[], persons: Map<string, EventPerson>, next: string | null): Buffer {
  const personJson = new Map<string, string>();
  // the pieces first, so the buffer is sized once from their lengths (UTF-16 units; a little over
  // for text beyond ASCII, which grows the buffer only when there is much of it)
  const pieces: string[] = [`{"next":${JSON.stringify(next)},"results":[`];
  rows.forEach((r, i) => {
    const comma = i > 0 ? ',' : '';
    const text = r.propertiesText;
    if (text === undefined || text.includes('\\"')) {
      pieces.push(comma + JSON.stringify(eventToWire(r, persons.get(r.distinct_id))));
      return;
    }
    let person = personJson.get(r.distinct_id);
    if (person === undefined) {
      person = JSON.stringify(personToWire(r.distinct_id, persons.get(r.distinct_id)));
      personJson.set(r.distinct_id, person);
    }
    pieces.push(
      `${comma}{"id":${JSON.stringify(r.uuid)},"distinct_id":${JSON.stringify(r.distinct_id)},"properties":`,
      text,
      `,"event":${JSON.stringify(r.event)},"timestamp":${JSON.stringify(r.timestamp)},"person":${person},${elementsTail(r.elements_chain)}}`,
    );
  });
  pieces.push(']}');
  let chars = 0;
  for (const p of pieces) chars += p.length;
  const out = new Utf8Builder(chars, (chars >> 4) + 256);
  for (const p of pieces) out.push(p);
  return out.bytes();
}

/** The `person` of an event on the wire: identified flag, the event's distinct_id, and email/name/username. */
function personToWire(distinctId: string, person: EventPerson | undefined): EventWire['person'] {
  if (!person) return null;
  const properties: Record<string, unknown> = {};
  for (const k of PERSON_PROPERTIES) if (person.properties[k] !== undefined) properties[k] = person.properties[k];
  return { is_identified: person.is_identified, distinct_ids: [distinctId], properties };
}

/**
 * PostHog's ClickhouseEventSerializer row (posthog/models/event/util.py): top-level string
 * properties stripped of surrounding double quotes, person trimmed to email/name/username,
 * elements parsed from the chain.
 */
export function eventToWire(r: EventRow, person: EventPerson | undefined): EventWire {
  const personWire = personToWire(r.distinct_id, person);
  // Object.fromEntries defines each key as an own property: a `__proto__` key stays a key
  const properties: Record<string, unknown> = Object.fromEntries(
    Object.entries(r.properties).map(([k, v]) => [k, typeof v === 'string' ? stripQuotes(v) : v]),
  );
  return {
    id: r.uuid,
    distinct_id: r.distinct_id,
    properties,
    event: r.event,
    timestamp: r.timestamp,
    person: personWire,
    elements: parseElementsChain(r.elements_chain) as EventWire['elements'],
    elements_chain: r.elements_chain,
  };
}
