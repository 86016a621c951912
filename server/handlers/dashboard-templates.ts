/**
 * Handlers of the `dashboard_templates` tag: the built-in templates catalogue, list and retrieve
 * (server/domain/dashboard-templates.ts), the same for every project.
 */
import { listDashboardTemplates, retrieveDashboardTemplate } from '../domain/dashboard-templates.js';
import type { HandlersFor } from '../http/handler-types.js';

/** The dashboard templates handlers. */
export const dashboardTemplateHandlers: HandlersFor<'environments_dashboard_templates_list' | 'environments_dashboard_templates_retrieve'> =
  {
    async environments_dashboard_templates_list({ query, url }) {
      return { status: 200, contentType: 'application/json', body: listDashboardTemplates(query, url) };
    },

    async environments_dashboard_templates_retrieve({ params }) {
      return { status: 200, contentType: 'application/json', body: retrieveDashboardTemplate(params.id) };
    },
  };
