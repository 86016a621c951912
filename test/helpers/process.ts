/**
 * Real server processes for the tests that need one (shutdown, CLI, compiled start, several
 * processes, Redis outages, simultaneous first starts): spawn `node <args>` in the project root and
 * wait until it prints `envapi listening on <url>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { ROOT } from '../../scripts/bench-lib.js';

/** The project root (where `server/` and `dist/` are; one definition, in scripts/bench-lib.ts). */
export { ROOT };

/** The server's own TypeScript entry point, run with tsx (what `npm run dev` runs). */
export const SERVER_FROM_SOURCE = ['--import', 'tsx', 'server/main.ts'];

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned server that printed its URL. */
export interface ListeningProcess {
  proc: ChildProcess;
  /** `http://127.0.0.1:<port>` as printed */
  url: string;
  /** stdout and stderr, interleaved as received, so far */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** resolves when the process exits (it never rejects) */
  exited: Promise<Exit>;
}

/**
 * Spawns `node ...args` (cwd: the project root, with exactly `env`) and resolves once its output
 * holds `envapi listening on <url>`. Rejects, with everything the process printed, when it exits
 * first or does not listen within `timeoutMs` (default 20,000 ms; it is then killed). `track`
 * receives the child at once, so a test can kill it in `afterEach` whatever happens.
 */
export function spawnListening(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { timeoutMs?: number; track?: (p: ChildProcess) => void } = {},
): Promise<ListeningProcess> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  opts.track?.(proc);
  let all = '';
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8');
  proc.stderr!.setEncoding('utf8');
  const exited = new Promise<Exit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      proc.kill('SIGKILL');
      reject(new Error(`server did not listen within ${timeoutMs} ms:\n${all}`));
    }, timeoutMs);
    const onData = (stream: 'out' | 'err') => (chunk: string) => {
      all += chunk;
      if (stream === 'out') out += chunk;
      else err += chunk;
      const m = /envapi listening on (http:\/\/\S+)/.exec(all);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ proc, url: m[1]!, output: () => all, stdout: () => out, stderr: () => err, exited });
      }
    };
    proc.stdout!.on('data', onData('out'));
    proc.stderr!.on('data', onData('err'));
    void exited.then((e) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(new Error(`server exited (${e.code ?? e.signal}) before listening:\n${all}`));
    });
  });
}

/** A TCP port nothing listens on right now on 127.0.0.1 (the benchmarks' helper). */
export { freePort } from '../../scripts/bench-lib.js';

/** PING over a raw socket: true when a Redis at host:port answers +PONG within `timeoutMs`. */
export function redisPong(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}
