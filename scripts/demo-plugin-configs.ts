/**
 * Demo data for plugin configs, created through the API with the typed client (so it also shows
 * how the client is used): two frontend apps (Notification Bar, Pineapple Mode) and three
 * destinations (Customer.io, Hubspot, Webhook), on a running server.
 *
 *   npm run demo:plugins -- --key phx_… [--base-url URL] [--project 1]
 *
 * The server's URL: `--base-url`, else `http://HOST:PORT` from the same variables the server reads
 * (`PORT` default 8000, `HOST` default 127.0.0.1; a wildcard HOST such as 0.0.0.0 is reached on
 * 127.0.0.1). When the server cannot be reached, the script says which URL it tried and exits 1.
 *
 * The key needs `plugin:write` (`ENVAPI_KEY` works too). Plugin ids are taken from the catalog's
 * order, which the first `npm start` installs as plugin ids 1…8 on a fresh store. A second run
 * creates nothing twice: a demo config whose plugin already has a config in the project (in the
 * frontend apps or the destinations list) is skipped and named. Other failures are printed per
 * config in PostHog's error shape, and the script goes on with the next one; it exits 1 if any
 * failed.
 */
import { Command } from 'commander';
import { createClient, unwrap, paginate, EnvApiError, type EnvApiClient } from '../client/index.js';
import { PLUGIN_CATALOG } from '../server/domain/plugin-catalog.js';

const DEMO: { key: string; order: number; enabled: boolean; config: Record<string, unknown> }[] = [
  { key: 'notification-bar', order: 1, enabled: true, config: { notification: '🚀 Hedgebox 2.0 is out!', position: 'sticky', backgroundColor: '#ebece8', textColor: '#333', linkColor: '#f64e00' } },
  { key: 'pineapple-mode', order: 2, enabled: false, config: { emoji: '🍍', domains: 'hedgebox.net' } },
  { key: 'customerio', order: 3, enabled: false, config: { customerioSiteId: 'site-123', customerioToken: 'demo-secret-token', host: 'track.customer.io' } },
  { key: 'hubspot', order: 4, enabled: false, config: { hubspotAccessToken: 'pat-demo-secret', triggeringEvents: '$identify,$set' } },
  { key: 'webhook', order: 5, enabled: false, config: { url: 'https://example.com/webhook', method: 'POST', payload: '{"event": "{event.event}"}' } },
];

/** `http://HOST:PORT` as the server listens by default (server/config.ts): PORT 8000, HOST 127.0.0.1; wildcard hosts → 127.0.0.1. */
function defaultBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const port = env.PORT || '8000';
  let host = env.HOST || '127.0.0.1';
  if (host === '0.0.0.0' || host === '::' || host === '[::]') host = '127.0.0.1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${port}`;
}

/** Why a request did not reach the server (fetch's `TypeError: fetch failed` with a system error as cause), or undefined. */
function unreachable(err: unknown): string | undefined {
  if (!(err instanceof TypeError)) return undefined;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? err.message;
}

/** Plugin ids that already have a config in the project: the frontend apps list and the destinations list. */
async function configuredPlugins(api: EnvApiClient, project: string): Promise<Map<number, { id: number; name: string | null }>> {
  const seen = new Map<number, { id: number; name: string | null }>();
  const frontend = await unwrap(api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', { params: { path: { project_id: project }, query: { limit: 100 } } }));
  for await (const c of paginate(api, frontend)) seen.set(c.plugin, { id: c.id, name: c.name ?? null });
  const destinations = await unwrap(api.GET('/api/environments/{project_id}/pipeline_destination_configs/', { params: { path: { project_id: project }, query: { limit: 100 } } }));
  for await (const c of paginate(api, destinations)) seen.set(c.plugin, { id: c.id, name: c.name ?? null });
  return seen;
}

const program = new Command('demo-plugin-configs')
  .description('create demo plugin configs (frontend apps and destinations) through the API; a second run creates nothing twice')
  .option('--base-url <url>', 'server URL (default: http://HOST:PORT from the environment, as the server reads them)', defaultBaseUrl())
  .option('--key <key>', 'personal API key with plugin:write (env ENVAPI_KEY)', process.env.ENVAPI_KEY)
  .option('--project <id>', 'project id', '1')
  .action(async (o: { baseUrl: string; key?: string; project: string }) => {
    if (!o.key) throw new Error('pass --key phx_… (or set ENVAPI_KEY)');
    const api = createClient({ baseUrl: o.baseUrl, apiKey: o.key });
    let existing: Awaited<ReturnType<typeof configuredPlugins>>;
    try {
      existing = await configuredPlugins(api, o.project);
    } catch (err) {
      const why = unreachable(err);
      if (why) throw new Error(`could not reach the server at ${api.baseUrl} (${why}); start it with npm start, or name it with --base-url URL or PORT=…`, { cause: err });
      if (err instanceof EnvApiError) throw new Error(`${api.baseUrl}: ${err.message}`, { cause: err });
      throw err;
    }
    let failed = 0;
    for (const demo of DEMO) {
      const plugin = PLUGIN_CATALOG.findIndex((p) => p.key === demo.key) + 1;
      const had = existing.get(plugin);
      if (had) {
        console.log(`exists: config ${had.id}${had.name ? `: ${had.name}` : ''} (plugin ${plugin}); not created again`);
        continue;
      }
      try {
        const created = await unwrap(
          api.POST('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
            params: { path: { project_id: o.project } },
            body: { plugin, order: demo.order, enabled: demo.enabled, config: demo.config },
          }),
        );
        console.log(`created config ${created.id}: ${created.name} (plugin ${plugin}, ${created.enabled ? 'enabled' : 'disabled'})`);
      } catch (err) {
        if (!(err instanceof EnvApiError)) throw err;
        failed++;
        console.error(`${demo.key}: ${err.message}`);
      }
    }
    if (failed) process.exitCode = 1;
  });

program.parseAsync().catch((err: unknown) => {
  console.error(`demo:plugins: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
