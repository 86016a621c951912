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
import {
  answer,
  type Answer,
  type ErrorBody,
  forbidden,
  invalid,
  missingScope,
  NOT_FOUND,
  PROJECT_NOT_FOUND,
  required,
} from '../helpers/errors.js';

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
  return answer<ExplicitTeamMember>(
    c.api.PATCH(MEMBER, { params: { path: { project_id: pid(p), parent_membership__user__uuid: uuid } }, body }),
  );
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

// ------------------------------------------------------------------------------------------ cases

/**
 * The set-up most cases share: a project (private unless `accessControl: false`), a caller at an
 * organization level and maybe an explicit member of it, and the user the request names.
 */
interface Scene {
  /** the caller's organization level */
  caller: number;
  /** the caller's explicit level in the project, when they are an explicit member */
  callerIn?: number;
  /** false: the project has no access control (default: private) */
  accessControl?: boolean;
  /** the request names the project `@current`, the caller's current project */
  current?: boolean;
  /**
   * whom the request names: a new user of the organization (default), the caller, another
   * organization's owner, a UUID of nobody, or an inactive user of the organization
   */
  target?: 'rookie' | 'self' | 'other-org' | 'nobody' | 'inactive';
  /** the target's explicit level in the project before the request */
  targetIn?: number;
}

/** A scene once set up. */
interface Staged {
  p: number;
  me: Caller;
  /** the user the request names (`id` 0 for a UUID of nobody) */
  target: Pick<User, 'id' | 'uuid'>;
  /** the project as the request names it (`@current` or its id) */
  path: number | '@current';
}

/** What a case expects: the answer, and the project's members around it. */
interface Outcome {
  status: number;
  /** the whole error body */
  error?: ErrorBody;
  /** fields of the answered membership */
  data?: Partial<ExplicitTeamMember>;
  /** explicit members of the project just before the request */
  countBefore?: number;
  /** explicit members of the project after the request */
  countAfter?: number;
  /** the target's explicit level after the request */
  levelAfter?: number;
  /** further checks */
  then?: (s: Staged, res: Answer<unknown>) => Promise<void>;
}

/** One row of a table: its test title, the scene, what it expects. */
type Case = Scene & Outcome & { title: string };

async function stage(c: Scene): Promise<Staged> {
  const p = await project({ access_control: c.accessControl ?? true });
  const me = await caller(c.caller);
  if (c.current) await t.accounts.setCurrentTeam(me.user.id, p);
  if (c.callerIn !== undefined) await plant(p, me.user, c.callerIn);
  let target: Pick<User, 'id' | 'uuid'>;
  switch (c.target ?? 'rookie') {
    case 'self':
      target = me.user;
      break;
    case 'other-org':
      target = (await t.otherOrganization()).owner;
      break;
    case 'nobody':
      target = { id: 0, uuid: UNKNOWN_UUID };
      break;
    case 'inactive': {
      const gone = await rookie();
      await deactivate(gone);
      target = gone;
      break;
    }
    default:
      target = await rookie();
  }
  if (c.targetIn !== undefined) await plant(p, target as User, c.targetIn);
  return { p, me, target, path: c.current ? '@current' : p };
}

/** One test per row: set the scene up, send the request `act` makes, check the outcome. */
function runCases<C extends Case>(cases: C[], act: (s: Staged, c: C) => Promise<Answer<unknown>>): void {
  for (const c of cases) {
    it(c.title, async () => {
      const s = await stage(c);
      if (c.countBefore !== undefined) expect(await countOf(s.p)).toBe(c.countBefore);

      const res = await act(s, c);

      expect(res.status).toBe(c.status);
      if (c.error) expect(res.error).toEqual(c.error);
      if (c.data) expect(res.data).toMatchObject(c.data);
      if (c.countAfter !== undefined) expect(await countOf(s.p)).toBe(c.countAfter);
      if (c.levelAfter !== undefined) expect(await members.levelOf(s.p, s.target.id)).toBe(c.levelAfter);
      await c.then?.(s, res);
    });
  }
}

/** A test that an unknown user, a user without a membership and a non-UUID answer 404 to `act`. */
function unknownTargetsAnswer404(act: (me: Caller, p: number, uuid: string) => Promise<Answer<unknown>>): void {
  it('an unknown user or a non-UUID answers 404, never 500', async () => {
    const p = await project();
    const me = await caller(ORG_ADMIN);
    const outsider = await rookie();

    for (const uuid of [UNKNOWN_UUID, outsider.uuid, 'not-a-uuid']) {
      const res = await act(me, p, uuid);
      expect(res.status, uuid).toBe(404);
      expect(res.error, uuid).toEqual(NOT_FOUND);
    }
  });
}

// ------------------------------------------------------------------------------------------ create

describe('POST /api/environments/{project_id}/explicit_members/', () => {
  const member = { effective_level: PROJECT_MEMBER, level: PROJECT_MEMBER };
  const admin = { effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN };
  runCases<Case & { level?: 8 }>(
    [
      {
        title: 'an organization owner adds a member at level 1 by default (201) [PostHog test_add_member_as_org_owner_allowed]',
        caller: ORG_OWNER,
        current: true,
        countBefore: 0,
        status: 201,
        data: member,
        countAfter: 1,
      },
      {
        title: 'an organization admin adds a member (201) [PostHog test_add_member_as_org_admin_allowed]',
        caller: ORG_ADMIN,
        countBefore: 0,
        status: 201,
        data: member,
        countAfter: 1,
      },
      {
        title: 'an organization member without project access may not add a member (403) [PostHog test_add_member_as_org_member_forbidden]',
        caller: ORG_MEMBER,
        status: 403,
        error: INSUFFICIENT,
        countAfter: 0,
      },
      {
        title:
          'an organization member without project access may not add themselves (403) [PostHog test_add_yourself_as_org_member_forbidden]',
        caller: ORG_MEMBER,
        target: 'self',
        status: 403,
        error: INSUFFICIENT,
        countAfter: 0,
      },
      {
        title: 'an organization admin may not add themselves (403) [PostHog test_add_yourself_as_org_admin_forbidden]',
        caller: ORG_ADMIN,
        target: 'self',
        status: 403,
        error: ADD_YOURSELF,
        countAfter: 0,
      },
      {
        title:
          'an organization member who is a project member may not add a member (403) [PostHog test_add_member_as_org_member_and_project_member_forbidden]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_MEMBER,
        countBefore: 1,
        status: 403,
        error: INSUFFICIENT,
        countAfter: 1,
      },
      {
        title:
          'an organization member who is a project admin adds a member (201) [PostHog test_add_member_as_org_member_but_project_admin_allowed]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        countBefore: 1,
        status: 201,
        data: member,
        countAfter: 2,
      },
      {
        title:
          'an organization admin who is a project member adds a member (201) [PostHog test_add_member_as_org_admin_and_project_member_allowed]',
        caller: ORG_ADMIN,
        callerIn: PROJECT_MEMBER,
        status: 201,
        data: member,
      },
      {
        title: 'an organization admin adds an admin (201, level 8) [PostHog test_add_admin_as_org_admin_allowed]',
        caller: ORG_ADMIN,
        level: PROJECT_ADMIN,
        status: 201,
        data: admin,
      },
      {
        title: 'a project member may not add an admin (403) [PostHog test_add_admin_as_project_member_forbidden]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_MEMBER,
        level: PROJECT_ADMIN,
        status: 403,
        error: INSUFFICIENT,
        countAfter: 1,
      },
      {
        title: 'an organization admin who is a project admin adds an admin (201) [PostHog test_add_admin_as_project_admin_allowed]',
        caller: ORG_ADMIN,
        callerIn: PROJECT_ADMIN,
        level: PROJECT_ADMIN,
        status: 201,
        data: admin,
      },
      {
        title:
          'a user of another organization may not be added (403) [PostHog test_add_member_to_project_that_is_not_organization_member_forbidden]',
        caller: ORG_ADMIN,
        target: 'other-org',
        status: 403,
        error: SAME_ORGANIZATION,
        countAfter: 0,
      },
      {
        title:
          'a project without access control answers 400 (even to its owner) [PostHog test_add_member_to_non_private_project_forbidden]',
        caller: ORG_OWNER,
        accessControl: false,
        status: 400,
        error: NOT_PRIVATE,
        countAfter: 0,
      },
      {
        title: 'the permission check comes before the access-control check: an organization member on a non-private project gets 403',
        caller: ORG_MEMBER,
        accessControl: false,
        status: 403,
        error: INSUFFICIENT,
      },
      {
        title: 'the access-control check comes before the adding-yourself check',
        caller: ORG_OWNER,
        accessControl: false,
        target: 'self',
        status: 400,
        error: NOT_PRIVATE,
      },
      {
        title: 'a user UUID of nobody answers 403 "You both need to belong to the same organization."',
        caller: ORG_ADMIN,
        target: 'nobody',
        status: 403,
        error: SAME_ORGANIZATION,
      },
      {
        title: 'an inactive user of the organization answers 403 "You both need to belong to the same organization."',
        caller: ORG_ADMIN,
        target: 'inactive',
        status: 403,
        error: SAME_ORGANIZATION,
        countAfter: 0,
      },
    ],
    (s, c) => create(s.me, s.path, { user_uuid: s.target.uuid, ...(c.level ? { level: c.level } : {}) }),
  );

  it.each([
    [
      'a level other than 1 or 8 (15, owner) answers 400 invalid_choice on `level`',
      ORG_OWNER,
      (u: User) => ({ user_uuid: u.uuid, level: 15 }),
      invalid('"15" is not a valid choice.', 'level', 'invalid_choice'),
      true,
    ],
    ['a missing user_uuid answers 400 required on `user_uuid`', ORG_ADMIN, () => ({ level: 1 }), required('user_uuid'), false],
    [
      'a user_uuid that is not a UUID answers 400 on `user_uuid`',
      ORG_ADMIN,
      () => ({ user_uuid: 'rookie@posthog.com' }),
      invalid('Must be a valid UUID.', 'user_uuid'),
      false,
    ],
  ] as const)('%s', async (_title, level, bodyFor, error, checkCount) => {
    const p = await project();
    const me = await caller(level);
    const newUser = await rookie();

    const res = await raw(me, 'POST', `/api/environments/${p}/explicit_members/`, bodyFor(newUser));

    expect(res.status).toBe(400);
    expect(res.body).toEqual(error);
    if (checkCount) expect(await countOf(p)).toBe(0);
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

  it('a project that does not exist answers 404 "Project not found." [PostHog test_add_member_to_nonexistent_project_forbidden]', async () => {
    const me = await caller(ORG_ADMIN);
    const newUser = await rookie();
    expect(await t.accounts.findTeam(NONEXISTENT_PROJECT)).toBeUndefined();

    const res = await create(me, NONEXISTENT_PROJECT, { user_uuid: newUser.uuid });

    expect(res.status).toBe(404);
    expect(res.error).toEqual(PROJECT_NOT_FOUND);
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
  it('answers the membership of the user with this UUID', async () => {
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
  runCases<Case & { body: PatchedExplicitTeamMember }>(
    [
      {
        title: 'an organization owner raises a member to admin (200) [PostHog test_set_level_of_member_to_admin_as_org_owner_allowed]',
        caller: ORG_OWNER,
        targetIn: PROJECT_MEMBER,
        body: { level: PROJECT_ADMIN },
        status: 200,
        data: { effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN },
        levelAfter: PROJECT_ADMIN,
        then: async (s, res) => {
          const data = res.data as ExplicitTeamMember;
          expect(data).toEqual(await record(s.target as User, PROJECT_ADMIN));
          expect(Date.parse(data.updated_at)).toBeGreaterThanOrEqual(Date.parse(data.joined_at));
        },
      },
      {
        title:
          'an organization member without project access may not raise a member (403) [PostHog test_set_level_of_member_to_admin_as_org_member_forbidden]',
        caller: ORG_MEMBER,
        targetIn: PROJECT_MEMBER,
        body: { level: PROJECT_ADMIN },
        status: 403,
        error: INSUFFICIENT,
        levelAfter: PROJECT_MEMBER,
      },
      {
        title: 'a project admin may not demote themselves (403) [PostHog test_demote_yourself_as_org_member_and_project_admin_forbidden]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        target: 'self',
        body: { level: PROJECT_MEMBER },
        status: 403,
        error: OWN_LEVEL,
        levelAfter: PROJECT_ADMIN,
      },
      {
        title:
          'an organization member who is a project admin raises a member (200) [PostHog test_set_level_of_member_to_admin_as_org_member_but_project_admin_allowed]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        targetIn: PROJECT_MEMBER,
        body: { level: PROJECT_ADMIN },
        status: 200,
        data: { effective_level: PROJECT_ADMIN, level: PROJECT_ADMIN },
      },
      {
        title: 'a demotion recomputes effective_level (8 → 1 for an organization member)',
        caller: ORG_ADMIN,
        targetIn: PROJECT_ADMIN,
        body: { level: PROJECT_MEMBER },
        status: 200,
        data: { level: 1, parent_level: 1, effective_level: 1 },
        then: async (s, res) => expect(res.data).toEqual(await record(s.target as User, PROJECT_MEMBER)),
      },
      {
        title: 'an empty body on yourself changes nothing (200): only a `level` is refused',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        target: 'self',
        body: {},
        status: 200,
        then: async (s, res) => expect(res.data).toEqual(await record(s.me.user, PROJECT_ADMIN)),
      },
      {
        title: 'a project member (explicit level 1) may not change another member (403)',
        caller: ORG_MEMBER,
        callerIn: PROJECT_MEMBER,
        targetIn: PROJECT_MEMBER,
        body: { level: PROJECT_MEMBER },
        status: 403,
        error: INSUFFICIENT,
      },
      {
        title: 'a project without access control answers 400',
        caller: ORG_OWNER,
        accessControl: false,
        targetIn: PROJECT_MEMBER,
        body: { level: PROJECT_ADMIN },
        status: 400,
        error: NOT_PRIVATE,
        levelAfter: PROJECT_MEMBER,
      },
      // Reachable only through stored data: through the API explicit levels are 1 or 8 and editors are 8 or more.
      {
        title: 'editing someone whose explicit level is above yours answers 403 (a level-15 row planted in storage)',
        caller: ORG_ADMIN,
        targetIn: 15,
        body: { level: PROJECT_MEMBER },
        status: 403,
        error: EDIT_HIGHER,
        levelAfter: 15,
      },
    ],
    (s, c) => patch(s.me, s.path, s.target.uuid, c.body),
  );

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

  unknownTargetsAnswer404((me, p, uuid) => patch(me, p, uuid, { level: PROJECT_MEMBER }));
});

// ------------------------------------------------------------------------------------------ delete

describe('DELETE /api/environments/{project_id}/explicit_members/{parent_membership__user__uuid}/', () => {
  runCases(
    [
      {
        title: 'an organization admin removes a member (204) [PostHog test_remove_member_as_org_admin_allowed]',
        caller: ORG_ADMIN,
        targetIn: PROJECT_MEMBER,
        status: 204,
        countAfter: 0,
        then: async (s) => {
          expect((await retrieve(s.me, s.p, s.target.uuid)).status).toBe(404);
          // the user stays a member of the organization
          expect(await t.accounts.findMembership(t.boot.organization.id, s.target.id)).toBeDefined();
        },
      },
      // PostHog asserts the status only; the message is the contract's answer for a caller without access.
      {
        title:
          'an organization member without project access may not remove a member (403) [PostHog test_remove_member_as_org_member_allowed]',
        caller: ORG_MEMBER,
        targetIn: PROJECT_MEMBER,
        status: 403,
        error: INSUFFICIENT,
        countAfter: 1,
      },
      {
        title: 'a project member (explicit level 1) may not remove another member (403)',
        caller: ORG_MEMBER,
        callerIn: PROJECT_MEMBER,
        targetIn: PROJECT_MEMBER,
        status: 403,
        error: INSUFFICIENT,
        countAfter: 2,
      },
      {
        title:
          'an organization member who is a project admin removes a member (204) [PostHog test_remove_member_as_org_member_but_project_admin_allowed]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        targetIn: PROJECT_MEMBER,
        status: 204,
        then: async (s) => expect((await members.list(s.p)).map((m) => m.user.uuid)).toEqual([s.me.user.uuid]),
      },
      {
        title: 'a project admin leaves the project (204) [PostHog test_leave_project_as_admin_allowed]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_ADMIN,
        target: 'self',
        status: 204,
        countAfter: 0,
        then: async (s) => {
          // without the membership an organization member has no access to the private project any more
          const after = await list(s.me, s.p);
          expect(after.status).toBe(403);
          expect(after.error).toEqual(INSUFFICIENT);
        },
      },
      {
        title: 'a project member leaves the project (204) [PostHog test_leave_project_as_admin_member]',
        caller: ORG_MEMBER,
        callerIn: PROJECT_MEMBER,
        target: 'self',
        status: 204,
        countAfter: 0,
      },
      {
        title: 'leaving a project you are not an explicit member of answers 404 [PostHog test_leave_project_as_project_outsider]',
        caller: ORG_MEMBER,
        current: true,
        target: 'self',
        status: 404,
        error: NOT_FOUND,
      },
      {
        title: 'a member of a project without access control can be removed by an organization admin (204)',
        caller: ORG_ADMIN,
        accessControl: false,
        targetIn: PROJECT_MEMBER,
        status: 204,
        countAfter: 0,
      },
    ],
    (s) => remove(s.me, s.path, s.target.uuid),
  );

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

  unknownTargetsAnswer404((me, p, uuid) => remove(me, p, uuid));
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

  it('a project:read key may not create, update or delete: 403 "API key missing required scope \'project:write\'"', async () => {
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

  it('a key without project scopes may not list or retrieve: 403 "API key missing required scope \'project:read\'"', async () => {
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
