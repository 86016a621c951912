/**
 * `@posthog/cli` 0.18.3 (its API bundle, node_modules/@posthog/cli/lib/posthog-api-cli.mjs, run
 * as a child process with `node`, as the `posthog-cli api` binary runs it) against a test server:
 * `call --json execute-sql`, `read-data-schema`, `dashboard-templates-list` and
 * `dashboard-templates-retrieve` exit 0 and print what the server's MCP tools and templates
 * answer; a failing query exits 1 with the tool's failure text.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../server/ingest/import.js';
import { ROOT } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const CLI = path.join(ROOT, 'node_modules', '@posthog', 'cli', 'lib', 'posthog-api-cli.mjs');

let t: TestServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestServer();
  await importEvents(t.store, t.boot.team.id, [
    { event: '$pageview', distinct_id: 'alice', timestamp: '2024-11-01T10:00:00Z', properties: { $browser: 'Chrome' } },
    { event: '$pageview', distinct_id: 'bob', timestamp: '2024-11-01T11:00:00Z', properties: { $browser: 'Firefox' } },
    { event: 'signup', distinct_id: 'bob', timestamp: '2024-11-01T11:05:00Z', properties: { plan: 'free' } },
  ]);
  // only what the CLI needs: no inherited POSTHOG_* settings, no analytics
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    POSTHOG_HOST: t.url,
    POSTHOG_API_KEY: await t.key(['*']),
    POSTHOG_PROJECT_ID: String(t.boot.team.id),
  };
});

afterAll(async () => {
  await t?.close();
});

/** Runs `call --json <tool> '<input>'`; answers exit code, stdout and stderr (never throws on exit 1). */
async function call(tool: string, input: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'call', '--json', tool, JSON.stringify(input)], {
      cwd: ROOT,
      env,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('posthog-cli api call', () => {
  it('execute-sql prints the rows text', async () => {
    const r = await call('execute-sql', { query: 'select 1' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toBe('1\n1');
    expect(r.stderr, 'the start-up calls (key, user, organization, project) all answered').toBe('');
    const grouped = await call('execute-sql', { query: 'select event, count() as c from events group by event order by c desc' });
    expect(grouped.code, grouped.stderr).toBe(0);
    expect(JSON.parse(grouped.stdout)).toBe('event|c\n$pageview|2\nsignup|1');
  }, 120_000);

  it('execute-sql exits 1 with the failure text for a bad query', async () => {
    const r = await call('execute-sql', { query: 'select from where' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Error: Tool `execute_sql` failed \(invalid_input\): Query validation failed: /);
  }, 60_000);

  it('read-data-schema prints events, properties and values', async () => {
    const events = await call('read-data-schema', { query: { kind: 'events' } });
    expect(events.code, events.stderr).toBe(0);
    expect(JSON.parse(events.stdout)).toBe('events:\n- `$pageview`\n- `signup`');
    const props = await call('read-data-schema', { query: { kind: 'event_properties', event_name: '$pageview' } });
    expect(props.code, props.stderr).toBe(0);
    expect(JSON.parse(props.stdout)).toMatch(/Results:\n<String>\n- \$browser\n<\/String>$/);
    const values = await call('read-data-schema', {
      query: { kind: 'event_property_values', event_name: '$pageview', property_name: '$browser' },
    });
    expect(values.code, values.stderr).toBe(0);
    expect(JSON.parse(values.stdout)).toBe('"Chrome", "Firefox"');
  }, 120_000);

  it('dashboard-templates-list and -retrieve print the catalogue', async () => {
    const list = await call('dashboard-templates-list', { search: 'traffic' });
    expect(list.code, list.stderr).toBe(0);
    const listed = (JSON.parse(list.stdout) as { content: string }).content;
    expect(listed).toContain('dashboard-template-references');
    expect(listed).toContain('Website traffic');
    expect(listed).not.toContain('Product analytics');
    const one = await call('dashboard-templates-retrieve', { id: '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e03' });
    expect(one.code, one.stderr).toBe(0);
    const shown = (JSON.parse(one.stdout) as { content: string }).content;
    expect(shown).toContain('dashboard-template-reference');
    expect(shown).toContain('Retention');
    expect(shown).toContain('TrendsQuery');
  }, 120_000);
});
