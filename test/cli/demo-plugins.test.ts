/**
 * `npm run demo:plugins` (scripts/demo-plugin-configs.ts) as a user runs it, against a test server
 * in-process (test/helpers/server.ts): the key from `ENVAPI_KEY` and the URL from `ENVAPI_URL`
 * (npm echoes a `--key` in its banner), the five demo configs created and listed by the API, a
 * second run creating none; no key is a usage error naming ENVAPI_KEY; `--help` prefers the
 * variable and never prints its value; `--key` still works and wins over the variable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLUGIN_CATALOG } from '../../server/domain/plugin-catalog.js';
import { childEnv, node, T, useCliProcesses, type Run } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// the script runs from its TypeScript source with tsx: no dist/ build needed
useCliProcesses({ build: false });

const SCRIPT = 'scripts/demo-plugin-configs.ts';
/** The catalog keys of the demo configs, and their plugin ids on a fresh store (the catalog's order). */
const DEMO_KEYS = ['notification-bar', 'pineapple-mode', 'customerio', 'hubspot', 'webhook'];
const DEMO_PLUGINS = DEMO_KEYS.map((key) => PLUGIN_CATALOG.findIndex((p) => p.key === key) + 1);

describe('npm run demo:plugins', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  }, T);
  afterAll(async () => {
    await t?.close();
  });

  /** The script with `args`, in an environment without ENVAPI_KEY / ENVAPI_URL / PORT / HOST of ours, plus `env`. */
  function demo(args: string[], env: Record<string, string>): Promise<Run> {
    const base = childEnv({});
    for (const name of ['ENVAPI_KEY', 'ENVAPI_URL']) delete base[name];
    return node(['--import', 'tsx', SCRIPT, ...args], { ...base, ...env });
  }
  /** The plugin ids of project 1's configs, frontend apps and destinations, as the API lists them. */
  async function configuredPlugins(): Promise<number[]> {
    const lists = [
      '/api/environments/1/pipeline_frontend_apps_configs/?limit=100',
      '/api/environments/1/pipeline_destination_configs/?limit=100',
    ];
    const pages = (await Promise.all(lists.map((p) => t.json(p)))) as Array<{ results: Array<{ plugin: number }> }>;
    return pages.flatMap((page) => page.results.map((c) => c.plugin)).sort((a, b) => a - b);
  }

  it(
    'without a key exits 2 and names ENVAPI_KEY; nothing is created',
    async () => {
      const r = await demo([], { ENVAPI_URL: t.url });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^error: no API key: set ENVAPI_KEY to a personal API key with plugin:write/);
      expect(r.stderr).toContain('ENVAPI_KEY=phx_… npm run demo:plugins');
      expect(await configuredPlugins()).toEqual([]);
    },
    T,
  );

  it(
    'takes the key from ENVAPI_KEY and the URL from ENVAPI_URL: the API lists the five configs; a second run creates none',
    async () => {
      const env = { ENVAPI_KEY: t.boot.key, ENVAPI_URL: t.url };
      const first = await demo([], env);
      expect(first.code, first.stdout + first.stderr).toBe(0);
      expect(first.stdout.match(/^created config \d+/gm)).toHaveLength(5);
      expect(first.stdout + first.stderr).not.toContain(t.boot.key);
      expect(await configuredPlugins()).toEqual([...DEMO_PLUGINS].sort((a, b) => a - b));
      const second = await demo([], env);
      expect(second.code, second.stdout + second.stderr).toBe(0);
      expect(second.stdout).not.toMatch(/^created/m);
      expect(second.stdout.match(/^exists: config \d+/gm)).toHaveLength(5);
      expect(await configuredPlugins()).toHaveLength(5);
    },
    T,
  );

  it(
    '--key still works and wins over ENVAPI_KEY; --base-url wins over ENVAPI_URL',
    async () => {
      const r = await demo(['--key', t.boot.key, '--base-url', t.url], { ENVAPI_KEY: 'phx_not_a_key', ENVAPI_URL: 'http://127.0.0.1:1' });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout.match(/^exists: config \d+/gm)).toHaveLength(5);
    },
    T,
  );

  it(
    '--help prefers ENVAPI_KEY and does not print the key of the environment',
    async () => {
      const r = await demo(['--help'], { ENVAPI_KEY: t.boot.key, ENVAPI_URL: t.url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Usage: npm run demo:plugins -- \[options\]$/m);
      expect(r.stdout).toMatch(/--key <key> +personal API key with plugin:write; prefer ENVAPI_KEY/);
      expect(r.stdout).toMatch(/^ {2}ENVAPI_KEY=phx_… npm run demo:plugins$/m);
      expect(r.stdout).not.toContain(t.boot.key);
    },
    T,
  );

  it(
    'an ENVAPI_URL that is not an http(s) URL is a usage error (exit 2) naming it',
    async () => {
      const r = await demo([], { ENVAPI_KEY: t.boot.key, ENVAPI_URL: 'localhost:8000' });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^error: ENVAPI_URL gives "localhost:8000", not an http\(s\) URL such as http:\/\/127\.0\.0\.1:8000$/m);
    },
    T,
  );
});
