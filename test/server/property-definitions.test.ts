/**
 * `GET /api/projects/{project_id}/property_definitions/` and one by id, over HTTP on every store:
 * the event and person properties derived from the latest events and persons, typed, with
 * PostHog's filters, order and paging. Events and persons are made through capture.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture } from '../capture/helpers.js';

let t: TestServer;
const DEFS = '/api/projects/1/property_definitions/';

interface Page {
  count: number;
  next: string | null;
  results: { id: string; name: string; is_numerical: boolean; property_type: string | null; is_seen_on_filtered_events: boolean | null }[];
}

beforeAll(async () => {
  t = await startTestServer();
  const batch = [
    {
      event: '$pageview',
      distinct_id: 'ada',
      properties: { $browser: 'Chrome', $screen_width: 1440, $set: { email: 'ada@hedgebox.net', plan: 'pro' } },
    },
    {
      event: 'uploaded_file',
      distinct_id: 'ada',
      properties: { file_size: 2048, shared: true, uploaded_at: '2024-11-20T10:00:00Z', meta: { a: 1 } },
    },
  ];
  expect((await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
});

const names = (p: Page) => p.results.map((r) => r.name);

describe('GET property_definitions/', () => {
  it('lists the event properties by name, typed, without the ones PostHog never lists', async () => {
    const page = (await t.json(DEFS)) as Page;
    expect(names(page)).toEqual(['$browser', '$screen_width', 'file_size', 'meta', 'shared', 'uploaded_at']);
    expect(page.count).toBe(6);
    const byName = new Map(page.results.map((r) => [r.name, r]));
    expect(byName.get('file_size')).toMatchObject({ is_numerical: true, property_type: 'Numeric', is_seen_on_filtered_events: null });
    expect(byName.get('shared')!.property_type).toBe('Boolean');
    expect(byName.get('uploaded_at')!.property_type).toBe('DateTime');
    expect(byName.get('$browser')!.property_type).toBe('String');
    expect(byName.get('meta')!.property_type).toBeNull();
    expect(byName.get('$browser')!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('person properties, search, properties, excluded_properties, is_numerical, event_names and paging', async () => {
    expect(names((await t.json(`${DEFS}?type=person`)) as Page)).toEqual(['email', 'plan']);
    expect(names((await t.json(`${DEFS}?search=SIZE`)) as Page)).toEqual(['file_size']);
    expect(names((await t.json(`${DEFS}?properties=shared,$browser`)) as Page)).toEqual(['$browser', 'shared']);
    expect(names((await t.json(`${DEFS}?excluded_properties=${encodeURIComponent('["meta","shared"]')}`)) as Page)).not.toContain('meta');
    expect(names((await t.json(`${DEFS}?is_numerical=true`)) as Page)).toEqual(['$screen_width', 'file_size']);
    const seen = (await t.json(`${DEFS}?event_names=${encodeURIComponent('["uploaded_file"]')}`)) as Page;
    expect(seen.results.slice(0, 4).map((r) => [r.name, r.is_seen_on_filtered_events])).toEqual([
      ['file_size', true],
      ['meta', true],
      ['shared', true],
      ['uploaded_at', true],
    ]);
    expect(seen.results.find((r) => r.name === '$browser')!.is_seen_on_filtered_events).toBe(false);
    const only = (await t.json(`${DEFS}?event_names=${encodeURIComponent('["uploaded_file"]')}&filter_by_event_names=true`)) as Page;
    expect(only.count).toBe(4);
    const first = (await t.json(`${DEFS}?limit=2`)) as Page;
    expect(names(first)).toEqual(['$browser', '$screen_width']);
    expect(first.next).toContain('offset=2');
  });

  it('answers 400 for a type it does not store or a bad JSON list', async () => {
    for (const q of ['type=group', 'type=nope', 'event_names=nope', 'excluded_properties=%7B%7D', 'type=person&event_names=%5B%5D']) {
      expect((await t.fetch(`${DEFS}?${q}`)).status, q).toBe(400);
    }
  });
});

describe('GET property_definitions/{id}/', () => {
  it('answers the definition the list gives that id, 404 for another', async () => {
    const page = (await t.json(DEFS)) as Page;
    const one = page.results.find((r) => r.name === 'file_size')!;
    expect(await t.json(`${DEFS}${one.id}/`)).toEqual(one);
    const person = ((await t.json(`${DEFS}?type=person`)) as Page).results[0]!;
    expect(await t.json(`${DEFS}${person.id}/`)).toEqual(person);
    expect((await t.fetch(`${DEFS}01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f/`)).status).toBe(404);
  });
});
