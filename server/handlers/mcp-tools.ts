/**
 * Handlers of the `mcp_tools` tag: PostHog's MCP tool endpoint, one operation per tool served
 * (`execute_sql`: server/domain/mcp-tools.ts; `read_taxonomy`: server/domain/taxonomy.ts), both
 * over the events reads (`services.events`). A tool's failure is its 200 answer
 * (`success: false`); other tool names match no path and answer 404.
 */
import { executeSql } from '../domain/mcp-tools.js';
import { TaxonomyReader } from '../domain/taxonomy.js';
import type { HandlersFor } from '../http/handler-types.js';
import { projectOf } from './context.js';

/** The MCP tools handlers. */
export const mcpToolHandlers: HandlersFor<'environments_mcp_tools_execute_sql_create' | 'environments_mcp_tools_read_taxonomy_create'> = {
  async environments_mcp_tools_execute_sql_create({ auth, body, services }) {
    const answer = await executeSql(services.events, projectOf(auth).team, body.args);
    return { status: 200, contentType: 'application/json', body: answer };
  },

  async environments_mcp_tools_read_taxonomy_create({ auth, body, services }) {
    const content = await new TaxonomyReader(services.events, projectOf(auth).team).read(body.args.query);
    return { status: 200, contentType: 'application/json', body: { success: true, content } };
  },
};
