/**
 * One captured event → the row the shared write path stores (server/ingest/write-events.ts), with
 * the processing PostHog does between capture and storage:
 *
 * - uuid: the one sent, else a new UUIDv7 (rust/capture events/analytics.rs).
 * - timestamp (rust/common/types/src/timestamp.rs `parse_event_timestamp`; research notes §1f),
 *   with `now` the time the request was received: a parseable `timestamp` is corrected for the
 *   sender's clock skew when the request has a `sent_at` (`now + (timestamp - sent_at)`, unless
 *   `properties.$ignore_sent_at` is true), else taken as is; an unparseable or missing one is `now`;
 *   an integer `offset` (ms) overrides both (`now - offset`); more than 23 h in the future → `now`;
 *   outside years 1–9999 → the Unix epoch.
 * - `$set` / `$set_once` given at the event's top level are merged into `properties.$set` /
 *   `properties.$set_once`, the top level winning (nodejs/src/utils/event.ts `sanitizeEvent`).
 * - `elements_chain`: `properties.$elements_chain` when a non-empty string, else built from
 *   `properties.$elements` (PostHog's `extractElements` + `elementsToString`,
 *   nodejs/src/utils/db/elements-chain.ts); both keys are removed from the stored properties.
 * - persons: server/ingest/person-rules.ts (`$process_person_profile: false` → no person update,
 *   `$set` / `$set_once` / `$unset` removed from the stored properties, and person-only events
 *   dropped; otherwise the flag itself is removed).
 * - text PostgreSQL cannot store (NUL, lone UTF-16 surrogates) becomes U+FFFD in keys and values,
 *   so both stores keep the same event.
 */
import { v7 } from 'uuid';
import { writeElementsChain, type ChainElement } from '../domain/elements-chain.js';
import { formatTimestamp, parseIsoTimestamp, timestampToMs } from '../storage/timestamps.js';
import { isPlainObject } from '../ingest/import/normalize.js';
import { dropsEvent, personUpdateOf, personlessEvent } from '../ingest/person-rules.js';
import type { NormalizedEventRow } from '../ingest/write-events.js';
import type { RawCaptureEvent } from './parse.js';

const HOUR_MS = 3_600_000;

/** A new UUIDv7 (the `uuid` package's) for Unix milliseconds `ms`: 48-bit time, random rest. */
export function newUuidv7(ms: number): string {
  return v7({ msecs: ms });
}

/** A stored timestamp from ms since the epoch, or undefined outside years 1–9999. */
function fromMs(ms: number): string | undefined {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  return Number.isNaN(d.getTime()) || y < 1 || y > 9999 ? undefined : formatTimestamp(d);
}

/**
 * The event's stored timestamp (module doc). `sentAtMs`: the request's `sent_at`, ms; `nowMs`: when
 * the request was received.
 */
export function eventTimestamp(
  timestamp: unknown,
  offset: unknown,
  sentAtMs: number | undefined,
  ignoreSentAt: boolean,
  nowMs: number,
): string {
  let ms = nowMs;
  let exact: string | undefined;
  const parsed = typeof timestamp === 'string' ? parseIsoTimestamp(timestamp) : undefined;
  if (parsed) {
    if (sentAtMs !== undefined && !ignoreSentAt) ms = nowMs + (timestampToMs(parsed.value) - sentAtMs);
    else {
      ms = timestampToMs(parsed.value);
      exact = parsed.value;
    }
  }
  if (typeof offset === 'number' && Number.isInteger(offset)) {
    ms = nowMs - offset;
    exact = undefined;
  }
  if (ms - nowMs > 23 * HOUR_MS) return formatTimestamp(new Date(nowMs));
  return exact ?? fromMs(ms) ?? formatTimestamp(new Date(0));
}

/** `$elements` (posthog-js's element objects) as chain elements (PostHog's `extractElements`). */
function chainElementsOf(elements: unknown[]): ChainElement[] {
  const out: ChainElement[] = [];
  for (const el of elements) {
    if (!isPlainObject(el)) continue;
    const attributes: Record<string, string> = {};
    for (const [k, v] of Object.entries(el)) if (k.startsWith('attr__') && v !== undefined && v !== null) attributes[k] = String(v);
    const cls = el.attr__class;
    const classes = Array.isArray(cls) ? cls.map(String) : typeof cls === 'string' ? cls.split(' ') : [];
    const text = typeof el.$el_text === 'string' ? el.$el_text.slice(0, 400) : undefined;
    const href = typeof el.attr__href === 'string' ? el.attr__href.slice(0, 2048) : undefined;
    const id = typeof el.attr__id === 'string' ? el.attr__id : undefined;
    out.push({
      tag: typeof el.tag_name === 'string' ? el.tag_name : '',
      classes,
      ...(text ? { text } : {}),
      ...(href ? { href } : {}),
      ...(id ? { id } : {}),
      nthChild: Number.isInteger(el.nth_child) ? (el.nth_child as number) : 0,
      nthOfType: Number.isInteger(el.nth_of_type) ? (el.nth_of_type as number) : 0,
      attributes,
    });
  }
  return out;
}

/** The event's `elements_chain`, taking `$elements_chain` / `$elements` out of `properties` (module doc). */
function takeElementsChain(properties: Record<string, unknown>): string {
  const chain = properties.$elements_chain;
  const elements = properties.$elements;
  delete properties.$elements_chain;
  delete properties.$elements;
  if (typeof chain === 'string' && chain) return chain;
  if (Array.isArray(elements) && elements.length) return writeElementsChain(chainElementsOf(elements));
  return '';
}

const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with NUL and lone surrogates replaced by U+FFFD in every string and key (module doc). */
export function storable(value: unknown): unknown {
  if (typeof value === 'string') {
    const nul = value.includes('\u0000');
    const surrogate = SURROGATE.test(value);
    if (!nul && !surrogate) return value;
    const cleaned = nul ? value.replaceAll('\u0000', '\uFFFD') : value;
    return surrogate ? cleaned.replace(LONE_SURROGATE, '\uFFFD') : cleaned;
  }
  if (Array.isArray(value)) return value.map(storable);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[storable(k) as string] = storable(v);
    return out;
  }
  return value;
}

/** The request-wide context of `processEvent`. */
export interface CaptureContext {
  /** when the request was received, ms since the epoch */
  nowMs: number;
  /** the request's `sent_at`, ms since the epoch */
  sentAtMs: number | undefined;
}

/** The row to store for `raw` (module doc), or undefined when PostHog drops the event. */
export function processEvent(raw: RawCaptureEvent, ctx: CaptureContext): NormalizedEventRow | undefined {
  const properties = storable(raw.properties) as Record<string, unknown>;
  const event = storable(raw.event) as string;
  const distinctId = storable(raw.distinct_id) as string;
  if (dropsEvent(event, properties)) return undefined;
  for (const key of ['$set', '$set_once'] as const) {
    const top = raw[key];
    if (isPlainObject(top)) properties[key] = { ...(isPlainObject(properties[key]) ? properties[key] : {}), ...top };
  }
  const timestamp = eventTimestamp(raw.timestamp, raw.offset, ctx.sentAtMs, properties.$ignore_sent_at === true, ctx.nowMs);
  const elementsChain = takeElementsChain(properties);
  const person = personUpdateOf(event, distinctId, properties);
  if (personlessEvent(properties)) {
    delete properties.$set;
    delete properties.$set_once;
    delete properties.$unset;
  } else {
    delete properties.$process_person_profile;
  }
  return {
    event: {
      uuid: raw.uuid ?? newUuidv7(ctx.nowMs),
      event,
      distinct_id: distinctId,
      properties,
      timestamp,
      elements_chain: elementsChain,
    },
    person,
  };
}

/** The request's `sent_at` in ms: the body's ISO `sent_at`, else the query's `_` / `sent_at` in ms (seconds-sized values ignored). */
export function sentAtOf(bodySentAt: string | undefined, query: URLSearchParams): number | undefined {
  if (bodySentAt !== undefined) {
    const parsed = parseIsoTimestamp(bodySentAt);
    return parsed ? timestampToMs(parsed.value) : undefined;
  }
  const q = query.get('_') ?? query.get('sent_at');
  if (q === null || !/^\d+$/.test(q)) return undefined;
  const ms = Number(q);
  return new Date(ms).getUTCFullYear() > 2020 ? ms : undefined;
}
