/**
 * The identity and discovery operations through the real HTTP stack (response validation on):
 * `GET /api/users/{uuid}/` (`@me`), `GET /api/personal_api_keys/{id}/` (`@current`),
 * `GET /api/organizations/`, `GET /api/organizations/{id}/`,
 * `GET /api/organizations/{organization_id}/projects/`, `GET /api/projects/{id}/` and
 * `GET /api/environments/{id}/`. Asserts PostHog's shapes and messages as the operation
 * descriptions in openapi.yaml state them, and that a key sees only what it may.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../client/index.js';
import { OrganizationLevel } from '../../server/storage/repositories/accounts.js';
import { ExplicitMembersRepository } from '../../server/storage/repositories/explicit-members.js';
import { insertEvents } from '../helpers/events-store.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { forbidden, invalid, missingScope, NOT_AUTHENTICATED, NOT_FOUND, projectNotAllowed, type ErrorBody } from '../helpers/errors.js';

type User = components['schemas']['User'];
type Key = components['schemas']['PersonalAPIKey'];
type Organization = components['schemas']['Organization'];
type OrganizationPage = components['schemas']['PaginatedOrganizationList'];
type ProjectPage = components['schemas']['PaginatedProjectBackwardCompatBasicList'];
type Project = components['schemas']['ProjectBackwardCompat'];
type Team = components['schemas']['Team'];

const NOT_ME = forbidden("As a non-staff user you're only allowed to access the `@me` user instance.");
const NOT_SELF = forbidden('This action does not support Personal API Key access');
const GENERIC_DENIED = forbidden('You do not have permission to perform this action.');
const NO_CURRENT_ORG: ErrorBody = { type: 'invalid_request', code: 'not_found', detail: 'Current organization not found.', attr: null };

let t: TestServer;
/** a second project of the bootstrap organization, with access control on and no explicit members */
let privateId: number;
/** a third project of the bootstrap organization, open */
let openId: number;

beforeAll(async () => {
  t = await startTestServer();
  privateId = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Private', access_control: true })).id;
  openId = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Open', timezone: 'Europe/London' })).id;
  await insertEvents(t.store, t.boot.team.id, [
    {
      uuid: randomUUID(),
      event: '$pageview',
      distinct_id: 'd1',
      properties: {},
      timestamp: '2024-11-05T09:14:22.531000Z',
      elements_chain: '',
    },
  ]);
});

afterAll(async () => {
  await t?.close();
});

async function get<T>(path: string, key?: string): Promise<{ status: number; body: T }> {
  const res = await t.fetch(path, key === undefined ? {} : { key });
  return { status: res.status, body: (await res.json()) as T };
}

async function expectError(path: string, status: number, body: ErrorBody, key?: string): Promise<void> {
  const res = await get<ErrorBody>(path, key);
  expect(res).toEqual({ status, body });
}

describe('GET /api/users/{uuid}/', () => {
  it('answers the key owner for @me, with the current organization, team and organizations', async () => {
    const { status, body } = await get<User>('/api/users/@me/');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: t.boot.user.id,
      uuid: t.boot.user.uuid,
      distinct_id: t.boot.user.distinct_id,
      email: t.boot.user.email,
      date_joined: t.boot.user.created_at,
      is_staff: false,
      pending_email: null,
      has_password: false,
      toolbar_mode: 'toolbar',
    });
    expect(body.team).toEqual({
      id: 1,
      uuid: t.boot.team.uuid,
      organization: t.boot.organization.id,
      project_id: 1,
      api_token: t.boot.team.api_token,
      name: t.boot.team.name,
      completed_snippet_onboarding: false,
      has_completed_onboarding_for: null,
      ingested_event: true,
      is_demo: false,
      timezone: t.boot.team.timezone,
      access_control: false,
    });
    expect(body.organization?.id).toBe(t.boot.organization.id);
    expect(body.organization?.membership_level).toBe(OrganizationLevel.OWNER);
    // the owner (an organization owner) sees the private project too
    expect(body.organization?.teams.map((x) => x.id)).toEqual([1, privateId, openId]);
    expect(body.organizations.map((o) => o.id)).toEqual([t.boot.organization.id]);
    expect(body.organizations[0]).toMatchObject({ name: t.boot.organization.name, membership_level: 15, is_active: true });
  });

  it('a member does not see a private project in the organization; a key limited to projects sees only those', async () => {
    const member = await t.user();
    const key = await t.key(['user:read'], { user: member });
    const { body } = await get<User>('/api/users/@me/', key);
    expect(body.organization?.teams.map((x) => x.id)).toEqual([1, openId]);
    expect(body.organization?.projects).toEqual([
      { id: 1, organization_id: t.boot.organization.id, name: t.boot.team.name },
      { id: openId, organization_id: t.boot.organization.id, name: 'Open' },
    ]);
    // no current project: the organization joined first is the current one, and the team its
    // first project the member can reach (PostHog's User.team fallback), not the private one
    expect(body.team).toMatchObject({ id: 1, name: t.boot.team.name });
    expect(body.organization?.membership_level).toBe(1);
    const limited = await t.key(['user:read'], { projects: [openId] });
    const mine = await get<User>('/api/users/@me/', limited);
    expect(mine.body.organization?.teams.map((x) => x.id)).toEqual([openId]);
  });

  it('a user of no organization has organization null and no organizations', async () => {
    const lonely = await t.accounts.createUser({ email: `lonely-${randomUUID()}@example.com` });
    const { status, body } = await get<User>('/api/users/@me/', await t.key(['user:read'], { user: lonely }));
    expect(status).toBe(200);
    expect(body).toMatchObject({ organization: null, team: null, organizations: [] });
  });

  it('refuses any other value than @me to a non-staff user, even their own uuid', async () => {
    await expectError(`/api/users/${t.boot.user.uuid}/`, 403, NOT_ME);
    await expectError(`/api/users/${randomUUID()}/`, 403, NOT_ME);
  });

  it('lets a staff user read another active user by uuid, and answers 404 for no such user', async () => {
    const staff = await t.accounts.createUser({ email: `staff-${randomUUID()}@example.com`, is_staff: true });
    const key = await t.key(['user:read'], { user: staff });
    const { status, body } = await get<User>(`/api/users/${t.boot.user.uuid}/`, key);
    expect(status).toBe(200);
    expect(body.email).toBe(t.boot.user.email);
    expect(body.organization?.id).toBe(t.boot.organization.id);
    await expectError(`/api/users/${randomUUID()}/`, 404, NOT_FOUND, key);
    await expectError('/api/users/not-a-uuid/', 404, NOT_FOUND, key);
  });

  it('needs user:read (user:write satisfies it) and a key', async () => {
    await expectError('/api/users/@me/', 403, missingScope('user:read'), await t.key(['project:read']));
    expect((await get('/api/users/@me/', await t.key(['user:write']))).status).toBe(200);
    await expectError('/api/users/@me/', 401, NOT_AUTHENTICATED, '');
  });
});

describe('GET /api/personal_api_keys/{id}/', () => {
  it('answers the key itself for @current, without its value, with or without the trailing slash', async () => {
    const key = await t.key(['dashboard:read'], { projects: [1] });
    for (const path of ['/api/personal_api_keys/@current/', '/api/personal_api_keys/@current']) {
      const { status, body } = await get<Key>(path, key);
      expect(status).toBe(200);
      // PostHog's 14 fields (posthog/api/test/test_personal_api_keys.py test_create_personal_api_key)
      expect(Object.keys(body).sort()).toEqual(
        [
          'created_at',
          'description',
          'id',
          'is_legacy_hashing',
          'label',
          'last_rolled_at',
          'last_used_at',
          'local_dev_value',
          'mask_value',
          'scoped_organizations',
          'scoped_teams',
          'scopes',
          'user_id',
          'value',
        ].sort(),
      );
      expect(body).toMatchObject({
        label: 'test',
        description: null,
        is_legacy_hashing: false,
        local_dev_value: null,
        value: null,
        scopes: ['dashboard:read'],
        scoped_teams: [1],
        scoped_organizations: [],
        user_id: t.boot.user.id,
      });
      expect(body.mask_value).toBe(`${key.slice(0, 4)}...${key.slice(-4)}`);
      expect(body.last_used_at).not.toBeNull();
      expect(JSON.stringify(body)).not.toContain(key);
    }
  });

  it('needs no scope; a key without project limits has scoped_teams []', async () => {
    const key = await t.key(['query:read']);
    const { status, body } = await get<Key>('/api/personal_api_keys/@current/', key);
    expect(status).toBe(200);
    expect(body.scoped_teams).toEqual([]);
    // its own id works as @current does
    expect((await get<Key>(`/api/personal_api_keys/${body.id}/`, key)).body.id).toBe(body.id);
  });

  it('refuses another key of the same user (403) and answers 404 for a key of another user or of no one', async () => {
    const key = await t.key(['*']);
    const other = (await get<Key>('/api/personal_api_keys/@current/', await t.key(['*']))).body;
    await expectError(`/api/personal_api_keys/${other.id}/`, 403, NOT_SELF, key);
    const foreign = (await get<Key>('/api/personal_api_keys/@current/', (await t.otherOrganization()).key)).body;
    await expectError(`/api/personal_api_keys/${foreign.id}/`, 404, NOT_FOUND, key);
    await expectError('/api/personal_api_keys/nothing/', 404, NOT_FOUND, key);
    // a NUL byte is looked up nowhere (PostgreSQL refuses it in a query: this was a 500)
    await expectError('/api/personal_api_keys/%00/', 404, NOT_FOUND, key);
    await expectError(`/api/personal_api_keys/${other.id.toUpperCase()}/`, 403, NOT_SELF, key);
  });

  it('answers 401 without a key', async () => {
    await expectError('/api/personal_api_keys/@current/', 401, NOT_AUTHENTICATED, '');
  });
});

describe('GET /api/organizations/ and /api/organizations/{id}/', () => {
  it('lists the user’s organizations, oldest first, paginated', async () => {
    const other = await t.otherOrganization();
    await t.accounts.upsertMembership(other.organization.id, t.boot.user.id, OrganizationLevel.MEMBER);
    const { status, body } = await get<OrganizationPage>('/api/organizations/');
    expect(status).toBe(200);
    expect(body.results.map((o) => o.id)).toEqual([t.boot.organization.id, other.organization.id]);
    expect(body).toMatchObject({ count: 2, next: null, previous: null });
    const first = body.results[0]!;
    expect(first).toMatchObject({
      name: t.boot.organization.name,
      membership_level: 15,
      plugins_access_level: 9,
      member_count: expect.any(Number) as number,
    });
    expect(body.results[1]).toMatchObject({ membership_level: 1, member_count: 2 });
    expect(body.results[1]!.teams.map((x) => x.id)).toEqual([other.team.id]);

    const page = await get<OrganizationPage>('/api/organizations/?limit=1');
    expect(page.body.results.map((o) => o.id)).toEqual([t.boot.organization.id]);
    const next = new URL(page.body.next!);
    expect(next.searchParams.get('offset')).toBe('1');
    expect((await get<OrganizationPage>(next.pathname + next.search)).body.results.map((o) => o.id)).toEqual([other.organization.id]);

    // the other organization's owner does not see the bootstrap organization
    expect((await get<OrganizationPage>('/api/organizations/', other.key)).body.results.map((o) => o.id)).toEqual([other.organization.id]);
  });

  it('retrieves one by id and @current; 404 for a non-member, an unknown id and a non-UUID', async () => {
    const byId = await get<Organization>(`/api/organizations/${t.boot.organization.id}/`);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: t.boot.organization.id, slug: expect.any(String) as string, customer_id: null, metadata: {} });
    expect((await get<Organization>('/api/organizations/@current/')).body).toEqual(byId.body);
    const stranger = await t.otherOrganization();
    await expectError(`/api/organizations/${stranger.organization.id}/`, 404, NOT_FOUND);
    await expectError(`/api/organizations/${randomUUID()}/`, 404, NOT_FOUND);
    await expectError('/api/organizations/acme/', 404, NOT_FOUND);
  });

  it('answers 404 "Current organization not found." for a user of no organization', async () => {
    const lonely = await t.accounts.createUser({ email: `lonely-${randomUUID()}@example.com` });
    await expectError('/api/organizations/@current/', 404, NO_CURRENT_ORG, await t.key(['organization:read'], { user: lonely }));
  });

  it('needs organization:read', async () => {
    const key = await t.key(['user:read', 'project:read']);
    await expectError('/api/organizations/', 403, missingScope('organization:read'), key);
    await expectError('/api/organizations/@current/', 403, missingScope('organization:read'), key);
  });
});

describe('GET /api/organizations/{organization_id}/projects/', () => {
  it('lists the projects the user can see in the organization, paginated, by id and @current', async () => {
    const { status, body } = await get<ProjectPage>(`/api/organizations/${t.boot.organization.id}/projects/`);
    expect(status).toBe(200);
    expect(body.results.map((p) => p.id)).toEqual([1, privateId, openId]);
    expect(body.results[2]).toMatchObject({
      name: 'Open',
      organization: t.boot.organization.id,
      project_id: openId,
      timezone: 'Europe/London',
      ingested_event: false,
    });
    expect((await get<ProjectPage>('/api/organizations/@current/projects/')).body).toEqual(body);
    const page = await get<ProjectPage>(`/api/organizations/${t.boot.organization.id}/projects/?limit=2&offset=1`);
    expect(page.body).toMatchObject({ count: 3, next: null });
    expect(page.body.results.map((p) => p.id)).toEqual([privateId, openId]);
    expect(page.body.previous).not.toBeNull();

    const member = await t.user();
    const memberPage = await get<ProjectPage>(
      `/api/organizations/${t.boot.organization.id}/projects/`,
      await t.key(['project:read'], { user: member }),
    );
    expect(memberPage.body.results.map((p) => p.id)).toEqual([1, openId]);
    // a key limited to some projects is refused, as PostHog refuses it on every non-project endpoint
    const limited = await get<ErrorBody>('/api/organizations/@current/projects/', await t.key(['project:read'], { projects: [openId] }));
    expect(limited.status).toBe(403);
    expect(limited.body.detail).toBe('API keys with scoped projects are only supported on project-based endpoints.');
  });

  it('answers 403 for an organization the user is not a member of, 404 for none', async () => {
    const stranger = await t.otherOrganization();
    await expectError(`/api/organizations/${stranger.organization.id}/projects/`, 403, GENERIC_DENIED);
    await expectError(`/api/organizations/${randomUUID()}/projects/`, 404, NOT_FOUND);
    await expectError('/api/organizations/x/projects/', 404, NOT_FOUND);
  });

  it('needs project:read', async () => {
    await expectError('/api/organizations/@current/projects/', 403, missingScope('project:read'), await t.key(['organization:read']));
  });
});

describe('GET /api/organizations/{organization_id}/pipeline_frontend_apps/', () => {
  type PluginPage = { count: number; next: string | null; previous: string | null; results: Array<Record<string, unknown>> };

  it('lists the organization’s site and frontend apps, not its destinations, as PostHog’s frontend asks', async () => {
    const { status, body } = await get<PluginPage>('/api/organizations/@current/pipeline_frontend_apps/');
    expect(status).toBe(200);
    const expected = t.boot.plugins.filter((p) => !('methods' in p.capabilities) && !('scheduled_tasks' in p.capabilities));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(t.boot.plugins.length);
    expect(body.count).toBe(expected.length);
    expect(body.results.map((p) => p.id)).toEqual(expected.map((p) => p.id).sort((a, b) => a - b));
    const bar = body.results.find((p) => String(p.url).includes('notification-bar'));
    expect(bar).toMatchObject({ plugin_type: expect.any(String), capabilities: {}, organization_name: t.boot.organization.name });
    const byId = await get<PluginPage>(`/api/organizations/${t.boot.organization.id}/pipeline_frontend_apps/?limit=1`);
    expect(byId.body).toMatchObject({ count: expected.length, previous: null });
    expect(byId.body.results).toEqual(body.results.slice(0, 1));
  });

  it('answers 403 for another organization, 404 for none, and needs plugin:read', async () => {
    const stranger = await t.otherOrganization();
    await expectError(`/api/organizations/${stranger.organization.id}/pipeline_frontend_apps/`, 403, GENERIC_DENIED);
    await expectError(`/api/organizations/${randomUUID()}/pipeline_frontend_apps/`, 404, NOT_FOUND);
    await expectError(
      '/api/organizations/@current/pipeline_frontend_apps/',
      403,
      missingScope('plugin:read'),
      await t.key(['project:read']),
    );
  });
});

describe('GET /api/projects/{id}/ and GET /api/environments/{id}/', () => {
  it('retrieves a project by id and @current in PostHog’s shapes', async () => {
    const { status, body } = await get<Project>('/api/projects/1/');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: 1,
      uuid: t.boot.team.uuid,
      organization: t.boot.organization.id,
      name: t.boot.team.name,
      api_token: t.boot.team.api_token,
      effective_membership_level: 15,
      ingested_event: true,
      access_control: false,
      created_at: t.boot.team.created_at,
    });
    expect((await get<Project>('/api/projects/@current/')).body).toEqual(body);
    const env = await get<Team>('/api/environments/@current/');
    expect(env.status).toBe(200);
    expect(env.body).toEqual({ ...body, project_id: 1, secret_api_token: null, secret_api_token_backup: null, user_access_level: 'admin' });
    expect((await get<Team>('/api/environments/1')).body).toEqual(env.body);
  });

  it('follows project visibility: a member gets 404 for a private project, a member-level view of an open one', async () => {
    const member = await t.user();
    const key = await t.key(['project:read'], { user: member });
    await expectError(`/api/projects/${privateId}/`, 404, NOT_FOUND, key);
    await expectError(`/api/environments/${privateId}/`, 404, NOT_FOUND, key);
    expect((await get<Team>(`/api/environments/${openId}/`, key)).body).toMatchObject({
      effective_membership_level: 1,
      user_access_level: 'member',
    });
    // an explicit member of the private project sees it
    const membership = await t.accounts.findMembership(t.boot.organization.id, member.id);
    await new ExplicitMembersRepository(t.store.db).create({ team_id: privateId, parent_membership_id: membership!.id, level: 8 });
    expect((await get<Project>(`/api/projects/${privateId}/`, key)).body).toMatchObject({
      id: privateId,
      effective_membership_level: 8,
      access_control: true,
    });
  });

  it('answers 404 for another organization’s project, no project and @current without one; 400 for a non-integer', async () => {
    const other = await t.otherOrganization();
    await expectError(`/api/projects/${other.team.id}/`, 404, NOT_FOUND);
    await expectError('/api/projects/2000000000/', 404, NOT_FOUND);
    await expectError('/api/environments/99999999999/', 404, NOT_FOUND);
    const lonely = await t.accounts.createUser({ email: `lonely-${randomUUID()}@example.com` });
    await expectError('/api/projects/@current/', 404, NOT_FOUND, await t.key(['project:read'], { user: lonely }));
    await expectError('/api/projects/hedgebox/', 400, invalid("invalid literal for int() with base 10: 'hedgebox'", null, 'invalid'));
    await expectError('/api/environments/1.5/', 400, invalid("invalid literal for int() with base 10: '1.5'", null, 'invalid'));
  });

  it('answers 403 to a key limited to other projects, and needs project:read', async () => {
    const key = await t.key(['project:read'], { projects: [openId] });
    await expectError('/api/projects/1/', 403, projectNotAllowed(1), key);
    await expectError('/api/environments/1/', 403, projectNotAllowed(1), key);
    expect((await get<Project>(`/api/projects/${openId}/`, key)).status).toBe(200);
    await expectError('/api/projects/1/', 403, missingScope('project:read'), await t.key(['dashboard:read']));
  });

  it('leaves the projects list as it was', async () => {
    const { body } = await get<{ results: Array<Record<string, unknown>> }>('/api/projects/');
    expect(Object.keys(body.results[0]!).sort()).toEqual(['access_control', 'api_token', 'id', 'name', 'organization', 'timezone', 'uuid']);
  });
});
