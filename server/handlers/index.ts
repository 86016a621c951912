/**
 * The handler map: one handler per operationId of `openapi.yaml`. `HandlerMap` makes a missing or
 * misspelt operation a compile error.
 */
import type { HandlerMap } from '../http/typed.js';
import { dashboardHandlers } from './dashboards.js';
import { eventHandlers } from './events.js';
import { explicitMemberHandlers } from './explicit-members.js';
import { pluginConfigHandlers } from './plugin-configs.js';
import { projectHandlers } from './projects.js';

/** Every operation of `openapi.yaml`, by tag. */
export const handlers: HandlerMap = {
  ...pluginConfigHandlers,
  ...projectHandlers,
  ...eventHandlers,
  ...explicitMemberHandlers,
  ...dashboardHandlers,
};
