/**
 * Hostile-filter benchmark (not a test): how fast `/_health` and a keyed retrieve answer while
 * worst-case events reads run, the measurement issue 16 asks for.
 *
 *   npm run bench:hostile -- [--events 200000] [--duration 20] [--keep DIR] [--threads N,0]
 *                            [--no-write]
 *
 * The store is a SQLite data directory with `--events` demo events in project 1 (a fresh one, or
 * `--keep DIR`, reused when it already holds them; prepared as `bench:http` does). For each value
 * of `--threads` (default `default,0`: the server's default pool, then the events reads on the main
 * thread as before the read pool), the built server (`dist/`, as `npm start` runs it: production
 * settings, rate limits off, request log off) is started and, for `--duration` seconds:
 * - four hostile clients each send one kind of request in a loop, one at a time: a `regex` filter
 *   `.*.*.*.*\u0001` on `$current_url` (exponential for a backtracking engine), `icontains` with a
 *   5,000-character needle, an `exact` filter on a property no event has (every row read), and a
 *   CSV page of 10,000 events;
 * - a probe sends `GET /_health` and `GET …/pipeline_frontend_apps_configs/{id}/` (a keyed
 *   retrieve) alternately, one at a time, every 10 ms.
 * Reported: the probe's latency (p50, p99, max, ms) per endpoint, and each hostile request's count
 * and median time. The table is printed and, unless `--no-write`, written into docs/reliability.md
 * between `<!-- bench:hostile:begin -->` and `<!-- bench:hostile:end -->`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { SERVER_NODE_FLAGS } from '../server/main.js';
import { PLUGIN_CATALOG } from '../server/domain/plugin-catalog.js';
import { freePort, median, positive, prepareStore, request, ROOT, startTarget } from './bench-lib.js';

const PROJECT = 1;

/** The four worst-case reads. */
function hostileRequests(): { name: string; path: string }[] {
  const props = (filters: unknown) =>
    `/api/environments/${PROJECT}/events/?limit=100&properties=${encodeURIComponent(JSON.stringify(filters))}`;
  return [
    { name: 'regex .*.*.*.*\\u0001', path: props([{ key: '$current_url', value: '.*.*.*.*\u0001', operator: 'regex' }]) },
    { name: 'icontains, 5,000-char needle', path: props([{ key: '$current_url', value: 'x'.repeat(5_000), operator: 'icontains' }]) },
    { name: 'exact on a property no event has', path: props([{ key: 'rare_property', value: 'x' }]) },
    { name: 'CSV of 10,000 events', path: `/api/environments/${PROJECT}/events/?format=csv&limit=10000` },
  ];
}

/** p-th percentile (0–100) of `xs` (nearest rank). */
function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface RunOutcome {
  threads: string;
  probes: Record<string, number[]>;
  hostile: { name: string; times: number[]; statuses: Set<number> }[];
}

async function runOnce(dataDir: string, key: string, threads: string, seconds: number): Promise<RunOutcome> {
  const port = await freePort();
  const headers = { Authorization: `Bearer ${key}` };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    RATE_LIMIT_ENABLED: 'off',
    LOG_LEVEL: 'silent',
  };
  delete env.DATABASE_URL;
  if (threads !== 'default') env.EVENTS_READ_THREADS = threads;
  const server = await startTarget(
    'envapi',
    [process.execPath, ...SERVER_NODE_FLAGS, path.join(ROOT, 'dist/server/main.js')],
    env,
    port,
    '/_health',
    {},
    false,
  );
  try {
    const list = `/api/environments/${PROJECT}/pipeline_frontend_apps_configs/`;
    const existing = await request(port, 'GET', `${list}?limit=1`, headers);
    let id = (JSON.parse(existing.body.toString()) as { results: { id: number }[] }).results[0]?.id;
    if (id === undefined) {
      const body = {
        plugin: PLUGIN_CATALOG.findIndex((p) => p.key === 'notification-bar') + 1,
        enabled: true,
        order: 1,
        config: { notification: 'Hedgebox 2.0 is out!' },
      };
      const made = await request(port, 'POST', list, { ...headers, 'Content-Type': 'application/json' }, JSON.stringify(body));
      if (made.status !== 201) throw new Error(`creating a frontend app config answered ${made.status}: ${made.body.toString()}`);
      id = (JSON.parse(made.body.toString()) as { id: number }).id;
    }
    const keyed = `/api/environments/${PROJECT}/pipeline_frontend_apps_configs/${id}/`;
    const until = performance.now() + seconds * 1000;
    const hostile = hostileRequests().map((h) => ({ ...h, times: [] as number[], statuses: new Set<number>() }));
    const loops = hostile.map(async (h) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const r = await request(port, 'GET', h.path, headers);
        h.times.push(performance.now() - t0);
        h.statuses.add(r.status);
      }
    });
    const probes: Record<string, number[]> = { '/_health': [], 'keyed retrieve': [] };
    const probe = (async () => {
      // let the hostile reads start first
      await new Promise((resolve) => setTimeout(resolve, 200));
      let i = 0;
      while (performance.now() < until) {
        const [name, url, h] = i % 2 === 0 ? ['/_health', '/_health', {}] : ['keyed retrieve', keyed, headers];
        const t0 = performance.now();
        const r = await request(port, 'GET', url, h);
        probes[name]!.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
        i += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    await Promise.all([...loops, probe]);
    server.assertAlive();
    return { threads, probes, hostile };
  } finally {
    await server.stop();
  }
}

function table(outcomes: RunOutcome[], events: number, seconds: number): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '–');
  const lines = [
    `${events.toLocaleString('en-US')} demo events, ${seconds} s per run, ${os.cpus().length} cores; probe one request at a time every 10 ms.`,
    '',
    '| events reads | probe | n | p50 ms | p99 ms | max ms |',
    '|---|---|---:|---:|---:|---:|',
  ];
  for (const o of outcomes) {
    for (const [name, xs] of Object.entries(o.probes))
      lines.push(
        `| ${o.threads === '0' ? 'main thread (EVENTS_READ_THREADS=0)' : `worker pool (${o.threads === 'default' ? 'default threads' : `${o.threads} threads`})`} | ${name} | ${xs.length} | ${f(percentile(xs, 50))} | ${f(percentile(xs, 99))} | ${f(Math.max(...xs))} |`,
      );
  }
  lines.push('', '| events reads | hostile request | answered | statuses | median ms |', '|---|---|---:|---|---:|');
  for (const o of outcomes) {
    for (const h of o.hostile)
      lines.push(
        `| ${o.threads === '0' ? 'main thread' : 'worker pool'} | ${h.name} | ${h.times.length} | ${[...h.statuses].join(', ')} | ${f(median(h.times))} |`,
      );
  }
  return lines.join('\n');
}

function writeDoc(text: string, command: string): void {
  const file = path.join(ROOT, 'docs/reliability.md');
  const begin = '<!-- bench:hostile:begin -->';
  const end = '<!-- bench:hostile:end -->';
  const doc = fs.readFileSync(file, 'utf8');
  const block = `${begin}\nMeasured ${new Date().toISOString().slice(0, 10)} with \`${command}\`:\n\n${text}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  fs.writeFileSync(file, i !== -1 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`);
}

async function main(): Promise<void> {
  const program = new Command('bench:hostile')
    .description('Latency of /_health and a keyed retrieve while four worst-case events reads run (see the file doc).')
    .option('--events <n>', 'demo events in project 1', positive('--events'), 200_000)
    .option('--duration <s>', 'seconds per run', positive('--duration'), 20)
    .option('--threads <list>', 'EVENTS_READ_THREADS per run, comma-separated ("default" = unset)', 'default,0')
    .option('--seed <n>', 'demo data seed', positive('--seed'), 42)
    .option('--keep <dir>', 'data directory to reuse (events imported once)')
    .option('--no-write', 'print only; do not update docs/reliability.md');
  program.parse();
  const o = program.opts<{ events: number; duration: number; threads: string; seed: number; keep?: string; write: boolean }>();
  if (!fs.existsSync(path.join(ROOT, 'dist/server/main.js')))
    throw new Error('dist/server/main.js is missing: run `npm run build` (npm run bench:hostile does)');
  const dataDir = o.keep ? path.resolve(o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-hostile-'));
  const { key, imported } = await prepareStore(dataDir, o.events, o.seed, PROJECT);
  console.error(imported);
  const outcomes: RunOutcome[] = [];
  for (const threads of o.threads
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    console.error(`Run with EVENTS_READ_THREADS=${threads} for ${o.duration} s …`);
    outcomes.push(await runOnce(dataDir, key, threads, o.duration));
  }
  const text = table(outcomes, o.events, o.duration);
  console.log(text);
  if (o.write) writeDoc(text, `npm run bench:hostile -- ${process.argv.slice(2).join(' ')}`.trim());
  if (!o.keep) fs.rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
