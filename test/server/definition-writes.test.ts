/**
 * What a project says about its event and property definitions, over HTTP on every store:
 * `POST …/event_definitions/` (a declared name, listed before any event), `GET` / `PATCH
 * …/event_definitions/{id}/` and `PATCH …/property_definitions/{id}/`, with PostHog's Enterprise
 * rules (ee/api/ee_event_definition.py, ee_property_definition.py): verification by whom and
 * when, hidden un-verifies, both at once 400, `exclude_hidden`, a declared property type.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture } from '../capture/helpers.js';
import { missingScope } from '../helpers/errors.js';
import type { components } from '../../client/index.js';

type EventDefinition = components['schemas']['EventDefinition'];
type PropertyDefinition = components['schemas']['PropertyDefinition'];
type Page<T> = { count: number; results: T[] };

let t: TestServer;
let P: number;
const EVENTS = () => `/api/projects/${P}/event_definitions/`;
const PROPS = () => `/api/projects/${P}/property_definitions/`;

async function send<T>(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: T }> {
  const res = await t.fetch(path, {
    method,
    ...(key ? { key } : {}),
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

const get = <T>(path: string) => send<T>('GET', path);
const byName = (name: string) => get<EventDefinition>(`${EVENTS()}by_name/?name=${encodeURIComponent(name)}`);

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const batch = [
    { event: '$pageview', distinct_id: 'ada', properties: { $browser: 'Chrome', plan_code: '12', $set: { tier: 'pro' } } },
    { event: 'uploaded_file', distinct_id: 'ada', properties: { file_size: 2048 } },
  ];
  expect((await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
});

describe('event definitions: create', () => {
  it('declares a name before any event: 201, listed last with last_seen_at null, found by name and by id', async () => {
    const created = await send<EventDefinition>('POST', EVENTS(), {
      name: 'checkout_started',
      description: 'A visitor opened the checkout.',
      tags: ['revenue', 'revenue', 'funnel'],
      verified: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'checkout_started',
      description: 'A visitor opened the checkout.',
      tags: ['revenue', 'funnel'],
      verified: true,
      hidden: false,
      last_seen_at: null,
      volume_30_day: 0,
      verified_by: { id: t.boot.user.id, email: t.boot.user.email },
      updated_by: { id: t.boot.user.id },
    });
    expect(created.body.verified_at).toBe(created.body.updated_at);
    expect(created.body.created_at).toBe(created.body.updated_at);

    const list = await get<Page<EventDefinition>>(EVENTS());
    expect(list.body.results.map((d) => d.name)).toEqual(['$pageview', 'uploaded_file', 'checkout_started']);
    expect(list.body.count).toBe(3);
    // ascending by name, the declared name takes its place among the seen ones
    expect((await get<Page<EventDefinition>>(`${EVENTS()}?ordering=name`)).body.results.map((d) => d.name)).toEqual([
      '$pageview',
      'checkout_started',
      'uploaded_file',
    ]);
    expect((await get<Page<EventDefinition>>(`${EVENTS()}?event_type=event_posthog`)).body.count).toBe(1);
    expect((await get<Page<EventDefinition>>(`${EVENTS()}?search=checkout&limit=1&offset=0`)).body.results).toEqual([created.body]);
    expect(await byName('checkout_started')).toEqual({ status: 200, body: created.body });
    expect(await get(`${EVENTS()}${created.body.id}/`)).toEqual({ status: 200, body: created.body });
  });

  it('answers 400 for a name seen or declared already, hidden and verified at once, no name, a stranger as owner', async () => {
    const seen = await send<{ detail: string; attr: string }>('POST', EVENTS(), { name: 'uploaded_file' });
    expect(seen).toMatchObject({
      status: 400,
      body: { detail: "Event definition with name 'uploaded_file' already exists", attr: 'name' },
    });
    await send('POST', EVENTS(), { name: 'trial_started' });
    expect((await send<{ attr: string }>('POST', EVENTS(), { name: 'trial_started' })).body.attr).toBe('name');
    expect(await send('POST', EVENTS(), { name: 'x', verified: true, hidden: true })).toMatchObject({
      status: 400,
      body: { detail: 'An event cannot be both hidden and verified', attr: null },
    });
    expect(await send('POST', EVENTS(), { description: 'no name' })).toMatchObject({ status: 400, body: { attr: 'name' } });
    const stranger = await t.accounts.createUser({ email: 'stranger@elsewhere.test', first_name: 'S' });
    expect(await send('POST', EVENTS(), { name: 'y', owner: stranger.id })).toMatchObject({
      status: 400,
      body: { code: 'does_not_exist', attr: 'owner' },
    });
    expect((await byName('y')).status).toBe(404);
    const owned = await send<EventDefinition>('POST', EVENTS(), { name: 'z_owned', owner: t.boot.user.id });
    expect(owned.body.owner).toMatchObject({ id: t.boot.user.id, uuid: t.boot.user.uuid });
  });
});

describe('event definitions: partial update', () => {
  it('describes, tags, verifies and hides a seen name by the rules of PostHog’s Enterprise serializer', async () => {
    const { body: before } = await byName('uploaded_file');
    expect(before).toMatchObject({ description: '', tags: [], verified: false, hidden: false, updated_at: null, updated_by: null });
    const url = `${EVENTS()}${before.id}/`;
    const verified = await send<EventDefinition>('PATCH', url, { description: 'A file was uploaded.', tags: ['files'], verified: true });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      id: before.id,
      name: 'uploaded_file',
      description: 'A file was uploaded.',
      tags: ['files'],
      verified: true,
      verified_by: { id: t.boot.user.id },
      created_at: before.created_at,
      last_seen_at: before.last_seen_at,
      volume_30_day: before.volume_30_day,
    });
    expect(verified.body.last_updated_at).toBe(verified.body.updated_at);
    // verified again: who and when stay; the name cannot change
    const again = await send<EventDefinition>('PATCH', url, { verified: true, name: 'renamed' });
    expect(again.body).toMatchObject({
      name: 'uploaded_file',
      verified_at: verified.body.verified_at,
      description: 'A file was uploaded.',
    });
    expect(await byName('uploaded_file')).toEqual({ status: 200, body: again.body });

    const hidden = await send<EventDefinition>('PATCH', url, { hidden: true });
    expect(hidden.body).toMatchObject({ hidden: true, verified: false, verified_at: null, verified_by: null, tags: ['files'] });
    expect((await get<Page<EventDefinition>>(`${EVENTS()}?exclude_hidden=true`)).body.results.map((d) => d.name)).not.toContain(
      'uploaded_file',
    );
    expect((await get<Page<EventDefinition>>(EVENTS())).body.results.map((d) => d.name)).toContain('uploaded_file');
    const shown = await send<EventDefinition>('PATCH', url, { verified: true });
    expect(shown.body).toMatchObject({ hidden: false, verified: true });
    expect(await send('PATCH', url, { verified: true, hidden: true })).toMatchObject({ status: 400 });
    expect((await send<EventDefinition>('PATCH', url, { verified: false })).body).toMatchObject({ verified: false, verified_at: null });
  });

  it('answers 404 for an id of none, 403 without event_definition:write', async () => {
    expect((await send('PATCH', `${EVENTS()}00000000-0000-5000-8000-000000000000/`, { description: 'x' })).status).toBe(404);
    expect((await get(`${EVENTS()}00000000-0000-5000-8000-000000000000/`)).status).toBe(404);
    const { body } = await byName('$pageview');
    const reader = await t.key(['event_definition:read']);
    expect(await send('PATCH', `${EVENTS()}${body.id}/`, { description: 'x' }, reader)).toEqual({
      status: 403,
      body: missingScope('event_definition:write'),
    });
    expect(await send('POST', EVENTS(), { name: 'w' }, reader)).toEqual({ status: 403, body: missingScope('event_definition:write') });
  });
});

describe('property definitions: partial update', () => {
  const find = async (name: string, type = 'event') =>
    (await get<Page<PropertyDefinition>>(`${PROPS()}?type=${type}&properties=${encodeURIComponent(name)}`)).body.results[0]!;

  it('describes, types and verifies a property; the declared type wins, null goes back to the derived one', async () => {
    const before = await find('plan_code');
    expect(before).toMatchObject({ property_type: 'String', is_numerical: false, description: '', verified: false, updated_at: null });
    const url = `${PROPS()}${before.id}/`;
    const patched = await send<PropertyDefinition>('PATCH', url, {
      description: 'The plan, as a code.',
      tags: ['billing'],
      property_type: 'Numeric',
      verified: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: before.id,
      name: 'plan_code',
      property_type: 'Numeric',
      is_numerical: true,
      description: 'The plan, as a code.',
      tags: ['billing'],
      verified: true,
      verified_by: { id: t.boot.user.id },
      updated_by: { id: t.boot.user.id },
    });
    expect(await find('plan_code')).toEqual({ ...patched.body, is_seen_on_filtered_events: null });
    expect(await get(url)).toEqual({ status: 200, body: patched.body });
    // numerical now; verified ones first, then by name
    expect((await get<Page<PropertyDefinition>>(`${PROPS()}?is_numerical=true`)).body.results.map((d) => d.name)).toEqual([
      'plan_code',
      'file_size',
    ]);
    expect((await get<Page<PropertyDefinition>>(PROPS())).body.results.map((d) => d.name)[0]).toBe('plan_code');
    const reverted = await send<PropertyDefinition>('PATCH', url, { property_type: null });
    expect(reverted.body).toMatchObject({ property_type: 'String', is_numerical: false, description: 'The plan, as a code.' });
  });

  it('hides a person property (exclude_hidden), 400 for hidden and verified, 404 for none, 403 without the scope', async () => {
    const tier = await find('tier', 'person');
    const url = `${PROPS()}${tier.id}/`;
    expect((await send<PropertyDefinition>('PATCH', url, { hidden: true })).body).toMatchObject({ name: 'tier', hidden: true });
    expect((await get<Page<PropertyDefinition>>(`${PROPS()}?type=person&exclude_hidden=true`)).body.results).toEqual([]);
    expect((await get<Page<PropertyDefinition>>(`${PROPS()}?type=person`)).body.count).toBe(1);
    expect(await send('PATCH', url, { hidden: true, verified: true })).toMatchObject({
      status: 400,
      body: { detail: 'A property cannot be both hidden and verified' },
    });
    expect((await send('PATCH', `${PROPS()}00000000-0000-5000-8000-000000000000/`, { hidden: true })).status).toBe(404);
    expect(await send('PATCH', url, { property_type: 'Text' })).toMatchObject({ status: 400 });
    const reader = await t.key(['property_definition:read']);
    expect(await send('PATCH', url, { hidden: false }, reader)).toEqual({ status: 403, body: missingScope('property_definition:write') });
  });
});
