/**
 * The README's capture example ("Capture events with PostHog's SDKs"), run as written: its
 * JavaScript block (posthog-node, `capture` then `shutdown`) runs in a `node` process from the
 * project's directory, with only the token and the host replaced by the test server's; then its
 * curl line (the comment's text, with `$KEY` a real personal API key) reads the event back. A README
 * whose example stops working fails this test.
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

/** The `js` code block under the README heading "Capture events with PostHog's SDKs". */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf("## Capture events with PostHog's SDKs"));
  const block = /```js\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no js block under "Capture events with PostHog\'s SDKs"');
  return block[1]!;
}

describe("the README's capture example", () => {
  it('is five lines: posthog-node captures, curl reads the event back', async () => {
    const example = readmeExample();
    const lines = example.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const curl = lines.find((l) => l.startsWith('// curl '));
    expect(curl).toBeDefined();

    const code = example.replaceAll("'phc_…'", JSON.stringify(t.boot.team.api_token)).replaceAll(README_HOST, t.url);
    expect(code).not.toContain(README_HOST);
    await run(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 });

    const key = await t.key(['query:read']); // the events list's scope (PostHog's)
    const command = curl!
      .slice('// '.length)
      .replaceAll(README_HOST, t.url)
      .replace('/api/projects/1/', `/api/projects/${t.boot.team.id}/`);
    const { stdout } = await run('sh', ['-c', `curl -sS --fail-with-body ${command.slice('curl '.length)}`], {
      env: { ...process.env, KEY: key },
      timeout: 60_000,
    });
    const page = JSON.parse(stdout) as { results: Array<{ event: string; distinct_id: string; properties: Record<string, unknown> }> };
    expect(page.results).toHaveLength(1);
    expect(page.results[0]).toMatchObject({
      event: 'signed_up',
      distinct_id: 'user-42',
      properties: { plan: 'free', $lib: 'posthog-node' },
    });
  });
});
