/**
 * Every environment-scoped operation answers the same under `/api/projects/{project_id}/` as under
 * `/api/environments/{project_id}/` (PostHog's grandfathered prefix, posthog/api/__init__.py): the
 * same status and the same body, links aside (they keep the prefix the caller used), for reads of
 * each resource, with a numeric id and `@current`, and for the errors (no key, a key without the
 * scope, a key limited to another project, an unknown project, a bad parameter). A write under one
 * prefix is seen under the other. Answers under `/api/environments/` carry PostHog's deprecation
 * headers (`Deprecation`, `Sunset`, `Link` to the `/api/projects/` twin), errors too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironmentsDeprecation } from '../../server/config.js';
import { generateDemoEvents } from '../../server/ingest/demo.js';
import { importEvents } from '../../server/ingest/import.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
/** path suffixes (after `/api/<prefix>/<project>/`) of reads of every kind of resource */
let reads: string[];
let otherProjectKey: string;
let dashboardOnlyKey: string;

beforeAll(async () => {
  t = await startTestServer();
  await importEvents(t.store, t.boot.team.id, generateDemoEvents({ count: 300, seed: 7, now: new Date('2026-11-01T12:00:00Z') }));
  const plugin = (url: string) => t.boot.plugins.find((p) => p.url.includes(url))!.id;
  const post = async (suffix: string, body: unknown) => {
    const res = await t.fetch(`/api/environments/1/${suffix}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${suffix}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: number; tiles?: { id: number }[] };
  };
  const frontend = await post('pipeline_frontend_apps_configs/', { plugin: plugin('notification-bar'), order: 1 });
  const destination = await post('pipeline_frontend_apps_configs/', { plugin: plugin('customerio'), order: 2 });
  const dashboard = await post('dashboards/create_from_template_json/', {
    template: {
      template_name: 'Prefixes',
      dashboard_description: '',
      dashboard_filters: {},
      tags: [],
      tiles: [{ type: 'TEXT', body: 'Hi' }],
    },
  });
  const event = ((await (await t.fetch('/api/environments/1/events/?limit=1')).json()) as { results: { id: string }[] }).results[0]!.id;
  reads = [
    'pipeline_frontend_apps_configs/',
    'pipeline_frontend_apps_configs/?limit=1&offset=1',
    `pipeline_frontend_apps_configs/${frontend.id}/`,
    'pipeline_destination_configs/',
    `pipeline_destination_configs/${destination.id}/`,
    `pipeline_destination_configs/${destination.id}/activity/`,
    `pipeline_destination_configs/${destination.id}/frontend/`,
    'dashboards/?limit=1',
    `dashboards/${dashboard.id}/`,
    'events/?limit=3',
    'events/?limit=2&event=$pageview&properties=[{"key":"$browser","value":"Chrome"}]',
    'events/?format=csv&limit=5',
    `events/${event}/`,
    'events/values/?key=$browser',
    'explicit_members/',
  ];
  otherProjectKey = await t.key(['*'], {
    projects: [(await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Elsewhere' })).id],
  });
  dashboardOnlyKey = await t.key(['dashboard:read']);
});

afterAll(async () => {
  await t?.close();
});

/** Status, content type and body text of a GET, with `/api/projects/` read as `/api/environments/`. */
async function get(path: string, key?: string | null): Promise<{ status: number; type: string | null; text: string }> {
  const res = await t.fetch(path, key === undefined ? {} : { key });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    text: (await res.text()).replaceAll('/api/projects/', '/api/environments/'),
  };
}

describe('reads answer the same under both prefixes', () => {
  for (const project of ['1', '@current']) {
    it(`with project ${project}`, async () => {
      for (const suffix of reads) {
        const [environments, projects] = await Promise.all([
          get(`/api/environments/${project}/${suffix}`),
          get(`/api/projects/${project}/${suffix}`),
        ]);
        expect(environments.status, suffix).toBe(200);
        expect(projects, suffix).toEqual(environments);
      }
    });
  }

  it('links keep the prefix the caller used', async () => {
    const res = await t.fetch('/api/projects/1/events/?limit=1');
    const page = (await res.json()) as { next: string };
    expect(page.next.startsWith(`${t.url}/api/projects/1/events/?`)).toBe(true);
    const next = (await (await t.fetch(page.next.slice(t.url.length))).json()) as { next: string };
    expect(next.next.startsWith(`${t.url}/api/projects/1/events/?`)).toBe(true);
  });
});

describe('errors answer the same under both prefixes', () => {
  const cases: [string, string, string | null | undefined][] = [
    ['no key', '1/dashboards/', null],
    ['an unknown key', '1/dashboards/', 'phx_notakey'],
    ['a key without the scope', '1/events/', 'dashboard'],
    ['a key limited to another project', '1/dashboards/', 'other'],
    ['an unknown project', '99999/dashboards/', undefined],
    ['a malformed project', 'abc/dashboards/', undefined],
    ['a bad parameter', '1/events/?limit=abc', undefined],
    ['an unknown object', '1/dashboards/999999/', undefined],
    ['an unknown route', '1/no_such_thing/', undefined],
  ];
  it.each(cases)('%s', async (_what, suffix, keyName) => {
    const key = keyName === 'dashboard' ? dashboardOnlyKey : keyName === 'other' ? otherProjectKey : keyName;
    const [environments, projects] = await Promise.all([get(`/api/environments/${suffix}`, key), get(`/api/projects/${suffix}`, key)]);
    expect(environments.status).toBeGreaterThanOrEqual(400);
    expect(projects).toEqual(environments);
  });
});

it('a write under /api/projects/ is seen under /api/environments/, and the other way round', async () => {
  const created = await t.fetch('/api/projects/1/pipeline_frontend_apps_configs/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ plugin: t.boot.plugins.find((p) => p.url.includes('customerio'))!.id, order: 3 }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const patched = await t.fetch(`/api/environments/1/pipeline_destination_configs/${id}/`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Renamed' }),
  });
  expect(patched.status).toBe(200);
  const seen = (await (await t.fetch(`/api/projects/@current/pipeline_destination_configs/${id}/`)).json()) as { name: string };
  expect(seen.name).toBe('Renamed');
});

describe('the /api/environments/ deprecation headers', () => {
  it('every answer under /api/environments/ has Deprecation, Sunset and the /api/projects/ link; /api/projects/ has none', async () => {
    for (const [suffix, key] of [
      ['1/events/?limit=1&event=$pageview', undefined],
      ['1/dashboards/', null],
      ['99999/dashboards/', undefined],
      ['1/query/', undefined],
    ] as const) {
      const env = await t.fetch(`/api/environments/${suffix}`, key === undefined ? {} : { key });
      expect(env.headers.get('deprecation'), suffix).toBe('true');
      expect(env.headers.get('sunset'), suffix).toBe('Fri, 31 Jul 2026 00:00:00 GMT');
      expect(env.headers.get('link'), suffix).toBe(`</api/projects/${suffix}>; rel="successor-version"`);
      const projects = await t.fetch(`/api/projects/${suffix}`, key === undefined ? {} : { key });
      expect(projects.status).toBe(env.status);
      expect([projects.headers.get('deprecation'), projects.headers.get('sunset'), projects.headers.get('link')]).toEqual([
        null,
        null,
        null,
      ]);
    }
  });

  it('the values are configuration: another day, none, or off', async () => {
    expect(readEnvironmentsDeprecation({})).toEqual({ enabled: true, sunsetDate: '2026-07-31' });
    expect(readEnvironmentsDeprecation({ API_ENVIRONMENTS_SUNSET_DATE: '2027-01-15' })).toEqual({
      enabled: true,
      sunsetDate: '2027-01-15',
    });
    expect(readEnvironmentsDeprecation({ API_ENVIRONMENTS_SUNSET_DATE: 'none' })).toEqual({ enabled: true, sunsetDate: undefined });
    expect(readEnvironmentsDeprecation({ API_ENVIRONMENTS_DEPRECATION: 'off' }).enabled).toBe(false);
    expect(() => readEnvironmentsDeprecation({ API_ENVIRONMENTS_SUNSET_DATE: '2027-02-30' })).toThrow(/API_ENVIRONMENTS_SUNSET_DATE/);
    const off = await startTestServer({ environmentsDeprecation: { enabled: false, sunsetDate: undefined } });
    try {
      const res = await off.fetch('/api/environments/1/dashboards/');
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBeNull();
      const later = await startTestServer({ environmentsDeprecation: { enabled: true, sunsetDate: '2027-01-15' } });
      try {
        expect((await later.fetch('/api/environments/1/dashboards/')).headers.get('sunset')).toBe('Fri, 15 Jan 2027 00:00:00 GMT');
      } finally {
        await later.close();
      }
    } finally {
      await off.close();
    }
  });
});
