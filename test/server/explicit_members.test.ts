/**
 * The `explicit_members` operations (list, create, retrieve, partial update, delete) through the
 * real HTTP stack: a server on port 0 with response validation on, driven by the project's typed
 * client (`t.clientFor(key)`) and, for bodies outside the schema, by raw fetch (`t.fetch`).
 *
 * Every case of PostHog's `ee/api/test/test_team_memberships.py` that concerns these operations is
 * ported (its name is in the test title, `[PostHog test_…]`), with PostHog's status and message.
 * PostHog's `setUp` turns `access_control` on for the test team: here each case makes its own
 * private project (`access_control: true`) so the cases do not depend on one another. PostHog's
 * `self.user` with `self.organization_membership.level = X` is a caller made with `t.user({level})`;
 * `ExplicitTeamMembership.objects.create(...)` is `ExplicitMembersRepository.create`.
 *
 * Where PostHog's test pins a message, it is asserted; where PostHog's tests are silent, the
 * description of the operation in openapi.yaml decides (cases marked "contract").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components, EnvApiClient } from '../../client/index.js';
import { OrganizationLevel, type Organization, type User } from '../../server/storage/repositories/accounts.js';
import { ExplicitMembersRepository } from '../../server/storage/repositories/explicit-members.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type ErrorBody, forbidden, invalid, missingScope, NOT_FOUND, PROJECT_NOT_FOUND, required } from '../helpers/errors.js';

type ExplicitTeamMember = components['schemas']['ExplicitTeamMember'];
type ExplicitTeamMemberRequest = components['schemas']['ExplicitTeamMemberRequest'];
type PatchedExplicitTeamMember = components['schemas']['PatchedExplicitTeamMember'];

const MEMBERS = '/api/environments/{project_id}/explicit_members/';
const MEMBER = '/api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/';

const { MEMBER: ORG_MEMBER, ADMIN: ORG_ADMIN, OWNER: ORG_OWNER } = OrganizationLevel;
/** ExplicitTeamMembership.Level */
const PROJECT_MEMBER = 1 as const;
const PROJECT_ADMIN = 8 as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UNKNOWN_UUID = '01934a10-7b2c-7d3e-8f4a-5b6c7d8e9f01';
/** the project id PostHog's test_add_member_to_nonexistent_project_forbidden uses */
const NONEXISTENT_PROJECT = 2137;


/** TeamMemberStrictManagementPermission.message */
const INSUFFICIENT = forbidden("You don't have sufficient permissions in the project.");
const ADD_YOURSELF = forbidden("You can't explicitly add yourself to projects.");
const SAME_ORGANIZATION = forbidden('You both need to belong to the same organization.');
const OWN_LEVEL = forbidden("You can't set your own access level.");
const EDIT_HIGHER = forbidden('You can only edit others with level lower or equal to you.');
const NOT_PRIVATE = invalid('Explicit members can only be accessed for projects with project-based permissioning enabled.');
const DUPLICATE = invalid('This user likely already is an explicit member of the project.');

let t: TestServer;
let members: ExplicitMembersRepository;

beforeAll(async () => {
  t = await startTestServer();
  members = new ExplicitMembersRepository(t.store.db);
});

afterAll(async () => {
  await t.close();
});

// ------------------------------------------------------------------------------------------ helpers

/** A user calling the API with a key of their own. */
interface Caller {
  user: User;
  key: string;
  api: EnvApiClient;
}

/** What an operation answered: the status and the parsed body (data or PostHog's error). */
interface Answer<T> {
  status: number;
  data: T | undefined;
  error: ErrorBody | undefined;
}

async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  const { data, error, response } = await call;
  return { status: response.status, data, error: error as ErrorBody | undefined };
}

let seq = 0;

/** A new user with an organization membership at `level` and a key (default scopes: project:write). */
async function caller(level: number, opts: { organization?: Organization; scopes?: string[] } = {}): Promise<Caller> {
  const user = await t.user({ level, ...(opts.organization ? { organization: opts.organization } : {}) });
  const key = await t.key(opts.scopes ?? ['project:write'], { user });
  return { user, key, api: t.clientFor(key) };
}

/** A new user of the bootstrap organization (`User.objects.create_and_join(self.organization, "rookie@…")`). */
async function rookie(level: number = ORG_MEMBER): Promise<User> {
  return t.user({ level });
}

/** A new project of the bootstrap organization; private (access_control) unless told otherwise. */
async function project(opts: { access_control?: boolean; organization?: Organization } = {}): Promise<number> {
  seq += 1;
  const team = await t.accounts.createTeam({
    organization_id: (opts.organization ?? t.boot.organization).id,
    name: `Explicit members ${seq}`,
    access_control: opts.access_control ?? true,
  });
  return team.id;
}

/** `ExplicitTeamMembership.objects.create(team=…, parent_membership=…, level=…)`. */
async function plant(teamId: number, user: User, level: number, organization: Organization = t.boot.organization): Promise<string> {
  const membership = await t.accounts.findMembership(organization.id, user.id);
  if (!membership) throw new Error(`user ${user.id} is not a member of ${organization.id}`);
  return members.create({ team_id: teamId, parent_membership_id: membership.id, level });
}

/** `self.team.explicit_memberships.count()` (active users). */
async function countOf(teamId: number): Promise<number> {
  return (await members.list(teamId)).length;
}

async function deactivate(user: User): Promise<void> {
  await t.store.db.updateTable('users').set({ is_active: 0 }).where('id', '=', user.id).execute();
}

const pid = (p: number | string) => String(p);

function list(c: Caller, p: number | string) {
  return answer<ExplicitTeamMember[]>(c.api.GET(MEMBERS, { params: { path: { project_id: pid(p) } } }));
}

function create(c: Caller, p: number | string, body: ExplicitTeamMemberRequest) {
  return answer<ExplicitTeamMember>(c.api.POST(MEMBERS, { params: { path: { project_id: pid(p) } }, body }));
}

function retrieve(c: Caller, p: number | string, uuid: string) {
  return answer<ExplicitTeamMember>(c.api.GET(MEMBER, { params: { path: { project_id: pid(p), parent_membership__user__uuid: uuid } } }));
}

function patch(c: Caller, p: number | string, uuid: string, body: PatchedExplicitTeamMember) {
  return answer<ExplicitTeamMember>(c.api.PATCH(MEMBER, { params: { path: { project_id: pid(p), parent_membership__user__uuid: uuid } }, body }));
}

function remove(c: Caller, p: number | string, uuid: string) {
  return answer<never>(c.api.DELETE(MEMBER, { params: { path: { project_id: pid(p), parent_membership__user__uuid: uuid } } }));
}

/** A raw JSON request (bodies the typed client would refuse). */
async function raw(c: Caller, method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await t.fetch(path, { method, key: c.key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** PostHog's UserBasicSerializer of a user. */
function userBasic(u: User): ExplicitTeamMember['user'] {
  return {
    id: u.id,
    uuid: u.uuid,
    distinct_id: u.distinct_id,
    first_name: u.first_name,
    last_name: u.last_name,
    email: u.email,
    is_email_verified: u.is_email_verified,
    hedgehog_config: u.hedgehog_config,
  };
}

/** The whole record PostHog answers for `user`'s membership at `level`. */
async function record(user: User, level: number, organization: Organization = t.boot.organization): Promise<ExplicitTeamMember> {
  const membership = await t.accounts.findMembership(organization.id, user.id);
  if (!membership) throw new Error('no organization membership');
  return {
    id: expect.stringMatching(UUID) as unknown as string,
    level: level as ExplicitTeamMember['level'],
    parent_level: membership.level as ExplicitTeamMember['parent_level'],
    parent_membership_id: membership.id,
    joined_at: expect.stringMatching(ISO_UTC) as unknown as string,
    updated_at: expect.stringMatching(ISO_UTC) as unknown as string,
    user: userBasic(user),
    effective_level: Math.max(level, membership.level) as ExplicitTeamMember['effective_level'],
  };
}

// ------------------------------------------------------------------------------------------ create

describe('POST /api/environments/{project_id}/explicit_members/', () => {
  it('an organization owner adds a member at level 1 by default (201) [PostHog test_add_member_as_org_owner_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_OWNER);
    await t.accounts.setCurrentTeam(me.user.id, p);
    const newUser = await rookie();
    expect(await countOf(p)).toBe(0);

    const res = await create(me, '@current', { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER });
    expect(await countOf(p)).toBe(1);
  });

  it('an organization admin adds a member (201) [PostHog test_add_member_as_org_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    expect(await countOf(p)).toBe(0);

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER });
    expect(await countOf(p)).toBe(1);
  });

  it('an organization member without project access may not add a member (403) [PostHog test_add_member_as_org_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(0);
  });

  it('an organization member without project access may not add themselves (403) [PostHog test_add_yourself_as_org_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);

    const res = await create(me, p, { user_uuid: me.user.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(0);
  });

  it('an organization admin may not add themselves (403) [PostHog test_add_yourself_as_org_admin_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);

    const res = await create(me, p, { user_uuid: me.user.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(ADD_YOURSELF);
    expect(await countOf(p)).toBe(0);
  });

  it('an organization member who is a project member may not add a member (403) [PostHog test_add_member_as_org_member_and_project_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);
    const newUser = await rookie();
    expect(await countOf(p)).toBe(1);

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(1);
  });

  it('an organization member who is a project admin adds a member (201) [PostHog test_add_member_as_org_member_but_project_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);
    expect(await countOf(p)).toBe(1);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER });
    expect(await countOf(p)).toBe(2);
  });

  it('an organization admin who is a project member adds a member (201) [PostHog test_add_member_as_org_admin_and_project_member_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    await plant(p, me.user, PROJECT_MEMBER);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER });
  });

  it('an organization admin adds an admin (201, level 8) [PostHog test_add_admin_as_org_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid, level: PROJECT_ADMIN });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN });
  });

  it('a project member may not add an admin (403) [PostHog test_add_admin_as_project_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid, level: PROJECT_ADMIN });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(1);
  });

  it('an organization admin who is a project admin adds an admin (201) [PostHog test_add_admin_as_project_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    await plant(p, me.user, PROJECT_ADMIN);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid, level: PROJECT_ADMIN });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN });
  });

  it('an organization admin adds a member to a project other than their current one (201) [PostHog test_add_member_to_non_current_project_allowed]', async () => {
    const current = await project();
    const another = await project();
    const me = await caller(ORG_ADMIN);
    await t.accounts.setCurrentTeam(me.user.id, current);
    const newUser = await rookie();

    const res = await create(me, another, { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toMatchObject({ effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER });
    expect(await countOf(another)).toBe(1);
    expect(await countOf(current)).toBe(0);
  });

  it("an organization admin may not add a member to another organization's project (403) [PostHog test_add_member_to_project_in_outside_organization_forbidden]", async () => {
    const other = await t.otherOrganization();
    const otherPrivate = await project({ organization: other.organization });
    const me = await caller(ORG_ADMIN);

    const res = await create(me, otherPrivate, { user_uuid: other.owner.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(otherPrivate)).toBe(0);
  });

  it('a user of another organization may not be added (403) [PostHog test_add_member_to_project_that_is_not_organization_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const other = await t.otherOrganization();

    const res = await create(me, p, { user_uuid: other.owner.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(SAME_ORGANIZATION);
    expect(await countOf(p)).toBe(0);
  });

  it('a project that does not exist answers 404 "Project not found." [PostHog test_add_member_to_nonexistent_project_forbidden]', async () => {
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    expect(await t.accounts.findTeam(NONEXISTENT_PROJECT)).toBeUndefined();

    const res = await create(me, NONEXISTENT_PROJECT, { user_uuid: newUser.uuid });

    expect(res.status).toBe(404);
    expect(res.error).toEqual(PROJECT_NOT_FOUND);
  });

  it('a project without access control answers 400 (even to its owner) [PostHog test_add_member_to_non_private_project_forbidden]', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_OWNER);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(400);
    expect(res.error).toEqual(NOT_PRIVATE);
    expect(await countOf(p)).toBe(0);
  });

  it('answers the whole record: membership ids, UserBasic of the user, timestamps, effective level', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(201);
    expect(res.data).toEqual(await record(newUser, PROJECT_MEMBER));
    const stored = await members.findByUserUuid(p, newUser.uuid);
    expect(res.data?.id).toBe(stored?.id);
    expect(res.data?.joined_at).toBe(res.data?.updated_at);
  });

  it('effective_level is the organization level when it is higher than the project level', async () => {
    const p = await project();
    const me = await caller(ORG_OWNER);
    const orgAdmin = await rookie(ORG_ADMIN);
    const orgOwner = await rookie(ORG_OWNER);

    const asAdmin = await create(me, p, { user_uuid: orgAdmin.uuid, level: PROJECT_MEMBER });
    const asOwner = await create(me, p, { user_uuid: orgOwner.uuid, level: PROJECT_ADMIN });

    expect(asAdmin.status).toBe(201);
    expect(asAdmin.data).toMatchObject({ level: 1, parent_level: 8, effective_level: 8 });
    expect(asOwner.status).toBe(201);
    expect(asOwner.data).toMatchObject({ level: 8, parent_level: 15, effective_level: 15 });
  });

  it('the permission check comes before the access-control check: an organization member on a non-private project gets 403', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_MEMBER);
    const newUser = await rookie();

    const res = await create(me, p, { user_uuid: newUser.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
  });

  it('the access-control check comes before the adding-yourself check', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_OWNER);

    const res = await create(me, p, { user_uuid: me.user.uuid });

    expect(res.status).toBe(400);
    expect(res.error).toEqual(NOT_PRIVATE);
  });

  it('a user UUID of nobody answers 403 "You both need to belong to the same organization."', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);

    const res = await create(me, p, { user_uuid: UNKNOWN_UUID });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(SAME_ORGANIZATION);
  });

  it('an inactive user of the organization answers 403 "You both need to belong to the same organization."', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const gone = await rookie();
    await deactivate(gone);

    const res = await create(me, p, { user_uuid: gone.uuid });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(SAME_ORGANIZATION);
    expect(await countOf(p)).toBe(0);
  });

  it('adding an explicit member twice answers 400 and keeps one membership', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    expect((await create(me, p, { user_uuid: newUser.uuid })).status).toBe(201);

    const res = await create(me, p, { user_uuid: newUser.uuid, level: PROJECT_ADMIN });

    expect(res.status).toBe(400);
    expect(res.error).toEqual(DUPLICATE);
    expect(await members.list(p)).toMatchObject([{ level: PROJECT_MEMBER, user: { uuid: newUser.uuid } }]);
  });

  it('a level other than 1 or 8 (15, owner) answers 400 invalid_choice on `level`', async () => {
    const p = await project();
    const me = await caller(ORG_OWNER);
    const newUser = await rookie();

    const res = await raw(me, 'POST', `/api/environments/${p}/explicit_members/`, { user_uuid: newUser.uuid, level: 15 });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_choice', detail: '"15" is not a valid choice.', attr: 'level' });
    expect(await countOf(p)).toBe(0);
  });

  it('a missing user_uuid answers 400 required on `user_uuid`', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);

    const res = await raw(me, 'POST', `/api/environments/${p}/explicit_members/`, { level: 1 });

    expect(res.status).toBe(400);
    expect(res.body).toEqual(required('user_uuid'));
  });

  it('a user_uuid that is not a UUID answers 400 on `user_uuid`', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);

    const res = await raw(me, 'POST', `/api/environments/${p}/explicit_members/`, { user_uuid: 'rookie@posthog.com' });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_input', detail: 'Must be a valid UUID.', attr: 'user_uuid' });
  });
});

// ------------------------------------------------------------------------------------------ list

describe('GET /api/environments/{project_id}/explicit_members/', () => {
  it('answers a bare JSON array of the active members, in the order they joined, the same on every call', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const first = await rookie();
    const second = await rookie(ORG_ADMIN);
    const third = await rookie();
    const gone = await rookie();
    expect((await create(me, p, { user_uuid: first.uuid })).status).toBe(201);
    expect((await create(me, p, { user_uuid: second.uuid, level: PROJECT_ADMIN })).status).toBe(201);
    expect((await create(me, p, { user_uuid: gone.uuid })).status).toBe(201);
    expect((await create(me, p, { user_uuid: third.uuid })).status).toBe(201);
    await deactivate(gone);

    const res = await list(me, p);

    expect(res.status).toBe(200);
    expect(Array.isArray(res.data)).toBe(true);
    expect(res.data).toEqual([await record(first, 1), await record(second, 8), await record(third, 1)]);
    const again = await list(me, p);
    expect(again.data).toEqual(res.data);
  });

  it('answers [] for a private project without explicit members', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);

    const res = await list(me, p);

    expect(res.status).toBe(200);
    expect(res.data).toEqual([]);
  });

  it('can be read on a project without access control', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_MEMBER);
    const planted = await rookie();
    await plant(p, planted, PROJECT_ADMIN);

    const res = await list(me, p);

    expect(res.status).toBe(200);
    expect(res.data).toEqual([await record(planted, PROJECT_ADMIN)]);
  });

  it('a project member (organization member, explicit level 1) may read the list', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);

    const res = await list(me, p);

    expect(res.status).toBe(200);
    expect(res.data).toEqual([await record(me.user, PROJECT_MEMBER)]);
  });

  it('works with @current', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    await t.accounts.setCurrentTeam(me.user.id, p);
    const planted = await rookie();
    await plant(p, planted, PROJECT_MEMBER);

    const res = await list(me, '@current');

    expect(res.status).toBe(200);
    expect(res.data).toEqual([await record(planted, PROJECT_MEMBER)]);
  });

  it('an organization member without an explicit membership of a private project gets 403 sufficient permissions, as PostHog', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);

    const res = await list(me, p);

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
  });

  it("another organization's project answers 403 sufficient permissions, as PostHog", async () => {
    const other = await t.otherOrganization();
    const me = await caller(ORG_OWNER);

    const res = await list(me, other.team.id);

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
  });

  it('a project that does not exist answers 404 "Project not found."', async () => {
    const me = await caller(ORG_OWNER);

    const res = await list(me, NONEXISTENT_PROJECT);

    expect(res.status).toBe(404);
    expect(res.error).toEqual(PROJECT_NOT_FOUND);
  });
});

// ------------------------------------------------------------------------------------------ retrieve

describe('GET /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it("answers the membership of the user with this UUID", async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);
    const other = await rookie(ORG_ADMIN);
    await plant(p, other, PROJECT_ADMIN);

    const res = await retrieve(me, p, other.uuid);

    expect(res.status).toBe(200);
    expect(res.data).toEqual(await record(other, PROJECT_ADMIN));
  });

  it('an unknown user, a user without a membership here, an inactive user and a non-UUID answer 404, never 500', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const outsider = await rookie();
    const gone = await rookie();
    await plant(p, gone, PROJECT_MEMBER);
    await deactivate(gone);

    for (const uuid of [UNKNOWN_UUID, outsider.uuid, gone.uuid, me.user.uuid, 'not-a-uuid', '12345']) {
      const res = await retrieve(me, p, uuid);
      expect(res.status, uuid).toBe(404);
      expect(res.error, uuid).toEqual(NOT_FOUND);
    }
  });

  it('an organization member without an explicit membership of a private project gets 403 sufficient permissions, as PostHog', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    const planted = await rookie();
    await plant(p, planted, PROJECT_MEMBER);

    const res = await retrieve(me, p, planted.uuid);

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
  });
});

// ------------------------------------------------------------------------------------------ update

describe('PATCH /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('an organization owner raises a member to admin (200) [PostHog test_set_level_of_member_to_admin_as_org_owner_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_OWNER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_ADMIN });

    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN });
    expect(res.data).toEqual(await record(newUser, PROJECT_ADMIN));
    expect(Date.parse(res.data!.updated_at)).toBeGreaterThanOrEqual(Date.parse(res.data!.joined_at));
    expect(await members.levelOf(p, newUser.id)).toBe(PROJECT_ADMIN);
  });

  it('an organization member without project access may not raise a member (403) [PostHog test_set_level_of_member_to_admin_as_org_member_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_ADMIN });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await members.levelOf(p, newUser.id)).toBe(PROJECT_MEMBER);
  });

  it('a project admin may not demote themselves (403) [PostHog test_demote_yourself_as_org_member_and_project_admin_forbidden]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);

    const res = await patch(me, p, me.user.uuid, { level: PROJECT_MEMBER });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(OWN_LEVEL);
    expect(await members.levelOf(p, me.user.id)).toBe(PROJECT_ADMIN);
  });

  it('an organization member who is a project admin raises a member (200) [PostHog test_set_level_of_member_to_admin_as_org_member_but_project_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_ADMIN });

    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN });
  });

  it('a demotion recomputes effective_level (8 → 1 for an organization member)', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_ADMIN);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_MEMBER });

    expect(res.status).toBe(200);
    expect(res.data).toEqual(await record(newUser, PROJECT_MEMBER));
    expect(res.data).toMatchObject({ level: 1, parent_level: 1, effective_level: 1 });
  });

  it('an empty body on yourself changes nothing (200): only a `level` is refused', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);

    const res = await patch(me, p, me.user.uuid, {});

    expect(res.status).toBe(200);
    expect(res.data).toEqual(await record(me.user, PROJECT_ADMIN));
  });

  it('a project member (explicit level 1) may not change another member (403)', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_MEMBER });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
  });

  it('a project without access control answers 400', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_OWNER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await patch(me, p, newUser.uuid, { level: PROJECT_ADMIN });

    expect(res.status).toBe(400);
    expect(res.error).toEqual(NOT_PRIVATE);
    expect(await members.levelOf(p, newUser.id)).toBe(PROJECT_MEMBER);
  });

  it('editing someone whose explicit level is above yours answers 403 (a level-15 row planted in storage)', async () => {
    // Reachable only through stored data: through the API explicit levels are 1 or 8 and editors are 8 or more.
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const high = await rookie();
    await plant(p, high, 15);

    const res = await patch(me, p, high.uuid, { level: PROJECT_MEMBER });

    expect(res.status).toBe(403);
    expect(res.error).toEqual(EDIT_HIGHER);
    expect(await members.levelOf(p, high.id)).toBe(15);
  });

  it('a level other than 1 or 8 answers 400 invalid_choice on `level`', async () => {
    const p = await project();
    const me = await caller(ORG_OWNER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await raw(me, 'PATCH', `/api/environments/${p}/explicit_members/${newUser.uuid}/`, { level: 15 });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ type: 'validation_error', code: 'invalid_choice', detail: '"15" is not a valid choice.', attr: 'level' });
    expect(await members.levelOf(p, newUser.id)).toBe(PROJECT_MEMBER);
  });

  it('an unknown user or a non-UUID answers 404, never 500', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const outsider = await rookie();

    for (const uuid of [UNKNOWN_UUID, outsider.uuid, 'not-a-uuid']) {
      const res = await patch(me, p, uuid, { level: PROJECT_MEMBER });
      expect(res.status, uuid).toBe(404);
      expect(res.error, uuid).toEqual(NOT_FOUND);
    }
  });
});

// ------------------------------------------------------------------------------------------ delete

describe('DELETE /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  it('an organization admin removes a member (204) [PostHog test_remove_member_as_org_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await remove(me, p, newUser.uuid);

    expect(res.status).toBe(204);
    expect(await countOf(p)).toBe(0);
    expect((await retrieve(me, p, newUser.uuid)).status).toBe(404);
    // the user stays a member of the organization
    expect(await t.accounts.findMembership(t.boot.organization.id, newUser.id)).toBeDefined();
  });

  it('an organization member without project access may not remove a member (403) [PostHog test_remove_member_as_org_member_allowed]', async () => {
    // PostHog asserts the status only; the message is the contract's answer for a caller without access.
    const p = await project();
    const me = await caller(ORG_MEMBER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await remove(me, p, newUser.uuid);

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(1);
  });

  it('a project member (explicit level 1) may not remove another member (403)', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await remove(me, p, newUser.uuid);

    expect(res.status).toBe(403);
    expect(res.error).toEqual(INSUFFICIENT);
    expect(await countOf(p)).toBe(2);
  });

  it('an organization member who is a project admin removes a member (204) [PostHog test_remove_member_as_org_member_but_project_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await remove(me, p, newUser.uuid);

    expect(res.status).toBe(204);
    expect((await members.list(p)).map((m) => m.user.uuid)).toEqual([me.user.uuid]);
  });

  it('a project admin leaves the project (204) [PostHog test_leave_project_as_admin_allowed]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_ADMIN);

    const res = await remove(me, p, me.user.uuid);

    expect(res.status).toBe(204);
    expect(await countOf(p)).toBe(0);
    // without the membership an organization member has no access to the private project any more
    const after = await list(me, p);
    expect(after.status).toBe(403);
    expect(after.error).toEqual(INSUFFICIENT);
  });

  it('a project member leaves the project (204) [PostHog test_leave_project_as_admin_member]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await plant(p, me.user, PROJECT_MEMBER);

    const res = await remove(me, p, me.user.uuid);

    expect(res.status).toBe(204);
    expect(await countOf(p)).toBe(0);
  });

  it('leaving a project you are not an explicit member of answers 404 [PostHog test_leave_project_as_project_outsider]', async () => {
    const p = await project();
    const me = await caller(ORG_MEMBER);
    await t.accounts.setCurrentTeam(me.user.id, p);

    const res = await remove(me, '@current', me.user.uuid);

    expect(res.status).toBe(404);
    expect(res.error).toEqual(NOT_FOUND);
  });

  it('leaving a project of an organization you are not a member of answers 404 [PostHog test_leave_project_as_organization_outsider]', async () => {
    const p = await project();
    seq += 1;
    const outsider = await t.accounts.createUser({ email: `outsider${seq}-${Date.now()}@example.com` });
    await t.accounts.setCurrentTeam(outsider.id, p);
    const key = await t.key(['project:write'], { user: outsider });
    const me: Caller = { user: outsider, key, api: t.clientFor(key) };

    const res = await remove(me, p, outsider.uuid);

    expect(res.status).toBe(404);
    expect(res.error).toEqual(NOT_FOUND);
  });

  it('an unknown user or a non-UUID answers 404, never 500', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const outsider = await rookie();

    for (const uuid of [UNKNOWN_UUID, outsider.uuid, 'not-a-uuid']) {
      const res = await remove(me, p, uuid);
      expect(res.status, uuid).toBe(404);
      expect(res.error, uuid).toEqual(NOT_FOUND);
    }
  });

  it('a member of a project without access control can be removed by an organization admin (204)', async () => {
    const p = await project({ access_control: false });
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    await plant(p, newUser, PROJECT_MEMBER);

    const res = await remove(me, p, newUser.uuid);

    expect(res.status).toBe(204);
    expect(await countOf(p)).toBe(0);
  });
});

// ------------------------------------------------------------------------------------------ scopes

describe('key scopes on explicit members', () => {
  it('a project:read key may list and retrieve', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN, { scopes: ['project:read'] });
    const planted = await rookie();
    await plant(p, planted, PROJECT_MEMBER);

    expect((await list(me, p)).status).toBe(200);
    expect((await retrieve(me, p, planted.uuid)).status).toBe(200);
  });

  it("a project:read key may not create, update or delete: 403 \"API key missing required scope 'project:write'\"", async () => {
    const p = await project();
    const me = await caller(ORG_OWNER, { scopes: ['project:read'] });
    const planted = await rookie();
    await plant(p, planted, PROJECT_MEMBER);
    const newUser = await rookie();

    const created = await create(me, p, { user_uuid: newUser.uuid });
    expect(created.status).toBe(403);
    expect(created.error).toEqual(missingScope('project:write'));

    const patched = await patch(me, p, planted.uuid, { level: PROJECT_ADMIN });
    expect(patched.status).toBe(403);
    expect(patched.error).toEqual(missingScope('project:write'));

    const removed = await remove(me, p, planted.uuid);
    expect(removed.status).toBe(403);
    expect(removed.error).toEqual(missingScope('project:write'));

    expect(await members.list(p)).toMatchObject([{ level: PROJECT_MEMBER, user: { uuid: planted.uuid } }]);
  });

  it("a key without project scopes may not list or retrieve: 403 \"API key missing required scope 'project:read'\"", async () => {
    const p = await project();
    const me = await caller(ORG_OWNER, { scopes: ['plugin:write', 'dashboard:read'] });
    const planted = await rookie();
    await plant(p, planted, PROJECT_MEMBER);

    const listed = await list(me, p);
    expect(listed.status).toBe(403);
    expect(listed.error).toEqual(missingScope('project:read'));

    const retrieved = await retrieve(me, p, planted.uuid);
    expect(retrieved.status).toBe(403);
    expect(retrieved.error).toEqual(missingScope('project:read'));
  });

  it('a project:write key may read as well (write includes read)', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN, { scopes: ['project:write'] });

    const res = await list(me, p);

    expect(res.status).toBe(200);
    expect(res.data).toEqual([]);
  });
});
