/**
 * Unit tests of the events domain helpers: the elements chain reader (PostHog's
 * `chain_to_elements`), the date reader of `after` / `before` and of `is_date_*` filter values
 * (PostHog's `relative_date_parse` and dateutil's `isoparse`), and the CSV renderer
 * (rest_framework_csv's `CSVRenderer`). Expected values come from PostHog's own tests
 * (posthog/models/test/test_elements.py, posthog/test/test_utils.py) or were checked against
 * PostHog's Python code; the openapi.yaml examples are checked against the real functions.
 */
import { describe, expect, it } from 'vitest';
import { eventsToCsv, rowsToCsv } from '../../server/domain/csv.js';
import { parseAttributePairs, parseElementsChain, splitChain, type Element } from '../../server/domain/elements-chain.js';
import { parseEventDateParam, parseRelativeOrIso } from '../../server/domain/relative-dates.js';
import { loadSpec } from '../../server/http/spec.js';

/** A small seeded PRNG (mulberry32), so that the random corpora are the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function element(partial: Partial<Element> & { order: number }): Element {
  return {
    event: null,
    text: null,
    tag_name: null,
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: null,
    nth_of_type: null,
    attributes: {},
    ...partial,
  };
}

interface ExampleEvent {
  elements: unknown[];
  elements_chain: string;
  [k: string]: unknown;
}

function specExample<T>(name: string): T {
  const examples = loadSpec().components?.examples as Record<string, { value: T }>;
  const example = examples[name];
  if (!example) throw new Error(`no example ${name} in openapi.yaml`);
  return example.value;
}

// ---------------------------------------------------------------------------------------------

describe('parseElementsChain', () => {
  it('reads tag, classes, attributes and positions, innermost element first', () => {
    const chain =
      'button.btn.btn-primary:attr__class="btn btn-primary"attr__id="upload"href="/files"nth-child="2"nth-of-type="1"text="Upload file";form:nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"';
    expect(parseElementsChain(chain)).toEqual([
      element({
        order: 0,
        tag_name: 'button',
        attr_class: ['btn', 'btn-primary'],
        href: '/files',
        text: 'Upload file',
        nth_child: 2,
        nth_of_type: 1,
        attributes: { attr__class: 'btn btn-primary', attr__id: 'upload' },
      }),
      element({ order: 1, tag_name: 'form', nth_child: 1, nth_of_type: 1 }),
      element({ order: 2, tag_name: 'body', nth_child: 2, nth_of_type: 1 }),
    ]);
  });

  it('gives every field of the ClickhouseEventElement schema, event always null', () => {
    const [el] = parseElementsChain('a:href="/x"');
    expect(Object.keys(el!)).toEqual([
      'event',
      'text',
      'tag_name',
      'attr_class',
      'href',
      'attr_id',
      'nth_child',
      'nth_of_type',
      'attributes',
      'order',
    ]);
    expect(el!.event).toBeNull();
  });

  it('reads the chain PostHog writes for its own test elements (test_elements_to_string)', () => {
    const chain = [
      String.raw`a.small:data-attr="something \" that; could mess up"href="/a-url"nth-child="1"nth-of-type="0"number="33"prop="value"style="min-height: 100vh;"text="bla bla"`,
      'button.btn.btn-primary:nth-child="0"nth-of-type="0"',
      'div:nth-child="0"nth-of-type="0"',
      'div:attr_id="nested"nth-child="0"nth-of-type="0"',
    ].join(';');
    const elements = parseElementsChain(chain);
    expect(elements).toHaveLength(4);
    expect(elements[0]).toMatchObject({
      tag_name: 'a',
      href: '/a-url',
      attr_class: ['small'],
      text: 'bla bla',
      nth_child: 1,
      nth_of_type: 0,
    });
    // the escape stays in the value, as in PostHog; `;` inside quotes does not split
    expect(elements[0]!.attributes).toEqual({
      prop: 'value',
      number: '33',
      'data-attr': String.raw`something \" that; could mess up`,
      style: 'min-height: 100vh;',
    });
    expect(elements[1]!.attr_class).toEqual(['btn', 'btn-primary']);
    expect(elements[3]!.attr_id).toBe('nested');
    expect(elements.map((e) => e.order)).toEqual([0, 1, 2, 3]);
  });

  it('drops empty class names and finds the attributes after a class holding `:` (test_broken_class_names)', () => {
    expect(parseElementsChain('a........small')).toEqual([element({ order: 0, tag_name: 'a', attr_class: ['small'] })]);
    // elements_to_string of attr_class ['small"', 'xy:z'] and attributes {attr_class: 'xyz small"'}
    const [el] = parseElementsChain(String.raw`a.small.xy:z:attr_class="xyz small\""href="/a-url"nth-child="0"nth-of-type="0"`);
    expect(el).toMatchObject({ tag_name: 'a', href: '/a-url', attr_class: ['small', 'xy:z'], attr_id: null });
    expect(el!.attributes).toEqual({ attr_class: String.raw`xyz small\"` });
  });

  it('reads a production-shaped chain with attr__ attributes', () => {
    const chain =
      'svg.LemonIcon.text-3xl:attr__class="LemonIcon text-3xl"attr__fill="currentColor"attr__width="100%"nth-child="1"nth-of-type="1";div:attr_id="nested"nth-child="0"nth-of-type="0"';
    expect(parseElementsChain(chain)).toEqual([
      element({
        order: 0,
        tag_name: 'svg',
        attr_class: ['LemonIcon', 'text-3xl'],
        nth_child: 1,
        nth_of_type: 1,
        attributes: { attr__class: 'LemonIcon text-3xl', attr__fill: 'currentColor', attr__width: '100%' },
      }),
      element({ order: 1, tag_name: 'div', attr_id: 'nested', nth_child: 0, nth_of_type: 0 }),
    ]);
  });

  it('keeps the backslash edge cases of PostHog TestChainSplitting', () => {
    const pick = (chain: string) => parseElementsChain(chain).map((e) => [e.tag_name, e.text]);
    expect(pick(String.raw`a:text="\"`)).toEqual([['a', null]]);
    expect(pick('a:text="x\\\ny"nth-child="1"')).toEqual([['a', null]]);
    expect(pick(String.raw`a:text="back\";div:nth-child="0"`)).toEqual([['a', String.raw`back\";div:nth-child=`]]);
  });

  it('reads attribute pairs as PostHog test_attribute_parsing pins them', () => {
    expect(parseAttributePairs('a="1"')).toEqual([['a', '1']]);
    expect(parseAttributePairs('a="1"b="2"')).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(parseAttributePairs('href="/x?b=c"a="1"')).toEqual([
      ['href', '/x?b=c'],
      ['a', '1'],
    ]);
    expect(parseAttributePairs('a=b="v"')).toEqual([['a=b', 'v']]);
    expect(parseAttributePairs(String.raw`k="a\"b"n="1"`)).toEqual([
      ['k', String.raw`a\"b`],
      ['n', '1'],
    ]);
    expect(parseAttributePairs('a=""b="2"')).toEqual([['a', '"b=']]);
    expect(parseAttributePairs('a=1b=2')).toEqual([]);
    expect(parseAttributePairs('a="1"b="2')).toEqual([['a', '1']]);
    expect(parseAttributePairs('')).toEqual([]);
  });

  it('splits on `;` and whitespace outside quotes only', () => {
    expect(splitChain('a b;;c')).toEqual(['a', 'b', 'c']);
    expect(splitChain('a:text="x; y";b')).toEqual(['a:text="x; y"', 'b']);
    expect(splitChain('a\u00a0b\u2003c')).toEqual(['a', 'b', 'c']);
    // an unclosed quote ends the element before it
    expect(splitChain('a:text="open;b')).toEqual(['a:text=', 'open', 'b']);
  });

  it('reads nth-child as Python int() does, null when it is not an integer', () => {
    const [a, b, c] = parseElementsChain(
      'a:nth-child=" 1_0 "nth-of-type="+3";b:nth-child="x"nth-of-type="1.5";c:nth-child="99999999999999999999"',
    );
    expect([a!.nth_child, a!.nth_of_type]).toEqual([10, 3]);
    expect([b!.nth_child, b!.nth_of_type]).toEqual([null, null]);
    expect(c!.nth_child).toBeNull();
  });

  it('handles empty and odd chains without throwing', () => {
    expect(parseElementsChain('')).toEqual([]);
    expect(parseElementsChain(';;  ;')).toEqual([]);
    expect(parseElementsChain('.x')).toEqual([element({ order: 0, tag_name: '', attr_class: ['x'] })]);
    expect(parseElementsChain(':text="t"')).toEqual([element({ order: 0, text: 't' })]);
    expect(parseElementsChain('a:="nokey"')).toEqual([element({ order: 0, tag_name: 'a' })]);
    const [proto] = parseElementsChain('a:__proto__="x"');
    expect(Object.keys(proto!.attributes)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(proto!.attributes)).toBe(Object.prototype);
  });

  it('reads the elements_chain of every openapi.yaml events example into its elements', () => {
    for (const name of ['EventsPageExample', 'EventsLastPageExample']) {
      for (const event of specExample<{ results: ExampleEvent[] }>(name).results) {
        expect(parseElementsChain(event.elements_chain)).toEqual(event.elements);
      }
    }
  });

  it('gives what PostHog regular expressions give, on random chains', () => {
    // PostHog's expressions in JS: Python's `.` is [^\n], `\s` is Python's whitespace set
    const ws = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
    const splitRe = new RegExp(`(?:[^${ws};"]|"(?:\\\\[^\\n]|[^"])*")+`, 'g');
    const classRe = /([^\n]*?)($|:([a-zA-Z\-_0-9]*=[^\n]*))/;
    const attrRe = /([^\n]*?)="([^\n]*?[^\\])"/g;
    const pyInt = (v: string): number | null => (/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(v) ? Number(v.trim().replace(/_/g, '')) : null);
    const reference = (chain: string): Element[] =>
      [...chain.matchAll(splitRe)].map((m, order) => {
        const el = element({ order });
        const parts = classRe.exec(m[0]);
        const tag = parts?.[1] ?? '';
        if (tag) {
          const [t, ...classes] = tag.split('.');
          el.tag_name = t!;
          if (classes.length) el.attr_class = classes.filter((c) => c !== '');
        }
        for (const [, key = '', value = ''] of parts?.[3] ? parts[3].matchAll(attrRe) : []) {
          if (key === 'text') el.text = value;
          else if (key === 'href') el.href = value;
          else if (key === 'attr_id') el.attr_id = value;
          else if (key === 'nth-child') el.nth_child = pyInt(value);
          else if (key === 'nth-of-type') el.nth_of_type = pyInt(value);
          else if (key) el.attributes = { ...el.attributes, [key]: value };
        }
        return el;
      });
    const alphabet = ['a', 'b', 'A', '0', '1', '_', '-', ':', ';', '.', '=', ' ', '"', '\\', '\n', '\t', 'text="', 'nth-child="'];
    const random = rng(42);
    for (let n = 0; n < 3000; n++) {
      let chain = '';
      const length = Math.floor(random() * 22);
      for (let i = 0; i < length; i++) chain += alphabet[Math.floor(random() * alphabet.length)];
      expect(parseElementsChain(chain), JSON.stringify(chain)).toEqual(reference(chain));
    }
  });

  it('reads hostile chains in linear time (the expressions backtrack for minutes on these)', () => {
    const started = Date.now();
    const chains = [
      'a:x="' + '\\'.repeat(100_000),
      'a:' + 'x'.repeat(100_000),
      'a:'.repeat(50_000),
      '"' + '\\\\'.repeat(50_000),
      'a"' + 'x'.repeat(100_000) + '\n"',
      'a:b="' + 'x'.repeat(100_000),
    ];
    for (const chain of chains) parseElementsChain(chain);
    expect(parseElementsChain('a:text="' + 'x'.repeat(100_000) + '"')[0]!.text).toHaveLength(100_000);
    // a bound for a hang, not for speed (tens of ms here; the backtracking expressions took minutes):
    // vitest's timeout cannot stop a synchronous loop, so the elapsed time is checked after it
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

// ---------------------------------------------------------------------------------------------

describe('parseEventDateParam', () => {
  // PostHog's TestRelativeDateParse freezes time at 2020-01-31T12:22:23
  const now = new Date('2020-01-31T12:22:23.456Z');
  const utc = (input: string) => parseEventDateParam(input, { now, timezone: 'UTC' });
  const paris = (input: string, at = now) => parseEventDateParam(input, { now: at, timezone: 'Europe/Paris' });

  it('counts hours, minutes, seconds, days and weeks back from now', () => {
    expect(utc('-24h')).toBe('2020-01-30T12:22:23.456000Z');
    expect(utc('-48h')).toBe('2020-01-29T12:22:23.456000Z');
    expect(utc('-30M')).toBe('2020-01-31T11:52:23.456000Z');
    expect(utc('-90s')).toBe('2020-01-31T12:20:53.456000Z');
    expect(utc('-1d')).toBe('2020-01-30T12:22:23.456000Z');
    expect(utc('-2d')).toBe('2020-01-29T12:22:23.456000Z');
    expect(utc('-2w')).toBe('2020-01-17T12:22:23.456000Z');
    // the sign changes nothing: PostHog always counts back
    expect(utc('7d')).toBe(utc('-7d'));
  });

  it('counts months and years on the calendar, clamping the day, and quarters as 13 weeks', () => {
    expect(utc('-1m')).toBe('2019-12-31T12:22:23.456000Z');
    expect(utc('-2m')).toBe('2019-11-30T12:22:23.456000Z');
    expect(utc('-13m')).toBe('2018-12-31T12:22:23.456000Z');
    expect(utc('-1y')).toBe('2019-01-31T12:22:23.456000Z');
    expect(utc('-2y')).toBe('2018-01-31T12:22:23.456000Z');
    expect(utc('-1q')).toBe('2019-11-01T12:22:23.456000Z');
    expect(parseEventDateParam('-1m', { now: new Date('2024-03-31T12:00:00Z'), timezone: 'UTC' })).toBe('2024-02-29T12:00:00.000000Z');
  });

  it('moves to the start or end of the hour or day with Start / End', () => {
    expect(utc('dStart')).toBe('2020-01-31T00:00:00.000000Z');
    expect(utc('-1dStart')).toBe('2020-01-30T00:00:00.000000Z');
    expect(utc('-1dEnd')).toBe('2020-01-30T23:59:59.999999Z');
    expect(utc('hStart')).toBe('2020-01-31T12:00:00.000000Z');
    expect(utc('-3hEnd')).toBe('2020-01-31T09:59:59.999999Z');
  });

  it('sets only the day (or month and day) for m and y, keeping the time of day, as PostHog does', () => {
    expect(utc('mStart')).toBe('2020-01-01T12:22:23.456000Z');
    expect(utc('-1mStart')).toBe('2019-12-01T12:22:23.456000Z');
    expect(utc('-2mStart')).toBe('2019-11-01T12:22:23.456000Z');
    expect(utc('-1mEnd')).toBe('2019-12-31T12:22:23.456000Z');
    expect(utc('-2mEnd')).toBe('2019-11-30T12:22:23.456000Z');
    expect(utc('yStart')).toBe('2020-01-01T12:22:23.456000Z');
    expect(utc('-1yStart')).toBe('2019-01-01T12:22:23.456000Z');
    // PostHog's yEnd sets day=31 only: the last day of the current month, not December 31
    const feb = new Date('2024-02-10T08:00:00Z');
    expect(parseEventDateParam('yEnd', { now: feb, timezone: 'UTC' })).toBe('2024-02-29T08:00:00.000000Z');
    expect(parseEventDateParam('-1yEnd', { now: feb, timezone: 'UTC' })).toBe('2023-02-28T08:00:00.000000Z');
    // w, q, M and s ignore the suffix
    expect(utc('wStart')).toBe('2020-01-31T12:22:23.456000Z');
    expect(utc('-1wEnd')).toBe(utc('-1w'));
  });

  it('rounds Start / End in the project time zone', () => {
    expect(paris('dStart')).toBe('2020-01-30T23:00:00.000000Z');
    expect(paris('-1dStart')).toBe('2020-01-29T23:00:00.000000Z');
    expect(paris('-1dEnd')).toBe('2020-01-30T22:59:59.999999Z');
    expect(parseEventDateParam('dStart', { now, timezone: 'America/Los_Angeles' })).toBe('2020-01-31T08:00:00.000000Z');
    expect(parseEventDateParam('hStart', { now, timezone: 'Asia/Kolkata' })).toBe('2020-01-31T11:30:00.000000Z');
    // the instant `now` itself does not depend on the zone
    expect(paris('-30M')).toBe(utc('-30M'));
  });

  it('does wall-clock arithmetic across daylight-saving changes, as Python does', () => {
    const afterSpringForward = new Date('2024-03-31T12:00:00Z'); // 14:00 CEST
    expect(paris('-24h', afterSpringForward)).toBe('2024-03-30T13:00:00.000000Z'); // 14:00 CET, 23 h earlier
    expect(paris('dStart', afterSpringForward)).toBe('2024-03-30T23:00:00.000000Z');
    expect(paris('-1dEnd', afterSpringForward)).toBe('2024-03-30T22:59:59.999999Z');
    expect(paris('-1mEnd', afterSpringForward)).toBe('2024-02-29T13:00:00.000000Z');
    expect(paris('-1dStart', new Date('2024-10-27T12:00:00Z'))).toBe('2024-10-25T22:00:00.000000Z');
  });

  it('reads ISO 8601 dates and date-times, without an offset in the project time zone', () => {
    expect(utc('2024-11-20')).toBe('2024-11-20T00:00:00.000000Z');
    expect(paris('2024-11-20')).toBe('2024-11-19T23:00:00.000000Z');
    expect(paris('2024-07-01T12:00')).toBe('2024-07-01T10:00:00.000000Z');
    expect(paris('2024-11-20T14:00:00Z')).toBe('2024-11-20T14:00:00.000000Z');
    expect(paris('2024-11-20 14:00:00+01:00')).toBe('2024-11-20T13:00:00.000000Z');
    expect(utc('2024-11-20T14:30:15.123456789+05:30')).toBe('2024-11-20T09:00:15.123456Z');
    expect(utc('2024-11-20T14:30:15,5-08')).toBe('2024-11-20T22:30:15.500000Z');
    expect(utc('2024-11-20T14:30z')).toBe('2024-11-20T14:30:00.000000Z');
    expect(parseEventDateParam('2024-11-20T14', { now, timezone: 'Asia/Kolkata' })).toBe('2024-11-20T08:30:00.000000Z');
  });

  it('reads the other forms dateutil isoparse and strptime("%Y-%m-%d") take', () => {
    expect(utc('2024')).toBe('2024-01-01T00:00:00.000000Z');
    expect(utc('2024-02')).toBe('2024-02-01T00:00:00.000000Z');
    expect(utc('20241120')).toBe('2024-11-20T00:00:00.000000Z');
    expect(utc('20241120T1430')).toBe('2024-11-20T14:30:00.000000Z');
    expect(utc('2024-11-20x14:30')).toBe('2024-11-20T14:30:00.000000Z');
    expect(utc('2024-W01-7')).toBe('2024-01-07T00:00:00.000000Z');
    expect(utc('2024W017')).toBe('2024-01-07T00:00:00.000000Z');
    expect(utc('2024-032')).toBe('2024-02-01T00:00:00.000000Z');
    expect(utc('2024-12-31T24:00')).toBe('2025-01-01T00:00:00.000000Z');
    expect(utc('2024-1-5')).toBe('2024-01-05T00:00:00.000000Z');
    expect(paris('2024-1-31')).toBe('2024-01-30T23:00:00.000000Z');
  });

  it('reads a skipped or repeated wall-clock time with the offset before the change (fold=0)', () => {
    expect(paris('2024-03-31T02:30')).toBe('2024-03-31T01:30:00.000000Z');
    expect(paris('2024-10-27T02:30')).toBe('2024-10-27T00:30:00.000000Z');
    expect(parseEventDateParam('2024-11-03T01:30', { now, timezone: 'America/Los_Angeles' })).toBe('2024-11-03T08:30:00.000000Z');
  });

  it('gives undefined for what PostHog would silently read as now', () => {
    for (const input of [
      '',
      'yesterday',
      'all',
      'now',
      'today',
      '-1D',
      '-1H',
      '-1Y',
      '+1d',
      '1 d',
      ' -1d',
      '-1d ',
      'dstart',
      '-1dstart',
      '1.5d',
      '-d-1',
    ]) {
      expect(utc(input), input).toBeUndefined();
    }
  });

  it('gives undefined for impossible dates and for what lands outside years 1 to 9999', () => {
    for (const input of [
      '2024-13-01',
      '2023-02-29',
      '2024-2-30',
      '2024-11-20T14:30:60',
      '2024-11-20T24:00:01',
      '2024-11-20T',
      '202411',
      '0000-01-01',
      '2024-W54',
      '2024-11-20T10:5',
      '9999-12-31T23:00:00-05:00',
    ]) {
      expect(utc(input), input).toBeUndefined();
    }
    expect(utc('-9000y')).toBeUndefined();
    expect(utc('-99999999999999999999d')).toBeUndefined();
  });

  it('throws RangeError on an unknown time zone or an invalid now', () => {
    expect(() => parseEventDateParam('-1d', { now, timezone: 'Mars/Olympus' })).toThrow(RangeError);
    expect(() => parseEventDateParam('-1d', { now: new Date(Number.NaN), timezone: 'UTC' })).toThrow(RangeError);
  });
});

describe('parseRelativeOrIso (is_date_* filter values)', () => {
  const now = new Date('2020-01-31T12:22:23.456Z');
  const utc = (input: string) => parseRelativeOrIso(input, { now, timezone: 'UTC' });

  it('reads relative values that start with a number, cut to whole seconds', () => {
    expect(utc('-7d')).toBe('2020-01-24T12:22:23.000000Z');
    expect(utc('-10M')).toBe('2020-01-31T12:12:23.000000Z');
    expect(utc('-10m')).toBe('2019-03-31T12:22:23.000000Z');
    expect(utc('-1dEnd')).toBe('2020-01-30T23:59:59.000000Z');
    expect(utc('0dStart')).toBe('2020-01-31T00:00:00.000000Z');
    expect(parseRelativeOrIso('0dStart', { now, timezone: 'Europe/Paris' })).toBe('2020-01-30T23:00:00.000000Z');
  });

  it('does not take relative values without a number (PostHog compares them with NULL)', () => {
    expect(utc('dStart')).toBeUndefined();
    expect(utc('mStart')).toBeUndefined();
  });

  it('reads ISO values as after / before does, microseconds kept', () => {
    expect(utc('2024-11-20T14:00:00.123456Z')).toBe('2024-11-20T14:00:00.123456Z');
    expect(parseRelativeOrIso('2024-11-20', { now, timezone: 'Europe/Paris' })).toBe('2024-11-19T23:00:00.000000Z');
    expect(utc('garbage')).toBeUndefined();
    expect(utc('-7D')).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

describe('rowsToCsv / eventsToCsv', () => {
  it('renders the openapi.yaml $pageview example exactly as the EventsCsv example', () => {
    const page = specExample<{ results: ExampleEvent[] }>('EventsPageExample');
    const pageview = page.results.find((e) => e.event === '$pageview');
    expect(eventsToCsv([pageview!])).toBe(specExample<string>('EventsCsvExample'));
  });

  it('flattens nested objects and arrays with `.`, under a sorted header, with CRLF line ends', () => {
    const rows = [
      {
        id: 'e1',
        properties: { $browser: 'Chrome', $os: 'Mac OS X' },
        elements: [{ tag_name: 'button', attr_class: ['btn', 'primary'] }],
        person: { properties: { email: 'a@b.c' } },
      },
      { id: 'e2', properties: { $browser: 'Safari' }, elements: [], person: null },
    ];
    expect(eventsToCsv(rows)).toBe(
      'elements.0.attr_class.0,elements.0.attr_class.1,elements.0.tag_name,id,person,person.properties.email,properties.$browser,properties.$os\r\n' +
        'btn,primary,button,e1,,a@b.c,Chrome,Mac OS X\r\n' +
        ',,,e2,,,Safari,\r\n',
    );
  });

  it('quotes cells holding commas, quotes, CR or LF, and doubles quotes', () => {
    expect(rowsToCsv([{ a: 'x,y', b: 'say "hi"', c: 'two\nlines', d: 'cr\rhere', e: ' spaced ' }])).toBe(
      'a,b,c,d,e\r\n"x,y","say ""hi""","two\nlines","cr\rhere", spaced \r\n',
    );
    expect(rowsToCsv([{ 'a,b': 1 }])).toBe('"a,b"\r\n1\r\n');
  });

  it('writes numbers and booleans as JSON does, null and missing as empty cells, empty objects and arrays as no column', () => {
    expect(
      rowsToCsv([{ n: 1.5, big: 1e21, neg: -0, t: true, f: false, z: null, nan: Number.NaN, obj: {}, arr: [], skip: undefined }]),
    ).toBe('big,f,n,nan,neg,t,z\r\n1e+21,false,1.5,,0,true,\r\n');
    expect(rowsToCsv([{ a: 1 }, { b: 2 }])).toBe('a,b\r\n1,\r\n,2\r\n');
    expect(rowsToCsv([{ when: new Date('2024-11-20T14:00:00Z') }])).toBe('when\r\n2024-11-20T14:00:00.000Z\r\n');
    expect(rowsToCsv([{ a: [[1, 2], [3]] }])).toBe('a.0.0,a.0.1,a.1.0\r\n1,2,3\r\n');
  });

  it('gives an empty body for no rows', () => {
    expect(rowsToCsv([])).toBe('');
    expect(eventsToCsv([])).toBe('');
  });

  it('sorts the header by code point, as Python sorted() does', () => {
    expect(rowsToCsv([{ a: 1, B: 2, _: 3, $x: 4 }]).split('\r\n')[0]).toBe('$x,B,_,a');
    // UTF-16 order would put the astral character first
    expect(rowsToCsv([{ '😀': 1, '\uff01': 2 }]).split('\r\n')[0]).toBe('\uff01,😀');
  });

  it('puts a scalar row under the empty column, and writes a lone empty cell as ""', () => {
    expect(rowsToCsv(['x', 2])).toBe('""\r\nx\r\n2\r\n');
    expect(rowsToCsv([{ name: 'Chrome' }, { name: '' }, { name: null }])).toBe('name\r\nChrome\r\n""\r\n""\r\n');
    expect(rowsToCsv([{}, {}])).toBe('\r\n\r\n\r\n');
  });

  it('lets the later of two paths to the same column win, as the renderer does', () => {
    expect(rowsToCsv([{ 'a.b': 1, a: { b: 2 } }])).toBe('a.b\r\n2\r\n');
  });
});
