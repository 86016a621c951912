/**
 * The elements chain writer against its reader (server/domain/elements-chain.ts): for generated
 * elements, `parseElementsChain(writeElementsChain(elements))` gives back every element as the
 * events API shows it. The expected element is the written one seen through PostHog's format:
 * classes sorted; `href` and the id also appear as `attr__href` / `attr__id` (and the classes as
 * `attr__class`) unless `attributes` names those keys itself; empty `text` / `href` / id are not
 * written (null); a `"` in a key or value comes back as `\"`, since the reader keeps escapes as
 * PostHog does.
 *
 * The generated strings stay within what PostHog's writer (`elements_to_string`) can express, the
 * limits stated in the module doc: no backslash and no newline in values, no empty attribute value,
 * tags and classes without `.`, `;`, `"`, `=` or whitespace, attribute keys of name characters.
 * Within that they carry spaces, `;`, `"`, `=`, `="`, `:` and any Unicode in values, and `:` in
 * classes (`md:flex`). fast-check runs with a fixed seed, so every run checks the same elements.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseElementsChain, writeElementsChain, type ChainElement, type Element } from '../../server/domain/elements-chain.js';

const SEED = 20_241_120;
const RUNS = 2_000;

const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-_'.split('');

/** Tag names as the DOM has them, custom elements (`my-widget`) included. */
const tagArb = fc
  .tuple(
    fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'.split('')),
    fc.array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'.split('')), { maxLength: 10 }),
  )
  .map(([first, rest]) => first + rest.join(''));

/** Class names, with the `:`, `/`, `[`, `]` and `!` of utility-class frameworks. */
const classArb = fc
  .array(fc.constantFrom(...NAME_CHARS, ':', '/', '[', ']', '!', 'A', 'Z'), { minLength: 1, maxLength: 12 })
  .map((cs) => cs.join(''));

/** Text without a backslash or a newline: anything else, quotes, `;`, `="` and Unicode included. */
const valueArb = (minLength: number) =>
  fc
    .oneof(
      fc.string({ minLength, maxLength: 30, unit: 'grapheme' }),
      fc
        .array(fc.constantFrom('a', ' ', ';', '"', '=', '="', ':', '\t', 'é', '😀', '\u2028', '.', '#'), { minLength, maxLength: 12 })
        .map((cs) => cs.join('')),
    )
    .filter((s) => !/[\\\n]/.test(s));

/** `attr__<name>`, sometimes the keys the writer derives itself (`attr__class`, `attr__href`, `attr__id`). */
const attributeKeyArb = fc.oneof(
  fc.constantFrom('attr__class', 'attr__href', 'attr__id', 'attr__data-attr', 'attr__aria-label'),
  fc.array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 12 }).map((cs) => `attr__${cs.join('')}`),
);

const elementArb: fc.Arbitrary<ChainElement> = fc.record(
  {
    tag: tagArb,
    classes: fc.array(classArb, { maxLength: 4 }),
    text: valueArb(0),
    href: valueArb(0),
    id: valueArb(0),
    nthChild: fc.oneof(fc.integer(), fc.maxSafeInteger()),
    nthOfType: fc.oneof(fc.integer(), fc.maxSafeInteger()),
    attributes: fc.dictionary(attributeKeyArb, valueArb(1), { maxKeys: 4 }),
  },
  { requiredKeys: ['tag', 'nthChild', 'nthOfType'] },
);

/** `"` as the chain holds it, and as the reader gives it back. */
function escaped(s: string): string {
  return s.replace(/"/g, '\\"');
}

/** What the reader should give for `el` written at position `order` (see the module doc). */
function expectedElement(el: ChainElement, order: number): Element {
  const classes = [...(el.classes ?? [])].sort();
  const attributes: Record<string, string> = {
    ...(classes.length ? { attr__class: classes.join(' ') } : {}),
    ...(el.href ? { attr__href: el.href } : {}),
    ...(el.id ? { attr__id: el.id } : {}),
    ...el.attributes,
  };
  return {
    event: null,
    text: el.text ? escaped(el.text) : null,
    tag_name: el.tag,
    attr_class: classes.length ? classes : null,
    href: el.href ? escaped(el.href) : null,
    attr_id: el.id ? escaped(el.id) : null,
    nth_child: el.nthChild,
    nth_of_type: el.nthOfType,
    attributes: Object.fromEntries(Object.entries(attributes).map(([k, v]) => [escaped(k), escaped(v)])),
    order,
  };
}

describe('writeElementsChain', () => {
  it('writes what parseElementsChain reads back as the same elements, for generated elements', () => {
    fc.assert(
      fc.property(fc.array(elementArb, { maxLength: 8 }), (elements) => {
        expect(parseElementsChain(writeElementsChain(elements))).toEqual(elements.map(expectedElement));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("writes PostHog's format: classes and keys sorted, href and id twice, innermost element first", () => {
    const chain = writeElementsChain([
      { tag: 'button', classes: ['btn-primary', 'btn'], text: 'Upload', id: 'upload', nthChild: 2, nthOfType: 1 },
      { tag: 'form', nthChild: 1, nthOfType: 1, attributes: { 'attr__data-attr': 'files' } },
    ]);
    expect(chain).toBe(
      'button.btn.btn-primary:attr__class="btn btn-primary"attr__id="upload"attr_id="upload"nth-child="2"nth-of-type="1"text="Upload";' +
        'form:attr__data-attr="files"nth-child="1"nth-of-type="1"',
    );
  });

  it('escapes a quote in a value as \\", which the reader keeps as written', () => {
    const chain = writeElementsChain([{ tag: 'a', text: 'Say "hi"; bye', nthChild: 1, nthOfType: 1 }]);
    expect(chain).toBe('a:nth-child="1"nth-of-type="1"text="Say \\"hi\\"; bye"');
    expect(parseElementsChain(chain)[0]?.text).toBe('Say \\"hi\\"; bye');
  });

  it('writes nothing for no elements, which reads back as none', () => {
    expect(writeElementsChain([])).toBe('');
    expect(parseElementsChain('')).toEqual([]);
  });
});
