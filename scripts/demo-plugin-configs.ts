/**
 * Demo data for plugin configs, created through the API with the typed client (so it also shows
 * how the client is used): two frontend apps (Notification Bar, Pineapple Mode) and three
 * destinations (Customer.io, Hubspot, Webhook), on a running server.
 *
 *   npm run demo:plugins -- --key phx_… [--base-url http://127.0.0.1:8000] [--project 1]
 *
 * The key needs `plugin:write`. Plugin ids are taken from the catalog's order, which the first
 * `npm start` installs as plugin ids 1…8 on a fresh store. Failures are printed per config in
 * PostHog's error shape; the script goes on with the next one.
 */
import { Command } from 'commander';
import { createClient, unwrap, EnvApiError } from '../client/index.js';
import { PLUGIN_CATALOG } from '../server/domain/plugin-catalog.js';

const DEMO: { key: string; order: number; enabled: boolean; config: Record<string, unknown> }[] = [
  { key: 'notification-bar', order: 1, enabled: true, config: { notification: '🚀 Hedgebox 2.0 is out!', position: 'sticky', backgroundColor: '#ebece8', textColor: '#333', linkColor: '#f64e00' } },
  { key: 'pineapple-mode', order: 2, enabled: false, config: { emoji: '🍍', domains: 'hedgebox.net' } },
  { key: 'customerio', order: 3, enabled: false, config: { customerioSiteId: 'site-123', customerioToken: 'demo-secret-token', host: 'track.customer.io' } },
  { key: 'hubspot', order: 4, enabled: false, config: { hubspotAccessToken: 'pat-demo-secret', triggeringEvents: '$identify,$set' } },
  { key: 'webhook', order: 5, enabled: false, config: { url: 'https://example.com/webhook', method: 'POST', payload: '{"event": "{event.event}"}' } },
];

const program = new Command('demo-plugin-configs')
  .description('create demo plugin configs (frontend apps and destinations) through the API')
  .option('--base-url <url>', 'server URL', 'http://127.0.0.1:8000')
  .option('--key <key>', 'personal API key with plugin:write (env ENVAPI_KEY)', process.env.ENVAPI_KEY)
  .option('--project <id>', 'project id', '1')
  .action(async (o: { baseUrl: string; key?: string; project: string }) => {
    if (!o.key) throw new Error('pass --key phx_… (or set ENVAPI_KEY)');
    const api = createClient({ baseUrl: o.baseUrl, apiKey: o.key });
    for (const demo of DEMO) {
      const plugin = PLUGIN_CATALOG.findIndex((p) => p.key === demo.key) + 1;
      try {
        const created = await unwrap(
          api.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
            params: { path: { project_id: o.project } },
            body: { plugin, order: demo.order, enabled: demo.enabled, config: demo.config },
          }),
        );
        console.log(`created config ${created.id}: ${created.name} (plugin ${plugin}, ${created.enabled ? 'enabled' : 'disabled'})`);
      } catch (err) {
        if (err instanceof EnvApiError) console.error(`${demo.key}: ${err.message}`);
        else throw err;
      }
    }
  });

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
