/**
 * `GET /api/projects/{project_id}/event_definitions/` through the real HTTP stack (response
 * validation on): one definition per event name of the project, derived from its events, with a
 * stable UUID id, first / last seen timestamps and the last 30 days' volume; PostHog's `search`,
 * `event_type`, `excluded_properties`, `ordering` and limit/offset paging in the
 * `{count, next, previous, results}` envelope. PostHog has no `/api/environments/` route for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { eventDefinitionId } from '../../server/domain/event-definitions.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { invalid, missingScope, NOT_AUTHENTICATED } from '../helpers/errors.js';
import type { components } from '../../client/index.js';

type Page = components['schemas']['PaginatedEventDefinitionList'];

const DAY = 86_400_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let t: TestServer;
let P: number;
let Q: number;
/** the events' timestamps, in the stored form, by name: [first, last] */
const seen = new Map<string, [string, string]>();

/** ISO with microseconds and Z, `days` ago (whole milliseconds, so the stored form is this text with 000 added). */
function ago(days: number, ms = 0): string {
  return new Date(Date.now() - days * DAY + ms).toISOString().replace('Z', '000Z');
}

async function json<T>(path: string, key?: string | null): Promise<{ status: number; body: T }> {
  const res = await t.fetch(path, key === undefined ? {} : { key });
  return { status: res.status, body: (await res.json()) as T };
}

const LIST = (query = '', team = P) => `/api/projects/${team}/event_definitions/${query}`;
const names = async (query: string) => (await json<Page>(LIST(query))).body.results.map((d) => d.name);

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Definitions second project' })).id;
  const rows = [
    { event: '$pageview', timestamp: ago(40) },
    { event: '$pageview', timestamp: ago(1, 5) },
    { event: '$pageview', timestamp: ago(1) },
    { event: 'uploaded_file', timestamp: ago(5) },
    { event: 'uploaded_file', timestamp: ago(5, 7) },
    { event: '$autocapture', timestamp: ago(60) },
  ];
  for (const r of rows) {
    const [first, last] = seen.get(r.event) ?? [r.timestamp, r.timestamp];
    seen.set(r.event, [r.timestamp < first ? r.timestamp : first, r.timestamp > last ? r.timestamp : last]);
  }
  await importEvents(
    t.store,
    P,
    rows.map((r) => ({ ...r, distinct_id: 'ana', properties: {} })),
  );
  await importEvents(t.store, Q, [
    { event: '$pageview', distinct_id: 'dave', timestamp: ago(2), properties: {} },
    { event: 'signed up', distinct_id: 'dave', timestamp: ago(2), properties: {} },
  ]);
});

afterAll(async () => {
  await t.close();
});

describe('GET /api/projects/{project_id}/event_definitions/', () => {
  it('answers one definition per event name, derived from the events, newest last-seen day first', async () => {
    const { status, body } = await json<Page>(LIST());
    expect(status).toBe(200);
    expect(body).toMatchObject({ count: 3, next: null, previous: null });
    expect(body.results.map((d) => d.name)).toEqual(['$pageview', 'uploaded_file', '$autocapture']);
    const volume: Record<string, number> = { $pageview: 2, uploaded_file: 2, $autocapture: 0 };
    for (const d of body.results) {
      const [first, last] = seen.get(d.name) as [string, string];
      expect(d).toEqual({
        id: eventDefinitionId(P, d.name),
        name: d.name,
        created_at: first,
        last_seen_at: last,
        last_updated_at: first,
        tags: [],
        is_action: false,
        action_id: null,
        is_calculating: false,
        last_calculated_at: null,
        created_by: null,
        post_to_slack: false,
        volume_30_day: volume[d.name],
        query_usage_30_day: null,
        // nothing said about it yet (test/server/definition-writes.test.ts)
        owner: null,
        description: '',
        verified: false,
        verified_at: null,
        verified_by: null,
        hidden: false,
        updated_at: null,
        updated_by: null,
        default_columns: [],
      });
      expect(d.id).toMatch(UUID);
    }
  });

  it('keeps each name its id; the same name in another project has another id', async () => {
    const a = (await json<Page>(LIST())).body.results.find((d) => d.name === '$pageview');
    const b = (await json<Page>(LIST())).body.results.find((d) => d.name === '$pageview');
    const other = (await json<Page>(LIST('', Q))).body.results.find((d) => d.name === '$pageview');
    expect(a?.id).toBe(b?.id);
    expect(other?.id).toMatch(UUID);
    expect(other?.id).not.toBe(a?.id);
    expect((await json<Page>(LIST('', Q))).body.results.map((d) => d.name).sort()).toEqual(['$pageview', 'signed up']);
  });

  it('searches by every whitespace-separated term in the name, any case', async () => {
    expect(await names('?search=page')).toEqual(['$pageview']);
    expect(await names('?search=FILE%20up')).toEqual(['uploaded_file']);
    expect(await names('?search=page%20file')).toEqual([]);
    expect(await names('?search=%24')).toEqual(['$pageview', '$autocapture']);
    expect(await names('?search=')).toHaveLength(3);
  });

  it('filters by event_type and excluded_properties', async () => {
    expect(await names('?event_type=event_custom')).toEqual(['uploaded_file']);
    expect(await names('?event_type=event_posthog')).toEqual(['$pageview', '$autocapture']);
    expect(await names('?event_type=all')).toHaveLength(3);
    expect(await names('?event_type=action_event')).toEqual([]);
    expect(await names(`?excluded_properties=${encodeURIComponent('["$pageview","nope"]')}`)).toEqual(['uploaded_file', '$autocapture']);
    expect(await names('?exclude_hidden=true')).toHaveLength(3);
  });

  it('orders by ordering (repeatable, - for descending)', async () => {
    expect(await names('?ordering=name')).toEqual(['$autocapture', '$pageview', 'uploaded_file']);
    expect(await names('?ordering=-name')).toEqual(['uploaded_file', '$pageview', '$autocapture']);
    expect(await names('?ordering=last_seen_at')).toEqual(['$autocapture', 'uploaded_file', '$pageview']);
    expect(await names('?ordering=-last_seen_at::date&ordering=-name')).toEqual(['$pageview', 'uploaded_file', '$autocapture']);
  });

  it('pages with limit and offset: count, and absolute next / previous links that keep the other parameters', async () => {
    const first = (await json<Page>(LIST('?limit=2&event_type=all'))).body;
    expect(first.count).toBe(3);
    expect(first.results.map((d) => d.name)).toEqual(['$pageview', 'uploaded_file']);
    expect(first.previous).toBeNull();
    const next = new URL(first.next as string);
    expect(next.origin).toBe(new URL(t.url).origin);
    expect(next.pathname).toBe(`/api/projects/${P}/event_definitions/`);
    expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '2', offset: '2', event_type: 'all' });
    const second = (await json<Page>(next.pathname + next.search)).body;
    expect(second).toMatchObject({ count: 3, next: null });
    expect(second.results.map((d) => d.name)).toEqual(['$autocapture']);
    expect(Object.fromEntries(new URL(second.previous as string).searchParams)).toEqual({ limit: '2', event_type: 'all' });
  });

  it('answers 400 for an invalid excluded_properties, event_type or ordering', async () => {
    expect(await json(LIST('?excluded_properties=nope'))).toEqual({
      status: 400,
      body: invalid('excluded_properties must be a JSON array of event names, got "nope".', 'excluded_properties'),
    });
    expect(await json(LIST('?excluded_properties=%5B1%5D'))).toEqual({
      status: 400,
      body: invalid('excluded_properties must be a JSON array of event names (strings).', 'excluded_properties'),
    });
    expect((await json(LIST('?event_type=bogus'))).status).toBe(400);
    expect((await json(LIST('?ordering=volume'))).status).toBe(400);
  });

  it('answers 401 without a key, 403 without event_definition:read, and is not served under /api/environments/', async () => {
    expect(await json(LIST(), null)).toEqual({ status: 401, body: NOT_AUTHENTICATED });
    expect(await json(LIST(), await t.key(['person:read']))).toEqual({ status: 403, body: missingScope('event_definition:read') });
    expect((await json(LIST(), await t.key(['event_definition:read']))).status).toBe(200);
    expect((await t.fetch(`/api/environments/${P}/event_definitions/`)).status).toBe(404);
    expect((await json(LIST().slice(0, -1))).status).toBe(200);
  });
});

describe('GET /api/projects/{project_id}/event_definitions/by_name/', () => {
  it('answers the definition of exactly that name, as its list row; 404 for no such event; 400 without a name', async () => {
    const list = await json<{ results: { name: string }[] }>(LIST('?limit=100'));
    const row = list.body.results.find((r) => r.name === 'uploaded_file');
    const byName = await json<{ name: string }>(`/api/projects/${P}/event_definitions/by_name/?name=uploaded_file`);
    expect(byName).toEqual({ status: 200, body: row });
    expect((await json(`/api/projects/${P}/event_definitions/by_name/?name=uploaded`)).status).toBe(404);
    expect((await json(`/api/projects/${P}/event_definitions/by_name/?name=Uploaded_File`)).status).toBe(404);
    expect((await json(`/api/projects/${P}/event_definitions/by_name/?name=${encodeURIComponent('$pageview')}`)).body).toMatchObject({
      name: '$pageview',
    });
    const none = await json<{ attr: string }>(`/api/projects/${P}/event_definitions/by_name/`);
    expect(none.status).toBe(400);
    expect(none.body.attr).toBe('name');
  });
});
