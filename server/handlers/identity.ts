/**
 * Handlers of the identity and discovery calls clients make before anything else (tags `users`,
 * `personal_api_keys`, `organizations`, and `projects` for one project or environment):
 * `users_retrieve` (`@me`) and `users_partial_update`, `personal_api_keys_retrieve` (`@current`),
 * `organizations_list`, `organizations_retrieve`, `organizations_projects_list`, one project of an
 * organization (`organizations_projects_retrieve`, `organizations_projects_partial_update`),
 * `organizations_members_list`, `organizations_pipeline_frontend_apps_list` (an organization's
 * frontend apps), `projects_retrieve`, `environments_retrieve`. PostHog's rules live in domain/users.ts, domain/organizations.ts and
 * domain/project-details.ts; these only page and wrap.
 */
import { DEFAULT_LIMIT, limitOffsetLinks } from '../domain/pagination.js';
import type { HandlersFor } from '../http/handler-types.js';

/** The identity and discovery operations, by operationId. */
export type IdentityOperation =
  | 'users_retrieve'
  | 'users_partial_update'
  | 'organizations_projects_retrieve'
  | 'organizations_projects_partial_update'
  | 'organizations_members_list'
  | 'personal_api_keys_retrieve'
  | 'organizations_list'
  | 'organizations_retrieve'
  | 'organizations_projects_list'
  | 'organizations_pipeline_frontend_apps_list'
  | 'projects_retrieve'
  | 'environments_retrieve';

/**
 * Each answers 200 with PostHog's shape for the key's user; the lists page with `limit` (default
 * `DEFAULT_LIMIT`, 100) and `offset` in `{count, next, previous, results}` with absolute links.
 * Errors (400, 403, 404) are thrown by the domain.
 */
export const identityHandlers: HandlersFor<IdentityOperation> = {
  async users_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.users.retrieve(auth, params.uuid) };
  },

  async users_partial_update({ auth, params, body, services }) {
    return { status: 200, contentType: 'application/json', body: await services.users.update(auth, params.uuid, body ?? {}) };
  },

  async organizations_projects_retrieve({ auth, params, services }) {
    const body = await services.projectDetails.organizationProject(auth, params.organization_id, params.id);
    return { status: 200, contentType: 'application/json', body };
  },

  async organizations_projects_partial_update({ auth, params, body, services }) {
    const project = await services.projectDetails.updateOrganizationProject(auth, params.organization_id, params.id, body ?? {});
    return { status: 200, contentType: 'application/json', body: project };
  },

  async organizations_members_list({ auth, params, query, services, url }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    const { count, results } = await services.organizations.members(auth, params.organization_id, {
      email: query.email,
      order: query.order,
      limit,
      offset,
    });
    return { status: 200, contentType: 'application/json', body: { count, ...limitOffsetLinks(url, limit, offset, count), results } };
  },

  async personal_api_keys_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.users.retrieveKey(auth, params.id) };
  },

  async organizations_list({ auth, query, services, url }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    const { count, results } = await services.organizations.list(auth, { limit, offset });
    return { status: 200, contentType: 'application/json', body: { count, ...limitOffsetLinks(url, limit, offset, count), results } };
  },

  async organizations_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.organizations.retrieve(auth, params.id) };
  },

  async organizations_projects_list({ auth, params, query, services, url }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    const { count, results } = await services.organizations.projectsOf(auth, params.organization_id, { limit, offset });
    return { status: 200, contentType: 'application/json', body: { count, ...limitOffsetLinks(url, limit, offset, count), results } };
  },

  async organizations_pipeline_frontend_apps_list({ auth, params, query, services, url }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    const { count, results } = await services.frontendApps.list(auth, params.organization_id, { limit, offset });
    return { status: 200, contentType: 'application/json', body: { count, ...limitOffsetLinks(url, limit, offset, count), results } };
  },

  async projects_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.projectDetails.project(auth, params.id) };
  },

  async environments_retrieve({ auth, params, services }) {
    return { status: 200, contentType: 'application/json', body: await services.projectDetails.environment(auth, params.id) };
  },
};
