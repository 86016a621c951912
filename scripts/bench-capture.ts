/**
 * Capture benchmark (not a test): `POST /batch/` under load, as posthog-node sends it, on SQLite and
 * on PostgreSQL; the goal of issue 19 is ≥ 25,000 events/s committed, p99 ≤ 100 ms and RSS ≤ 300 MB
 * on each store. `--store clickhouse`: the events on embedded ClickHouse (`EVENTS_STORE=clickhouse`,
 * chDB in the data directory, the configuration on SQLite, `CLICKHOUSE_MEMORY_LIMIT` 2 GiB), with
 * issue 39's goal: ≥ 25,000 events/s committed, p99 ≤ 250 ms, the server's RSS under that limit.
 * Its events are counted through the server (HogQL `count()`: chDB lets one process hold its
 * files), and its table goes to its own block of docs/performance.md.
 *
 *   npm run bench:capture -- [--store both|sqlite|pg|clickhouse] [--reps 3] [--duration 10] [--warmup 3]
 *                            [--connections 16] [--batch 100] [--no-write] [--cpu-prof DIR]
 *
 * Per repetition and store (stores interleaved within each repetition), on a fresh store — a new
 * SQLite data directory, or a new schema `envapi_bench_capture_<ms>` of `--database-url` reached
 * through the URL's `options=-c search_path=…` and dropped at the end:
 * 1. the built server (`dist/server/main.js` with `SERVER_NODE_FLAGS`, as `npm start` runs it:
 *    `NODE_ENV=production`, request log on stdout to /dev/null, `RATE_LIMIT_ENABLED=off`) pinned to
 *    core 0 with `taskset` (2+ cores); ready at its first 200 of `GET /_health`;
 * 2. the project API token the way a user gets it: a personal API key from the command line
 *    (`envapi keys create --user admin@envapi.local --scopes '*'`), then `api_token` of
 *    `GET /api/projects/`;
 * 3. the load: a child process pinned to core 1 (this same script with `--load-child`) drives
 *    autocannon with `--connections` keep-alive connections, each request a distinct gzip body
 *    `{"api_key","batch":[--batch events],"sent_at"}` with `Content-Encoding: gzip` (posthog-node
 *    5.70.0's wire format, docs/research/posthog-capture.md §4). Every event has its own UUIDv7;
 *    the bodies are generated and compressed before autocannon starts (enough for `--pool-rate`
 *    events/s; past it the child makes bodies while loading and says so);
 * 4. a `--warmup` s run (discarded), the row count of `events`, a `--duration` s run, and the row
 *    count again once it stops growing.
 *
 * Reported per store (median over `--reps`, min–max for events/s): events/s **committed** (rows
 * added during the measured run / `--duration`; requests still in flight when the run stops are
 * counted when they commit, at most `connections × batch` events), request p50/p99 latency (ms,
 * autocannon's histogram), server peak RSS (MB, VmHWM from /proc: the whole life of the process,
 * warm-up included), and non-2xx answers (503s apart; a 503 commits nothing). The table is printed
 * and, unless `--no-write`, written with the date and the command into docs/performance.md between
 * `<!-- bench:capture:begin -->` and `<!-- bench:capture:end -->`. `--cpu-prof DIR` runs the server
 * under `node --cpu-prof` (one profile per server process, written when it exits; summarise with
 * scripts/cpu-profile-top.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Command, Option } from 'commander';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from '../server/main.js';
import { BOOTSTRAP_EMAIL } from '../server/bootstrap.js';
import { newUuidv7 } from '../server/capture/process.js';
import { openStore } from '../server/storage/db.js';
import {
  canPin,
  coresBetween,
  cpuSample,
  freePort,
  median,
  peakRssMb,
  pgAdmin,
  pinned,
  positive,
  request,
  ROOT,
  spread,
  startTarget,
  writePerformanceBlock,
  type Running,
} from './bench-lib.js';

type StoreKind = 'sqlite' | 'pg' | 'clickhouse';

/** embedded chDB's memory cap in the ClickHouse runs, bytes (`CLICKHOUSE_MEMORY_LIMIT`) */
const CLICKHOUSE_MEMORY_LIMIT = 2 * 1024 ** 3;

interface Options {
  store: 'both' | StoreKind;
  databaseUrl: string;
  reps: number;
  duration: number;
  warmup: number;
  connections: number;
  batch: number;
  poolRate: number;
  users: number;
  write: boolean;
  cpuProf?: string;
  loadChild?: string;
}

// ---------------------------------------------------------------------------------------------
// Events as posthog-node and posthog-js send them

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const PAGES = [
  '/',
  '/pricing',
  '/files',
  '/files/shared',
  '/account/settings',
  '/account/billing',
  '/signup',
  '/login',
  '/blog/how-we-store-files',
  '/docs/api',
];
const BROWSERS = [
  ['Chrome', 131],
  ['Safari', 18],
  ['Firefox', 133],
  ['Microsoft Edge', 131],
] as const;
const OSES = [
  ['Mac OS X', '14.6.1', 'Desktop'],
  ['Windows', '10.0', 'Desktop'],
  ['iOS', '18.1', 'Mobile'],
  ['Android', '14', 'Mobile'],
  ['Linux', '', 'Desktop'],
] as const;
const REFERRERS = [
  '$direct',
  'https://www.google.com/',
  'https://news.ycombinator.com/',
  'https://twitter.com/',
  'https://duckduckgo.com/',
];
const SERVER_EVENTS = [
  'file_uploaded',
  'file_downloaded',
  'file_shared',
  'folder_created',
  'invite_sent',
  'subscription_renewed',
  'api_request_completed',
];
const PLANS = ['free', 'standard', 'pro', 'enterprise'];

/**
 * One event as an SDK sends it (~13–16 properties): posthog-js's `$pageview` / `$pageleave`
 * (browser, OS, URL, screen, session) or a posthog-node server event (`$lib: posthog-node`,
 * `$is_server`, `$geoip_disable`, a few product properties); one event in 20 carries `$set`.
 * `distinct_id` is one of `users`; `timestamp` is `nowMs` minus a few seconds.
 */
function sdkEvent(users: number, nowMs: number): Record<string, unknown> {
  const user = Math.floor(Math.random() * users);
  const distinctId = `user-${user}`;
  const ts = nowMs - Math.floor(Math.random() * 5_000);
  const base = { uuid: newUuidv7(ts), distinct_id: distinctId, timestamp: new Date(ts).toISOString() };
  let properties: Record<string, unknown>;
  let event: string;
  if (Math.random() < 0.6) {
    const [browser, version] = pick(BROWSERS);
    const [osName, osVersion, device] = pick(OSES);
    const page = pick(PAGES);
    const referrer = pick(REFERRERS);
    event = Math.random() < 0.8 ? '$pageview' : '$pageleave';
    properties = {
      $os: osName,
      $os_version: osVersion,
      $browser: browser,
      $browser_version: version,
      $device_type: device,
      $current_url: `https://hedgebox.net${page}`,
      $host: 'hedgebox.net',
      $pathname: page,
      $screen_height: device === 'Mobile' ? 844 : 1080,
      $screen_width: device === 'Mobile' ? 390 : 1920,
      $referrer: referrer,
      $referring_domain: referrer === '$direct' ? '$direct' : new URL(referrer).host,
      $lib: 'web',
      $lib_version: '1.449.2',
      $session_id: `0193a1b2-${(user % 9000) + 1000}-7000-8000-${String(user).padStart(12, '0')}`,
      $window_id: `0193a1b2-${(user % 9000) + 1000}-7000-9000-${String(user).padStart(12, '0')}`,
    };
  } else {
    event = pick(SERVER_EVENTS);
    properties = {
      plan: pick(PLANS),
      file_size_bytes: Math.floor(Math.random() * 50_000_000),
      file_type: pick(['image/png', 'application/pdf', 'video/mp4', 'text/plain']),
      team_size: 1 + Math.floor(Math.random() * 40),
      duration_ms: Math.floor(Math.random() * 2_000),
      success: Math.random() < 0.97,
      region: pick(['eu-west-1', 'us-east-1', 'ap-south-1']),
      request_id: newUuidv7(ts),
      $lib: 'posthog-node',
      $lib_version: '5.70.0',
      $is_server: true,
      $geoip_disable: true,
    };
  }
  if (Math.random() < 0.05) properties.$set = { plan: pick(PLANS), email: `${distinctId}@hedgebox.net` };
  return { ...base, event, properties };
}

/** One request body as posthog-node sends it: `{api_key, batch, sent_at}`, gzip. */
function batchBody(token: string, size: number, users: number): Buffer {
  const now = Date.now();
  const batch = Array.from({ length: size }, () => sdkEvent(users, now));
  return gzipSync(JSON.stringify({ api_key: token, batch, sent_at: new Date(now).toISOString() }));
}

// ---------------------------------------------------------------------------------------------
// The load child (its own process, pinned to core 1)

/** What the parent tells the load child (`--load-child JSON`). */
interface LoadSpec {
  port: number;
  token: string;
  connections: number;
  seconds: number;
  batch: number;
  users: number;
  /** bodies to make before loading */
  poolSize: number;
  /** the server's pid, for its CPU time */
  serverPid: number;
}

/** What the load child prints (JSON, one line). */
interface LoadResult {
  requests: number;
  ok: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** bodies made while loading (the pool ran out: the load generator may have held the rate back) */
  liveBodies: number;
  /** seconds spent making the pool */
  poolSeconds: number;
  /** cores busy during the run: the whole machine, the server, this load generator */
  cores: { machine: number; server: number; load: number };
}

interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  timeouts: number;
  '2xx': number;
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, r: AutocannonResult) => void) => unknown;

async function loadChild(spec: LoadSpec): Promise<void> {
  const t0 = performance.now();
  // each body is sent once: its slot is emptied as it is taken (memory back as the run goes)
  const pool: (Buffer | undefined)[] = Array.from({ length: spec.poolSize }, () => batchBody(spec.token, spec.batch, spec.users));
  const poolSeconds = (performance.now() - t0) / 1000;
  let next = 0;
  let liveBodies = 0;
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const cpu0 = cpuSample([spec.serverPid, process.pid]);
  const r = await new Promise<AutocannonResult>((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${spec.port}`,
        connections: spec.connections,
        duration: spec.seconds,
        requests: [
          {
            method: 'POST',
            path: '/batch/',
            headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'User-Agent': 'posthog-node/5.70.0' },
            setupRequest: (req: Record<string, unknown>) => {
              let body = pool[next];
              if (body) pool[next++] = undefined;
              else {
                body = batchBody(spec.token, spec.batch, spec.users);
                liveBodies += 1;
              }
              return { ...req, body };
            },
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    ),
  );
  const cores = coresBetween(cpu0, cpuSample([spec.serverPid, process.pid]));
  const statuses = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
  const out: LoadResult = {
    requests: r.requests.total,
    ok: r['2xx'],
    p50: r.latency.p50,
    p99: r.latency.p99,
    statuses,
    errors: r.errors,
    timeouts: r.timeouts,
    liveBodies,
    poolSeconds,
    cores: { machine: cores.machine, server: cores.pids[0]!, load: cores.pids[1]! },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Runs the load child pinned to core 1 and returns its result. */
function runLoad(pin: boolean, spec: LoadSpec): Promise<LoadResult> {
  const [cmd, args] = pinned(pin, 1, [
    process.execPath,
    '--import',
    'tsx',
    path.join(ROOT, 'scripts/bench-capture.ts'),
    '--load-child',
    JSON.stringify(spec),
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load child exited ${code}: ${err}`)),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// One measurement: a fresh store, the server, the token, warm-up, measured run

interface Measurement {
  eventsPerSec: number;
  p50: number;
  p99: number;
  peakRssMb: number;
  requests: number;
  non2xx: number;
  status503: number;
  otherNon2xx: string;
  errors: number;
  liveBodies: number;
  serverCores: number;
  /** cores busy with anything but the server and the load generator (PostgreSQL's processes included) */
  otherCores: number;
}

/** A fresh store: its server environment, a row counter (given the running server's port and a key), and its removal. */
interface FreshStore {
  env: Record<string, string>;
  cliArgs: string[];
  countEvents(server: { port: number; key: string }): Promise<number>;
  remove(): Promise<void>;
}

async function freshStore(kind: StoreKind, databaseUrl: string): Promise<FreshStore> {
  if (kind === 'clickhouse') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-capture-ch-'));
    return {
      env: { DATA_DIR: dataDir, EVENTS_STORE: 'clickhouse', CLICKHOUSE_MEMORY_LIMIT: String(CLICKHOUSE_MEMORY_LIMIT) },
      cliArgs: ['--data-dir', dataDir],
      async countEvents({ port, key }) {
        const body = JSON.stringify({ query: { kind: 'HogQLQuery', query: 'select count() from events' } });
        const r = await request(
          port,
          'POST',
          '/api/environments/1/query/',
          { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body,
        );
        if (r.status !== 200) throw new Error(`count() answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
        return Number((JSON.parse(r.body.toString()) as { results: [[number | string]] }).results[0][0]);
      },
      async remove() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  if (kind === 'sqlite') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-capture-'));
    return {
      env: { DATA_DIR: dataDir },
      cliArgs: ['--data-dir', dataDir],
      async countEvents() {
        const store = openStore({ dataDir });
        try {
          return Number(
            (
              await store.db
                .selectFrom('events')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        } finally {
          await store.close();
        }
      },
      async remove() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = `envapi_bench_capture_${Date.now()}`;
  await pgAdmin(databaseUrl, `create schema ${schema}`);
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  url.searchParams.set('application_name', schema);
  return {
    env: { DATABASE_URL: url.toString() },
    cliArgs: ['--database-url', url.toString()],
    async countEvents() {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        return Number((await c.query<{ n: string }>('select count(*) as n from events')).rows[0]!.n);
      } finally {
        await c.end();
      }
    },
    async remove() {
      await pgAdmin(databaseUrl, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = '${schema}'`);
      await pgAdmin(databaseUrl, `drop schema if exists ${schema} cascade`);
    },
  };
}

/** The project API token as a user gets it: a key from `envapi keys create`, then `GET /api/projects/`; and that key. */
async function projectToken(port: number, cliArgs: string[]): Promise<{ token: string; key: string }> {
  const cli = spawnSync(
    process.execPath,
    ['bin/envapi.js', ...cliArgs, 'keys', 'create', '--user', BOOTSTRAP_EMAIL, '--scopes', '*', '--label', 'bench-capture', '--json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (cli.status !== 0) throw new Error(`envapi keys create exited ${cli.status}: ${cli.stderr}`);
  const { key } = JSON.parse(cli.stdout) as { key: string };
  const r = await request(port, 'GET', '/api/projects/', { Authorization: `Bearer ${key}` });
  if (r.status !== 200) throw new Error(`GET /api/projects/ answered ${r.status}: ${r.body.toString().slice(0, 300)}`);
  const token = (JSON.parse(r.body.toString()) as { results: { api_token: string }[] }).results[0]?.api_token;
  if (!token?.startsWith('phc_')) throw new Error(`GET /api/projects/ gave no phc_ token: ${r.body.toString().slice(0, 300)}`);
  return { token, key };
}

/** The row count once it has stopped growing (the queue has drained): equal twice, 250 ms apart. */
async function settledCount(store: FreshStore, server: { port: number; key: string }): Promise<number> {
  let last = await store.countEvents(server);
  for (;;) {
    await new Promise((res) => setTimeout(res, 250));
    const n = await store.countEvents(server);
    if (n === last) return n;
    last = n;
  }
}

async function measure(kind: StoreKind, o: Options, pin: boolean, label: string): Promise<Measurement> {
  const store = await freshStore(kind, o.databaseUrl);
  let server: Running | undefined;
  try {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_ENABLED: 'off',
      ...store.env,
    };
    if (kind !== 'pg') delete env.DATABASE_URL;
    for (const k of ['REDIS_URL', 'VALIDATE_RESPONSES', 'LOG_LEVEL', 'CAPTURE_MAX_QUEUED_EVENTS']) delete env[k];
    const argv = [
      process.execPath,
      ...SERVER_NODE_FLAGS,
      ...(o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(o.cpuProf)] : []),
      'dist/server/main.js',
    ];
    server = await startTarget(kind, argv, env, port, '/_health', {}, pin, `envapi (${kind})`);
    const { token, key } = await projectToken(port, store.cliArgs);
    const counted = { port, key };
    const serverPid = server.child.pid!;
    const poolSize = (seconds: number) => Math.ceil((o.poolRate * seconds) / o.batch);
    const spec = (seconds: number): LoadSpec => ({
      port,
      token,
      connections: o.connections,
      seconds,
      batch: o.batch,
      users: o.users,
      poolSize: poolSize(seconds),
      serverPid,
    });
    await runLoad(pin, spec(o.warmup));
    server.assertAlive();
    const before = await settledCount(store, counted);
    const r = await runLoad(pin, spec(o.duration));
    server.assertAlive();
    const after = await settledCount(store, counted);
    const peak = peakRssMb(server.child.pid);
    const non2xx = Object.entries(r.statuses).filter(([s]) => !s.startsWith('2'));
    const m: Measurement = {
      eventsPerSec: (after - before) / o.duration,
      p50: r.p50,
      p99: r.p99,
      peakRssMb: peak,
      requests: r.requests,
      non2xx: non2xx.reduce((n, [, c]) => n + c, 0),
      status503: r.statuses['503'] ?? 0,
      otherNon2xx: non2xx
        .filter(([s]) => s !== '503')
        .map(([s, c]) => `${c}× ${s}`)
        .join(', '),
      errors: r.errors + r.timeouts,
      liveBodies: r.liveBodies,
      serverCores: r.cores.server,
      otherCores: r.cores.machine - r.cores.server - r.cores.load,
    };
    console.error(
      `${label} ${kind}: ${Math.round(m.eventsPerSec)} events/s committed (${after - before} rows; ${r.ok} × 200 = ${r.ok * o.batch} events), ` +
        `p50 ${m.p50} ms, p99 ${m.p99} ms, peak RSS ${m.peakRssMb} MB, ${m.requests} requests, non-2xx ${m.non2xx} (503: ${m.status503}), ` +
        `errors ${m.errors}, cores: server ${m.serverCores.toFixed(2)}, other ${m.otherCores.toFixed(2)}${m.liveBodies ? `, ${m.liveBodies} bodies made while loading (pool too small: raise --pool-rate)` : ''}; pool made in ${r.poolSeconds.toFixed(1)} s`,
    );
    return m;
  } finally {
    await server?.stop();
    await store.remove();
  }
}

// ---------------------------------------------------------------------------------------------
// The run and the report

const STORE_LABEL: Record<StoreKind, string> = { sqlite: 'SQLite', pg: 'PostgreSQL', clickhouse: 'ClickHouse (embedded chDB)' };
/** The goals: issue 19's on the row stores; issue 39's on ClickHouse (RSS: under the engine's memory cap). */
const GOALS: Record<StoreKind, { eventsPerSec: number; p99: number; rssMb: number; issue: number }> = {
  sqlite: { eventsPerSec: 25_000, p99: 100, rssMb: 300, issue: 19 },
  pg: { eventsPerSec: 25_000, p99: 100, rssMb: 300, issue: 19 },
  clickhouse: { eventsPerSec: 25_000, p99: 250, rssMb: CLICKHOUSE_MEMORY_LIMIT / 1024 ** 2, issue: 39 },
};

function commandLine(o: Options): string {
  const parts = ['npm run bench:capture --'];
  if (o.store !== 'both') parts.push(`--store ${o.store}`);
  parts.push(`--reps ${o.reps} --duration ${o.duration} --warmup ${o.warmup} --connections ${o.connections} --batch ${o.batch}`);
  return parts.join(' ');
}

async function pgVersion(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
  } finally {
    await c.end();
  }
}

async function run(o: Options): Promise<void> {
  if (o.loadChild) return loadChild(JSON.parse(o.loadChild) as LoadSpec);
  if (!fs.existsSync(path.join(ROOT, 'dist/server/main.js')))
    throw new Error('dist/server/main.js is missing: run `npm run build` (npm run bench:capture builds first)');
  if (o.cpuProf) fs.mkdirSync(path.resolve(o.cpuProf), { recursive: true });
  const pin = canPin();
  const kinds: StoreKind[] = o.store === 'both' ? ['sqlite', 'pg'] : [o.store];
  const results: Record<StoreKind, Measurement[]> = { sqlite: [], pg: [], clickhouse: [] };
  for (let rep = 0; rep < o.reps; rep++)
    for (const kind of kinds) results[kind].push(await measure(kind, o, pin, `rep ${rep + 1}/${o.reps}`));

  const date = new Date().toISOString().slice(0, 10);
  const pgInfo = kinds.includes('pg') ? `; PostgreSQL ${await pgVersion(o.databaseUrl)} on loopback (its processes not pinned)` : '';
  const lines = [
    `Measured ${date}: \`${commandLine(o)}\``,
    '',
    `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'}); ${pin ? 'server pinned to core 0, load generator to core 1 (taskset)' : 'no pinning (taskset unavailable or one core)'}${pgInfo}. ` +
      `Per repetition and store: a fresh store, \`POST /batch/\` with gzip bodies of ${o.batch} events (posthog-node's format, every uuid distinct) from ${o.connections} connections, ` +
      `${o.warmup} s warm-up, then ${o.duration} s measured. Events/s are rows committed during the measured run / ${o.duration} s; median (min–max) over ${o.reps} repetition(s), other columns medians. ` +
      `Other CPU: cores busy during the measured run with anything but the server and the load generator: PostgreSQL's processes, the kernel's writeback of the store's files, and whatever else ran on the machine meanwhile.`,
    '',
    '| store | events/s committed | p50 ms | p99 ms | peak RSS MB | requests | non-2xx (503) | socket errors | server CPU, cores | other CPU, cores |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const checks: string[] = [];
  for (const kind of kinds) {
    const GOAL = GOALS[kind];
    const ms = results[kind];
    const med = (f: (m: Measurement) => number) => median(ms.map(f));
    const other = ms.map((m) => m.otherNon2xx).filter(Boolean);
    const live = ms.reduce((n, m) => n + m.liveBodies, 0);
    lines.push(
      `| ${STORE_LABEL[kind]} | ${spread(ms.map((m) => m.eventsPerSec))}${live ? ' ⚠ load generator made bodies while loading' : ''} | ${med((m) => m.p50).toFixed(0)} | ${med((m) => m.p99).toFixed(0)} | ${med((m) => m.peakRssMb)} | ` +
        `${med((m) => m.requests).toLocaleString('en-US')} | ${ms.map((m) => m.non2xx).join(', ')} (${ms.map((m) => m.status503).join(', ')})${other.length ? ` ${other.join('; ')}` : ''} | ${ms.map((m) => m.errors).join(', ')} | ` +
        `${med((m) => m.serverCores).toFixed(2)} | ${ms.map((m) => m.otherCores.toFixed(2)).join(', ')} |`,
    );
    const check = (what: string, value: number, ok: boolean, unit: string) =>
      checks.push(
        `| ${STORE_LABEL[kind]} | ${what} | ${value.toLocaleString('en-US', { maximumFractionDigits: 0 })} ${unit} | ${ok ? 'met' : '**missed**'} |`,
      );
    check(
      `≥ ${GOAL.eventsPerSec.toLocaleString('en-US')} events/s committed`,
      med((m) => m.eventsPerSec),
      med((m) => m.eventsPerSec) >= GOAL.eventsPerSec,
      'events/s',
    );
    check(
      `p99 ≤ ${GOAL.p99} ms`,
      med((m) => m.p99),
      med((m) => m.p99) <= GOAL.p99,
      'ms',
    );
    check(
      `peak RSS ≤ ${GOAL.rssMb} MB`,
      med((m) => m.peakRssMb),
      med((m) => m.peakRssMb) <= GOAL.rssMb,
      'MB',
    );
    const n503 = ms.reduce((n, m) => n + m.status503, 0);
    checks.push(`| ${STORE_LABEL[kind]} | no 503 under this load | ${n503} | ${n503 === 0 ? 'met' : '**missed**'} |`);
  }
  lines.push(
    '',
    `| store | goal (issue ${kinds
      .map((k) => GOALS[k].issue)
      .filter((v, i, a) => a.indexOf(v) === i)
      .join(', ')}) | measured (median) | |`,
    '|---|---|---|---|',
    ...checks,
  );
  const table = lines.join('\n');
  if (o.write && kinds.includes('clickhouse')) {
    writePerformanceBlock(
      'capture-clickhouse',
      table,
      'Capture on ClickHouse: `POST /batch/` under load (issue 39)',
      'Goal: the same SDK batches committed on the ClickHouse events store (embedded chDB) at **≥ 25,000 events/s**, request **p99 ≤ 250 ms**, ' +
        `the server's **RSS under the engine's memory cap** (${CLICKHOUSE_MEMORY_LIMIT / 1024 ** 2} MB here). Command: \`npm run bench:capture -- --store clickhouse\`.`,
    );
  } else if (o.write) {
    writePerformanceBlock(
      'capture',
      table,
      'Capture: `POST /batch/` under load (issue 19)',
      'Goal: PostHog SDK batches (100 events, gzip, from 16 connections) committed at **≥ 25,000 events/s** (the file import runs at ~32,000/s), ' +
        'request **p99 ≤ 100 ms**, server **RSS ≤ 300 MB**, on SQLite and on PostgreSQL; a 200 means the events are committed (group commit), ' +
        'so events/s count rows in the store, not answers. Command: `npm run bench:capture` (scripts/bench-capture.ts says how it measures).',
    );
  }
  console.log(table);
}

new Command('bench-capture')
  .description(
    'capture benchmark: POST /batch/ with gzip batches of posthog-node events, events/s committed, latency and memory, on SQLite and PostgreSQL',
  )
  .addOption(
    new Option('--store <kind>', 'which stores (both: SQLite and PostgreSQL; clickhouse: the events on embedded chDB)')
      .choices(['both', 'sqlite', 'pg', 'clickhouse'])
      .default('both'),
  )
  .option('--database-url <url>', 'PostgreSQL server (a fresh schema per run, dropped after)', 'postgres://postgres@127.0.0.1:5432/test')
  .option('--reps <n>', 'repetitions per store (a fresh store each)', positive('--reps'), 3)
  .option('--duration <s>', 'seconds of the measured run', positive('--duration'), 10)
  .option('--warmup <s>', 'seconds of discarded warm-up before it', positive('--warmup'), 3)
  .option('--connections <n>', 'concurrent connections', positive('--connections'), 16)
  .option('--batch <n>', 'events per request', positive('--batch'), 100)
  .option('--users <n>', 'distinct ids the events are spread over', positive('--users'), 10_000)
  .option('--pool-rate <n>', 'events/s the pre-made bodies cover (more are made while loading)', positive('--pool-rate'), 60_000)
  .option('--no-write', 'do not write the table into docs/performance.md')
  .option('--cpu-prof <dir>', 'run the server under node --cpu-prof, profiles into DIR')
  .addOption(new Option('--load-child <json>', 'internal: run as the load generator').hideHelp())
  .action((o: Options) => run(o))
  .parseAsync()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
