/**
 * Random property filter groups for the events list's `properties` parameter (fast-check): every
 * operator, event and person types, values of every JSON kind, AND/OR nested. Tests that compare
 * two ways of storing the same events (materialized columns, property sets) send the same groups
 * to both and compare the answers.
 */
import fc from 'fast-check';
import { PROPERTY_OPERATORS } from '../../server/storage/events/filter-tree.js';
import type { TestServer } from './server.js';

/** One filter as the API takes it. */
export type Filter = { key: string; operator: string; value?: unknown; type: 'event' | 'person' };
/** A group of filters and groups as the API takes it. */
export type Group = { type: 'AND' | 'OR'; values: (Filter | Group)[] };

const scalar = fc.oneof(
  fc.constantFrom(
    'Chrome',
    'chrome',
    '',
    '10',
    '7',
    '-3',
    'x',
    'true',
    'yes',
    "it's",
    'Zürich',
    'ZÜR',
    'ada@hedgebox.net',
    'pro',
    '2024-03-10',
    '1e21',
    '{"a":1,"b":[2,"c"]}',
    '["a","b"]',
    'null',
  ),
  fc.integer({ min: -5, max: 20 }),
  fc.constantFrom(10.5, 0.1, 1e21, 2.5, 36, 12.5),
  fc.boolean(),
);

/**
 * `count` random groups (deterministic for a `seed`) over the event keys `eventKeys` (and a key no
 * event has, `missing`) and the person keys `personKeys` (none: event filters only).
 */
export function randomFilterGroups(eventKeys: readonly string[], personKeys: readonly string[], count: number, seed: number): Group[] {
  const keys = fc.constantFrom(...eventKeys, 'missing').map((key) => ({ key, type: 'event' as const }));
  const filter: fc.Arbitrary<Filter> = fc
    .tuple(
      personKeys.length
        ? fc.oneof(
            keys,
            fc.constantFrom(...personKeys).map((key) => ({ key, type: 'person' as const })),
          )
        : keys,
      fc.constantFrom(...PROPERTY_OPERATORS),
      fc.oneof(scalar, fc.array(scalar, { minLength: 1, maxLength: 3 })),
      fc.constantFrom('^C', 'ü', '[0-9]+', '(?i)chrome', '^$', 'a|b'),
      fc.constantFrom('2024-03-10', '2024-03-11T00:00:00Z', '2024-01-01', '2024-03-12'),
      fc.integer({ min: -5, max: 20 }),
    )
    .map(([{ key, type }, operator, value, pattern, date, number]) => {
      if (operator === 'is_set' || operator === 'is_not_set') return { key, operator, type };
      if (operator === 'regex' || operator === 'not_regex') return { key, operator, value: pattern, type };
      if (operator.startsWith('is_date')) return { key, operator, value: date, type };
      if (['gt', 'lt', 'gte', 'lte'].includes(operator)) return { key, operator, value: number, type };
      if (operator === 'icontains' || operator === 'not_icontains')
        return { key, operator, value: Array.isArray(value) ? String(value[0]) : String(value), type };
      return { key, operator, value, type };
    });
  const group: fc.Arbitrary<Group> = fc.letrec<{ g: Group }>((tie) => ({
    g: fc.record({
      type: fc.constantFrom('AND' as const, 'OR' as const),
      values: fc.array(fc.oneof({ depthSize: 'small' }, filter, tie('g')), { minLength: 1, maxLength: 3 }),
    }),
  })).g;
  return fc.sample(group, { numRuns: count, seed });
}

/**
 * One GET's answer as text, for comparing two ways of storing the same events: `status body` when
 * not 200; else a list's `results` as their ids (`id`, or a person's `uuid`), or a bare array (the
 * events `values`) as it is.
 */
export async function answerText(t: TestServer, path: string): Promise<string> {
  const res = await t.fetch(path);
  const text = await res.text();
  if (res.status !== 200) return `${res.status} ${text}`;
  const body = JSON.parse(text) as { results?: { id?: string; uuid?: string }[] } | { name: string; count?: number }[];
  if (Array.isArray(body)) return JSON.stringify(body);
  return JSON.stringify((body.results ?? []).map((r) => r.id ?? r.uuid));
}
