/**
 * `npm run mock` (scripts/mock.mjs, the wrapper around Prism): `--help` prints its usage,
 * `npm run mock -- --port N` serves the contract's examples on port N, with the examples' `next`
 * links pointing at that port (the spec writes the server's, http://127.0.0.1:8000), and a port
 * that is not a number is refused. Readiness is Prism's "Prism is listening" line (polled, with a
 * generous bound); the npm process is started in its own process group and stopped by that group's
 * id, so the shell, the wrapper and Prism all end with the test. When the wrapper itself is killed
 * with SIGKILL (which it cannot pass on), Prism ends too: the port is freed and the contract's
 * temporary copy removed. Processes are found with POSIX `ps`; a zombie (ended, not yet reaped by
 * whatever adopted it) counts as ended.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
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

  it('serves the examples on that port, their next links pointing at it', async () => {
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
    const events = (await (
      await fetch(`http://127.0.0.1:${port}/api/environments/1/events/`, { headers: { Authorization: 'Bearer phx_mock' } })
    ).json()) as { next: string };
    expect(events.next.startsWith(`http://127.0.0.1:${port}/api/environments/1/events/?`)).toBe(true);
    expect((await fetch(events.next, { headers: { Authorization: 'Bearer phx_mock' } })).status).toBe(200);
  }, 120_000);
});

/** The process ids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const r = spawnSync('ps', ['-A', '-o', 'pid=', '-o', 'ppid='], { encoding: 'utf8', timeout: 60_000 });
  return r.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([, ppid]) => ppid === pid)
    .map(([child]) => child!);
}

/** `pid`'s command line, or '' when there is no such process. */
function commandLine(pid: number): string {
  return spawnSync('ps', ['-ww', '-o', 'args=', '-p', String(pid)], { encoding: 'utf8', timeout: 60_000 }).stdout.trim();
}

/** True while `pid` runs; false once it is gone or a zombie (ended, not yet reaped). */
function running(pid: number): boolean {
  const stat = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8', timeout: 60_000 }).stdout.trim();
  return stat !== '' && !stat.startsWith('Z');
}

/** True when a server can listen on 127.0.0.1:`port` now (it is closed again at once). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('node scripts/mock.mjs, killed with SIGKILL', () => {
  let wrapper: ChildProcess | undefined;
  let prismPid: number | undefined;

  afterAll(() => {
    // whatever happened above: nothing of this test outlives it
    for (const pid of [wrapper?.pid, prismPid]) {
      if (!pid) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it("takes Prism with it: the Prism process ends, the port is freed and the contract's temporary copy removed", async () => {
    const port = await freePort();
    let output = '';
    const child = spawn(process.execPath, [MOCK, '--port', String(port)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    wrapper = child;
    child.stdout?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await vi.waitFor(() => expect(output).toMatch(new RegExp(`Prism is listening on http://127\\.0\\.0\\.1:${port}`)), WAIT);

    await vi.waitFor(() => expect(childrenOf(child.pid!)).toHaveLength(1), WAIT);
    const prism = childrenOf(child.pid!)[0]!;
    prismPid = prism;
    const args = commandLine(prism);
    expect(args).toContain('prism-cli');
    const specDir = / mock (.+)\/openapi\.yaml --port /.exec(args)?.[1];
    expect(specDir, args).toBeDefined();
    expect(fs.existsSync(specDir!)).toBe(true);
    expect(await portFree(port)).toBe(false);

    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    await vi.waitFor(() => expect(running(prism), `Prism (pid ${prism}) still runs`).toBe(false), WAIT);
    await vi.waitFor(async () => expect(await portFree(port), `port ${port} still taken`).toBe(true), WAIT);
    expect(fs.existsSync(specDir!)).toBe(false);
  }, 240_000);
});
