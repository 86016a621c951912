/**
 * `GET …/elements/stats/` over HTTP on every store: autocaptured clicks grouped by elements chain
 * and event name, most first, with their elements, PostHog's `include`, date and `properties`
 * filters, paging and its 400s. Events are captured with their chains as posthog-js sends them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture } from '../capture/helpers.js';

let t: TestServer;
const STATS = '/api/projects/1/elements/stats/';
const SIGNUP = 'button.btn.primary:attr__class="btn primary"nth-child="1"nth-of-type="1"text="Sign up"';
const PRICING = 'a:attr__href="/pricing"href="/pricing"nth-child="2"nth-of-type="1"text="Pricing"';

interface Stats {
  results: { count: number; hash: string; type: string; elements: { tag_name: string; text: string | null; order: number }[] }[];
  next: string | null;
  previous: string | null;
}

beforeAll(async () => {
  t = await startTestServer();
  const now = Date.now();
  const at = (msAgo: number) => new Date(now - msAgo).toISOString();
  const click = (event: string, chain: string, msAgo: number, url = 'https://hedgebox.net/') => ({
    event,
    distinct_id: 'ada',
    timestamp: at(msAgo),
    properties: { $elements_chain: chain, $current_url: url },
  });
  const batch = [
    click('$autocapture', SIGNUP, 60_000),
    click('$autocapture', SIGNUP, 120_000, 'https://hedgebox.net/pricing'),
    click('$autocapture', SIGNUP, 180_000),
    click('$autocapture', PRICING, 60_000),
    click('$rageclick', SIGNUP, 60_000),
    click('$autocapture', PRICING, 30 * 86_400_000),
    { event: '$pageview', distinct_id: 'ada', timestamp: at(1000), properties: {} },
  ];
  expect((await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
});

describe('GET elements/stats/', () => {
  it('groups the last 7 days’ clicks by chain and event, most first, with the elements', async () => {
    const body = (await t.json(STATS)) as Stats;
    expect(body.results.map((r) => [r.type, r.count, r.elements[0]!.text])).toEqual([
      ['$autocapture', 3, 'Sign up'],
      ['$autocapture', 1, 'Pricing'],
      ['$rageclick', 1, 'Sign up'],
    ]);
    expect(body.results[0]!.elements[0]).toMatchObject({ tag_name: 'button', order: 0, attr_class: ['btn', 'primary'], nth_child: 1 });
    expect(body.results[0]!.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(body.results[2]!.hash).toBe(body.results[0]!.hash);
    expect(body).toMatchObject({ next: null, previous: null });
  });

  it('include, date_from, properties and limit/offset narrow it as PostHog’s do', async () => {
    const only = (await t.json(`${STATS}?include=${encodeURIComponent('["$rageclick"]')}`)) as Stats;
    expect(only.results.map((r) => r.type)).toEqual(['$rageclick']);
    const repeated = (await t.json(`${STATS}?include=%24rageclick&include=%24autocapture`)) as Stats;
    expect(repeated.results).toHaveLength(3);
    const month = (await t.json(`${STATS}?date_from=-60d&include=%24autocapture`)) as Stats;
    expect(month.results.map((r) => r.count)).toEqual([3, 2]);
    const filtered = (await t.json(
      `${STATS}?properties=${encodeURIComponent(JSON.stringify([{ key: '$current_url', value: 'pricing', operator: 'icontains' }]))}`,
    )) as Stats;
    expect(filtered.results.map((r) => [r.type, r.count])).toEqual([['$autocapture', 1]]);
    const first = (await t.json(`${STATS}?limit=1`)) as Stats;
    expect(first.results.map((r) => r.count)).toEqual([3]);
    expect(first.next).toContain('offset=1');
    const second = (await t.json(`${STATS}?limit=1&offset=1`)) as Stats;
    expect(second.results[0]!.elements[0]!.text).toBe('Pricing');
    expect(second.previous).toContain('offset=0');
  });

  it('answers 400 for an event name it does not count, a bad include array, or bad properties', async () => {
    for (const q of ['include=%24pageview', 'include=%5Bnot-json', 'properties=%7Bnot-json', 'limit=0', 'sampling_factor=0']) {
      const res = await t.fetch(`${STATS}?${q}`);
      expect(res.status, q).toBe(400);
    }
    const res = await t.fetch(`${STATS}?include=%24pageview`);
    expect(await res.json()).toMatchObject({ detail: 'Only $autocapture, $rageclick, and $dead_click are supported.' });
  });
});
