/**
 * Explicit project members: PostHog's rules of ee/api/explicit_team_member.py
 * (ExplicitTeamMemberSerializer.validate / create, ExplicitTeamMemberViewSet) and
 * posthog/permissions.py `TeamMemberStrictManagementPermission`, on our storage. No HTTP here:
 * methods take the caller and plain input, return wire-shaped objects, throw `ApiError`.
 *
 * Order of checks on writes, as PostHog runs them:
 * 1. permission: reads need any effective project level, writes admin (8) or more — "You don't
 *    have sufficient permissions in the project." (403), also for callers with no access to the
 *    project at all; except removing yourself, which anyone may try (404 when not a member);
 * 2. (update, delete) the member must exist — 404;
 * 3. (create, update) the project must have access control — 400 "Explicit members can only be
 *    accessed for projects with project-based permissioning enabled.";
 * 4. adding yourself — 403 "You can't explicitly add yourself to projects.";
 * 5. a level above the caller's — 403 "You can only set access level to lower or equal to your
 *    current one.";
 * 6. (update) someone else whose explicit level is above the caller's — 403 "You can only edit
 *    others with level lower or equal to you."; yourself with a level — 403 "You can't set your own
 *    access level.";
 * 7. (create) a user who is not an active member of the project's organization — 403 "You both
 *    need to belong to the same organization."; already an explicit member — 400 "This user likely
 *    already is an explicit member of the project.".
 */
import type { components } from '../../generated/api.js';
import { ApiError, notFound, permissionDenied, validationError } from './errors.js';
import type { Store } from '../storage/db.js';
import { OrganizationLevel, type User } from '../storage/repositories/accounts.js';
import { ExplicitMembersRepository, type ExplicitMembership } from '../storage/repositories/explicit-members.js';
import type { ProjectAccess } from './access.js';
import { userBasic } from './user-basic.js';
import { normalizeUuid } from './uuids.js';

/** An explicit member on the wire (schema `ExplicitTeamMember`). */
export type ExplicitMemberWire = components['schemas']['ExplicitTeamMember'];

/** The caller: who they are and their standing in the project. */
export interface MemberCaller {
  project: ProjectAccess;
  user: User;
}

const INSUFFICIENT = "You don't have sufficient permissions in the project.";
const NO_ACCESS_CONTROL = 'Explicit members can only be accessed for projects with project-based permissioning enabled.';
const LEVEL_TOO_HIGH = 'You can only set access level to lower or equal to your current one.';

/** The wire form; `effective_level` = max(explicit level, organization level) (ExplicitTeamMembership.effective_level). */
export function memberToWire(m: ExplicitMembership): ExplicitMemberWire {
  return {
    id: m.id,
    level: m.level as ExplicitMemberWire['level'],
    parent_level: m.parent_level as ExplicitMemberWire['parent_level'],
    parent_membership_id: m.parent_membership_id,
    joined_at: m.joined_at,
    updated_at: m.updated_at,
    user: userBasic(m.user),
    effective_level: Math.max(m.level, m.parent_level) as ExplicitMemberWire['effective_level'],
  };
}

/** TeamMemberStrictManagementPermission for writes: effective level admin (8) or more. */
function assertAdmin(caller: MemberCaller): number {
  const level = caller.project.level;
  if (level === null || level < OrganizationLevel.ADMIN) throw permissionDenied(INSUFFICIENT);
  return level;
}

/** TeamMemberStrictManagementPermission for reads: any effective level. */
function assertMember(caller: MemberCaller): void {
  if (caller.project.level === null) throw permissionDenied(INSUFFICIENT);
}

function assertAccessControl(caller: MemberCaller): void {
  if (!caller.project.team.access_control) throw validationError(NO_ACCESS_CONTROL);
}

/** The member's user UUID from the path; anything that is not a UUID names nobody (404). */
function memberUuid(raw: string): string {
  const uuid = normalizeUuid(raw);
  if (!uuid) throw notFound();
  return uuid;
}

/** True for unique-constraint violations of SQLite and PostgreSQL. */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** Explicit members operations of one store. */
export class ExplicitMembersService {
  constructor(private readonly store: Store) {}

  private repo(db = this.store.db) {
    return new ExplicitMembersRepository(db);
  }

  /** Every explicit member of the project whose user is active, oldest first: a bare array, as PostHog. */
  async list(caller: MemberCaller): Promise<ExplicitMemberWire[]> {
    assertMember(caller);
    return (await this.repo().list(caller.project.team.id)).map(memberToWire);
  }

  /** One member by user UUID; 404 when unknown or not a UUID. */
  async retrieve(caller: MemberCaller, rawUuid: string): Promise<ExplicitMemberWire> {
    assertMember(caller);
    const m = await this.repo().findByUserUuid(caller.project.team.id, memberUuid(rawUuid));
    if (!m) throw notFound();
    return memberToWire(m);
  }

  /** Adds a member (level default 1); see the module doc for the checks. Answers the record. */
  async create(caller: MemberCaller, input: { user_uuid: string; level?: number }): Promise<ExplicitMemberWire> {
    const callerLevel = assertAdmin(caller);
    assertAccessControl(caller);
    const targetUuid = input.user_uuid.toLowerCase();
    const level = input.level ?? 1;
    if (targetUuid === caller.user.uuid.toLowerCase()) throw permissionDenied("You can't explicitly add yourself to projects.");
    if (level > callerLevel) throw permissionDenied(LEVEL_TOO_HIGH);
    const { team } = caller.project;
    return this.store.db.transaction().execute(async (trx) => {
      const repo = this.repo(trx);
      const parentId = await repo.organizationMembershipId(team.organization_id, targetUuid);
      if (parentId === undefined) throw permissionDenied('You both need to belong to the same organization.');
      try {
        await repo.create({ team_id: team.id, parent_membership_id: parentId, level });
      } catch (err) {
        if (isUniqueViolation(err)) throw validationError('This user likely already is an explicit member of the project.');
        throw err;
      }
      const created = await repo.findByUserUuid(team.id, targetUuid);
      if (!created) throw new ApiError(500, { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null });
      return memberToWire(created);
    });
  }

  /** Changes a member's level; see the module doc for the checks. Answers the record. */
  async update(caller: MemberCaller, rawUuid: string, input: { level?: number }): Promise<ExplicitMemberWire> {
    const callerLevel = assertAdmin(caller);
    const uuid = memberUuid(rawUuid);
    const { team } = caller.project;
    return this.store.db.transaction().execute(async (trx) => {
      const repo = this.repo(trx);
      const member = await repo.findByUserUuid(team.id, uuid);
      if (!member) throw notFound();
      assertAccessControl(caller);
      const newLevel = input.level;
      if (newLevel !== undefined && newLevel > callerLevel) throw permissionDenied(LEVEL_TOO_HIGH);
      if (member.user.id !== caller.user.id) {
        if (member.level > callerLevel) throw permissionDenied('You can only edit others with level lower or equal to you.');
      } else if (newLevel !== undefined) {
        throw permissionDenied("You can't set your own access level.");
      }
      if (newLevel !== undefined && newLevel !== member.level) await repo.setLevel(member.id, newLevel);
      const updated = await repo.findByUserUuid(team.id, uuid);
      return memberToWire(updated ?? member);
    });
  }

  /**
   * Removes a member: project or organization admins may remove anyone; anyone may remove
   * themselves (PostHog's "leave project" special case). 404 when unknown.
   */
  async destroy(caller: MemberCaller, rawUuid: string): Promise<void> {
    const uuid = normalizeUuid(rawUuid);
    const leaving = uuid !== undefined && uuid === caller.user.uuid.toLowerCase();
    if (!leaving) assertAdmin(caller);
    if (!uuid) throw notFound();
    const repo = this.repo();
    const member = await repo.findByUserUuid(caller.project.team.id, uuid);
    if (!member) throw notFound();
    await repo.delete(member.id);
  }
}
