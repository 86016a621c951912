/**
 * The persons API besides list and retrieve, over HTTP on every store, as `@posthog/cli`'s persons
 * tools call it: property values (`persons/values/`), a person's cohorts (`persons/cohorts/`),
 * `update_property` and `delete_property` (a `$set` / `$delete_person_property` event stored and
 * applied, as PostHog captures them), and `bulk_delete` with PostHog's checks and summary.
 * Persons are made through capture, as an SDK makes them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture, listEvents, personOf } from '../capture/helpers.js';

let t: TestServer;
const P = '/api/projects/1/persons';

beforeAll(async () => {
  t = await startTestServer();
  const batch = [
    ['ada', { email: 'ada@hedgebox.net', plan: 'pro', seats: 3, trial: true }],
    ['bob', { email: 'bob@hedgebox.net', plan: 'pro', seats: 5 }],
    ['cy', { email: 'cy@hedgebox.net', plan: 'enterprise', meta: { tier: 2 } }],
    ['dee', { email: 'dee@hedgebox.net' }],
  ].map(([id, set]) => ({ event: 'signed up', distinct_id: id, properties: { $set: set } }));
  const res = await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await t.close();
});

const post = (path: string, body: unknown) =>
  t.fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('GET persons/values/', () => {
  it('answers the values of a person property, most persons first, as PostHog’s {results, refreshing}', async () => {
    expect(await t.json(`${P}/values/?key=plan`)).toEqual({
      results: [
        { name: 'pro', count: 2 },
        { name: 'enterprise', count: 1 },
      ],
      refreshing: false,
    });
    // numbers, booleans and objects as their JSON text; value filters in any case
    expect(((await t.json(`${P}/values/?key=seats`)) as { results: { name: string }[] }).results.map((r) => r.name).sort()).toEqual([
      '3',
      '5',
    ]);
    expect(await t.json(`${P}/values/?key=trial`)).toMatchObject({ results: [{ name: 'true', count: 1 }] });
    // an object as JSON text (PostgreSQL's jsonb spaces it: the same JSON)
    const meta = (await t.json(`${P}/values/?key=meta`)) as { results: { name: string; count: number }[] };
    expect(meta.results.map((r) => [JSON.parse(r.name), r.count])).toEqual([[{ tier: 2 }, 1]]);
    expect(await t.json(`${P}/values/?key=plan&value=ENTER`)).toMatchObject({ results: [{ name: 'enterprise', count: 1 }] });
    expect(await t.json(`${P}/values/?key=distinct_id&value=b`)).toEqual({ results: [{ name: 'bob', count: 1 }], refreshing: false });
    // no key: no results (PostHog's answer, not a 400), and not a person id
    expect(await t.json(`${P}/values/`)).toEqual({ results: [], refreshing: false });
    expect(await t.json(`/api/environments/1/persons/values/?key=nothing`)).toEqual({ results: [], refreshing: false });
  });
});

describe('GET persons/cohorts/', () => {
  it('answers no cohorts for a person of the project; 404 for none, 400 for a malformed or missing id', async () => {
    const ada = (await personOf(t, 'ada'))!;
    expect(await t.json(`${P}/cohorts/?person_id=${ada.uuid}`)).toEqual({ results: [] });
    expect((await t.fetch(`${P}/cohorts/?person_id=01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f`)).status).toBe(404);
    expect((await t.fetch(`${P}/cohorts/?person_id=ada`)).status).toBe(400);
    const missing = await t.fetch(`${P}/cohorts/`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ attr: 'person_id' });
  });
});

describe('POST persons/{id}/update_property/ and delete_property/', () => {
  it('sets a property through a stored $set event (202, no body), null included', async () => {
    const bob = (await personOf(t, 'bob'))!;
    const res = await post(`${P}/${bob.uuid}/update_property/`, { key: 'plan', value: 'enterprise' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    expect((await personOf(t, 'bob'))!.properties).toMatchObject({ plan: 'enterprise', email: 'bob@hedgebox.net' });
    const set = (await listEvents(t, '&event=%24set')).find((e) => e.distinct_id === 'bob');
    expect(set?.properties).toMatchObject({ $set: { plan: 'enterprise' } });
    expect((await post(`${P}/${bob.uuid}/update_property/`, { key: 'seats', value: null })).status).toBe(202);
    expect((await personOf(t, 'bob'))!.properties.seats).toBeNull();
  });

  it('answers PostHog’s own 400 body (code and detail swapped) for a missing value or key', async () => {
    const bob = (await personOf(t, 'bob'))!;
    const noValue = await post(`${P}/${bob.uuid}/update_property/`, { key: 'plan' });
    expect(noValue.status).toBe(400);
    expect(await noValue.json()).toEqual({ type: 'validation_error', code: 'This field is required.', detail: 'required', attr: 'value' });
    const noKey = await post(`${P}/${bob.uuid}/update_property/`, { value: 1 });
    expect(await noKey.json()).toEqual({ type: 'validation_error', code: 'This field is required.', detail: 'required', attr: 'key' });
    expect((await post(`${P}/01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f/update_property/`, { key: 'a', value: 1 })).status).toBe(404);
  });

  it('removes one property or a list through a stored $delete_person_property event: 201 {success: true}', async () => {
    const cy = (await personOf(t, 'cy'))!;
    const one = await post(`${P}/${cy.uuid}/delete_property/`, { $unset: 'plan' });
    expect(one.status).toBe(201);
    expect(await one.json()).toEqual({ success: true });
    expect((await personOf(t, 'cy'))!.properties).not.toHaveProperty('plan');
    expect((await post(`/api/environments/1/persons/${cy.uuid}/delete_property/`, { $unset: ['meta', 'email'] })).status).toBe(201);
    expect((await personOf(t, 'cy'))!.properties).toEqual({});
    const event = (await listEvents(t, '&event=%24delete_person_property')).find((e) => e.distinct_id === 'cy');
    expect(event).toBeDefined();
    for (const body of [{}, { $unset: '' }, { $unset: [] }]) {
      const res = await post(`${P}/${cy.uuid}/delete_property/`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await post(`${P}/999999/delete_property/`, { $unset: 'x' })).status).toBe(404);
  });
});

describe('POST persons/bulk_delete/', () => {
  it('refuses both lists, neither, or more than 1,000 with PostHog’s messages', async () => {
    const cases: [unknown, string][] = [
      [{ ids: ['x'], distinct_ids: ['y'] }, 'You must provide either distinct_ids or ids, not both'],
      [{}, 'You need to specify either distinct_ids or ids'],
      [{ ids: [] }, 'You need to specify either distinct_ids or ids'],
      [{ distinct_ids: Array.from({ length: 1001 }, (_, i) => `d${i}`) }, 'You can only pass 1000 distinct_ids in one call'],
    ];
    for (const [body, detail] of cases) {
      const res = await post(`${P}/bulk_delete/`, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: 'validation_error', code: 'invalid_input', detail, attr: null });
    }
  });

  it('deletes persons by distinct id with their events, or by uuid keeping the events', async () => {
    const res = await post(`${P}/bulk_delete/`, {
      distinct_ids: ['dee', 'nobody'],
      delete_events: true,
      delete_recordings: false,
      keep_person: false,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      persons_found: 1,
      persons_deleted: 1,
      events_queued_for_deletion: true,
      recordings_queued_for_deletion: false,
      deletion_errors: [],
    });
    expect(await personOf(t, 'dee')).toBeUndefined();
    expect((await listEvents(t)).filter((e) => e.distinct_id === 'dee')).toEqual([]);

    const ada = (await personOf(t, 'ada'))!;
    const byUuid = await post(`${P}/bulk_delete/`, { ids: [ada.uuid] });
    expect(await byUuid.json()).toMatchObject({ persons_found: 1, persons_deleted: 1, events_queued_for_deletion: false });
    expect(await personOf(t, 'ada')).toBeUndefined();
    expect((await listEvents(t)).filter((e) => e.distinct_id === 'ada').length).toBeGreaterThan(0);
    expect((await t.fetch(`${P}/${ada.uuid}/`)).status).toBe(404);
  });

  it('keep_person deletes only the events', async () => {
    const res = await post(`${P}/bulk_delete/`, { distinct_ids: ['bob'], delete_events: true, keep_person: true });
    expect(await res.json()).toMatchObject({ persons_found: 1, persons_deleted: 0, events_queued_for_deletion: true });
    expect(await personOf(t, 'bob')).toBeDefined();
    expect((await listEvents(t)).filter((e) => e.distinct_id === 'bob')).toEqual([]);
  });
});
