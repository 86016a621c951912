/**
 * Demo data for plugin configs, created through the API with the typed client (so it also shows
 * how the client is used): two frontend apps (Notification Bar, Pineapple Mode) and three
 * destinations (Customer.io, Hubspot, Webhook), on a running server.
 *
 *   ENVAPI_KEY=phx_… npm run demo:plugins [-- --project 1] [--base-url URL]
 *
 * The key (a personal API key with `plugin:write`) comes from `ENVAPI_KEY`; `--key phx_…` works
 * too, but npm prints the command line it runs (`> node … --key phx_…`), so the key would land in
 * the terminal's scroll-back and in CI logs. Without either: a usage error (exit 2) naming
 * ENVAPI_KEY. `--key`, `--base-url` and `--project` win over the environment.
 *
 * The server's URL: `--base-url`, else `ENVAPI_URL`, else `http://HOST:PORT` from the same
 * variables the server reads (`PORT` default 8000, `HOST` default 127.0.0.1; a wildcard HOST such
 * as 0.0.0.0 is reached on 127.0.0.1). A URL that is not http(s) is a usage error (exit 2); when
 * the server cannot be reached, the script says which URL it tried and exits 1.
 *
 * Plugin ids are taken from the catalog's order, which the first `npm start` installs as plugin
 * ids 1…8 on a fresh store. A second run creates nothing twice: a demo config whose plugin already
 * has a config in the project (in the frontend apps or the destinations list) is skipped and
 * named. Other failures are printed per config in PostHog's error shape, and the script goes on
 * with the next one; it exits 1 if any failed.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { createClient, unwrap, paginate, EnvApiError, type EnvApiClient } from '../client/index.js';
import { PLUGIN_CATALOG } from '../server/domain/plugin-catalog.js';

const DEMO: { key: string; order: number; enabled: boolean; config: Record<string, unknown> }[] = [
  {
    key: 'notification-bar',
    order: 1,
    enabled: true,
    config: {
      notification: '🚀 Hedgebox 2.0 is out!',
      position: 'sticky',
      backgroundColor: '#ebece8',
      textColor: '#333',
      linkColor: '#f64e00',
    },
  },
  { key: 'pineapple-mode', order: 2, enabled: false, config: { emoji: '🍍', domains: 'hedgebox.net' } },
  {
    key: 'customerio',
    order: 3,
    enabled: false,
    config: { customerioSiteId: 'site-123', customerioToken: 'demo-secret-token', host: 'track.customer.io' },
  },
  { key: 'hubspot', order: 4, enabled: false, config: { hubspotAccessToken: 'pat-demo-secret', triggeringEvents: '$identify,$set' } },
  {
    key: 'webhook',
    order: 5,
    enabled: false,
    config: { url: 'https://example.com/webhook', method: 'POST', payload: '{"event": "{event.event}"}' },
  },
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
  const frontend = await unwrap(
    api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
      params: { path: { project_id: project }, query: { limit: 100 } },
    }),
  );
  for await (const c of paginate(api, frontend)) seen.set(c.plugin, { id: c.id, name: c.name ?? null });
  const destinations = await unwrap(
    api.GET('/api/environments/{project_id}/pipeline_destination_configs/', {
      params: { path: { project_id: project }, query: { limit: 100 } },
    }),
  );
  for await (const c of paginate(api, destinations)) seen.set(c.plugin, { id: c.id, name: c.name ?? null });
  return seen;
}

/** `--project`: a project id (decimal digits, from 1). */
function parseProject(value: string): string {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('Expected a project id (a positive integer).');
  return value;
}

/** The server's URL (see the module doc), or a usage error saying which setting is not an http(s) URL. */
function baseUrlOf(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const [url, from] =
    option !== undefined
      ? [option, '--base-url']
      : env.ENVAPI_URL
        ? [env.ENVAPI_URL, 'ENVAPI_URL']
        : [defaultBaseUrl(env), 'HOST and PORT'];
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    program.error(`error: ${from} gives ${JSON.stringify(url)}, not an http(s) URL such as http://127.0.0.1:8000`, { exitCode: 2 });
  return url;
}

// the name is how it is run, so that its usage line is one to copy: `npm run demo:plugins -- [options]`
const program: Command = new Command('npm run demo:plugins --')
  .description(
    'create demo plugin configs (frontend apps and destinations) through the API; a second run creates nothing twice. ' +
      'The API key comes from ENVAPI_KEY: ENVAPI_KEY=phx_… npm run demo:plugins',
  )
  // no defaults shown from the environment: --help would print the key
  .option('--key <key>', 'personal API key with plugin:write; prefer ENVAPI_KEY, as npm prints --key in its banner')
  .option('--base-url <url>', 'server URL (default: ENVAPI_URL, else http://HOST:PORT from the environment, as the server reads them)')
  .option('--project <id>', 'project id', parseProject, '1')
  .addHelpText(
    'after',
    `
Environment:
  ENVAPI_KEY  the personal API key, with plugin:write (what npm start prints on a fresh store)
  ENVAPI_URL  the server's URL, e.g. http://127.0.0.1:8000

Example:
  ENVAPI_KEY=phx_… npm run demo:plugins`,
  )
  .showHelpAfterError("Run 'npm run demo:plugins -- --help' for the options.")
  .exitOverride()
  .action(async (o: { baseUrl?: string; key?: string; project: string }) => {
    const key = o.key ?? process.env.ENVAPI_KEY;
    if (!key) {
      program.error(
        'error: no API key: set ENVAPI_KEY to a personal API key with plugin:write (npm start prints one on a fresh store; ' +
          'npx envapi keys create --user EMAIL --scopes plugin:write makes another), e.g.\n  ENVAPI_KEY=phx_… npm run demo:plugins',
        { exitCode: 2 },
      );
    }
    const baseUrl = baseUrlOf(o.baseUrl);
    const api = createClient({ baseUrl, apiKey: key });
    let existing: Awaited<ReturnType<typeof configuredPlugins>>;
    try {
      existing = await configuredPlugins(api, o.project);
    } catch (err) {
      const why = unreachable(err);
      if (why)
        throw new Error(
          `could not reach the server at ${api.baseUrl} (${why}); start it with npm start, or name it with ENVAPI_URL=URL (or --base-url URL, or PORT=…)`,
          { cause: err },
        );
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
  // exitOverride: commander printed the help, or the usage error and its hint (exit 2)
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  console.error(`demo:plugins: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
