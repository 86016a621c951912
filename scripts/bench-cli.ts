/**
 * Start-up benchmark of the command line and of `npm start` (not a test: issue 21 asks for
 * `envapi --help` and `envapi keys list` under 0.5 s, and a second `npm start` answering within 2 s).
 *
 *   npm run bench:cli -- [--runs 10] [--starts 5] [--source-runs 3] [--no-npx] [--before BIN]
 *
 * First makes sure dist/ is built (`node bin/envapi.js build`: the timed runs never build), and
 * sets up a fresh SQLite store in a temporary directory (`envapi bootstrap`). Then, one process at
 * a time, wall time from spawn to exit (ms):
 * - `envapi --help`, `envapi --version` and `envapi keys list` as the installed command runs them
 *   (`node bin/envapi.js …`), `--runs` times each;
 * - `npx envapi --help` (npm's own start-up included), unless `--no-npx`;
 * - `envapi --help` and `keys list` run from the TypeScript sources with tsx (what bin/envapi.js
 *   falls back to when dist/ cannot be built), `--source-runs` times each (0 to skip);
 * - with `--before BIN` (another checkout's bin/envapi.js, e.g. one extracted with `git archive`
 *   with node_modules linked in), the same `--help` and `keys list` with that command, `--runs`
 *   times each;
 * and the time from spawning a second `npm start` (and `envapi serve`) on a store that is already
 * set up to the first 200 of a keyed `GET /api/environments/1/pipeline_frontend_apps_configs/`
 * (polled every 10 ms), `--starts` times each; the server is then stopped (SIGTERM to its
 * process group). Prints a Markdown table of medians (min–max) and the machine's load.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { freePort, median, ROOT, spread } from './bench-lib.js';

const BIN = path.join(ROOT, 'bin', 'envapi.js');
const LIST = '/api/environments/1/pipeline_frontend_apps_configs/';

/** One timed row of the table. */
interface Row {
  what: string;
  ms: number[];
}

/** Runs `command args` to completion (cwd: the project root) and returns its wall time in ms; throws when it fails. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return ms;
}

function repeat(n: number, run: () => number): number[] {
  return Array.from({ length: n }, run);
}

/** The source-run equivalent of the old bin/envapi.js: tsx registered, then server/cli/index.ts. */
function fromSource(args: string[]): [string, string[]] {
  const script =
    "import { register } from 'tsx/esm/api'; register(); const { runCli } = await import('./server/cli/index.ts'); " +
    `await runCli(['node', 'envapi', ...${JSON.stringify(args)}]);`;
  return [process.execPath, ['--input-type=module', '-e', script]];
}

/** GET `url` with the key; the status, or 0 when the connection failed. */
async function status(url: string, key: string): Promise<number> {
  try {
    const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/**
 * Spawns `command args` in its own process group with PORT / DATA_DIR, polls a keyed GET until it
 * answers 200, stops the group (SIGTERM) and waits for the exit. Returns the ms from spawn to the
 * first 200, and what the process printed.
 */
async function startToFirst200(
  command: string,
  args: string[],
  dataDir: string,
  key: string | undefined,
): Promise<{ ms: number; output: string; key: string }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ended = false;
  void exited.then(() => (ended = true));
  try {
    for (;;) {
      if (ended) throw new Error(`${command} ${args.join(' ')} exited before answering:\n${output}`);
      if (performance.now() - started > 120_000) throw new Error(`${command} ${args.join(' ')}: no 200 within 120 s:\n${output}`);
      const k = key ?? /\b(phx_[A-Za-z0-9]+)\b/.exec(output)?.[1];
      if (k && (await status(`http://127.0.0.1:${port}${LIST}`, k)) === 200) return { ms: performance.now() - started, output, key: k };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    if (!ended) process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

/** The options of the command line. */
interface Options {
  runs: number;
  starts: number;
  sourceRuns: number;
  npx: boolean;
  before?: string;
}

async function main(o: Options): Promise<void> {
  const build = spawnSync(process.execPath, [BIN, 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`envapi build failed:\n${build.stdout}${build.stderr}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-cli-'));
  try {
    const cliStore = path.join(dir, 'cli');
    const boot = spawnSync(process.execPath, [BIN, '--data-dir', cliStore, 'bootstrap', '--json'], { cwd: ROOT, encoding: 'utf8' });
    if (boot.status !== 0) throw new Error(`envapi bootstrap failed:\n${boot.stderr}`);
    const rows: Row[] = [];
    const node = process.execPath;
    rows.push({ what: '`envapi --help`', ms: repeat(o.runs, () => timed(node, [BIN, '--help'])) });
    rows.push({ what: '`envapi --version`', ms: repeat(o.runs, () => timed(node, [BIN, '--version'])) });
    rows.push({
      what: '`envapi keys list` (SQLite, 1 key)',
      ms: repeat(o.runs, () => timed(node, [BIN, '--data-dir', cliStore, 'keys', 'list'])),
    });
    if (o.npx)
      rows.push({
        what: '`npx envapi --help` (npm’s start-up included)',
        ms: repeat(o.runs, () => timed('npx', ['--no-install', 'envapi', '--help'])),
      });
    if (o.before) {
      const before = path.resolve(o.before);
      rows.push({ what: `\`envapi --help\` with ${o.before}`, ms: repeat(o.runs, () => timed(node, [before, '--help'])) });
      rows.push({
        what: `\`envapi keys list\` with ${o.before}`,
        ms: repeat(o.runs, () => timed(node, [before, '--data-dir', cliStore, 'keys', 'list'])),
      });
    }
    if (o.sourceRuns > 0) {
      rows.push({
        what: '`envapi --help` from the sources with tsx (no dist/; tsx cache warm)',
        ms: repeat(o.sourceRuns, () => timed(...fromSource(['--help']))),
      });
      rows.push({
        what: '`envapi keys list` from the sources with tsx (no dist/; tsx cache warm)',
        ms: repeat(o.sourceRuns, () => timed(...fromSource(['--data-dir', cliStore, 'keys', 'list']))),
      });
    }
    // the server: a first start sets the store up (and prints the key), then the second starts are timed
    const serverStore = path.join(dir, 'server');
    const first = await startToFirst200('npm', ['start', '--silent'], serverStore, undefined);
    const npmStarts: number[] = [];
    const serveStarts: number[] = [];
    for (let i = 0; i < o.starts; i++) {
      npmStarts.push((await startToFirst200('npm', ['start', '--silent'], serverStore, first.key)).ms);
      serveStarts.push((await startToFirst200(node, ['--max-semi-space-size=8', BIN, 'serve'], serverStore, first.key)).ms);
    }
    rows.push({ what: 'second `npm start`: spawn → first 200 of a keyed GET', ms: npmStarts });
    rows.push({ what: 'second `envapi serve`: spawn → first 200 of a keyed GET', ms: serveStarts });
    rows.push({ what: 'first `npm start` on an empty store (migrations, bootstrap), once', ms: [first.ms] });

    const load = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ');
    console.log(
      `\n${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} cores, load average ${load}; wall time in ms, median (min–max):\n`,
    );
    console.log('| what | runs | median ms (min–max) |');
    console.log('|---|---:|---|');
    for (const r of rows) console.log(`| ${r.what} | ${r.ms.length} | ${spread(r.ms)} |`);
    console.log('');
    const help = median(rows[0]!.ms);
    const keys = median(rows[2]!.ms);
    console.log(
      `Targets: envapi --help ${help.toFixed(0)} ms and keys list ${keys.toFixed(0)} ms (goal < 500); second npm start ${median(npmStarts).toFixed(0)} ms to the first 200 (goal < 2,000).`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
};

new Command('bench-cli')
  .description('start-up times of the envapi command and of a second npm start (medians of several runs)')
  .option('--runs <n>', 'runs of each envapi command', int('--runs', 1), 10)
  .option('--starts <n>', 'second starts of npm start and of envapi serve', int('--starts', 1), 5)
  .option('--source-runs <n>', 'runs of each command from the sources with tsx, for comparison (0: none)', int('--source-runs', 0), 3)
  .option('--no-npx', 'skip the npx envapi row')
  .option('--before <bin>', 'also time --help and keys list with this other bin/envapi.js (e.g. of an older checkout)')
  .action((o: Options) => main(o))
  .parseAsync()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
