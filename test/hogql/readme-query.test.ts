/**
 * The README's HogQL examples ("Query events with HogQL") run as written: their curl commands, with
 * the test server's URL and project and `$KEY` a personal API key holding `query:read`. The HogQL one
 * answers the columns the README shows and one row per event name, most frequent first; the
 * TrendsQuery one answers the README's days and labels, and the day's distinct persons.
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

/** The `n`th `sh` code block under the README heading "Query events with HogQL". */
function readmeCommand(n = 0): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Query events with HogQL'),
    readme.indexOf('\n## ', readme.indexOf('## Query events with HogQL') + 3),
  );
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)][n];
  if (!block) throw new Error(`README: no sh block ${n} under "Query events with HogQL"`);
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

  it('the TrendsQuery example answers the days and labels the README shows, with distinct persons per day', async () => {
    const { importEvents } = await import('../../server/ingest/import.js');
    // distinct persons with a pageview: 2 on 30 November, 1 on 1 December, 3 on 2 December
    const at = (day: string, who: string) => ({ event: '$pageview', distinct_id: who, timestamp: `${day}T12:00:00Z` });
    await importEvents(t.store, t.boot.team.id, [
      at('2026-11-30', 'p1'),
      at('2026-11-30', 'p2'),
      at('2026-11-30', 'p2'),
      at('2026-12-01', 'p1'),
      at('2026-12-02', 'p1'),
      at('2026-12-02', 'p2'),
      at('2026-12-02', 'p3'),
    ]);
    const command = readmeCommand(1).replaceAll(README_HOST, t.url).replace('/api/projects/1/', `/api/projects/${t.boot.team.id}/`);
    const key = await t.key(['query:read']);
    const { stdout } = await run('sh', ['-c', command.replace('curl ', 'curl -sS --fail-with-body ')], {
      env: { ...process.env, KEY: key },
      timeout: 60_000,
    });
    const body = JSON.parse(stdout) as { results: { data: number[]; days: string[]; labels: string[]; label: string; count: number }[] };
    expect(body.results).toHaveLength(1);
    expect(body.results[0]).toMatchObject({
      data: [2, 1, 3],
      count: 6,
      label: '$pageview',
      days: ['2026-11-30', '2026-12-01', '2026-12-02'],
      labels: ['30-Nov-2026', '1-Dec-2026', '2-Dec-2026'],
    });
  });
});
