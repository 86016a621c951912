/**
 * The handler map: one handler per operationId of `openapi.yaml`. `HandlerMap` makes a missing or
 * misspelt operation a compile error.
 */
import type { HandlerMap } from '../http/typed.js';
import { eventHandlers } from './events.js';
import { explicitMemberHandlers } from './explicit_members.js';
import { notImplemented } from './not-implemented.js';
import { pluginConfigHandlers } from './plugin_configs.js';
import { projectHandlers } from './projects.js';

/**
 * Every operation of `openapi.yaml`: the plugin config and project handlers, and `notImplemented` (501)
 * for the operations of later issues.
 */
export const handlers: HandlerMap = {
  ...pluginConfigHandlers,
  ...projectHandlers,
  ...eventHandlers,
  ...explicitMemberHandlers,
  // dashboards (issue 5)
  environments_dashboards_move_tile_partial_update: notImplemented,
  environments_dashboards_create_from_template_json_create: notImplemented,
};
