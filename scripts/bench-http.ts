/**
 * HTTP benchmark (not a test): envapi side by side with the framework's limit and the Prism mock.
 *
 *   npm run bench:http -- [--events 1000000] [--reps 3] [--duration 8] [--warmup 2]
 *                         [--connections 32] [--keep DIR] [--scenarios a,b] [--no-write]
 *                         [--cpu-prof DIR]
 *
 * Three targets, each in its own process pinned to core 0 (`taskset -c 0`, when taskset exists and
 * the machine has 2+ cores), loaded by autocannon in its own process pinned to core 1:
 * - **A** `scripts/bench-http-bare.ts`: bare Express 5 + `express.json()` answering each path with
 *   the bytes B returned for it (captured first), no validation, no storage;
 * - **B** envapi as `npm start` runs it in production (`NODE_ENV=production`: response validation
 *   off; request log on, to /dev/null; SQLite; auth on with a real key; `RATE_LIMIT_ENABLED=off`);
 * - **C** `prism mock generated/openapi.bundle.yaml` (the contract as served, static examples),
 *   with the same requests.
 *
 * Scenarios (`--scenarios` picks by name): `retrieve` one frontend-app config; `list` frontend-app
 * configs; `events-latest` events list (latest 100) on a store of `--events` demo events;
 * `events-filter` events list with `properties=[{"key":"$browser","value":"Chrome"}]`; `patch` a
 * destination config (`{"name": …}`). For each scenario, repetitions are interleaved A B C
 * A B C … (`--reps` of each); every run is a `--warmup` s autocannon run (discarded) then a
 * `--duration` s measured run at `--connections` connections. A run with any non-2xx answer or socket error is
 * reported as failed. Reported per target: median (min–max) req/s, p50 and p99 latency (ms, median
 * over repetitions, autocannon's histogram), server RSS after the scenario (MB, VmRSS from /proc),
 * and cold start (ms from spawn to the first 200 of `retrieve`, `--reps` times each, before the load
 * runs). Ratios B/A and B/C are computed pair by pair within each repetition.
 *
 * The store is a fresh SQLite data directory (or `--keep DIR`, reused when it already has events)
 * with `--events` demo events in project 1, imported like `envapi demo`. The table is printed and,
 * unless `--no-write`, written with the date and the command into `docs/performance.md` between
 * the markers `<!-- bench:http:begin -->` and `<!-- bench:http:end -->`. `--cpu-prof DIR` runs B
 * under `node --cpu-prof` (profile written into DIR when B exits).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { SERVER_NODE_FLAGS } from '../server/main.js';
import type { CapturedRoute } from './bench-http-bare.js';
import {
  autocannon,
  canPin,
  freePorts,
  median,
  prepareStore,
  request,
  rssMb,
  positive,
  ROOT,
  spread,
  startTarget,
  type RunResult,
  type Running,
  type Scenario,
} from './bench-lib.js';

const PROJECT = 1;

type TargetName = 'A' | 'B' | 'C';
const TARGETS: TargetName[] = ['A', 'B', 'C'];
const TARGET_LABEL: Record<TargetName, string> = { A: 'A bare Express 5', B: 'B envapi', C: 'C Prism mock' };
/** A record with one (fresh) value per target. */
const perTarget = <T>(make: () => T): Record<TargetName, T> => ({ A: make(), B: make(), C: make() });

/** Replaces the text between the bench:http markers of docs/performance.md (appends them if absent). */
function writeDoc(table: string): void {
  const file = path.join(ROOT, 'docs/performance.md');
  const begin = '<!-- bench:http:begin -->';
  const end = '<!-- bench:http:end -->';
  const doc = fs.readFileSync(file, 'utf8');
  const block = `${begin}\n${table}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  fs.writeFileSync(
    file,
    i !== -1 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n## HTTP benchmark\n\n${block}\n`,
  );
}

interface Options {
  events: number;
  reps: number;
  duration: number;
  warmup: number;
  connections: number;
  seed: number;
  keep?: string;
  scenarios?: string;
  write: boolean;
  cpuProf?: string;
}

async function run(o: Options): Promise<void> {
  const pin = canPin();
  const dataDir = o.keep ? path.resolve(o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-http-'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-http-work-'));
  const running: Running[] = [];
  try {
    const { key, imported } = await prepareStore(dataDir, o.events, o.seed);
    const auth = { Authorization: `Bearer ${key}` };
    const [portA, portB, portC] = await freePorts(3);
    const ports: Record<TargetName, number> = { A: portA!, B: portB!, C: portC! };
    const envB: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      PORT: String(ports.B),
      HOST: '127.0.0.1',
      RATE_LIMIT_ENABLED: 'off',
    };
    delete envB.DATABASE_URL;
    delete envB.REDIS_URL;
    delete envB.VALIDATE_RESPONSES;
    // what `npm start` runs after its build step (`npm run bench:http` builds first), with its node
    // flags (SERVER_NODE_FLAGS; a test checks that package.json's start script passes them)
    const argvB = [
      process.execPath,
      ...SERVER_NODE_FLAGS,
      ...(o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(o.cpuProf)] : []),
      'dist/server/main.js',
    ];
    const base = `/api/environments/${PROJECT}`;

    // Fixtures through B's API: a frontend-app config and a destination config.
    const boot = await startTarget('B', argvB, envB, ports.B, `${base}/pipeline_frontend_apps_configs/`, auth, pin, TARGET_LABEL.B);
    const post = async (plugin: string, body: Record<string, unknown>) => {
      const { PLUGIN_CATALOG } = await import('../server/domain/plugin-catalog.js');
      const r = await request(
        ports.B,
        'POST',
        `${base}/pipeline_frontend_apps_configs/`,
        { ...auth, 'Content-Type': 'application/json' },
        JSON.stringify({ plugin: PLUGIN_CATALOG.findIndex((p) => p.key === plugin) + 1, ...body }),
      );
      if (r.status !== 201) throw new Error(`creating a ${plugin} config answered ${r.status}: ${r.body.toString()}`);
      return (JSON.parse(r.body.toString()) as { id: number }).id;
    };
    const frontendId = await post('notification-bar', {
      enabled: true,
      order: 1,
      config: { notification: 'Hedgebox 2.0 is out!', position: 'sticky' },
    });
    const destinationId = await post('webhook', {
      enabled: false,
      order: 2,
      config: { url: 'https://example.com/webhook', method: 'POST' },
    });
    const filter = new URLSearchParams({ properties: JSON.stringify([{ key: '$browser', value: 'Chrome' }]) }).toString();
    const all: Scenario[] = [
      {
        name: 'retrieve',
        label: 'retrieve one frontend-app config',
        method: 'GET',
        url: `${base}/pipeline_frontend_apps_configs/${frontendId}/`,
        group: 'keyed',
      },
      { name: 'list', label: 'list frontend-app configs', method: 'GET', url: `${base}/pipeline_frontend_apps_configs/`, group: 'keyed' },
      {
        name: 'events-latest',
        label: `events latest 100 (${o.events.toLocaleString('en-US')} events)`,
        method: 'GET',
        url: `${base}/events/`,
        group: 'events',
      },
      {
        name: 'events-filter',
        label: 'events, property filter $browser = Chrome',
        method: 'GET',
        url: `${base}/events/?${filter}`,
        group: 'events',
      },
      {
        name: 'patch',
        label: 'PATCH a destination config',
        method: 'PATCH',
        url: `${base}/pipeline_destination_configs/${destinationId}/`,
        body: JSON.stringify({ name: 'Webhook (bench)' }),
        group: 'write',
      },
    ];
    const picked = o.scenarios ? o.scenarios.split(',').map((n) => n.trim()) : all.map((s) => s.name);
    const unknown = picked.filter((n) => !all.some((s) => s.name === n));
    if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
    const scenarios = all.filter((s) => picked.includes(s.name));

    // Every target's readiness (and cold start) is the first 200 of `retrieve`, whichever
    // scenarios run, so A also gets retrieve's reply when it is not among them.
    const probe = all.find((s) => s.name === 'retrieve')!;
    // Capture B's replies for A.
    const routes: CapturedRoute[] = [];
    for (const s of scenarios.includes(probe) ? scenarios : [...scenarios, probe]) {
      const r = await request(ports.B, s.method, s.url, { ...auth, ...(s.body ? { 'Content-Type': 'application/json' } : {}) }, s.body);
      if (r.status !== 200) throw new Error(`${s.name}: envapi answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
      const q = s.url.indexOf('?');
      routes.push({
        method: s.method.toLowerCase() as CapturedRoute['method'],
        path: q === -1 ? s.url : s.url.slice(0, q),
        query: q === -1 ? '' : s.url.slice(q + 1),
        status: r.status,
        contentType: r.contentType,
        body: r.body.toString('base64'),
      });
      console.error(`${s.name}: ${r.body.length.toLocaleString('en-US')} bytes`);
    }
    await boot.stop();
    const routesFile = path.join(work, 'routes.json');
    fs.writeFileSync(routesFile, JSON.stringify(routes));

    const launch: Record<TargetName, () => Promise<Running>> = {
      A: () =>
        startTarget(
          'A',
          [process.execPath, '--import', 'tsx', 'scripts/bench-http-bare.ts', '--routes', routesFile, '--port', String(ports.A)],
          process.env,
          ports.A,
          probe.url,
          auth,
          pin,
          TARGET_LABEL.A,
        ),
      B: () => startTarget('B', argvB, envB, ports.B, probe.url, auth, pin, TARGET_LABEL.B),
      C: () =>
        startTarget(
          'C',
          [
            path.join(ROOT, 'node_modules/.bin/prism'),
            'mock',
            'generated/openapi.bundle.yaml',
            '--port',
            String(ports.C),
            '--host',
            '127.0.0.1',
          ],
          { ...process.env, NO_COLOR: '1' },
          ports.C,
          probe.url,
          auth,
          pin,
          TARGET_LABEL.C,
        ),
    };

    // Cold starts: spawn → first 200, interleaved, --reps times each.
    const cold = perTarget<number[]>(() => []);
    for (let rep = 0; rep < o.reps; rep++) {
      for (const t of TARGETS) {
        const r = await launch[t]();
        cold[t].push(r.coldStartMs);
        await r.stop();
      }
    }
    console.error(`cold start ms: ${TARGETS.map((t) => `${t} ${spread(cold[t])}`).join('; ')}`);

    for (const t of TARGETS) running.push(await launch[t]());
    const byName = Object.fromEntries(running.map((r) => [r.name, r])) as Record<TargetName, Running>;
    const results = new Map<string, Record<TargetName, RunResult[]>>();
    const rss = new Map<string, Record<TargetName, number>>();
    for (const s of scenarios) {
      const res = perTarget<RunResult[]>(() => []);
      for (let rep = 0; rep < o.reps; rep++) {
        for (const t of TARGETS) {
          const port = byName[t].port;
          // a target that exited (say, it could not bind its port) must not be measured through whatever answers there
          byName[t].assertAlive();
          await autocannon(pin, port, s, auth, o.connections, o.warmup);
          const r = await autocannon(pin, port, s, auth, o.connections, o.duration);
          byName[t].assertAlive();
          res[t].push(r);
          console.error(
            `${s.name} rep ${rep + 1} ${t}: ${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms${r.failed ? ` FAILED (${r.failed})` : ''}`,
          );
        }
      }
      results.set(s.name, res);
      rss.set(s.name, { A: rssMb(byName.A.child.pid), B: rssMb(byName.B.child.pid), C: rssMb(byName.C.child.pid) });
    }

    // The report.
    const date = new Date().toISOString().slice(0, 10);
    const command = `npm run bench:http -- --events ${o.events} --reps ${o.reps} --duration ${o.duration} --warmup ${o.warmup} --connections ${o.connections}${o.scenarios ? ` --scenarios ${o.scenarios}` : ''}${o.keep ? ` --keep ${o.keep}` : ''}`;
    const lines: string[] = [
      `Measured ${date}: \`${command}\``,
      '',
      `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'}); ${pin ? 'servers pinned to core 0, autocannon to core 1 (taskset)' : 'no pinning (taskset unavailable or one core)'}; ${o.connections} connections, ${o.warmup} s warm-up + ${o.duration} s per run, A B C interleaved ×${o.reps}. Store: SQLite, ${imported}.`,
      '',
      '| scenario | target | req/s median (min–max) | p50 ms | p99 ms | bytes/response | RSS after, MB |',
      '|---|---|---|---|---|---|---|',
    ];
    for (const s of scenarios) {
      const res = results.get(s.name)!;
      for (const t of TARGETS) {
        const rs = res[t];
        const failed = rs.filter((r) => r.failed).map((r) => r.failed);
        lines.push(
          `| ${s.label} | ${TARGET_LABEL[t]} | ${spread(rs.map((r) => r.rps))}${failed.length ? ` ⚠ ${failed.join('; ')}` : ''} | ${median(rs.map((r) => r.p50)).toFixed(1)} | ${median(rs.map((r) => r.p99)).toFixed(1)} | ${Math.round(median(rs.map((r) => r.bytesPerRequest))).toLocaleString('en-US')} | ${rss.get(s.name)![t]} |`,
        );
      }
    }
    lines.push('', '| scenario | B/A median (min–max) | B/C median (min–max) |', '|---|---|---|');
    const ratio = (num: RunResult[], den: RunResult[]) => num.map((r, i) => r.rps / den[i]!.rps);
    for (const s of scenarios) {
      const res = results.get(s.name)!;
      lines.push(`| ${s.label} | ${spread(ratio(res.B, res.A), 2)} | ${spread(ratio(res.B, res.C), 2)} |`);
    }
    lines.push('', '| cold start (spawn → first 200 of `retrieve`), ms | median (min–max) |', '|---|---|');
    for (const t of TARGETS) lines.push(`| ${TARGET_LABEL[t]} | ${spread(cold[t])} |`);

    // Targets of issue 8.
    const checks: string[] = [];
    const check = (what: string, ok: boolean, value: string) => checks.push(`| ${what} | ${value} | ${ok ? 'met' : '**missed**'} |`);
    const med = (xs: number[]) => median(xs);
    const rRetrieve = results.get('retrieve');
    if (rRetrieve) {
      check('retrieve B/A ≥ 0.60', med(ratio(rRetrieve.B, rRetrieve.A)) >= 0.6, med(ratio(rRetrieve.B, rRetrieve.A)).toFixed(2));
      check('retrieve B/C ≥ 2.5', med(ratio(rRetrieve.B, rRetrieve.C)) >= 2.5, med(ratio(rRetrieve.B, rRetrieve.C)).toFixed(2));
    }
    const rLatest = results.get('events-latest');
    if (rLatest)
      check('events latest 100 B/A ≥ 0.35', med(ratio(rLatest.B, rLatest.A)) >= 0.35, med(ratio(rLatest.B, rLatest.A)).toFixed(2));
    for (const s of scenarios) {
      const p99 = med(results.get(s.name)!.B.map((r) => r.p99));
      check(`${s.name}: B p99 ≤ 30 ms`, p99 <= 30, `${p99.toFixed(1)} ms`);
    }
    check('B cold start ≤ 1 s', med(cold.B) <= 1000, `${med(cold.B).toFixed(0)} ms`);
    const keyedRss = Math.max(...scenarios.filter((s) => s.group === 'keyed').map((s) => rss.get(s.name)!.B));
    if (Number.isFinite(keyedRss)) check('B RSS after the keyed GETs ≤ 150 MB', keyedRss <= 150, `${keyedRss} MB`);
    const eventsRss = Math.max(...scenarios.filter((s) => s.group === 'events').map((s) => rss.get(s.name)!.B));
    if (Number.isFinite(eventsRss)) check('B RSS after the events runs ≤ 300 MB', eventsRss <= 300, `${eventsRss} MB`);
    lines.push('', '| target (issue 8) | measured | |', '|---|---|---|', ...checks);

    const table = lines.join('\n');
    if (o.write) writeDoc(table);
    console.log(table);
  } finally {
    for (const r of running) await r.stop();
    fs.rmSync(work, { recursive: true, force: true });
    if (!o.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

new Command('bench-http')
  .description('HTTP benchmark: bare Express 5 (A), envapi (B) and the Prism mock (C), interleaved, with autocannon')
  .option('--events <n>', 'demo events in the store (project 1)', positive('--events'), 1_000_000)
  .option('--reps <n>', 'repetitions of A B C per scenario', positive('--reps'), 3)
  .option('--duration <s>', 'seconds per measured run', positive('--duration'), 8)
  .option('--warmup <s>', 'seconds of discarded warm-up before each run', positive('--warmup'), 2)
  .option('--connections <n>', 'concurrent connections', positive('--connections'), 32)
  .option('--seed <n>', 'demo seed', (v) => Number(v), 42)
  .option('--keep <dir>', 'use (and keep) this SQLite data directory; reused when it already has the events')
  .option('--scenarios <names>', 'comma-separated: retrieve,list,events-latest,events-filter,patch')
  .option('--no-write', 'do not write the table into docs/performance.md')
  .option('--cpu-prof <dir>', 'run envapi under node --cpu-prof, profiles into DIR')
  .action((o: Options) => run(o))
  .parseAsync()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
