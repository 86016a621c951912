/**
 * The identity calls `@posthog/cli` makes outside analytics, over HTTP on every store: one project
 * of an organization (`GET`, `PATCH /api/organizations/{organization_id}/projects/{id}/`), the
 * key's user changed (`PATCH /api/users/@me/`, `set_current_team` and
 * `set_current_organization` included), and an organization's members
 * (`GET /api/organizations/{organization_id}/members/`), with PostHog's rules and messages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrganizationLevel } from '../../server/storage/repositories/accounts.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope } from '../helpers/errors.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const orgProject = (org: string, id: string | number) => `/api/organizations/${org}/projects/${id}/`;
const patch = (path: string, body: unknown, key?: string) =>
  t.fetch(path, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), ...(key ? { key } : {}) });

describe('GET /api/organizations/{organization_id}/projects/{id}/', () => {
  it('answers the project as GET /api/projects/{id}/ does, for the organization’s id or @current', async () => {
    const direct = await t.json('/api/projects/1/');
    expect(await t.json(orgProject(t.boot.organization.id, 1))).toEqual(direct);
    expect(await t.json(orgProject('@current', '@current'))).toEqual(direct);
  });

  it('404 for a project of another organization or an unknown one, 403 for an organization the user is not in, 400 for a bad id', async () => {
    const other = await t.otherOrganization();
    expect((await t.fetch(orgProject(t.boot.organization.id, other.team.id))).status).toBe(404);
    expect((await t.fetch(orgProject(t.boot.organization.id, 999999))).status).toBe(404);
    expect((await t.fetch(orgProject(other.organization.id, other.team.id))).status).toBe(403);
    expect((await t.fetch(orgProject('01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f', 1))).status).toBe(404);
    const bad = await t.fetch(orgProject(t.boot.organization.id, 'abc'));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid', detail: "invalid literal for int() with base 10: 'abc'" });
  });
});

describe('PATCH /api/organizations/{organization_id}/projects/{id}/', () => {
  it('changes the name (trimmed) and time zone, which the project then shows everywhere', async () => {
    const team = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'to rename' });
    const res = await patch(orgProject(t.boot.organization.id, team.id), {
      name: '  Hedgebox (staging) ',
      timezone: 'Europe/Paris',
      app_urls: ['x'],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: team.id, name: 'Hedgebox (staging)', timezone: 'Europe/Paris', app_urls: [] });
    expect(await t.json(`/api/projects/${team.id}/`)).toMatchObject({ name: 'Hedgebox (staging)', timezone: 'Europe/Paris' });
    expect(((await t.json(`/api/environments/${team.id}/`)) as { timezone: string }).timezone).toBe('Europe/Paris');
    // only what is sent changes
    expect(await (await patch(orgProject(t.boot.organization.id, team.id), { timezone: 'UTC' })).json()).toMatchObject({
      name: 'Hedgebox (staging)',
      timezone: 'UTC',
    });
  });

  it('refuses a blank name and an unknown time zone with DRF’s messages, and changes nothing', async () => {
    const team = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'kept' });
    const blank = await patch(orgProject(t.boot.organization.id, team.id), { name: '   ', timezone: 'Europe/Paris' });
    expect(blank.status).toBe(400);
    expect(await blank.json()).toEqual({ type: 'validation_error', code: 'blank', detail: 'This field may not be blank.', attr: 'name' });
    const tz = await patch(orgProject(t.boot.organization.id, team.id), { name: 'new', timezone: 'Mars/Olympus' });
    expect(tz.status).toBe(400);
    expect(await tz.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_choice',
      detail: '"Mars/Olympus" is not a valid choice.',
      attr: 'timezone',
    });
    expect(await t.json(`/api/projects/${team.id}/`)).toMatchObject({ name: 'kept', timezone: 'UTC' });
  });

  it('needs project:write', async () => {
    const res = await patch(orgProject(t.boot.organization.id, 1), { name: 'x' }, await t.key(['project:read']));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(missingScope('project:write'));
  });
});

describe('PATCH /api/users/@me/', () => {
  it('changes names and email, and set_current_team moves the user’s current project', async () => {
    const user = await t.user({ level: OrganizationLevel.ADMIN });
    const key = await t.key(['*'], { user });
    const second = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'second' });
    const res = await patch(
      '/api/users/@me/',
      { first_name: 'Grace', last_name: 'Hopper', email: `grace-${user.id}@hedgebox.net`, set_current_team: second.id },
      key,
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { first_name: string; last_name: string; email: string; team: { id: number } };
    expect(body).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', email: `grace-${user.id}@hedgebox.net` });
    expect(body.team.id).toBe(second.id);
    // @current now names that project
    expect(((await t.json('/api/projects/@current/', { key })) as { id: number }).id).toBe(second.id);
    expect(((await t.json('/api/users/@me/', { key })) as { team: { id: number } }).team.id).toBe(second.id);
  });

  it('set_current_team of a project the user cannot reach, or of none, answers 400 does_not_exist', async () => {
    const user = await t.user();
    const key = await t.key(['*'], { user });
    const other = await t.otherOrganization();
    for (const id of [other.team.id, 999999, 'abc']) {
      const res = await patch('/api/users/@me/', { set_current_team: id }, key);
      expect(res.status, String(id)).toBe(400);
      expect(await res.json()).toEqual({
        type: 'validation_error',
        code: 'does_not_exist',
        detail: `Object with id=${id} does not exist.`,
        attr: 'set_current_team',
      });
    }
  });

  it('set_current_organization switches to that organization’s first project; a team of another organization with it answers 400', async () => {
    const other = await t.otherOrganization();
    const user = await t.user();
    await t.accounts.upsertMembership(other.organization.id, user.id, OrganizationLevel.MEMBER);
    const key = await t.key(['*'], { user });
    const res = await patch('/api/users/@me/', { set_current_organization: other.organization.id }, key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { team: { id: number }; organization: { id: string } };
    expect(body.team.id).toBe(other.team.id);
    expect(body.organization.id).toBe(other.organization.id);
    const mixed = await patch('/api/users/@me/', { set_current_organization: other.organization.id, set_current_team: 1 }, key);
    expect(mixed.status).toBe(400);
    expect(await mixed.json()).toMatchObject({
      attr: 'set_current_team',
      detail: 'Team must belong to the same organization in set_current_organization.',
    });
    const stranger = await patch('/api/users/@me/', { set_current_organization: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' }, key);
    expect(stranger.status).toBe(400);
    expect(await stranger.json()).toMatchObject({ code: 'does_not_exist', attr: 'set_current_organization' });
  });

  it('an email another user has answers 400; another user’s uuid 403 for a non-staff user; user:write needed', async () => {
    const user = await t.user();
    const key = await t.key(['*'], { user });
    const taken = await patch('/api/users/@me/', { email: t.boot.user.email }, key);
    expect(taken.status).toBe(400);
    expect(await taken.json()).toMatchObject({ attr: 'email', code: 'unique' });
    const notMe = await patch(`/api/users/${t.boot.user.uuid}/`, { first_name: 'x' }, key);
    expect(notMe.status).toBe(403);
    const readOnly = await patch('/api/users/@me/', { first_name: 'x' }, await t.key(['user:read'], { user }));
    expect(await readOnly.json()).toEqual(missingScope('user:write'));
  });
});

describe('GET /api/organizations/{organization_id}/members/', () => {
  it('lists the active members newest first, with their users; email filters; order=joined_at reverses', async () => {
    const org = await t.accounts.createOrganization({ name: 'Members Org' });
    const owner = await t.user({ organization: org, level: OrganizationLevel.OWNER });
    const member = await t.user({ organization: org, level: OrganizationLevel.MEMBER });
    // joined a minute apart (the two rows may otherwise share a millisecond)
    await t.store.db
      .updateTable('organization_memberships')
      .set({ joined_at: '2024-11-20T10:00:00.000Z' })
      .where('organization_id', '=', org.id)
      .where('user_id', '=', owner.id)
      .execute();
    await t.store.db
      .updateTable('organization_memberships')
      .set({ joined_at: '2024-11-20T10:01:00.000Z' })
      .where('organization_id', '=', org.id)
      .where('user_id', '=', member.id)
      .execute();
    const key = await t.key(['organization_member:read'], { user: owner });
    const page = (await t.json(`/api/organizations/${org.id}/members/`, { key })) as {
      count: number;
      results: Array<{ id: string; level: number; user: { email: string }; last_login: null; is_2fa_enabled: boolean }>;
    };
    expect(page.count).toBe(2);
    expect(page.results.map((m) => [m.user.email, m.level])).toEqual([
      [member.email, 1],
      [owner.email, 15],
    ]);
    expect(page.results[0]).toMatchObject({ last_login: null, is_2fa_enabled: false, has_social_auth: false });
    const oldest = (await t.json(`/api/organizations/${org.id}/members/?order=joined_at`, { key })) as typeof page;
    expect(oldest.results.map((m) => m.user.email)).toEqual([owner.email, member.email]);
    const one = (await t.json(`/api/organizations/${org.id}/members/?email=${encodeURIComponent(member.email.toUpperCase())}`, {
      key,
    })) as typeof page;
    expect(one.results.map((m) => m.user.email)).toEqual([member.email]);
    const limited = (await t.json(`/api/organizations/${org.id}/members/?limit=1`, { key })) as typeof page & { next: string };
    expect(limited.results).toHaveLength(1);
    expect(limited.next).toContain('offset=1');
  });

  it('403 for an organization the user is not in, 404 for an unknown one, and the scope is organization_member:read', async () => {
    const other = await t.otherOrganization();
    expect((await t.fetch(`/api/organizations/${other.organization.id}/members/`)).status).toBe(403);
    expect((await t.fetch('/api/organizations/01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f/members/')).status).toBe(404);
    expect(((await t.json('/api/organizations/@current/members/')) as { count: number }).count).toBeGreaterThan(0);
    const res = await t.fetch('/api/organizations/@current/members/', { key: await t.key(['organization:read']) });
    expect(await res.json()).toEqual(missingScope('organization_member:read'));
  });
});
