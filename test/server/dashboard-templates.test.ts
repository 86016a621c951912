/**
 * The dashboard templates gallery through the real HTTP stack (response validation on): the
 * built-in catalogue listed in PostHog's envelope with `search`, `scope`, `is_featured`, `limit`
 * and `offset`; one template by id, 404 for any other; both prefixes; the `dashboard_template:read`
 * scope; and a template posted unchanged to `create_from_template_json` makes its dashboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../client/index.js';
import { loadDashboardTemplates } from '../../server/domain/dashboard-templates.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope } from '../helpers/errors.js';

type Template = components['schemas']['DashboardTemplateEntry'];
type Page = components['schemas']['PaginatedDashboardTemplateEntryList'];

const PRODUCT = '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e01';
const TRAFFIC = '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e02';
const RETENTION = '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e03';

let t: TestServer;
let P: number;

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
});

afterAll(async () => {
  await t?.close();
});

const LIST = (query = '', prefix = 'environments') => `/api/${prefix}/${P}/dashboard_templates/${query}`;
const ids = async (query: string) => ((await t.json(LIST(query))) as Page).results.map((r) => r.id);

describe('the catalogue', () => {
  it('loads every listed file, each with PostHog-style InsightVizNode/TrendsQuery tiles', () => {
    const templates = loadDashboardTemplates();
    expect(templates.map((x) => x.template_name)).toEqual(['Product analytics', 'Website traffic', 'Retention']);
    for (const x of templates) {
      expect(x.scope).toBe('global');
      for (const tile of x.tiles) {
        if (tile.type !== 'INSIGHT') continue;
        expect(tile.query).toMatchObject({ kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } });
        expect(tile.name).toBeTruthy();
        expect(tile.layouts).toHaveProperty('sm');
      }
    }
  });
});

describe('GET dashboard_templates/', () => {
  it('lists featured first, then by name, in the paginated envelope', async () => {
    const page = (await t.json(LIST())) as Page;
    expect(page).toMatchObject({ count: 3, next: null, previous: null });
    expect(page.results.map((r) => r.id)).toEqual([PRODUCT, TRAFFIC, RETENTION]);
    expect(page.results[0]).toMatchObject({ template_name: 'Product analytics', is_featured: true, team_id: null, created_by: null });
  });

  it('pages with limit and offset, with absolute links', async () => {
    const page = (await t.json(LIST('?limit=1&offset=1'))) as Page;
    expect(page.count).toBe(3);
    expect(page.results.map((r) => r.id)).toEqual([TRAFFIC]);
    expect(page.next).toBe(`${t.url}${LIST('?limit=1&offset=2')}`);
    expect(page.previous).toBe(`${t.url}${LIST('?limit=1')}`);
  });

  it('searches names, tags and descriptions (every term), best match first', async () => {
    expect(await ids('?search=traffic')).toEqual([TRAFFIC]);
    expect(await ids('?search=RETENTION')).toEqual([RETENTION]);
    // "product-analytics" is a tag of two; the name match ranks first
    expect(await ids('?search=product')).toEqual([PRODUCT, RETENTION]);
    expect(await ids('?search=users%20signups')).toEqual([RETENTION]);
    expect(await ids('?search=nothing-like-this')).toEqual([]);
  });

  it('filters by scope and is_featured', async () => {
    expect(await ids('?scope=global')).toHaveLength(3);
    expect(await ids('?scope=team')).toEqual([]);
    expect(await ids('?is_featured=true')).toEqual([PRODUCT, TRAFFIC]);
    expect(await ids('?is_featured=false')).toEqual([RETENTION]);
  });

  it('answers 400 for an unknown scope', async () => {
    const res = await t.fetch(LIST('?scope=everything'));
    expect(res.status).toBe(400);
  });

  it('is served under /api/projects/ too', async () => {
    const page = (await t.json(LIST('', 'projects'))) as Page;
    expect(page.count).toBe(3);
  });

  it('needs dashboard_template:read', async () => {
    const res = await t.fetch(LIST(), { key: await t.key(['dashboard:read']) });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(missingScope('dashboard_template:read'));
    const ok = await t.fetch(LIST(), { key: await t.key(['dashboard_template:read']) });
    expect(ok.status).toBe(200);
  });
});

describe('GET dashboard_templates/{id}/', () => {
  it('answers the template with its tiles and variables', async () => {
    const x = (await t.json(LIST(`${RETENTION}/`))) as Template;
    expect(x.template_name).toBe('Retention');
    expect(x.tiles).toHaveLength(3);
    expect(x.variables?.[0]).toMatchObject({ name: 'signup_event', type: 'event' });
    expect(x.non_portable_references).toEqual({ actions: 0, cohorts: 0, warehouse_tables: [] });
  });

  it('answers 404 for an unknown id, a UUID or not', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await t.fetch(LIST(`${id}/`));
      expect(res.status, id).toBe(404);
      expect(await res.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    }
  });
});

describe('a template posted to create_from_template_json', () => {
  it('makes a dashboard with its tiles, unchanged', async () => {
    const template = (await t.json(LIST(`${TRAFFIC}/`))) as Template;
    const res = await t.fetch(`/api/environments/${P}/dashboards/create_from_template_json/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ template }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const dashboard = JSON.parse(text) as {
      name: string;
      filters: unknown;
      tags: string[];
      tiles: { insight?: { name: string; query: unknown } | null }[];
    };
    expect(dashboard.name).toBe('Website traffic');
    expect(dashboard.filters).toEqual({ date_from: '-7d' });
    expect(dashboard.tiles).toHaveLength(template.tiles.length);
    const insights = dashboard.tiles.filter((tile) => tile.insight).map((tile) => tile.insight!);
    expect(insights.map((i) => i.name)).toEqual(template.tiles.filter((x) => x.type === 'INSIGHT').map((x) => x.name));
    expect(insights[0]!.query).toEqual(template.tiles[0]!.query);
  });
});
