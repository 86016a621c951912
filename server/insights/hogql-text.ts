/**
 * HogQL text that runners write: string literals and property fields. A runner's query is HogQL
 * (as PostHog's runners build HogQL ASTs), so the text it sends is what the response's `hogql`
 * shows, and every value in it is a literal the HogQL compiler turns into a bound parameter.
 */

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
