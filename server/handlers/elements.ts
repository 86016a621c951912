/**
 * Handler of `elements/stats/` (tag `events`; PostHog's `ElementViewSet.stats`), under
 * `/api/environments/{project_id}/` and, through server/handlers/index.ts, `/api/projects/{project_id}/`.
 * It calls `ElementStatsService` (server/domain/element-stats.ts).
 */
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The elements handler. */
export const elementHandlers: HandlersFor<'environments_elements_stats_retrieve'> = {
  async environments_elements_stats_retrieve({ auth, query, services, url }) {
    return { status: 200, contentType: 'application/json', body: await services.elementStats.stats(projectOf(auth).team, query, url) };
  },
};
