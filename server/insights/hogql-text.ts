/**
 * HogQL text that runners write: string literals and property fields. A runner's query is HogQL
 * (as PostHog's runners build HogQL ASTs), so the text it sends is what the response's `hogql`
 * shows, and every value in it is a literal the HogQL compiler turns into a bound parameter.
 */
import type { EventsWindow } from './context.js';

/** A HogQL string literal of `text` (backslashes and single quotes escaped, as HogQL reads them). */
export function hogqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The HogQL field of a property: `properties['key']` of the event, or `person.properties['key']`
 * of its person (PostHog's `person_properties` / breakdown type `person`). A String, NULL when
 * the property is missing.
 */
export function propertyField(key: string, of: 'event' | 'person'): string {
  return `${of === 'person' ? 'person.' : ''}properties[${hogqlString(key)}]`;
}

/**
 * `text` with its window written in as a WHERE clause (the event and the time bounds, UTC), the
 * HogQL the answer's `hogql` shows: the window itself is applied as the events store's conditions,
 * and its property filters are not written out.
 */
export function withWindow(text: string, window: EventsWindow | undefined): string {
  if (!window) return text;
  const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  const where = [
    ...(window.event === undefined ? [] : [`event = ${hogqlString(window.event)}`]),
    `timestamp >= toDateTime(${hogqlString(iso(window.from))})`,
    `timestamp < toDateTime(${hogqlString(iso(window.to))})`,
  ].join(' AND ');
  const at = [' GROUP BY ', ' LIMIT '].map((k) => text.indexOf(k)).find((i) => i >= 0);
  return at === undefined ? `${text} WHERE ${where}` : `${text.slice(0, at)} WHERE ${where}${text.slice(at)}`;
}
