/**
 * server/domain/python-repr.ts against CPython 3.11's own answers (`repr`, and
 * `pprint.pformat(v, width=72, sort_dicts=False)`, as python-jsonschema prints its errors), taken
 * from python3 once and written here: dict wrapping at the key's column, long strings split into
 * adjacent literals after whitespace (in parentheses at the top level), Python's quoting and
 * escapes, its float form.
 */
import { describe, expect, it } from 'vitest';
import { pformat, pythonRepr } from '../../server/domain/python-repr.js';

describe('pythonRepr and pformat, as CPython writes them', () => {
  it('a dict wider than 72 columns: one key a line, a long string split under its key', () => {
    const v = {
      description: 'The description of the dashboard template which is long enough to wrap around',
      type: ['string', 'null'],
      n: [1, 2.5, true, null],
    };
    expect(pythonRepr(v)).toBe(
      "{'description': 'The description of the dashboard template which is long enough to wrap around', 'type': ['string', 'null'], 'n': [1, 2.5, True, None]}",
    );
    expect(pformat(v)).toBe(
      "{'description': 'The description of the dashboard template which is '\n" +
        "                'long enough to wrap around',\n" +
        " 'type': ['string', 'null'],\n" +
        " 'n': [1, 2.5, True, None]}",
    );
  });

  it("quotes and escapes as repr: \\' inside single quotes when both quotes occur, \\n, \\t, \\u2028; é kept", () => {
    const s = 'It\'s "quoted" and has a newline\n and a tab\t and é and \u2028';
    expect(pythonRepr(s)).toBe("'It\\'s \"quoted\" and has a newline\\n and a tab\\t and é and \\u2028'");
    expect(pformat(s)).toBe(pythonRepr(s));
    expect(pythonRepr("it's")).toBe('"it\'s"');
  });

  it('nested lists and dicts indent under their opening bracket', () => {
    const v = ['short', { nested: { deeper: ['a'.repeat(30), 'b'.repeat(30), 'c'.repeat(30)] } }];
    expect(pformat(v)).toBe(
      "['short',\n" +
        ` {'nested': {'deeper': ['${'a'.repeat(30)}',\n` +
        `                        '${'b'.repeat(30)}',\n` +
        `                        '${'c'.repeat(30)}']}}]`,
    );
  });

  it('a long string at the top level: adjacent literals in parentheses', () => {
    expect(pformat('word '.repeat(30))).toBe(
      "('word word word word word word word word word word word word word '\n" +
        " 'word word word word word word word word word word word word word '\n" +
        " 'word word word word ')",
    );
  });

  it('floats in Python’s shortest form, integers without a point', () => {
    expect([1.5e-7, 0.1, 2.5, 3, -0.5].map(pythonRepr)).toEqual(['1.5e-07', '0.1', '2.5', '3', '-0.5']);
  });
});
