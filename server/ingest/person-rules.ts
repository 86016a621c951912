/**
 * What an event does to its person, by PostHog's rules, for every way events come in (the import's
 * normalize.ts and the capture endpoints' server/capture/process.ts call `personUpdateOf`):
 *
 * - `properties.$process_person_profile === false` (only the boolean): no person update at all,
 *   and `$identify` / `$create_alias` / `$merge_dangerously` / `$groupidentify` are not stored
 *   (`dropsEvent`); PostHog: nodejs/src/worker/ingestion/event-pipeline/normalizeProcessPersonFlagStep.
 * - `$set` / `$set_once` (objects) from `properties` (the callers merged the top-level ones in),
 *   `$unset` from `properties.$unset` only (an array of keys, or an object whose keys are used), as
 *   nodejs/src/worker/ingestion/persons/person-update.ts reads them.
 * - `$identify` with `$anon_distinct_id`, `$create_alias` (and `$merge_dangerously`) with `alias`
 *   merge the other id into the event's person (person-merge-service.ts), unless either id is one
 *   PostHog refuses (`isIllegalDistinctId`: warning `cannot_merge_with_illegal_distinct_id`) or
 *   both are the same, in which case the event is a plain person update (a `$identify` without
 *   `$anon_distinct_id` too: it does not mark the person identified).
 */
import type { PersonUpdate } from '../storage/events/index.js';

/** Events PostHog drops when `$process_person_profile` is false (they only act on persons). */
const PERSON_ONLY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']);

const ILLEGAL_ANY_CASE = [
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
];
const ILLEGAL_EXACT = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined'];

/**
 * True for a distinct id PostHog never merges (person-merge-service.ts `isDistinctIdIllegal`):
 * blank, one of its placeholder values (`anonymous`, `null`, `0`, … ; some in any case), or such a
 * value in single or double quotes.
 */
export function isIllegalDistinctId(id: string): boolean {
  const trimmed = id.trim();
  if (!trimmed) return true;
  const unquoted = /^(['"])(.*)\1$/.exec(trimmed)?.[2];
  for (const v of unquoted === undefined ? [trimmed] : [trimmed, unquoted]) {
    if (ILLEGAL_ANY_CASE.includes(v.toLowerCase()) || ILLEGAL_EXACT.includes(v)) return true;
  }
  return false;
}

/** True when `$process_person_profile` is the boolean false (anything else processes the person). */
export function personlessEvent(properties: Record<string, unknown>): boolean {
  return properties.$process_person_profile === false;
}

/** True when the event is not stored at all: a person-only event sent with `$process_person_profile: false`. */
export function dropsEvent(event: string, properties: Record<string, unknown>): boolean {
  return personlessEvent(properties) && PERSON_ONLY_EVENTS.has(event);
}

function objectOrUndefined(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length ? (v as Record<string, unknown>) : undefined;
}

/** `properties.$unset` as a list of keys: an array's strings, or an object's keys. */
function unsetKeys(v: unknown): string[] | undefined {
  if (Array.isArray(v)) {
    const keys = v.filter((k): k is string => typeof k === 'string');
    return keys.length ? keys : undefined;
  }
  const obj = objectOrUndefined(v);
  return obj ? Object.keys(obj) : undefined;
}

/** A merge id as PostHog reads it: `String(value)` of a string or number; nothing else. */
function idOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/**
 * The person update of an event (module doc), or undefined when the event leaves persons alone
 * (`$process_person_profile: false`). `properties` already holds the merged `$set` / `$set_once`.
 */
export function personUpdateOf(event: string, distinctId: string, properties: Record<string, unknown>): PersonUpdate | undefined {
  if (personlessEvent(properties)) return undefined;
  const person: PersonUpdate = { distinct_id: distinctId };
  const set = objectOrUndefined(properties.$set);
  const setOnce = objectOrUndefined(properties.$set_once);
  const unset = unsetKeys(properties.$unset);
  if (set) person.set = set;
  if (setOnce) person.set_once = setOnce;
  if (unset) person.unset = unset;
  const legal = (other: string | undefined) =>
    other && !isIllegalDistinctId(other) && !isIllegalDistinctId(distinctId) ? other : undefined;
  if (event === '$identify') {
    // PostHog merges (and marks identified) only with an `$anon_distinct_id`; a plain `$identify`
    // is an ordinary person update (person-merge-service.ts)
    const anon = legal(idOf(properties.$anon_distinct_id));
    if (anon !== undefined && anon !== distinctId) person.identify = { anon_distinct_id: anon };
  } else if (event === '$create_alias' || event === '$merge_dangerously') {
    const alias = legal(idOf(properties.alias));
    if (alias) person.alias = alias;
  }
  return person;
}
