/**
 * Error messages that quote request input quote at most 200 characters of each value
 * (server/domain/echo.ts), through the real HTTP stack: one test per kind of message of the events
 * list (property filters, `after` / `before`), each sent with a value far longer than the cap and
 * answered with a detail under 300 characters that still says what was wrong. The plugin-job
 * messages are tested with 400 KB names in plugin-configs.test.ts.
 *
 * Query strings are limited by Node's HTTP parser (16 KB of request line and headers), so the
 * values here are about 10 KB: the largest a GET can carry, and 50 times the cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type ErrorBody } from '../helpers/errors.js';

/** Longest detail a capped message may have. */
const MAX_DETAIL = 300;
/** A value 50 times the cap that still fits in a request line. */
const LONG = 10_000;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t.close();
});

/** GET the events list of project 1 with these query parameters; expects a 400 and returns its body. */
async function eventsError(query: Record<string, string>): Promise<ErrorBody> {
  const res = await t.fetch(`/api/environments/${t.boot.team.id}/events/?${new URLSearchParams(query).toString()}`);
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, type: body.type }).toEqual({ status: 400, type: 'validation_error' });
  expect(body.detail.length).toBeLessThan(MAX_DETAIL);
  return body;
}

/** `properties` with one filter. */
const filter = (f: Record<string, unknown>): Record<string, string> => ({ properties: JSON.stringify([f]) });

describe('GET /api/environments/{project_id}/events/', () => {
  it('a 10 KB property key without a value: "The property filter on "kkk…" needs a value", under 300 characters', async () => {
    const e = await eventsError(filter({ key: 'k'.repeat(LONG) }));
    expect(e.attr).toBe('properties');
    expect(e.detail).toMatch(/^The property filter on "k{150,}…" needs a "value"\.$/);
  });

  it('a 10 KB property key with an empty value list: the key is cut', async () => {
    const e = await eventsError(filter({ key: 'k'.repeat(LONG), value: [] }));
    expect(e.detail).toMatch(/^The property filter on "k+…" has an empty value list\.$/);
  });

  it('a 10 KB format (an enum the spec checks): \'"fff…" is not a valid choice.\'', async () => {
    const e = await eventsError({ format: 'f'.repeat(LONG) });
    expect(e).toMatchObject({ code: 'invalid_choice', attr: 'format' });
    expect(e.detail).toMatch(/^"f{150,}…" is not a valid choice\.$/);
  });

  it('a 10 KB operator: "Unknown property filter operator "ooo…"" with the list of operators', async () => {
    const e = await eventsError(filter({ key: '$browser', value: 'x', operator: 'o'.repeat(LONG) }));
    expect(e.detail).toMatch(/^Unknown property filter operator "o+…"; use one of exact, is_not, /);
  });

  it('a filter type that is a 10 KB object: its JSON text is cut', async () => {
    const e = await eventsError(filter({ key: '$browser', value: 'x', type: { nested: 't'.repeat(LONG) } }));
    expect(e.detail).toMatch(/^Property filters of type \{"nested":"t+… are not supported; use "event" or "person"\.$/);
  });

  it('a 10 KB value for gt: "needs a number, got "nnn…""', async () => {
    const e = await eventsError(filter({ key: 'price', value: 'n'.repeat(LONG), operator: 'gt' }));
    expect(e.detail).toMatch(/^The operator "gt" needs a number, got "n+…"\.$/);
  });

  it('an unreadable 5 KB date on a 5 KB key (is_date_after): both are cut', async () => {
    const e = await eventsError(filter({ key: 'k'.repeat(LONG / 2), value: 'd'.repeat(LONG / 2), operator: 'is_date_after' }));
    expect(e.detail).toMatch(/^The date "d+…" of the filter on "k+…" cannot be read; use ISO 8601 or a relative date such as -7d\.$/);
  });

  it('a 1000-character pattern RE2 cannot compile, on a 5 KB key: key, reason and pattern are all cut', async () => {
    const e = await eventsError(filter({ key: 'k'.repeat(LONG / 2), value: '(' + 'a'.repeat(999), operator: 'regex' }));
    expect(e.detail).toMatch(/^The regular expression on "k+…" is not valid RE2 syntax \(.+\): "\(a+…"\.$/);
  });

  it('a regular expression over 1000 characters on a 10 KB key: the key is cut', async () => {
    const e = await eventsError(filter({ key: 'k'.repeat(LONG), value: 'a'.repeat(1001), operator: 'regex' }));
    expect(e.detail).toMatch(/^The regular expression on "k+…" is longer than 1000 characters\.$/);
  });

  it('control characters in a long key are escaped and count towards the cap', async () => {
    // 1,500 of them: `\u0001` in the JSON, `%5Cu0001` in the query string
    const e = await eventsError(filter({ key: '\u0001'.repeat(1_500) }));
    expect(e.detail).toMatch(/^The property filter on "(\\u0001)+…" needs a "value"\.$/);
  });

  for (const name of ['after', 'before'] as const) {
    it(`a 10 KB ${name} date: "The ${name} date "xxx…" cannot be read", attr ${name}`, async () => {
      const e = await eventsError({ [name]: 'x'.repeat(LONG) });
      expect(e.attr).toBe(name);
      expect(e.detail).toMatch(new RegExp(`^The ${name} date "x{90,}…" cannot be read; use ISO 8601 `));
    });
  }

  it('a short value is still quoted whole, exactly as before', async () => {
    const e = await eventsError({ after: 'yesterday' });
    expect(e.detail).toBe(
      'The after date "yesterday" cannot be read; use ISO 8601 (2024-11-20T14:00:00Z) or a relative date (-1d, -24h, -30M, dStart).',
    );
  });
});
