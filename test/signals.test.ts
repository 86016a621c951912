/**
 * A process manager stops a service by sending SIGTERM (or SIGINT) to the PID it started: Docker,
 * systemd and Kubernetes all do. Here that PID is real npm's, running `npm start`, `npm run dev` or
 * `npm run mock` from package.json as a user would; the test records every descendant of it while it
 * serves (through /proc, so Linux only), signals npm alone, and checks that npm exits, that every
 * descendant is gone and that the port no longer accepts connections. The scripts `exec` their
 * command, so npm's shell is replaced by the server and npm's own forwarding of SIGTERM and SIGINT
 * reaches it (before, npm's `sh` died and left the server orphaned, still serving).
 *
 * No speed is assumed: every wait polls until its condition holds, and the bounds only end a hang.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from './helpers/process.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const started: ChildProcess[] = [];
const dirs: string[] = [];

/** The pids of every living descendant of `pid` (children, their children, …), from /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // the process ended while we read
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) {
      if (parent === p) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Whether a process `pid` exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Polls `cond` every 100 ms until it holds; throws `what` (with `detail()`) after `ms`. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number, detail: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(() => {
  for (const p of started) if (p.pid) for (const d of descendants(p.pid)) process.kill(d, 'SIGKILL');
  for (const p of started) p.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(process.platform !== 'linux')('a signal to the PID of an npm script stops everything it started', () => {
  const cases: { script: string[]; signal: NodeJS.Signals }[] = [
    { script: ['start'], signal: 'SIGTERM' },
    { script: ['start'], signal: 'SIGINT' },
    { script: ['run', 'dev'], signal: 'SIGTERM' },
    { script: ['run', 'mock'], signal: 'SIGTERM' },
  ];
  for (const { script, signal } of cases) {
    it(`${signal} to \`npm ${script.join(' ')}\` ends npm and every process it started, and frees the port`, async () => {
      const port = await freePort();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-signals-'));
      dirs.push(dataDir);
      const env = {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        DATABASE_URL: '',
        REDIS_URL: '',
      };
      const child = spawn(npm, script, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(child);
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, sig) => resolve({ code, signal: sig })),
      );

      await until(
        `npm ${script.join(' ')} listens on ${port}`,
        () => child.exitCode === null && accepts(port),
        120_000,
        () => output,
      );
      const tree = descendants(child.pid!);
      expect(tree.length, 'npm started at least the server').toBeGreaterThan(0);

      process.kill(child.pid!, signal);
      const end = await Promise.race([exited, new Promise<'hang'>((r) => setTimeout(() => r('hang'), 60_000))]);
      expect(end, `npm did not exit on ${signal}\n${output}`).not.toBe('hang');
      await until(
        'every process npm started has exited',
        () => tree.every((p) => !alive(p)),
        60_000,
        () => `left: ${tree.filter(alive).join(', ')}\n${output}`,
      );
      expect(await accepts(port), `nothing listens on ${port} any more`).toBe(false);
    }, 240_000);
  }
});
