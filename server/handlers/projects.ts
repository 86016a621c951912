/**
 * Handler of the `projects` tag: `GET /api/projects/`, the projects the key may act on, so a user
 * can find a `project_id`.
 */
import { limitOffsetLinks, DEFAULT_LIMIT } from '../domain/pagination.js';
import type { HandlersFor } from '../http/handler-types.js';

/**
 * `projects_list`: one limit/offset page (limit default `DEFAULT_LIMIT`, 100) of the teams in the user's
 * organizations, limited to the key's `scoped_teams` when set, with `next`/`previous` links.
 */
export const projectHandlers: HandlersFor<'projects_list'> = {
  async projects_list({ auth, query, services, url }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const offset = query.offset ?? 0;
    const { count, results } = await services.projects.listForKey(auth.user.id, { limit, offset }, auth.key.scoped_teams);
    const links = limitOffsetLinks(url, limit, offset, count);
    return {
      status: 200,
      contentType: 'application/json',
      body: {
        count,
        next: links.next,
        previous: links.previous,
        results: results.map((t) => ({
          id: t.id,
          uuid: t.uuid,
          organization: t.organization_id,
          name: t.name,
          api_token: t.api_token,
          timezone: t.timezone,
          access_control: t.access_control,
        })),
      },
    };
  },
};
