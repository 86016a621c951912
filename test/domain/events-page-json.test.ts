/**
 * `eventsPageJson` (server/domain/events.ts) writes the events list page as text, copying stored
 * properties text when it can. Whatever the properties, the text must parse to exactly the page
 * that `eventToWire` builds: checked here on generated properties (fast-check), including values
 * with double quotes, which PostHog strips at the ends of top-level strings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventToWire, eventsPageJson } from '../../server/domain/events.js';
import { Utf8Builder } from '../../server/domain/json-text.js';
import type { EventPerson, ListedEventRow } from '../../server/storage/events/index.js';

/**
 * A listed row as the repository returns it: properties are stored as JSON text, so the decoded
 * object is always that text parsed back (never a value JSON cannot hold, such as -0), and the
 * text is handed on ('text') or only its decoded object ('decoded').
 */
function row(
  uuid: string,
  distinctId: string,
  properties: Record<string, unknown>,
  stored: 'text' | 'decoded',
  chain = '',
): ListedEventRow {
  const text = JSON.stringify(properties);
  return {
    uuid,
    event: '$pageview',
    distinct_id: distinctId,
    properties: JSON.parse(text) as Record<string, unknown>,
    propertiesText: stored === 'text' ? text : undefined,
    timestamp: '2026-11-20T10:00:00.000000Z',
    elements_chain: chain,
  };
}

const expected = (rows: ListedEventRow[], persons: Map<string, EventPerson>, next: string | null) => ({
  next,
  results: rows.map((r) => eventToWire(r, persons.get(r.distinct_id))),
});

describe('eventsPageJson', () => {
  const persons = new Map<string, EventPerson>([
    ['u1', { is_identified: true, properties: { email: 'a@b.c', name: 'Ann', plan: 'pro' } }],
    ['u2', { is_identified: false, properties: {} }],
  ]);

  it('parses to the page eventToWire builds, for any properties (text or decoded)', () => {
    const key = fc.string({ maxLength: 8 }).filter((k) => k !== '__proto__');
    const value = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('"quoted"', '"left', 'right"', 'in"side', '""'),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.dictionary(key, fc.string({ maxLength: 6 }), { maxKeys: 3 }),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.dictionary(key, value, { maxKeys: 6 }),
            fc.constantFrom('u1', 'u2', 'nobody'),
            fc.constantFrom<'text' | 'decoded'>('text', 'decoded'),
          ),
          { maxLength: 6 },
        ),
        fc.option(fc.webUrl(), { nil: null }),
        (events, next) => {
          const rows = events.map(([props, who, stored], i) => row(`0190000${i}-0000-7000-8000-000000000000`, who, props, stored));
          expect(JSON.parse(eventsPageJson(rows, persons, next).toString('utf8'))).toEqual(expected(rows, persons, next));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes UTF-8 bytes of pages whose properties and persons hold any Unicode text', () => {
    const text = fc.string({ maxLength: 10, unit: 'grapheme' });
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.dictionary(
              text.filter((k) => k !== '__proto__'),
              text,
              { maxKeys: 4 },
            ),
            text,
          ),
          { maxLength: 8 },
        ),
        (events) => {
          const people = new Map<string, EventPerson>(
            events.map(([, name]) => [name, { is_identified: true, properties: { name, email: `${name}@x.y` } }]),
          );
          const rows = events.map(([props, who], i) => row(`0190000${i}-0000-7000-8000-000000000000`, who, props, 'text'));
          const bytes = eventsPageJson(rows, people, null);
          expect(bytes.equals(Buffer.from(JSON.stringify(expected(rows, people, null)), 'utf8'))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
    const rows = [row('01900000-0000-7000-8000-000000000009', 'u1', { city: 'Zürich', mood: '☕ 😀', kana: 'かな' }, 'text')];
    const page = JSON.parse(eventsPageJson(rows, persons, null).toString('utf8')) as { results: { properties: Record<string, unknown> }[] };
    expect(page.results[0]!.properties).toEqual({ city: 'Zürich', mood: '☕ 😀', kana: 'かな' });
  });

  it('strips quotes around top-level string values as eventToWire does, and keeps them inside', () => {
    const rows = [row('01900000-0000-7000-8000-000000000001', 'u1', { a: '"x"', b: 'in"side', c: { d: '"nested"' }, e: 'plain' }, 'text')];
    const page = JSON.parse(eventsPageJson(rows, persons, null).toString('utf8')) as { results: { properties: Record<string, unknown> }[] };
    expect(page.results[0]!.properties).toEqual({ a: 'x', b: 'in"side', c: { d: '"nested"' }, e: 'plain' });
  });

  it('serializes elements from the chain and the person once per distinct_id', () => {
    const chain = 'a.link:href="/pricing"nth-child="1"nth-of-type="1"text="Pricing";div.nav:nth-child="2"nth-of-type="1"';
    const rows = [
      row('01900000-0000-7000-8000-000000000002', 'u1', { $current_url: 'https://x.y/' }, 'text', chain),
      row('01900000-0000-7000-8000-000000000003', 'u1', {}, 'text', chain),
    ];
    const text = eventsPageJson(rows, persons, 'http://h/next').toString('utf8');
    expect(JSON.parse(text)).toEqual(expected(rows, persons, 'http://h/next'));
    const page = JSON.parse(text) as { results: { elements: { tag_name: string }[]; person: { properties: object } }[] };
    expect(page.results[0]!.elements.map((e) => e.tag_name)).toEqual(['a', 'div']);
    expect(page.results[0]!.person.properties).toEqual({ email: 'a@b.c', name: 'Ann' });
  });
});

describe('Utf8Builder', () => {
  it('gives the bytes of the joined parts, growing from any starting size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 300, unit: 'grapheme' }), { maxLength: 30 }),
        fc.nat(40),
        fc.nat(40),
        (parts, hint, slack) => {
          const b = new Utf8Builder(hint, slack);
          for (const p of parts) b.push(p);
          expect(b.bytes().equals(Buffer.from(parts.join(''), 'utf8'))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('encodes 4-byte characters across a growth and keeps what was written before it', () => {
    const b = new Utf8Builder(0, 0).push('a'.repeat(70)).push('😀'.repeat(50)).push('é');
    expect(b.bytes().toString('utf8')).toBe('a'.repeat(70) + '😀'.repeat(50) + 'é');
    expect(b.bytes().length).toBe(70 + 4 * 50 + 2);
  });
});
