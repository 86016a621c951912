/**
 * `npm run mock` (scripts/mock.mjs, the wrapper around Prism): `--help` prints its usage,
 * `npm run mock -- --port N` serves the contract's examples on port N, with the examples' `next`
 * links pointing at that port (the spec writes the server's, http://127.0.0.1:8000), and a port
 * that is not a number is refused. Readiness is Prism's "Prism is listening" line (polled, with a
 * generous bound); the npm process is started in its own process group and stopped by that group's
 * id, so the shell, the wrapper and Prism all end with the test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freePort, ROOT } from '../../scripts/bench-lib.js';

const MOCK = path.join(ROOT, 'scripts', 'mock.mjs');
const WAIT = { timeout: 60_000, interval: 200 };

describe('node scripts/mock.mjs', () => {
  it('--help prints the usage and exits 0', () => {
    const r = spawnSync(process.execPath, [MOCK, '--help'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: npm run mock -- [--port N] [--host HOST]');
  });

  it('refuses a port that is not a number (exit 2, naming it)', () => {
    const r = spawnSync(process.execPath, [MOCK, '--port', 'abc'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--port must be a port number, got "abc"');
  });
});

describe('npm run mock -- --port N', () => {
  let child: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => {
      try {
        process.kill(-child!.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5000);
    await exited;
    clearTimeout(timer);
  });

  it(
    'serves the examples on that port, their next links pointing at it',
    async () => {
      const port = await freePort();
      child = spawn('npm', ['run', '--silent', 'mock', '--', '--port', String(port)], {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      });
      child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
      await vi.waitFor(() => expect(output).toMatch(new RegExp(`Prism is listening on http://127\\.0\\.0\\.1:${port}`)), WAIT);

      const res = await fetch(`http://127.0.0.1:${port}/api/environments/1/pipeline_frontend_apps_configs/?limit=1`, {
        headers: { Authorization: 'Bearer phx_mock', Prefer: 'example=first_page' },
      });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { next: string };
      expect(page.next).toBe(`http://127.0.0.1:${port}/api/environments/1/pipeline_frontend_apps_configs/?limit=1&offset=1`);
      // the events list's example link too, and the link is served by the mock
      const events = (await (await fetch(`http://127.0.0.1:${port}/api/environments/1/events/`, { headers: { Authorization: 'Bearer phx_mock' } })).json()) as { next: string };
      expect(events.next.startsWith(`http://127.0.0.1:${port}/api/environments/1/events/?`)).toBe(true);
      expect((await fetch(events.next, { headers: { Authorization: 'Bearer phx_mock' } })).status).toBe(200);
    },
    120_000,
  );
});
