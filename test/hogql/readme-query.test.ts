/**
 * The README's HogQL example ("Query events with HogQL") run as written: its curl command, with the
 * test server's URL and project and `$KEY` a personal API key holding `query:read`, answers the
 * columns the README shows and one row per event name, most frequent first.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../capture/helpers.js';
import { ROOT } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const README_HOST = 'http://127.0.0.1:8000';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
  const batch = ['$pageview', '$pageview', '$pageview', 'signed_up', '$autocapture', '$autocapture'].map((event, i) => ({
    event,
    distinct_id: `readme-${i % 2}`,
  }));
  const res = await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch });
  if (res.status !== 200) throw new Error(`capture answered ${res.status}`);
});
afterAll(async () => {
  await t.close();
});

/** The `sh` code block under the README heading "Query events with HogQL". */
function readmeCommand(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Query events with HogQL'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no sh block under "Query events with HogQL"');
  return block[1]!;
}

describe("the README's HogQL example", () => {
  it('answers event counts, most frequent first', async () => {
    const command = readmeCommand().replaceAll(README_HOST, t.url).replace('/api/projects/1/', `/api/projects/${t.boot.team.id}/`);
    expect(command).toContain(t.url);
    const key = await t.key(['query:read']);
    const { stdout } = await run('sh', ['-c', command.replace('curl ', 'curl -sS --fail-with-body ')], {
      env: { ...process.env, KEY: key },
      timeout: 60_000,
    });
    const body = JSON.parse(stdout) as { columns: string[]; results: unknown[][]; hasMore: boolean };
    expect(body.columns).toEqual(['event', 'count()']);
    expect(body.results).toEqual([
      ['$pageview', 3],
      ['$autocapture', 2],
      ['signed_up', 1],
    ]);
    expect(body.hasMore).toBe(false);
  });
});
