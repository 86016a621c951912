/**
 * Handlers of the `explicit_members` tag (operations 16–19 and the delete PostHog also has): read
 * the validated input and call `ExplicitMembersService` (server/domain/explicit-members.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectUserOf } from './context.js';

type ExplicitMembersOperationId =
  | 'environments_explicit_members_list'
  | 'environments_explicit_members_create'
  | 'environments_explicit_members_retrieve'
  | 'environments_explicit_members_partial_update'
  | 'environments_explicit_members_destroy';

/** The explicit members handlers. */
export const explicitMemberHandlers: HandlersFor<ExplicitMembersOperationId> = {
  async environments_explicit_members_list({ auth, services }) {
    return { status: 200, contentType: 'application/json', body: await services.explicitMembers.list(projectUserOf(auth)) };
  },

  async environments_explicit_members_create({ auth, body, services }) {
    return { status: 201, contentType: 'application/json', body: await services.explicitMembers.create(projectUserOf(auth), body) };
  },

  async environments_explicit_members_retrieve({ auth, params, services }) {
    const body = await services.explicitMembers.retrieve(projectUserOf(auth), String(params.parent_membership__user__uuid));
    return { status: 200, contentType: 'application/json', body };
  },

  async environments_explicit_members_partial_update({ auth, params, body, services }) {
    const result = await services.explicitMembers.update(projectUserOf(auth), String(params.parent_membership__user__uuid), body ?? {});
    return { status: 200, contentType: 'application/json', body: result };
  },

  async environments_explicit_members_destroy({ auth, params, services }) {
    await services.explicitMembers.destroy(projectUserOf(auth), String(params.parent_membership__user__uuid));
    return { status: 204 };
  },
};
