/**
 * What handlers read off the request's `AuthContext` (set by the security handler,
 * server/http/security.ts) to call the domain: the project a project-scoped operation acts on, and
 * the caller in the shape each domain service takes. Shared by every tag's handlers.
 */
import type { AuthContext, ProjectAccess } from '../domain/access.js';
import type { Caller } from '../domain/plugin-configs.js';

/**
 * The project of a project-scoped operation (resolved by the security handler before any handler
 * runs). Throws a plain `Error` (answered 500) when there is none: only an operation outside a
 * project (`GET /api/projects/`) has none, and it must not call this.
 */
export function projectOf(auth: AuthContext): ProjectAccess {
  if (!auth.project) throw new Error('project-scoped operation without a resolved project');
  return auth.project;
}

/** The caller as the plugin config rules need it (`Caller`: project, user id, staff flag). Throws as `projectOf`. */
export function callerOf(auth: AuthContext): Caller {
  return { project: projectOf(auth), userId: auth.user.id, isStaff: auth.user.is_staff };
}

/**
 * The caller as the dashboards and explicit members rules need it (`DashboardCaller`,
 * `MemberCaller`: the project and the whole user). Throws as `projectOf`.
 */
export function projectUserOf(auth: AuthContext): { project: ProjectAccess; user: AuthContext['user'] } {
  return { project: projectOf(auth), user: auth.user };
}
