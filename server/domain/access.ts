/**
 * Who may act on what: personal API key scopes and project access, as PostHog decides them.
 * No HTTP here: functions take plain objects and throw `ApiError` with PostHog's messages.
 *
 * Sources: posthog/permissions.py (APIScopePermission, TeamMemberAccessPermission),
 * posthog/api/routing.py (project_id parsing, `@current`), posthog/user_permissions.py (levels).
 */
import { ApiError, notFound, permissionDenied } from './errors.js';
import type { Membership, Organization, Team, User } from '../storage/repositories/accounts.js';
import { OrganizationLevel } from '../storage/repositories/accounts.js';
import type { PersonalApiKey } from '../storage/repositories/api-keys.js';

/** Scopes a key may carry (PostHog's names for the objects of this API); `*` grants all. */
export const KNOWN_SCOPES = [
  '*',
  'plugin:read',
  'plugin:write',
  'dashboard:read',
  'dashboard:write',
  'query:read',
  'query:write',
  'project:read',
  'project:write',
  'user:read',
  'user:write',
  'organization:read',
  'organization:write',
  'person:read',
  'person:write',
  'event_definition:read',
  'event_definition:write',
  'insight:read',
  'insight:write',
  'dashboard_template:read',
  'property_definition:read',
  'property_definition:write',
  'action:read',
  'feature_flag:read',
  'feature_flag:write',
  'organization_member:read',
  'organization_member:write',
  'element:read',
] as const;

/** Who is calling and, for project-scoped operations, on which project and at which level. */
export interface AuthContext {
  user: User;
  key: PersonalApiKey;
  /** null on operations outside a project (`GET /api/projects/`) */
  project: ProjectAccess | null;
}

/** The project an operation acts on, its organization, and the caller's standing in it. */
export interface ProjectAccess {
  team: Team;
  organization: Organization;
  /** the caller's organization membership; null only on operations that check access themselves */
  membership: Membership | null;
  /**
   * the caller's effective level in the project: 1 member, 8 admin, 15 owner; null (no access)
   * only on operations that check access themselves (explicit members)
   */
  level: number | null;
}

/**
 * Whether a key's scopes grant `required`: `*` grants everything; `x:write` satisfies `x:read`
 * ("For all valid scopes with :read we also add :write", posthog/permissions.py).
 */
export function scopeSatisfied(keyScopes: readonly string[], required: string): boolean {
  if (keyScopes.includes('*') || keyScopes.includes(required)) return true;
  if (required.endsWith(':read')) return keyScopes.includes(required.slice(0, -':read'.length) + ':write');
  return false;
}

/** Throws 403 "API key missing required scope 'x'" for the first required scope the key lacks. */
export function assertScopes(keyScopes: readonly string[], required: readonly string[]): void {
  for (const scope of required) {
    if (!scopeSatisfied(keyScopes, scope)) throw permissionDenied(`API key missing required scope '${scope}'`);
  }
}

/**
 * Parses the `project_id` path value: `@current` → the user's current project; digits → that id.
 * Anything else → 404 "Project not found." (posthog/api/routing.py: int() fails → NotFound).
 */
export function parseProjectId(raw: string, user: User): number {
  if (raw === '@current') {
    if (user.current_team_id == null) throw notFound('Project not found.');
    return user.current_team_id;
  }
  if (!/^\d{1,15}$/.test(raw)) throw notFound('Project not found.');
  return Number(raw);
}

/** 403 when a key limited to some projects is used on another (posthog/permissions.py). */
export function assertKeyMayUseProject(key: PersonalApiKey, teamId: number): void {
  if (key.scoped_teams && !key.scoped_teams.includes(teamId)) {
    throw permissionDenied(`API key does not have access to the requested project: ID ${teamId}.`);
  }
}

/**
 * The caller's effective level in a project, or null for no access (posthog/user_permissions.py):
 * without access control the organization level; with it, the higher of the explicit project level
 * and the organization level, and without an explicit membership only organization admins and owners.
 */
export function effectiveProjectLevel(
  team: Pick<Team, 'access_control'>,
  membership: Pick<Membership, 'level'> | undefined,
  explicitLevel: number | null,
): number | null {
  if (!membership) return null;
  if (!team.access_control) return membership.level;
  if (explicitLevel !== null) return Math.max(explicitLevel, membership.level);
  return membership.level >= OrganizationLevel.ADMIN ? membership.level : null;
}

/** 403 "You don't have access to the project." (TeamMemberAccessPermission). */
export function noProjectAccess(): ApiError {
  return permissionDenied("You don't have access to the project.");
}
