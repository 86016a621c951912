/**
 * One row of an import: its raw shape (`RawEventRow`, PostHog's export shape; see ../import.ts for
 * the fields), its validation and normalisation into an event and a person update
 * (`normalizeEventRow`), the uuid derived for a row without one (`deterministicUuid`), and the
 * error that names where a bad row came from (`ImportError`, `<source>:<line>: <reason>`).
 */
import { createHash } from 'node:crypto';
import { parseIsoTimestamp } from '../../storage/timestamps.js';
import { personUpdateOf } from '../person-rules.js';
import type { NormalizedEventRow } from '../write-events.js';

/** One event as read from a file or produced by a generator, before validation (see module doc). */
export interface RawEventRow {
  event?: unknown;
  distinct_id?: unknown;
  properties?: unknown;
  timestamp?: unknown;
  uuid?: unknown;
  id?: unknown;
  elements_chain?: unknown;
  $set?: unknown;
  $set_once?: unknown;
  [key: string]: unknown;
}

/**
 * A row that cannot be imported: `line` is the 1-based line of the file where the row starts (for
 * an iterable, the 1-based row number), `reason` what is wrong. The message is
 * `<source>:<line>: <reason>`, e.g. `events.jsonl:17: missing "event"`.
 */
export class ImportError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${source}:${line}: ${reason}`);
    this.name = 'ImportError';
  }
}

export type { NormalizedEventRow } from '../write-events.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A problem with one row; `toImportError` adds the source and line. */
export class RowProblem extends Error {}

/** True for an object that is not an array or null (what JSON calls an object). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What `v` is, for an error message: `null`, `an array`, `an object`, `a string`, … */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** A value cut to `max` characters for an error message. */
export function shorten(s: string, max = 120): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/**
 * JSON with object keys sorted at every level (`undefined` members dropped as JSON.stringify
 * does), so that equal objects give equal text whatever their key order.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === undefined || typeof v === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The uuid of a row that has none: the first 16 bytes of SHA-256 over (project id, event,
 * distinct id, normalised timestamp, canonical JSON of the stored properties), formatted as a UUID
 * with version nibble 5 and the RFC 4122 variant (name-based, like uuid v5 but on SHA-256). The same
 * row imported into the same project always gets the same uuid; another project gets another one.
 */
export function deterministicUuid(
  teamId: number,
  event: string,
  distinctId: string,
  timestamp: string,
  properties: Record<string, unknown>,
): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([String(teamId), event, distinctId, timestamp]))
    .update('\u0000')
    .update(canonicalJson(properties))
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.toString('hex', 0, 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function optionalObject(v: unknown, name: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw new RowProblem(`"${name}" must be an object, got ${kindOf(v)}`);
  return v;
}

/**
 * Validates and normalises one row (see module doc) for project `teamId`. Throws `Error` whose
 * message is the reason (e.g. `missing "event"`, `unparsable "timestamp": "yesterday"`); callers
 * add where the row came from (`importEvents` throws `ImportError`).
 */
export function normalizeEventRow(teamId: number, raw: RawEventRow): NormalizedEventRow {
  return normalize(teamId, raw, true);
}

/** `normalizeEventRow`; without `deriveUuid` a row without uuid keeps `uuid: ''` (validation only). */
export function normalize(teamId: number, raw: RawEventRow, deriveUuid: boolean): NormalizedEventRow {
  const { event, distinct_id: rawDistinctId, timestamp } = raw;
  if (event === undefined || event === null || event === '') throw new RowProblem('missing "event"');
  if (typeof event !== 'string') throw new RowProblem(`"event" must be a string, got ${kindOf(event)}`);
  let distinctId: string;
  if (rawDistinctId === undefined || rawDistinctId === null || rawDistinctId === '') throw new RowProblem('missing "distinct_id"');
  if (typeof rawDistinctId === 'string') distinctId = rawDistinctId;
  else if (typeof rawDistinctId === 'number' && Number.isFinite(rawDistinctId)) distinctId = String(rawDistinctId);
  else throw new RowProblem(`"distinct_id" must be a string or a number, got ${kindOf(rawDistinctId)}`);
  if (!distinctId.trim()) throw new RowProblem('"distinct_id" is blank');
  if (timestamp === undefined || timestamp === null || timestamp === '') throw new RowProblem('missing "timestamp"');
  if (typeof timestamp !== 'string') throw new RowProblem(`"timestamp" must be an ISO 8601 string, got ${kindOf(timestamp)}`);
  const ts = parseIsoTimestamp(timestamp);
  if (!ts)
    throw new RowProblem(
      `unparsable "timestamp": ${JSON.stringify(shorten(timestamp, 60))} (expected ISO 8601, e.g. 2024-11-20T14:03:10.871Z)`,
    );

  let properties: Record<string, unknown>;
  if (raw.properties === undefined || raw.properties === null) properties = {};
  else if (isPlainObject(raw.properties)) properties = raw.properties;
  else throw new RowProblem(`"properties" must be an object, got ${kindOf(raw.properties)}`);

  const topSet = optionalObject(raw.$set, '$set');
  const topSetOnce = optionalObject(raw.$set_once, '$set_once');
  const propSet = optionalObject(properties.$set, 'properties.$set');
  const propSetOnce = optionalObject(properties.$set_once, 'properties.$set_once');
  const set = topSet ? { ...propSet, ...topSet } : propSet;
  const setOnce = topSetOnce ? { ...propSetOnce, ...topSetOnce } : propSetOnce;
  if (topSet || topSetOnce) {
    properties = { ...properties };
    if (set) properties.$set = set;
    if (setOnce) properties.$set_once = setOnce;
  }

  let elementsChain = '';
  if (raw.elements_chain !== undefined && raw.elements_chain !== null) {
    if (typeof raw.elements_chain !== 'string')
      throw new RowProblem(`"elements_chain" must be a string, got ${kindOf(raw.elements_chain)}`);
    elementsChain = raw.elements_chain;
  }

  const rawUuid = raw.uuid !== undefined && raw.uuid !== null && raw.uuid !== '' ? raw.uuid : raw.id;
  let uuid: string;
  if (rawUuid === undefined || rawUuid === null || rawUuid === '') {
    uuid = deriveUuid ? deterministicUuid(teamId, event, distinctId, ts.value, properties) : '';
  } else {
    const name = rawUuid === raw.uuid ? 'uuid' : 'id';
    if (typeof rawUuid !== 'string' || !UUID_RE.test(rawUuid)) {
      throw new RowProblem(
        `"${name}" is not a UUID: ${typeof rawUuid === 'string' ? JSON.stringify(shorten(rawUuid, 60)) : kindOf(rawUuid)}`,
      );
    }
    uuid = rawUuid.toLowerCase();
  }

  const person = personUpdateOf(event, distinctId, properties);
  return {
    event: { uuid, event, distinct_id: distinctId, properties, timestamp: ts.value, elements_chain: elementsChain },
    person,
  };
}

/** A raw row and the line it starts on. */
export interface NumberedRow {
  line: number;
  row: RawEventRow;
}

/**
 * `err` as the ImportError of row `line` of `source`: a RowProblem gets the source and line, an
 * ImportError passes through; anything else is not a problem of the row and is thrown again.
 */
export function toImportError(source: string, line: number, err: unknown): ImportError {
  if (err instanceof ImportError) return err;
  if (err instanceof RowProblem) return new ImportError(source, line, err.message);
  throw err;
}
