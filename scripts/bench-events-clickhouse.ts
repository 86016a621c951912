/**
 * The ClickHouse part of the events benchmark (issue 39's performance table), run by
 * `npm run bench:events -- --store clickhouse` (scripts/bench-events.ts hands its options here):
 *
 *   npm run bench:events -- --store clickhouse [--events 1000000] [--runs 20] [--seed 42]
 *                            [--sqlite-events N] [--sqlite-runs 3] [--no-sqlite] [--no-file-load] [--keep DIR]
 *
 * One run, in this order:
 * 1. A fresh data dir (SQLite configuration store, events on embedded chDB in DATA_DIR/clickhouse/),
 *    opened as the CLI's `withStore` opens it (`openClickHouseEvents` + `useClickHouseEvents`).
 *    PostHog's `mat_$browser` and `mat_$pathname` columns are added before the import, with
 *    server/storage/clickhouse/schema.ts `materializedColumnDdl` (the DDL `envapi events
 *    materialize` runs), so the import writes them and the raw SQL can read them.
 * 2. `--events` demo events into project 1 (all of them in one project, so that each shape reads N
 *    events) through the real import path (`importEvents`, the path of `envapi demo`; above
 *    10,000,000 events the demo runs of 10,000,000 with consecutive seeds, `demoEvents`), timed
 *    (events/s, demo generation included). The writer's steps are timed on the side (its methods
 *    wrapped: uuid look-up, person reads, person updates on SQLite, the insert, the mirror), to
 *    say where an import's time goes.
 * 3. The engine's own limit on the same data, in the bench process: the events written to a
 *    JSONEachRow file (`INSERT INTO FUNCTION file(…)`), then that file loaded by chDB into a copy
 *    of `events` (`INSERT … SELECT FROM file(…, JSONEachRow)`), timed; then both are dropped.
 * 4. Bytes an event on disk (`system.parts`, active parts of `events`: `bytes_on_disk` / rows), and
 *    per column (`system.columns`).
 * 5. Raw SQL, in the bench process while no server runs (chDB lets one process hold the data
 *    directory): each shape written by hand as ClickHouse SQL on `events` (the `mat_` columns,
 *    `team_id = 1`), sent with `@clickhouse/client` on chDB (JSONEachRow, as the server's reads);
 *    and the SQL the HogQL compiler prints for the same shape, run as the server runs it
 *    (`runCompiled`: a probe and an optimistic form first, when the query has them), so that the
 *    dialect's cost is told apart from the server's.
 * 6. chDB closed in the bench process; the real server started as a child (`EVENTS_STORE=clickhouse`,
 *    the same DATA_DIR, `NODE_ENV=production`); each HogQL shape timed over HTTP
 *    (`POST /api/environments/1/query/`), and the events list (latest 100, `GET …/events/`).
 * 7. Unless `--no-sqlite`: the SQLite store (events as rows of the SQLite file) in another fresh
 *    data dir, `--sqlite-events` events (default `--events`), `$browser` and `$pathname`
 *    materialized before the import (`materializeProperty`, SQLite's generated columns), and the
 *    same HogQL shapes over HTTP on its server, `--sqlite-runs` runs each.
 * Latencies are client-side round trips (keep-alive `node:http`, loopback), median and p95 in ms
 * after a warm-up of at least one request and up to ~2 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { bootstrap } from '../server/bootstrap.js';
import { clickhouseDialect } from '../server/hogql/dialect-clickhouse.js';
import { parseSelect } from '../server/hogql/parser.js';
import { runCompiled } from '../server/hogql/run.js';
import { compileSelect, type CompiledSelect } from '../server/hogql/select.js';
import { generateDemoEvents, type DemoEventRow } from '../server/ingest/demo.js';
import { importEvents } from '../server/ingest/import.js';
import { materializedColumnDdl, stringLiteral } from '../server/storage/clickhouse/schema.js';
import { migrateToLatest, openStore, type Store } from '../server/storage/db.js';
import {
  EventsWriteRepository,
  materializeProperty,
  openClickHouseEvents,
  useClickHouseEvents,
  type ClickHouseEvents,
} from '../server/storage/events/index.js';
import { AccountsRepository } from '../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../server/storage/repositories/api-keys.js';

/** What bench-events.ts passes on. */
export interface ClickHouseBenchOptions {
  events: number;
  runs: number;
  seed: number;
  port: number;
  sqlite: boolean;
  sqliteEvents?: number | undefined;
  sqliteRuns: number;
  fileLoad: boolean;
  keep?: string | undefined;
}

/** A shape: its HogQL (sent to both servers) and the same question as hand-written ClickHouse SQL. */
interface Shape {
  name: string;
  hogql: string;
  raw: string;
}

const SHAPES: Shape[] = [
  {
    name: 'count by event',
    hogql: 'select event, count() from events group by event',
    raw: 'select event, count() from events where team_id = 1 group by event',
  },
  {
    name: 'uniq(distinct_id) per day',
    hogql: 'select toStartOfDay(timestamp) as day, uniq(distinct_id) from events group by day order by day',
    raw: 'select toStartOfDay(timestamp) as day, uniq(distinct_id) from events where team_id = 1 group by day order by day',
  },
  {
    name: "$browser = 'Firefox' per day, 30 days (materialized)",
    hogql:
      "select toStartOfDay(timestamp) as day, count() from events where properties.$browser = 'Firefox' and timestamp >= now() - interval 30 day group by day order by day",
    raw: "select toStartOfDay(timestamp) as day, count() from events where team_id = 1 and `mat_$browser` = 'Firefox' and timestamp >= now() - interval 30 day group by day order by day",
  },
  {
    name: 'top 10 values of $pathname (materialized)',
    hogql: 'select properties.$pathname as v, count() as c from events group by v order by c desc limit 10',
    raw: 'select `mat_$pathname` as v, count() as c from events where team_id = 1 group by v order by c desc limit 10',
  },
];

/** The properties given PostHog's `mat_` columns before the import. */
const MATERIALIZED = ['$browser', '$pathname'] as const;

interface Stat {
  median: number;
  p95: number;
  runs: number;
}

function stat(samples: number[]): Stat {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  return { median: at(50), p95: at(95), runs: s.length };
}

/** Warm-up (at least once, then until ~2 s have passed, at most 200 times), then `runs` timed calls. */
async function timeIt(runs: number, fn: () => Promise<unknown>): Promise<Stat> {
  const started = performance.now();
  for (let i = 0; i < 200 && (i < 1 || performance.now() - started < 2_000); i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return stat(samples);
}

const fmt = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : '–');
const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Opens a fresh (or kept) data dir's store, bootstraps it and makes a key; project 1 is the default project. */
async function prepare(dataDir: string): Promise<{ store: Store; key: string; created: boolean }> {
  const store = openStore({ dataDir });
  await migrateToLatest(store);
  const boot = await bootstrap(store);
  const owner = boot.user ?? (await new AccountsRepository(store.db).listUsers())[0];
  if (!owner) throw new Error(`${dataDir} has no user`);
  const { key } = await new ApiKeysRepository(store.db).create({ user_id: owner.id, label: 'bench', scopes: ['*'], scoped_teams: null });
  return { store, key, created: boot.created };
}

/**
 * Demo events by runs of at most `DEMO_RUN` (`generateDemoEvents` plans every session of its run
 * in memory, ~a tenth of the events): above it, runs with the seeds `seed`, `seed + 1`, …, each
 * over the same 30 days (other persons, the same period: the data gets denser).
 */
function* demoEvents(count: number, seed: number, now: Date): Generator<DemoEventRow> {
  for (let done = 0, run = 0; done < count; run++) {
    const n = Math.min(DEMO_RUN, count - done);
    yield* generateDemoEvents({ count: n, seed: seed + run, now });
    done += n;
  }
}

const DEMO_RUN = 10_000_000;

/** Imports `count` demo events into project 1 of `store`; seconds taken. */
async function load(store: Store, count: number, seed: number, now: Date): Promise<{ seconds: number; inserted: number }> {
  let last = 0;
  const t0 = performance.now();
  const s = await importEvents(store, 1, demoEvents(count, seed, now), {
    onProgress: (done) => {
      if (performance.now() - last > 10_000) {
        last = performance.now();
        process.stderr.write(`  ${int(done)} events (${int(done / ((last - t0) / 1000))}/s)…\n`);
      }
    },
  });
  return { seconds: (performance.now() - t0) / 1000, inserted: s.inserted };
}

/** Wraps `obj[name]` so that its calls' time adds up in `into[label]`. */
function timeMethod<T extends object>(obj: T, name: keyof T & string, label: string, into: Map<string, number>): void {
  const original = obj[name] as unknown as (...a: unknown[]) => Promise<unknown>;
  (obj as Record<string, unknown>)[name] = async function (this: unknown, ...args: unknown[]) {
    const t = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      into.set(label, (into.get(label) ?? 0) + performance.now() - t);
    }
  };
}

async function startServer(dataDir: string, port: number, clickhouse: boolean): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), NODE_ENV: 'production', RATE_LIMIT_ENABLED: 'off' };
  env.QUERY_TIMEOUT_MS = '300000';
  env.DATA_DIR = dataDir;
  delete env.DATABASE_URL;
  delete env.CLICKHOUSE_URL;
  if (clickhouse) {
    env.EVENTS_STORE = 'clickhouse';
    env.UV_THREADPOOL_SIZE ??= '16';
  } else delete env.EVENTS_STORE;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${out}`)));
  });
  return child;
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** One HTTP exchange with the bench key; rejects on a status other than 200. */
function exchange(agent: http.Agent, key: string, url: string, body?: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: http.OutgoingHttpHeaders = { Authorization: `Bearer ${key}` };
    if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': payload.length });
    const req = http.request(url, { method: payload ? 'POST' : 'GET', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${url} → ${res.statusCode} ${text.slice(0, 400)}`));
        else resolve(text);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Times each HogQL shape (and with `list`, the latest 100) on a server of `dataDir`. */
async function timeOverHttp(
  dataDir: string,
  key: string,
  port: number,
  clickhouse: boolean,
  runs: number,
  list: boolean,
): Promise<{ shapes: Map<string, Stat & { rows: number }>; list?: Stat; rss?: number }> {
  const server = await startServer(dataDir, port, clickhouse);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = `http://127.0.0.1:${port}/api/environments/1`;
  const shapes = new Map<string, Stat & { rows: number }>();
  try {
    let latest: Stat | undefined;
    if (list) latest = await timeIt(Math.max(runs, 50), () => exchange(agent, key, `${base}/events/`));
    for (const s of SHAPES) {
      let rows = 0;
      const st = await timeIt(runs, async () => {
        const answer = JSON.parse(await exchange(agent, key, `${base}/query/`, { query: { kind: 'HogQLQuery', query: s.hogql } })) as {
          results: unknown[];
        };
        rows = answer.results.length;
      });
      shapes.set(s.name, { ...st, rows });
      process.stderr.write(`  ${clickhouse ? 'ClickHouse' : 'SQLite'} HTTP ${s.name}: ${fmt(st.median)} ms\n`);
    }
    const status = server.pid ? fs.readFileSync(`/proc/${server.pid}/status`, 'utf8') : '';
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
    return { shapes, ...(latest ? { list: latest } : {}), rss };
  } finally {
    agent.destroy();
    await stopServer(server);
  }
}

/** Rows of a raw ClickHouse query through the client (JSONEachRow, as the server's reads). */
async function rawRows(ch: ClickHouseEvents, query: string): Promise<Record<string, unknown>[]> {
  const r = await ch.connection.client.query({ query, format: 'JSONEachRow' });
  return r.json<Record<string, unknown>>();
}

/** The HogQL compiler's query for `hogql` on this store (team 1), compiled for ClickHouse. */
async function compiledFor(ch: ClickHouseEvents, store: Store, hogql: string) {
  const events = ch.store(store.db);
  const table = events.table(await events.materializedColumns());
  const ast = await parseSelect(hogql);
  return compileSelect(ast, {
    dialect: clickhouseDialect,
    teamId: 1,
    source: hogql,
    attr: 'query',
    now: new Date(),
    events: table,
  });
}

/** The SQL of a compiled query as the report prints it: the full query, and its optimistic form and probe when it has them. */
function printed(ch: ClickHouseEvents, compiled: CompiledSelect): string {
  const text = (q: CompiledSelect['sql']) => q.compile(ch.db).sql;
  if (!compiled.optimistic) return text(compiled.sql);
  return [
    text(compiled.sql),
    '-- optimistic form (run when the probe finds no row):',
    text(compiled.optimistic.sql),
    '-- probe:',
    text(compiled.optimistic.probe),
  ].join('\n');
}

/** Loads the imported events again from a JSONEachRow file, by the engine alone (step 3); events/s. */
async function engineFileLoad(ch: ClickHouseEvents, dir: string, rows: number): Promise<{ rate: number; fileMb: number; exportS: number }> {
  const client = ch.connection.client;
  const file = path.join(dir, 'events-export.jsonl');
  const columns =
    'uuid, event, properties, timestamp, team_id, distinct_id, elements_chain, created_at, person_id, person_created_at, person_properties, person_mode, _timestamp, _offset';
  const t0 = performance.now();
  await client.command({ query: `INSERT INTO FUNCTION file(${stringLiteral(file)}, 'JSONEachRow') SELECT ${columns} FROM events` });
  const exportS = (performance.now() - t0) / 1000;
  const fileMb = fs.statSync(file).size / 1024 / 1024;
  await client.command({ query: 'DROP TABLE IF EXISTS events_load' });
  await client.command({ query: 'CREATE TABLE events_load AS events' });
  try {
    const structure = (await rawRows(ch, `select name, type from system.columns where database = currentDatabase() and table = 'events'`))
      .filter((c) => columns.split(', ').includes(String(c.name)))
      .map((c) => `${String(c.name)} ${String(c.type)}`)
      .join(', ');
    const t1 = performance.now();
    await client.command({
      query: `INSERT INTO events_load (${columns}) SELECT ${columns} FROM file(${stringLiteral(file)}, 'JSONEachRow', ${stringLiteral(structure)})`,
    });
    return { rate: rows / ((performance.now() - t1) / 1000), fileMb, exportS };
  } finally {
    await client.command({ query: 'DROP TABLE IF EXISTS events_load SYNC' });
    fs.rmSync(file, { force: true });
  }
}

export async function benchClickHouse(o: ClickHouseBenchOptions): Promise<void> {
  const now = new Date();
  const out: string[] = [];
  const dataDir = o.keep ? path.resolve(o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-ch-'));
  const sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-sq-'));
  const load1 = os.loadavg();
  try {
    const { store, key, created } = await prepare(dataDir);
    const ch = await openClickHouseEvents({ dataDir }, { budgetMs: 300_000 });
    let imported: { seconds: number; inserted: number } | undefined;
    const steps = new Map<string, number>();
    let file: Awaited<ReturnType<typeof engineFileLoad>> | undefined;
    let rows = 0;
    const raw = new Map<string, { raw: Stat; compiled: Stat; sql: string; rows: number }>();
    let bytes: { total: number; columns: { name: string; bytes: number }[] } = { total: 0, columns: [] };
    try {
      useClickHouseEvents(store, ch);
      if (created) {
        for (const p of MATERIALIZED)
          for (const ddl of materializedColumnDdl('events', p, `mat_${p}`)) await ch.connection.client.command({ query: ddl });
        timeMethod(ch.writer, 'storedUuids', 'uuid look-up (ClickHouse)', steps);
        timeMethod(ch.writer, 'personsOf', 'persons read, before and after (SQLite)', steps);
        timeMethod(ch.writer, 'insertEvents', 'events insert (client → chDB, JSONEachRow)', steps);
        timeMethod(ch.writer, 'mirrorPersons', 'person mirror insert (ClickHouse)', steps);
        timeMethod(EventsWriteRepository.prototype, 'applyPersonUpdates', 'person updates (SQLite)', steps);
        console.error(`Importing ${int(o.events)} demo events into ${dataDir} (events on embedded chDB) …`);
        imported = await load(store, o.events, o.seed, now);
      } else console.error(`Reusing ${dataDir} (no import).`);
      rows = Number((await rawRows(ch, 'select count() as n from events'))[0]?.n ?? 0);
      if (o.fileLoad && created) {
        console.error('Exporting the events to JSONEachRow and loading them back with chDB alone …');
        file = await engineFileLoad(ch, dataDir, rows);
      }
      const parts = await rawRows(
        ch,
        `select sum(bytes_on_disk) as b, sum(rows) as r, count() as n from system.parts where active and table = 'events'`,
      );
      const cols = await rawRows(
        ch,
        `select name, data_compressed_bytes as b from system.columns where database = currentDatabase() and table = 'events' order by data_compressed_bytes desc limit 6`,
      );
      bytes = { total: Number(parts[0]?.b), columns: cols.map((c) => ({ name: String(c.name), bytes: Number(c.b) })) };
      out.push(`Active parts of events: ${String(parts[0]?.n)}`);
      for (const s of SHAPES) {
        const compiled = await compiledFor(ch, store, s.hogql);
        const r = await timeIt(o.runs, () => rawRows(ch, s.raw));
        // as the server runs it (runCompiled: the probe and the optimistic form included)
        const c = await timeIt(o.runs, () => runCompiled(ch.db, compiled));
        raw.set(s.name, { raw: r, compiled: c, sql: printed(ch, compiled), rows: (await rawRows(ch, s.raw)).length });
        process.stderr.write(`  raw ${s.name}: ${fmt(r.median)} ms; compiled HogQL SQL ${fmt(c.median)} ms\n`);
      }
    } finally {
      useClickHouseEvents(store, undefined);
      await ch.close();
      await store.close();
    }
    const chHttp = await timeOverHttp(dataDir, key, o.port, true, o.runs, true);

    let sq: { n: number; seconds: number; http: Awaited<ReturnType<typeof timeOverHttp>> } | undefined;
    if (o.sqlite) {
      const n = o.sqliteEvents ?? o.events;
      const s = await prepare(sqliteDir);
      try {
        for (const p of MATERIALIZED) await materializeProperty(s.store, 'event', p);
        console.error(`SQLite: importing ${int(n)} demo events into ${sqliteDir} …`);
        const r = await load(s.store, n, o.seed, now);
        sq = { n, seconds: r.seconds, http: undefined as never };
      } finally {
        await s.store.close();
      }
      sq.http = await timeOverHttp(sqliteDir, s.key, o.port + 1, false, o.sqliteRuns, false);
    }
    const load2 = os.loadavg();

    const lines = [
      `ClickHouse events benchmark — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GB`,
      `Load average at start ${load1.map((x) => x.toFixed(2)).join(' ')}, at end ${load2.map((x) => x.toFixed(2)).join(' ')}`,
      `ClickHouse store: ${int(rows)} events in project 1 (embedded chDB, ${dataDir})`,
      imported
        ? `Import (importEvents, demo generation included): ${int(imported.inserted / imported.seconds)} events/s (${imported.seconds.toFixed(1)} s)`
        : 'Import: not measured (store reused)',
      ...[...steps].map(([k, ms]) => `  - ${k}: ${(ms / 1000).toFixed(1)} s`),
      ...(imported
        ? [
            `  - the rest (demo generation, normalising, batching, SQLite transactions): ${(imported.seconds - [...steps.values()].reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s`,
          ]
        : []),
      file
        ? `Engine alone: chDB loads the same events from a JSONEachRow file (${int(file.fileMb)} MB) at ${int(file.rate)} events/s (export took ${file.exportS.toFixed(1)} s)`
        : 'Engine file load: not measured',
      `Bytes an event on disk: ${(bytes.total / rows).toFixed(1)} (${int(bytes.total / 2 ** 20)} MB); largest columns: ${bytes.columns.map((c) => `${c.name} ${(c.bytes / rows).toFixed(1)} B`).join(', ')}`,
      `Events list, latest 100 over HTTP: median ${fmt(chHttp.list?.median ?? NaN)} ms, p95 ${fmt(chHttp.list?.p95 ?? NaN)} ms (${chHttp.list?.runs} runs)`,
      `ClickHouse server RSS after the runs: ${int(chHttp.rss ?? NaN)} MB`,
      ...(sq
        ? [
            `SQLite store: ${int(sq.n)} events in project 1, import ${int(sq.n / sq.seconds)} events/s (${sq.seconds.toFixed(1)} s, $browser and $pathname materialized first)`,
          ]
        : []),
      '',
      `| shape | HogQL over HTTP, ms (median / p95) | compiled HogQL SQL in process, ms | raw SQL, ms | HogQL / raw | SQLite HogQL, ms${sq && sq.n !== rows ? ` (at ${int(sq.n)})` : ''} | SQLite / ClickHouse | rows |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...SHAPES.map((s) => {
        const h = chHttp.shapes.get(s.name)!;
        const r = raw.get(s.name)!;
        const q = sq?.http.shapes.get(s.name);
        return `| ${s.name} | ${fmt(h.median)} / ${fmt(h.p95)} | ${fmt(r.compiled.median)} | ${fmt(r.raw.median)} | ${(h.median / r.raw.median).toFixed(2)}× | ${q ? `${fmt(q.median)} / ${fmt(q.p95)}` : '–'} | ${q ? `${(q.median / h.median).toFixed(1)}×` : '–'} | ${h.rows}${q && q.rows !== h.rows ? ` (SQLite ${q.rows})` : ''} |`;
      }),
      '',
      `Runs: ClickHouse ${o.runs} a shape${sq ? `, SQLite ${o.sqliteRuns} a shape` : ''}.`,
      '',
      '## The SQL the HogQL compiler prints (ClickHouse, project 1)',
      '',
      ...SHAPES.flatMap((s) => [
        `### ${s.name}`,
        '',
        `HogQL: \`${s.hogql}\``,
        '',
        `Raw: \`${s.raw}\``,
        '',
        '```sql',
        raw.get(s.name)!.sql,
        '```',
        '',
      ]),
      ...out,
    ];
    console.log(lines.join('\n'));
  } finally {
    if (!o.keep) fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(sqliteDir, { recursive: true, force: true });
  }
}
