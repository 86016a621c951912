/**
 * server/domain/echo.ts: request input quoted in error messages, cut to a bounded length. Values
 * that fit are quoted exactly as `JSON.stringify` / Python's repr quote them; longer ones keep their
 * start, end with `…` and never pass the cap, escapes and surrogate pairs included.
 */
import { describe, expect, it } from 'vitest';
import { clip, echo, ECHO_MAX_LENGTH, quoteCapped } from '../../server/domain/echo.js';
import { pyRepr } from '../../server/domain/plugin-jobs.js';

describe('echo', () => {
  it('quotes a short string exactly as JSON.stringify does', () => {
    for (const s of ['', 'abc', 'say "hi"', 'back\\slash', 'tab\there', 'é😀']) expect(echo(s)).toBe(JSON.stringify(s));
  });

  it('quotes a string of exactly the cap less the quotes whole, and cuts one character more', () => {
    const fits = 'a'.repeat(ECHO_MAX_LENGTH - 2);
    expect(echo(fits)).toBe(`"${fits}"`);
    const cut = echo(fits + 'a');
    expect(cut).toHaveLength(ECHO_MAX_LENGTH);
    expect(cut).toBe(`"${'a'.repeat(ECHO_MAX_LENGTH - 3)}…"`);
  });

  it('cuts a 400 KB string to the cap, the ellipsis inside the quotes', () => {
    const e = echo('x'.repeat(400_000));
    expect(e).toHaveLength(ECHO_MAX_LENGTH);
    expect(e).toMatch(/^"x+…"$/);
    expect(JSON.parse(e)).toMatch(/^x+…$/);
  });

  it('counts escapes towards the cap and never cuts one in half', () => {
    const e = echo('\u0001'.repeat(1000));
    expect(e.length).toBeLessThanOrEqual(ECHO_MAX_LENGTH);
    expect(e).toMatch(/^"(\\u0001)+…"$/);
    expect(echo('"'.repeat(1000))).toMatch(/^"(\\")+…"$/);
  });

  it('never splits a surrogate pair', () => {
    const e = echo('😀'.repeat(1000));
    expect(e.length).toBeLessThanOrEqual(ECHO_MAX_LENGTH);
    expect(JSON.parse(e)).toMatch(/^(😀)+…$/u);
  });

  it('writes other values as JSON, cut at the end', () => {
    expect(echo({ a: 1 })).toBe('{"a":1}');
    expect(echo([1, 'x'])).toBe('[1,"x"]');
    expect(echo(42)).toBe('42');
    expect(echo(null)).toBe('null');
    expect(echo(undefined)).toBe('undefined');
    expect(echo(10n)).toBe('10');
    const e = echo({ nested: 'n'.repeat(1000) });
    expect(e).toHaveLength(ECHO_MAX_LENGTH);
    expect(e).toMatch(/^\{"nested":"n+…$/);
  });

  it('takes another cap', () => {
    expect(echo('abcdefgh', 6)).toBe('"abc…"');
    expect(echo('abcd', 6)).toBe('"abcd"');
  });
});

describe('quoteCapped with Python repr', () => {
  it('quotes a short text exactly as pyRepr does', () => {
    for (const s of ['x', "it's", 'a"b', 'new\nline']) expect(quoteCapped(s, pyRepr)).toBe(pyRepr(s));
  });

  it("cuts a long text inside the quotes: 'xxx…'", () => {
    const q = quoteCapped('x'.repeat(400_000), pyRepr);
    expect(q).toHaveLength(ECHO_MAX_LENGTH);
    expect(q).toMatch(/^'x+…'$/);
  });

  it('quotes the start it keeps as Python would (double quotes when it holds an apostrophe)', () => {
    expect(quoteCapped("it's" + 'x'.repeat(1000), pyRepr)).toMatch(/^"it'sx+…"$/);
  });
});

describe('clip', () => {
  it('leaves short text alone and cuts long text to the cap with …', () => {
    expect(clip('abc')).toBe('abc');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('y'.repeat(1000))).toHaveLength(ECHO_MAX_LENGTH);
  });

  it('never splits a surrogate pair', () => {
    expect(clip('a😀b', 3)).toBe('a…');
  });
});
