/**
 * Contract ↔ mock, every hand-written operation but the plugin configs (those are in
 * mock-plugin-configs.test.ts): the contract itself (`/api/schema/`), projects, dashboards, events,
 * explicit members, identity and discovery, persons, event definitions and HogQL queries. Each is
 * called through the project's typed client against the Prism mock (`npm run mock`), with valid
 * parameters and bodies; each answer must carry the declared 2xx status, the declared shape, and the
 * first example the spec declares for it (as the mock serves it: its links pointing at the mock).
 * Also the CSV answers (`Accept: text/csv`). The last test checks that this file called every
 * operation of its share.
 */
import { describe, expect, it } from 'vitest';
import {
  api,
  asJson,
  auth,
  called,
  exampleOf,
  expectPage,
  expectStatus,
  handWrittenOperationIds,
  ISO_UTC,
  mock,
  project,
  rawGet,
  useMock,
  UUID,
  type Json,
} from '../helpers/mock-contract.js';

useMock();

/** Asserts the shape of a Dashboard and its tiles (each an insight or a text); returns it. */
function expectDashboard(x: unknown): Json {
  const d = x as Json;
  expect(d).toMatchObject({
    id: expect.any(Number),
    pinned: expect.any(Boolean),
    deleted: expect.any(Boolean),
    filters: expect.any(Object),
    tags: expect.any(Array),
    tiles: expect.any(Array),
  });
  expect([21, 37]).toContain(d.restriction_level);
  expect(d.created_at).toMatch(ISO_UTC);
  for (const tile of d.tiles as Json[]) {
    expect(tile.id).toBeTypeOf('number');
    expect((tile.insight === null) !== (tile.text === null)).toBe(true);
  }
  return d;
}

/** Asserts the shape of a ClickhouseEvent. */
function expectEvent(x: unknown): void {
  const e = x as Json;
  expect(e.id).toMatch(UUID);
  expect(e.distinct_id).toBeTypeOf('string');
  expect(e.event).toBeTypeOf('string');
  expect(e.properties).toBeTypeOf('object');
  expect(e.timestamp).toMatch(ISO_UTC);
  expect(Array.isArray(e.elements)).toBe(true);
  expect(e.elements_chain).toBeTypeOf('string');
  expect(e).toHaveProperty('person');
}

/** Asserts the shape of an ExplicitTeamMember. */
function expectExplicitMember(x: unknown): void {
  const m = x as Json;
  expect(m.id).toMatch(UUID);
  expect([1, 8]).toContain(m.level);
  expect([1, 8, 15]).toContain(m.parent_level);
  expect([1, 8, 15]).toContain(m.effective_level);
  expect(m.parent_membership_id).toMatch(UUID);
  expect(m.joined_at).toMatch(ISO_UTC);
  expect(m.updated_at).toMatch(ISO_UTC);
  expect(m.user).toMatchObject({ id: expect.any(Number), uuid: expect.stringMatching(UUID), email: expect.any(String) });
}

describe('GET /api/schema/', () => {
  it('answers the YAML example without a key, and the JSON one for Accept: application/json', async () => {
    const yaml = await fetch(`${mock.url}/api/schema/`);
    called.add('schema_retrieve');
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/vnd\.oai\.openapi/);
    expect(await yaml.text()).toBe(exampleOf('schema_retrieve', '200', 'application/vnd.oai.openapi'));
    const json = await fetch(`${mock.url}/api/schema/`, { headers: { Accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toEqual(exampleOf('schema_retrieve', '200', 'application/json'));
  });
});

// ---------------------------------------------------------------------------------------------
// projects
// ---------------------------------------------------------------------------------------------

describe('GET /api/projects/', () => {
  it('answers 200 with a PaginatedProjectList', async () => {
    const body = await expectStatus('projects_list', api.GET('/api/projects/', { params: { query: { limit: 100 } } }), 200);
    const page = expectPage(body);
    expect(page.results.length).toBeGreaterThan(0);
    for (const p of body.results) {
      expect(p.id).toBeTypeOf('number');
      expect(p.uuid).toMatch(UUID);
      expect(p.organization).toMatch(UUID);
      expect(p.name).toBeTypeOf('string');
      expect(p.api_token).toMatch(/^phc_/);
      expect(p.timezone).toBeTypeOf('string');
      expect(p.access_control).toBeTypeOf('boolean');
    }
    expect(body).toEqual(exampleOf('projects_list', '200'));
  });
});

// ---------------------------------------------------------------------------------------------
// dashboards
// ---------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/dashboards/', () => {
  it('answers 200 with a page of dashboards without tiles', async () => {
    const body = await expectStatus(
      'environments_dashboards_list',
      api.GET('/api/environments/{project_id}/dashboards/', { params: { path: project } }),
      200,
    );
    expect(body.count).toBe(body.results.length);
    for (const d of body.results) expect(d).not.toHaveProperty('tiles');
    expect(body).toEqual(exampleOf('environments_dashboards_list', '200'));
  });
});

describe('GET /api/environments/{project_id}/dashboards/{id}/', () => {
  it('answers 200 with the Dashboard and its tiles', async () => {
    const body = await expectStatus(
      'environments_dashboards_retrieve',
      api.GET('/api/environments/{project_id}/dashboards/{id}/', { params: { path: { ...project, id: 21 } } }),
      200,
    );
    expectDashboard(body);
    expect(body).toEqual(exampleOf('environments_dashboards_retrieve', '200'));
  });
});

describe('PATCH /api/environments/{project_id}/dashboards/{id}/move_tile/', () => {
  it('answers 200 with the source Dashboard', async () => {
    const body = await expectStatus(
      'environments_dashboards_move_tile_partial_update',
      api.PATCH('/api/environments/{project_id}/dashboards/{id}/move_tile/', {
        params: { path: { ...project, id: 14 } },
        body: { tile: { id: 87 }, toDashboard: 15 },
      }),
      200,
    );
    expectDashboard(body);
    expect(body.id).toBe(14);
    expect(body).toEqual(exampleOf('environments_dashboards_move_tile_partial_update', '200'));
  });
});

describe('POST /api/environments/{project_id}/dashboards/create_from_template_json/', () => {
  it('answers 200 with the created Dashboard', async () => {
    const body = await expectStatus(
      'environments_dashboards_create_from_template_json_create',
      api.POST('/api/environments/{project_id}/dashboards/create_from_template_json/', {
        params: { path: project },
        body: {
          template: {
            template_name: 'Product analytics',
            dashboard_description: 'Track the usage of your product.',
            dashboard_filters: {},
            tags: ['product'],
            tiles: [
              {
                type: 'INSIGHT',
                name: 'Daily active users',
                query: {
                  kind: 'InsightVizNode',
                  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: null, math: 'dau' }] },
                },
                layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
              },
              { type: 'TEXT', body: '## How to read this dashboard', layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } },
            ],
          },
          pinned: true,
        },
      }),
      200,
    );
    expectDashboard(body);
    expect(body.tiles.length).toBeGreaterThan(0);
    expect(body).toEqual(exampleOf('environments_dashboards_create_from_template_json_create', '200'));
  });
});

// ---------------------------------------------------------------------------------------------
// events
// ---------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/', () => {
  it('answers 200 with a page of ClickhouseEvent', async () => {
    const body = asJson(
      await expectStatus(
        'environments_events_list',
        api.GET('/api/environments/{project_id}/events/', { params: { path: project, query: { event: '$pageview', limit: 2 } } }),
        200,
      ),
    );
    expect(body).toHaveProperty('next');
    expect(body.results.length).toBeGreaterThan(0);
    for (const e of body.results) expectEvent(e);
    expect(body).toEqual(exampleOf('environments_events_list', '200'));
  });

  it('with format=csv, answers 200 text/csv', async () => {
    const res = await rawGet('/api/environments/1/events/?format=csv', { ...auth, Accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await res.text();
    expect(text.split('\r\n')[0]).toContain('distinct_id');
    expect(text).toBe(exampleOf('environments_events_list', '200', 'text/csv'));
  });
});

describe('GET /api/environments/{project_id}/events/values/', () => {
  it('answers 200 with a bare array of {name}', async () => {
    const body = asJson(
      await expectStatus(
        'environments_events_values_retrieve',
        api.GET('/api/environments/{project_id}/events/values/', { params: { path: project, query: { key: '$browser' } } }),
        200,
      ),
    );
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    expect(body.length).toBeLessThanOrEqual(10);
    for (const v of body) expect(Object.keys(v)).toEqual(['name']);
    expect(body).toEqual(exampleOf('environments_events_values_retrieve', '200'));
  });

  it('with format=csv, answers 200 text/csv with a name column', async () => {
    const res = await rawGet('/api/environments/1/events/values/?key=%24browser&format=csv', { ...auth, Accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await res.text();
    expect(text.split('\r\n')[0]).toBe('name');
    expect(text).toBe(exampleOf('environments_events_values_retrieve', '200', 'text/csv'));
  });
});

describe('GET /api/environments/{project_id}/events/{id}/', () => {
  it('answers 200 with the ClickhouseEvent', async () => {
    const id = '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f';
    const body = asJson(
      await expectStatus(
        'environments_events_retrieve',
        api.GET('/api/environments/{project_id}/events/{id}/', { params: { path: { ...project, id } } }),
        200,
      ),
    );
    expectEvent(body);
    expect(body.id).toBe(id);
    expect(body).toEqual(exampleOf('environments_events_retrieve', '200'));
  });

  it('with format=csv, answers 200 text/csv', async () => {
    const res = await rawGet('/api/environments/1/events/01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f/?format=csv', {
      ...auth,
      Accept: 'text/csv',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await res.text()).toBe(exampleOf('environments_events_retrieve', '200', 'text/csv'));
  });
});

// ---------------------------------------------------------------------------------------------
// explicit_members
// ---------------------------------------------------------------------------------------------

const memberUuid = '01934a10-7b2c-7d3e-8f4a-5b6c7d8e9f01';

describe('GET /api/environments/{project_id}/explicit_members/', () => {
  it('answers 200 with a bare array of ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_list',
      api.GET('/api/environments/{project_id}/explicit_members/', { params: { path: project } }),
      200,
    );
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    for (const m of body) expectExplicitMember(m);
    expect(body).toEqual(exampleOf('environments_explicit_members_list', '200'));
  });
});

describe('POST /api/environments/{project_id}/explicit_members/', () => {
  it('answers 201 with the new ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_create',
      api.POST('/api/environments/{project_id}/explicit_members/', {
        params: { path: project },
        body: { user_uuid: memberUuid, level: 1 },
      }),
      201,
    );
    expectExplicitMember(body);
    expect(body.user.uuid).toBe(memberUuid);
    expect(body).toEqual(exampleOf('environments_explicit_members_create', '201'));
  });
});

describe('GET /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 200 with the ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_retrieve',
      api.GET('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
        params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
      }),
      200,
    );
    expectExplicitMember(body);
    expect(body).toEqual(exampleOf('environments_explicit_members_retrieve', '200'));
  });
});

describe('PATCH /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 200 with the updated ExplicitTeamMember', async () => {
    const body = await expectStatus(
      'environments_explicit_members_partial_update',
      api.PATCH('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
        params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
        body: { level: 8 },
      }),
      200,
    );
    expectExplicitMember(body);
    expect(body.level).toBe(8);
    expect(body).toEqual(exampleOf('environments_explicit_members_partial_update', '200'));
  });
});

describe('DELETE /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('answers 204 with no body', async () => {
    const { response, data } = await api.DELETE('/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', {
      params: { path: { ...project, parent_membership__user__uuid: memberUuid } },
    });
    called.add('environments_explicit_members_destroy');
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// identity and discovery, persons, event definitions
// ---------------------------------------------------------------------------------------------

describe('identity, discovery, persons and event definitions: the first declared example of each', () => {
  const org = { id: '0192f1a4-5b7c-7d2e-9f31-6a8b4c2d1e0f' };
  it('GET /api/users/@me/', async () => {
    const body = await expectStatus('users_retrieve', api.GET('/api/users/{uuid}/', { params: { path: { uuid: '@me' } } }), 200);
    expect(body).toEqual(exampleOf('users_retrieve', '200'));
  });
  it('GET /api/personal_api_keys/@current/', async () => {
    const body = await expectStatus(
      'personal_api_keys_retrieve',
      api.GET('/api/personal_api_keys/{id}/', { params: { path: { id: '@current' } } }),
      200,
    );
    expect(body).toEqual(exampleOf('personal_api_keys_retrieve', '200'));
  });
  it('GET /api/organizations/ and /{id}/ and /{id}/projects/', async () => {
    expect(await expectStatus('organizations_list', api.GET('/api/organizations/', {}), 200)).toEqual(
      exampleOf('organizations_list', '200'),
    );
    expect(
      await expectStatus('organizations_retrieve', api.GET('/api/organizations/{id}/', { params: { path: { id: '@current' } } }), 200),
    ).toEqual(exampleOf('organizations_retrieve', '200'));
    expect(
      await expectStatus(
        'organizations_projects_list',
        api.GET('/api/organizations/{organization_id}/projects/', { params: { path: { organization_id: org.id } } }),
        200,
      ),
    ).toEqual(exampleOf('organizations_projects_list', '200'));
    expect(
      await expectStatus(
        'organizations_pipeline_frontend_apps_list',
        api.GET('/api/organizations/{organization_id}/pipeline_frontend_apps/', { params: { path: { organization_id: '@current' } } }),
        200,
      ),
    ).toEqual(exampleOf('organizations_pipeline_frontend_apps_list', '200'));
  });
  it('GET /api/projects/{id}/ and /api/environments/{id}/', async () => {
    expect(await expectStatus('projects_retrieve', api.GET('/api/projects/{id}/', { params: { path: { id: '1' } } }), 200)).toEqual(
      exampleOf('projects_retrieve', '200'),
    );
    expect(
      await expectStatus('environments_retrieve', api.GET('/api/environments/{id}/', { params: { path: { id: '@current' } } }), 200),
    ).toEqual(exampleOf('environments_retrieve', '200'));
  });
  it('GET persons/ and persons/{id}/', async () => {
    expect(
      await expectStatus(
        'environments_persons_list',
        api.GET('/api/environments/{project_id}/persons/', { params: { path: project } }),
        200,
      ),
    ).toEqual(exampleOf('environments_persons_list', '200'));
    const one = await expectStatus(
      'environments_persons_retrieve',
      api.GET('/api/environments/{project_id}/persons/{id}/', { params: { path: { ...project, id: '1' } } }),
      200,
    );
    expect(one).toEqual(exampleOf('environments_persons_retrieve', '200'));
  });
  it('POST query/ with a HogQLQuery', async () => {
    const body = await expectStatus(
      'environments_query_create',
      api.POST('/api/environments/{project_id}/query/', {
        params: { path: project },
        body: { query: { kind: 'HogQLQuery', query: 'select event, count() from events group by event' } },
      }),
      200,
    );
    expect(body).toEqual(exampleOf('environments_query_create', '200'));
  });
  it('GET /api/projects/{project_id}/event_definitions/', async () => {
    const body = await expectStatus(
      'event_definitions_list',
      api.GET('/api/projects/{project_id}/event_definitions/', { params: { path: project } }),
      200,
    );
    expect(body).toEqual(exampleOf('event_definitions_list', '200'));
    const one = await expectStatus(
      'event_definitions_by_name_retrieve',
      api.GET('/api/projects/{project_id}/event_definitions/by_name/', { params: { path: project, query: { name: '$pageview' } } }),
      200,
    );
    expect(one).toEqual(exampleOf('event_definitions_by_name_retrieve', '200'));
    expect(
      await expectStatus(
        'property_definitions_list',
        api.GET('/api/projects/{project_id}/property_definitions/', { params: { path: project } }),
        200,
      ),
    ).toEqual(exampleOf('property_definitions_list', '200'));
    expect(
      await expectStatus(
        'property_definitions_retrieve',
        api.GET('/api/projects/{project_id}/property_definitions/{id}/', {
          params: { path: { ...project, id: '3b1e9a4c-2d7f-5c8e-9a1b-4f6d2e8c0a17' } },
        }),
        200,
      ),
    ).toEqual(exampleOf('property_definitions_retrieve', '200'));
    const definition = { ...project, id: '0192f1a4-5b7c-5d2e-9f31-6a8b4c2d1e0f' };
    expect(
      await expectStatus(
        'event_definitions_create',
        api.POST('/api/projects/{project_id}/event_definitions/', { params: { path: project }, body: { name: 'checkout_started' } }),
        201,
      ),
    ).toEqual(exampleOf('event_definitions_create', '201'));
    expect(
      await expectStatus(
        'event_definitions_retrieve',
        api.GET('/api/projects/{project_id}/event_definitions/{id}/', { params: { path: definition } }),
        200,
      ),
    ).toEqual(exampleOf('event_definitions_retrieve', '200'));
    expect(
      await expectStatus(
        'event_definitions_partial_update',
        api.PATCH('/api/projects/{project_id}/event_definitions/{id}/', { params: { path: definition }, body: { verified: true } }),
        200,
      ),
    ).toEqual(exampleOf('event_definitions_partial_update', '200'));
    expect(
      await expectStatus(
        'property_definitions_partial_update',
        api.PATCH('/api/projects/{project_id}/property_definitions/{id}/', {
          params: { path: { ...project, id: '3b1e9a4c-2d7f-5c8e-9a1b-4f6d2e8c0a17' } },
          body: { description: "The customer's plan." },
        }),
        200,
      ),
    ).toEqual(exampleOf('property_definitions_partial_update', '200'));
  });
});

describe('the elements stats', () => {
  it('GET elements/stats/', async () => {
    expect(
      await expectStatus(
        'environments_elements_stats_retrieve',
        api.GET('/api/environments/{project_id}/elements/stats/', { params: { path: project } }),
        200,
      ),
    ).toEqual(exampleOf('environments_elements_stats_retrieve', '200'));
  });
});

describe('the persons tools of @posthog/cli', () => {
  it('values, cohorts, update_property, delete_property, bulk_delete', async () => {
    const id = '01934e70-0a1b-7c2d-8e3f-4a5b6c7d8e9f';
    expect(
      await expectStatus(
        'environments_persons_values_retrieve',
        api.GET('/api/environments/{project_id}/persons/values/', { params: { path: project, query: { key: 'plan' } } }),
        200,
      ),
    ).toEqual(exampleOf('environments_persons_values_retrieve', '200'));
    expect(
      await expectStatus(
        'environments_persons_cohorts_retrieve',
        api.GET('/api/environments/{project_id}/persons/cohorts/', { params: { path: project, query: { person_id: id } } }),
        200,
      ),
    ).toEqual(exampleOf('environments_persons_cohorts_retrieve', '200'));
    await expectStatus(
      'environments_persons_update_property_create',
      api.POST('/api/environments/{project_id}/persons/{id}/update_property/', {
        params: { path: { ...project, id } },
        body: { key: 'plan', value: 'pro' },
      }),
      202,
    );
    expect(
      await expectStatus(
        'environments_persons_delete_property_create',
        api.POST('/api/environments/{project_id}/persons/{id}/delete_property/', {
          params: { path: { ...project, id } },
          body: { $unset: 'plan' },
        }),
        201,
      ),
    ).toEqual(exampleOf('environments_persons_delete_property_create', '201'));
    expect(
      await expectStatus(
        'environments_persons_bulk_delete_create',
        api.POST('/api/environments/{project_id}/persons/bulk_delete/', {
          params: { path: project },
          body: { distinct_ids: ['ada'], delete_events: false, delete_recordings: false, keep_person: false },
        }),
        202,
      ),
    ).toEqual(exampleOf('environments_persons_bulk_delete_create', '202'));
  });
});

describe('the identity calls of @posthog/cli', () => {
  it('PATCH /api/users/@me/, GET and PATCH an organization’s project, GET an organization’s members', async () => {
    expect(
      await expectStatus(
        'users_partial_update',
        api.PATCH('/api/users/{uuid}/', { params: { path: { uuid: '@me' } }, body: { set_current_team: 1 } }),
        200,
      ),
    ).toEqual(exampleOf('users_partial_update', '200'));
    const org = { organization_id: '@current', id: '1' };
    expect(
      await expectStatus(
        'organizations_projects_retrieve',
        api.GET('/api/organizations/{organization_id}/projects/{id}/', { params: { path: org } }),
        200,
      ),
    ).toEqual(exampleOf('organizations_projects_retrieve', '200'));
    expect(
      await expectStatus(
        'organizations_projects_partial_update',
        api.PATCH('/api/organizations/{organization_id}/projects/{id}/', { params: { path: org }, body: { name: 'Hedgebox' } }),
        200,
      ),
    ).toEqual(exampleOf('organizations_projects_partial_update', '200'));
    expect(
      await expectStatus(
        'organizations_members_list',
        api.GET('/api/organizations/{organization_id}/members/', { params: { path: { organization_id: '@current' } } }),
        200,
      ),
    ).toEqual(exampleOf('organizations_members_list', '200'));
  });
});

describe('the SDKs’ flag and survey calls', () => {
  it('GET /flags/definitions, /api/feature_flag/local_evaluation/, a flag’s remote config and /api/surveys/', async () => {
    const token = 'phc_hedgeboxDemoToken0000000000000000000000';
    expect(await expectStatus('flags_definitions_retrieve', api.GET('/flags/definitions', { params: { query: { token } } }), 200)).toEqual(
      exampleOf('flags_definitions_retrieve', '200'),
    );
    expect(
      await expectStatus(
        'feature_flag_local_evaluation_retrieve',
        api.GET('/api/feature_flag/local_evaluation/', { params: { query: { token } } }),
        200,
      ),
    ).toEqual(exampleOf('feature_flag_local_evaluation_retrieve', '200'));
    // the example is JSON null, which the client reads as no data
    expect(
      (await expectStatus(
        'feature_flags_remote_config_retrieve',
        api.GET('/api/projects/{project_id}/feature_flags/{key}/remote_config/', {
          params: { path: { ...project, key: 'new-onboarding' } },
        }),
        200,
      )) ?? null,
    ).toEqual(exampleOf('feature_flags_remote_config_retrieve', '200'));
    expect(await expectStatus('surveys_retrieve', api.GET('/api/surveys/', { params: { query: { token } } }), 200)).toEqual(
      exampleOf('surveys_retrieve', '200'),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Coverage: must stay last in this file.
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// insights, dashboards' writes and tile actions, templates, MCP tools: each answers its example
// ---------------------------------------------------------------------------------------------

describe('the operations of insights, dashboard writes, templates and MCP tools', () => {
  const dashboard = { ...project, id: 21 };
  const trends = {
    kind: 'InsightVizNode' as const,
    source: { kind: 'TrendsQuery' as const, series: [{ kind: 'EventsNode' as const, event: '$pageview' }] },
  };
  it('insights: list, create, retrieve, partial update', async () => {
    expect(
      await expectStatus(
        'environments_insights_list',
        api.GET('/api/environments/{project_id}/insights/', { params: { path: project } }),
        200,
      ),
    ).toEqual(exampleOf('environments_insights_list', '200'));
    const created = await expectStatus(
      'environments_insights_create',
      api.POST('/api/environments/{project_id}/insights/', { params: { path: project }, body: { name: 'Daily pageviews', query: trends } }),
      201,
    );
    expect(created).toEqual(exampleOf('environments_insights_create', '201'));
    const got = await expectStatus(
      'environments_insights_retrieve',
      api.GET('/api/environments/{project_id}/insights/{id}/', { params: { path: { ...project, id: '42' } } }),
      200,
    );
    expect(got).toEqual(exampleOf('environments_insights_retrieve', '200'));
    const patched = await expectStatus(
      'environments_insights_partial_update',
      api.PATCH('/api/environments/{project_id}/insights/{id}/', { params: { path: { ...project, id: '42' } }, body: { name: 'Renamed' } }),
      200,
    );
    expect(patched).toEqual(exampleOf('environments_insights_partial_update', '200'));
  });

  it('dashboards: create, partial update, the tile actions and run_insights', async () => {
    expectDashboard(
      await expectStatus(
        'environments_dashboards_create',
        api.POST('/api/environments/{project_id}/dashboards/', { params: { path: project }, body: { name: 'Growth' } }),
        201,
      ),
    );
    expectDashboard(
      await expectStatus(
        'environments_dashboards_partial_update',
        api.PATCH('/api/environments/{project_id}/dashboards/{id}/', { params: { path: dashboard }, body: { name: 'Growth' } }),
        200,
      ),
    );
    const tile = await expectStatus(
      'environments_dashboards_create_text_tile_create',
      api.POST('/api/environments/{project_id}/dashboards/{id}/create_text_tile/', {
        params: { path: dashboard },
        body: { body: '## Notes' },
      }),
      200,
    );
    expect(tile).toEqual(exampleOf('environments_dashboards_create_text_tile_create', '200'));
    await expectStatus(
      'environments_dashboards_update_text_tile_create',
      api.POST('/api/environments/{project_id}/dashboards/{id}/update_text_tile/', {
        params: { path: dashboard },
        body: { tile_id: 120, body: 'x' },
      }),
      200,
    );
    const { response } = await api.POST('/api/environments/{project_id}/dashboards/{id}/delete_tile/', {
      params: { path: dashboard },
      body: { tile_id: 120 },
    });
    called.add('environments_dashboards_delete_tile_create');
    expect(response.status).toBe(204);
    expectDashboard(
      await expectStatus(
        'environments_dashboards_reorder_tiles_create',
        api.POST('/api/environments/{project_id}/dashboards/{id}/reorder_tiles/', {
          params: { path: dashboard },
          body: { tile_order: [120] },
        }),
        200,
      ),
    );
    expectDashboard(
      await expectStatus(
        'environments_dashboards_copy_tile_create',
        api.POST('/api/environments/{project_id}/dashboards/{id}/copy_tile/', {
          params: { path: dashboard },
          body: { fromDashboardId: 14, tileId: 101 },
        }),
        200,
      ),
    );
    const run = await expectStatus(
      'environments_dashboards_run_insights_retrieve',
      api.GET('/api/environments/{project_id}/dashboards/{id}/run_insights/', { params: { path: dashboard } }),
      200,
    );
    expect(run).toEqual(exampleOf('environments_dashboards_run_insights_retrieve', '200'));
  });

  it('dashboard templates: list and retrieve', async () => {
    expect(
      await expectStatus(
        'environments_dashboard_templates_list',
        api.GET('/api/environments/{project_id}/dashboard_templates/', { params: { path: project } }),
        200,
      ),
    ).toEqual(exampleOf('environments_dashboard_templates_list', '200'));
    expect(
      await expectStatus(
        'environments_dashboard_templates_retrieve',
        api.GET('/api/environments/{project_id}/dashboard_templates/{id}/', {
          params: { path: { ...project, id: '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e01' } },
        }),
        200,
      ),
    ).toEqual(exampleOf('environments_dashboard_templates_retrieve', '200'));
  });

  it('MCP tools: execute_sql and read_taxonomy', async () => {
    expect(
      await expectStatus(
        'environments_mcp_tools_execute_sql_create',
        api.POST('/api/environments/{project_id}/mcp_tools/execute_sql/', {
          params: { path: project },
          body: { args: { query: 'select 1', truncate: true } },
        }),
        200,
      ),
    ).toEqual(exampleOf('environments_mcp_tools_execute_sql_create', '200'));
    expect(
      await expectStatus(
        'environments_mcp_tools_read_taxonomy_create',
        api.POST('/api/environments/{project_id}/mcp_tools/read_taxonomy/', {
          params: { path: project },
          body: { args: { query: { kind: 'events', limit: 500, offset: 0 } } },
        }),
        200,
      ),
    ).toEqual(exampleOf('environments_mcp_tools_read_taxonomy_create', '200'));
  });
});

describe('the Prism mock', () => {
  it('was called for every hand-written operationId of openapi.yaml not tagged plugin_configs, and for no other', () => {
    expect([...called].sort()).toEqual(handWrittenOperationIds((tags) => !tags.includes('plugin_configs')));
  });
});
