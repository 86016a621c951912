/**
 * The handler map: one handler per operationId of `openapi.yaml`. `HandlerMap` makes a missing or
 * misspelt operation a compile error. Each operation under `/api/environments/{project_id}/` is
 * served under `/api/projects/{project_id}/` too, by the same handler (the copies' operationIds
 * are PostHog's: `environments_dashboards_list` ↔ `dashboards_list`; scripts/gen-projects-paths.mjs).
 */
import type { operations } from '../../generated/api.js';
import type { HandlerMap, HandlersFor, OperationId } from '../http/handler-types.js';
import { dashboardHandlers } from './dashboards.js';
import { elementHandlers } from './elements.js';
import { dashboardTemplateHandlers } from './dashboard-templates.js';
import { eventDefinitionHandlers } from './event-definitions.js';
import { eventHandlers } from './events.js';
import { explicitMemberHandlers } from './explicit-members.js';
import { identityHandlers } from './identity.js';
import { insightHandlers } from './insights.js';
import { mcpToolHandlers } from './mcp-tools.js';
import { personHandlers } from './persons.js';
import { pluginConfigHandlers } from './plugin-configs.js';
import { projectHandlers } from './projects.js';
import { queryHandlers } from './query.js';
import { sdkHandlers } from './sdk.js';

/** The environment-scoped handlers, by their environments operationId. */
const environmentHandlers: HandlersFor<EnvironmentsId> = {
  ...pluginConfigHandlers,
  ...eventHandlers,
  ...explicitMemberHandlers,
  ...dashboardHandlers,
  ...personHandlers,
  ...queryHandlers,
  ...insightHandlers,
  ...mcpToolHandlers,
  ...dashboardTemplateHandlers,
  ...elementHandlers,
};

/** `environments_retrieve` (`/api/environments/{id}/`, one environment) is not environment-scoped: it has no projects copy. */
type EnvironmentsId = Exclude<Extract<OperationId, `environments_${string}`>, 'environments_retrieve'>;
/** `dashboards_list` for `environments_dashboards_list`. */
type ProjectsIdOf<K extends EnvironmentsId> = K extends `environments_${infer Rest}` ? Extract<Rest, OperationId> : never;
type ProjectsId = ProjectsIdOf<EnvironmentsId>;

/**
 * Compile-time proof that each projects copy has its environments operation's types (parameters,
 * body, responses): `true` for every operation, or this file does not compile. It is what makes
 * the cast in `projectsAliases` sound (the contexts differ only in the operationId literal).
 */
type CopyMatches<K extends EnvironmentsId> = [operations[K]] extends [operations[ProjectsIdOf<K>]]
  ? [operations[ProjectsIdOf<K>]] extends [operations[K]]
    ? true
    : false
  : false;
const everyCopyMatches: { [K in EnvironmentsId]: CopyMatches<K> }[EnvironmentsId] = true;
void everyCopyMatches;

/** The same handlers under the operationIds of the `/api/projects/{project_id}/` copies. */
function projectsAliases(byEnvironmentsId: HandlersFor<EnvironmentsId>): HandlersFor<ProjectsId> {
  const out: Record<string, unknown> = {};
  for (const [id, handler] of Object.entries(byEnvironmentsId)) out[id.slice('environments_'.length)] = handler;
  return out as HandlersFor<ProjectsId>;
}

/** Every operation of `openapi.yaml`, by tag, under both prefixes. */
export const handlers: HandlerMap = {
  ...environmentHandlers,
  ...projectsAliases(environmentHandlers),
  ...projectHandlers,
  ...identityHandlers,
  ...eventDefinitionHandlers,
  ...sdkHandlers,
};
