/**
 * The README's plugin-config example ("Try it"), run as written: its `sh` block that creates a
 * Webhook config and lists the project's destinations, with the test server's URL and project and
 * `$KEY` a personal API key holding `plugin:write`. The plugin id it names must be Webhook's on a
 * fresh store (the README says so), the create must answer 201 with that config, and the
 * destinations list must then show it. A README whose example stops working fails this test.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const README_HOST = 'http://127.0.0.1:8000';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** The `sh` block under the README heading "Try it" that creates a plugin config (it sends `"plugin"`). */
function readmeBlock(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Try it');
  if (start < 0) throw new Error('README: no heading "Try it"');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('"plugin"'));
  if (!block) throw new Error('README: no sh block under "Try it" that creates a plugin config');
  return block;
}

/** The block's commands: its lines, with `\` continuations joined. */
function commands(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('curl '));
}

describe("the README's plugin-config example", () => {
  it('creates a Webhook config, which the destinations list then shows', async () => {
    const [create, list, ...rest] = commands(readmeBlock());
    expect(rest).toEqual([]);
    expect(create).toContain('/pipeline_frontend_apps_configs/');
    expect(list).toContain('/pipeline_destination_configs/');

    const body = JSON.parse(/-d '([^']*)'/.exec(create!)![1]!) as { plugin: number; order: number; config: Record<string, unknown> };
    // the README: on a fresh store the catalog's plugins are ids 1 to 8, in the catalog's order; 3 is Webhook
    expect(t.boot.plugins.map((p) => p.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(t.boot.plugins.find((p) => p.id === body.plugin)?.name).toBe('Webhook');

    const key = await t.key(['plugin:write']);
    const sh = async (command: string) => {
      const real = command.replaceAll(README_HOST, t.url).replace('/api/environments/1/', `/api/environments/${t.boot.team.id}/`);
      expect(real).toContain(t.url);
      const { stdout } = await run('sh', ['-c', real.replace(/^curl /, 'curl -sS --fail-with-body ')], {
        env: { ...process.env, KEY: key },
        timeout: 60_000,
      });
      return JSON.parse(stdout) as Record<string, unknown>;
    };

    const created = await sh(create!);
    expect(created).toMatchObject({
      plugin: body.plugin,
      order: body.order,
      enabled: false,
      config: body.config,
      name: 'Webhook',
      deleted: false,
    });
    const page = (await sh(list!)) as { results: Array<{ id: number; plugin: number }> };
    expect(page.results.map((c) => c.id)).toContain(created.id);
  });
});
