/**
 * Events benchmark (not a test): loads demo events into a fresh store (SQLite, or PostgreSQL with
 * `--db postgres`), starts the real server as `npm start` runs it in production (response
 * validation off), and times each query shape of the events API over HTTP on loopback.
 *
 *   npm run bench:events -- [--events 1000000] [--runs 50] [--seed 42] [--keep DIR] [--materialize | --materialize-first]
 *   npm run bench:events -- --db postgres [--database-url URL] [--keep [SCHEMA]] [...]
 *   npm run bench:events -- --store clickhouse [--events 1000000] [--runs 20] [--sqlite-events N] [--sqlite-runs 3] [--no-sqlite] [--no-file-load] [--keep DIR]
 *
 * `--store clickhouse` (issue 39) runs scripts/bench-events-clickhouse.ts instead: the events on
 * embedded chDB, imported through `importEvents`, the HogQL shapes over HTTP beside the same
 * questions as raw ClickHouse SQL, and the SQLite store's times for the same shapes (its docstring
 * says what it measures and in which process).
 *
 * On PostgreSQL (default URL postgres://postgres@127.0.0.1:5432/test) the run gets a schema of its
 * own, `envapi_bench_<ms since epoch>`, reached through the URL's `options=-c search_path=<schema>`
 * (as the test helpers do); migrations run with `migrateToLatest`, the server child gets that URL
 * as `DATABASE_URL`, and the schema is dropped at the end. `--keep` keeps it (and prints its name);
 * `--keep SCHEMA` uses (and keeps) that schema, reusing its events when it has some.
 *
 * The store gets `--events` demo events split over two projects (project 1 gets the first half,
 * project 2 the second half, different seeds), through the same import path as `envapi demo`, so
 * the import rate is measured too. With `--keep DIR` the store is kept, and a later run with the
 * same DIR reuses it (no import). Latencies are measured at the client, a keep-alive `node:http`
 * agent: the whole round trip over loopback including reading the body, so they bound the
 * server-side time from above. Each shape is first sent for ~2 s (3 to 200 requests, `warmUp`), so
 * that the timed runs see a warm server. Reports median and p95 in milliseconds per query shape, the import
 * rate (events/s), and the server's resident memory (VmRSS and its peak VmHWM, MB) after the runs.
 *
 * The HogQL shapes (issue 20) go through `POST /api/environments/1/query/` as HogQLQuery bodies;
 * after the table the report prints each one's compiled SQL and its plan (SQLite's EXPLAIN QUERY
 * PLAN, PostgreSQL's EXPLAIN), compiled by server/hogql/ as the server compiles it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { CompiledQuery, sql } from 'kysely';
import { pgAdmin } from './bench-lib.js';
import { bootstrap } from '../server/bootstrap.js';
import { hogqlDialect } from '../server/hogql/index.js';
import { parseSelect } from '../server/hogql/parser.js';
import { compileSelect } from '../server/hogql/select.js';
import { generateDemoEvents } from '../server/ingest/demo.js';
import { importEvents } from '../server/ingest/import.js';
import { migrateToLatest, openStore, type Store } from '../server/storage/db.js';
import { AccountsRepository } from '../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../server/storage/repositories/api-keys.js';
import { jsonText } from '../server/storage/dialect.js';
import { eventsStore } from '../server/storage/events/index.js';
import { listMaterializedColumns, materializeProperty } from '../server/storage/events/materialized.js';
import { readEventProperty } from '../server/storage/events/property-sets.js';
import { DEMO_HOT_PROPERTIES } from '../server/cli/materialize.js';
import { benchClickHouse } from './bench-events-clickhouse.js';

interface Stat {
  name: string;
  runs: number;
  median: number;
  p95: number;
  note?: string;
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

function summarize(name: string, samples: number[], note?: string): Stat {
  const sorted = [...samples].sort((a, b) => a - b);
  return { name, runs: samples.length, median: percentile(sorted, 50), p95: percentile(sorted, 95), ...(note ? { note } : {}) };
}

/** Memory of a process from /proc (MB); undefined where /proc is missing. */
function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return undefined;
  }
}

/** The HogQL shapes of issue 20, run as HogQLQuery bodies through the query endpoint. */
const HOGQL_SHAPES: { name: string; query: string }[] = [
  { name: 'HogQL: select event, count() group by event', query: 'select event, count() from events group by event' },
  {
    name: 'HogQL: where on one property (latest 100 with $browser = Chrome)',
    query: "select uuid, event, timestamp from events where properties.$browser = 'Chrome' order by timestamp desc limit 100",
  },
  {
    name: 'HogQL: count where on one property ($browser = Chrome)',
    query: "select count() from events where properties.$browser = 'Chrome'",
  },
  {
    name: 'HogQL: toStartOfDay(timestamp) trend, 30 days',
    query:
      'select toStartOfDay(timestamp) as day, count() from events where timestamp >= now() - interval 30 day group by day order by day',
  },
];

/** Each HogQL shape's compiled SQL (as the server compiles it for `teamId`) and the store's plan for it. */
async function hogqlPlans(store: Store, teamId: number): Promise<string[]> {
  const out: string[] = [];
  // the materialized columns as the server reads them at this moment (runHogQLQuery does the same)
  const events = eventsStore(store.db);
  const table = events.table(await events.materializedColumns());
  for (const shape of HOGQL_SHAPES) {
    const ast = await parseSelect(shape.query);
    const compiled = compileSelect(ast, {
      dialect: hogqlDialect(store.dialect),
      teamId,
      source: shape.query,
      attr: 'query',
      now: new Date(),
      events: table,
    }).sql.compile(store.db);
    const explain = store.dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const rows = (await store.db.executeQuery(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]))).rows as Record<
      string,
      unknown
    >[];
    let plan: string[];
    if (store.dialect === 'sqlite') {
      // id/parent form a tree: indent each step under its parent
      const depth = new Map<number, number>();
      plan = rows.map((r) => {
        const d = (depth.get(Number(r.parent)) ?? -1) + 1;
        depth.set(Number(r.id), d);
        return `${'  '.repeat(d)}${String(r.detail)}`;
      });
    } else {
      plan = rows.map((r) => String(r['QUERY PLAN']));
    }
    out.push(
      `### ${shape.name}`,
      '',
      `HogQL: \`${shape.query}\``,
      '',
      '```sql',
      compiled.sql,
      `-- parameters: ${JSON.stringify(compiled.parameters)}`,
      '```',
      '',
      '```',
      ...plan,
      '```',
      '',
    );
  }
  return out;
}

/** Where the store lives: a SQLite data directory, or a PostgreSQL URL (with its search_path). */
type Target = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string };

/** Warm-up before a shape's timed runs: at least `WARM_UP_MIN_RUNS` requests, and more until `WARM_UP_MS` have passed or `WARM_UP_MAX_RUNS` were sent. */
const WARM_UP_MIN_RUNS = 3;
const WARM_UP_MAX_RUNS = 200;
const WARM_UP_MS = 2_000;

/**
 * Sends a shape's request until the server's code for it is compiled by V8's optimizing tiers,
 * so that the timed runs measure a server in its steady state, as one that has served for a while.
 * With 3 warm-ups only, the latest-100 page of a fresh server took 8.1 ms median over its next 30
 * requests and 3.4–3.7 ms after 1,000 (docs/performance.md): the difference was V8, not the store.
 */
async function warmUp(send: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  for (let i = 0; i < WARM_UP_MAX_RUNS && (i < WARM_UP_MIN_RUNS || performance.now() - started < WARM_UP_MS); i++) await send();
}

/** The server's `QUERY_TIMEOUT_MS` during the benchmark, ms. */
const BENCH_QUERY_TIMEOUT_MS = 300_000;

async function startServer(target: Target, port: number): Promise<ChildProcess> {
  // Rate limits off: the runs send far more than a key's 240 events requests a minute. The read
  // pool's time budget at 5 min instead of 30 s: a shape is measured, not cut off (HogQL's count
  // over a property without its column reads every row: 20–30 s at 10,000,000 events on SQLite).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    NODE_ENV: 'production',
    RATE_LIMIT_ENABLED: 'off',
    QUERY_TIMEOUT_MS: String(BENCH_QUERY_TIMEOUT_MS),
  };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  if (target.kind === 'sqlite') env.DATA_DIR = target.dataDir;
  else env.DATABASE_URL = target.url;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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

/** Sizes of the events table and its indexes (MB; on PostgreSQL summed over the partitions), and the uuid guard's, for the report. */
async function storeSize(store: Store, target: Target): Promise<string> {
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  if (target.kind === 'sqlite') {
    const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
    const file = store.location;
    return `SQLite file ${mb(size(file))} MB (+ WAL ${mb(size(`${file}-wal`))} MB)`;
  }
  // a partitioned events (migration 0008) has no storage of its own: sum over its partitions
  // (pg_partition_tree also answers a plain table, as itself)
  const r = await sql<{ heap: string; idx: string; total: string; rows: string; parts: string; guard: string | null }>`
    select sum(pg_table_size(t.relid)) as heap, sum(pg_indexes_size(t.relid)) as idx,
           sum(pg_total_relation_size(t.relid)) as total, (select count(*) from events) as rows,
           count(*) filter (where t.isleaf) as parts,
           (select pg_total_relation_size(to_regclass('event_uuids'))) as guard
    from pg_partition_tree('events') t`.execute(store.db);
  const row = r.rows[0]!;
  const perRow = Number(row.rows) ? (Number(row.heap) / Number(row.rows)).toFixed(0) : '?';
  const idx = await sql<{ name: string; size: string }>`
    select c.relname as name, (select coalesce(sum(pg_relation_size(t.relid)), 0) from pg_partition_tree(c.oid) t) as size
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'events'::regclass order by c.relname`.execute(store.db);
  return (
    `events table ${mb(Number(row.heap))} MB in ${row.parts} partition(s) (${perRow} B a row incl. TOAST), indexes ${mb(Number(row.idx))} MB ` +
    `(${idx.rows.map((x) => `${x.name} ${mb(Number(x.size))}`).join(', ')}), total ${mb(Number(row.total))} MB` +
    (row.guard === null ? '' : `; event_uuids (the uuid guard) ${mb(Number(row.guard))} MB`)
  );
}

const program = new Command('bench-events')
  .description('benchmark the events API on a fresh store of demo events (SQLite or PostgreSQL)')
  .option('--db <kind>', 'sqlite or postgres', 'sqlite')
  .option('--store <kind>', 'where the events live: rows of --db (default), or clickhouse (embedded chDB, issue 39)')
  .option('--sqlite-events <n>', '--store clickhouse: events in the SQLite store it is compared with (default --events)', (v) => Number(v))
  .option('--sqlite-runs <n>', '--store clickhouse: timed runs per shape on SQLite', (v) => Number(v), 3)
  .option('--no-sqlite', '--store clickhouse: no SQLite comparison')
  .option('--no-file-load', '--store clickhouse: skip the engine-alone load of the same events from a JSONEachRow file')
  .option('--database-url <url>', 'PostgreSQL server (with --db postgres)', 'postgres://postgres@127.0.0.1:5432/test')
  .option('--events <n>', 'demo events in the store (split over 2 projects)', (v) => Number(v), 1_000_000)
  .option('--runs <n>', 'timed runs per query shape (default 50; 20 with --store clickhouse)', (v) => Number(v))
  .option('--seed <n>', 'demo seed', (v) => Number(v), 42)
  .option('--port <n>', 'server port', (v) => Number(v), 18_000 + Math.floor(Math.random() * 1000))
  .option(
    '--materialize',
    "after the shapes: materialize the demo's hot properties (envapi demo --materialize's), time it, and time the property shapes again",
  )
  .option(
    '--materialize-first',
    "materialize the demo's hot properties on the fresh store before the import, so that the import rate includes writing their columns and indexes (then times the shapes once, with the columns)",
  )
  .option('--keep [dir-or-schema]', 'SQLite: use (and keep) this data directory; PostgreSQL: keep the schema, or use (and keep) this one')
  .action(
    async (o: {
      db: string;
      databaseUrl: string;
      events: number;
      runs?: number;
      seed: number;
      port: number;
      keep?: string | true;
      materialize?: boolean;
      materializeFirst?: boolean;
      store?: string;
      sqliteEvents?: number;
      sqliteRuns: number;
      sqlite: boolean;
      fileLoad: boolean;
    }) => {
      if (o.store === 'clickhouse') {
        if (o.db !== 'sqlite' || o.keep === true)
          throw new Error('--store clickhouse takes a SQLite configuration store and --keep DIR only');
        const keep = typeof o.keep === 'string' ? o.keep : undefined;
        return benchClickHouse({ ...o, runs: o.runs ?? 20, keep });
      }
      if (o.store !== undefined) throw new Error(`--store must be clickhouse (or left out), got ${JSON.stringify(o.store)}`);
      const runs = o.runs ?? 50;
      if (o.materialize && o.materializeFirst) throw new Error('--materialize and --materialize-first exclude each other');
      if (o.db !== 'sqlite' && o.db !== 'postgres') throw new Error(`--db must be sqlite or postgres, got ${JSON.stringify(o.db)}`);
      let target: Target;
      let cleanup: () => Promise<void>;
      if (o.db === 'sqlite') {
        if (o.keep === true) throw new Error('--keep needs a directory on SQLite');
        const dataDir = o.keep ? path.resolve(o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-'));
        target = { kind: 'sqlite', dataDir };
        cleanup = async () => {
          if (!o.keep) fs.rmSync(dataDir, { recursive: true, force: true });
        };
      } else {
        const schema = typeof o.keep === 'string' ? o.keep : `envapi_bench_${Date.now()}`;
        if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
        await pgAdmin(o.databaseUrl, `create schema if not exists ${schema}`);
        const url = new URL(o.databaseUrl);
        url.searchParams.set('options', `-c search_path=${schema}`);
        target = { kind: 'postgres', url: url.toString() };
        cleanup = async () => {
          if (o.keep) console.error(`Kept schema ${schema}.`);
          else await pgAdmin(o.databaseUrl, `drop schema if exists ${schema} cascade`);
        };
      }
      const where = target.kind === 'sqlite' ? target.dataDir : target.url.replace(/\/\/[^@/]*@/, '//');
      const store = target.kind === 'sqlite' ? openStore({ dataDir: target.dataDir }) : openStore({ databaseUrl: target.url });
      try {
        await migrateToLatest(store);
        const boot = await bootstrap(store);
        const accounts = new AccountsRepository(store.db);
        const owner = boot.user ?? (await accounts.listUsers())[0];
        if (!owner) throw new Error(`${where} has no user`);
        const { key } = await new ApiKeysRepository(store.db).create({
          user_id: owner.id,
          label: 'bench',
          scopes: ['*'],
          scoped_teams: null,
        });
        const team1 = 1;
        const now = new Date();
        const half = Math.floor(o.events / 2);
        const t0 = performance.now();
        let s1 = { inserted: 0 };
        let s2 = { inserted: 0 };
        if (boot.created) {
          let lastPrint = 0;
          const progress = (label: string) => (done: number) => {
            if (performance.now() - lastPrint > 2000) {
              lastPrint = performance.now();
              process.stderr.write(`  ${label}: ${done.toLocaleString('en-US')} events…\n`);
            }
          };
          if (o.materializeFirst) {
            for (const property of DEMO_HOT_PROPERTIES) await materializeProperty(store, 'event', property);
            console.error(`Materialized ${DEMO_HOT_PROPERTIES.join(', ')} before the import.`);
          }
          console.error(`Importing ${o.events.toLocaleString('en-US')} demo events into ${where} …`);
          const team2 = (await accounts.createTeam({ organization_id: boot.organization!.id, name: 'Second project' })).id;
          s1 = await importEvents(store, team1, generateDemoEvents({ count: half, seed: o.seed, now }), {
            onProgress: progress('project 1'),
          });
          s2 = await importEvents(store, team2, generateDemoEvents({ count: o.events - half, seed: o.seed + 1, now }), {
            onProgress: progress('project 2'),
          });
        } else {
          console.error(`Reusing the store in ${where} (no import).`);
          const counts = await store.db
            .selectFrom('events')
            .select(['team_id', (eb) => eb.fn.countAll().as('n')])
            .groupBy('team_id')
            .execute();
          s1 = { inserted: Number(counts.find((c) => c.team_id === team1)?.n ?? 0) };
          s2 = { inserted: counts.filter((c) => c.team_id !== team1).reduce((a, c) => a + Number(c.n), 0) };
        }
        const importSeconds = (performance.now() - t0) / 1000;
        const imported = s1.inserted + s2.inserted;

        // A person with many events, for the person_id shape.
        const busy = await store.db
          .selectFrom('events')
          .innerJoin('person_distinct_ids as pdi', (j) =>
            j.onRef('pdi.distinct_id', '=', 'events.distinct_id').onRef('pdi.team_id', '=', 'events.team_id'),
          )
          .innerJoin('persons as p', 'p.id', 'pdi.person_id')
          .select(['p.uuid', (eb) => eb.fn.countAll().as('n')])
          .where('events.team_id', '=', team1)
          .groupBy('p.uuid')
          .orderBy('n', 'desc')
          .limit(1)
          .executeTakeFirstOrThrow();
        const rareCount = await store.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('team_id', '=', team1)
          // where the event's $browser is (on SQLite, its property set: server/storage/events/property-sets.ts)
          .where(
            sql<boolean>`${readEventProperty(store.dialect, '$browser', (json) => jsonText(store.dialect, json, '$browser'))} = ${'Opera Mini'}`,
          )
          .executeTakeFirstOrThrow();
        if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
        const size = await storeSize(store, target);
        const plans = await hogqlPlans(store, team1);
        await store.close();

        const server = await startServer(target, o.port);
        const base = `http://127.0.0.1:${o.port}/api/environments/${team1}`;
        let agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        const get = (url: string) =>
          new Promise<{ ms: number; body: string }>((resolve, reject) => {
            const started = performance.now();
            const req = http.get(url, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                const ms = performance.now() - started;
                const body = Buffer.concat(chunks).toString('utf8');
                if (res.statusCode !== 200) reject(new Error(`${url} → ${res.statusCode} ${body.slice(0, 300)}`));
                else resolve({ ms, body });
              });
            });
            req.on('error', reject);
          });
        const time = async (name: string, url: string, note?: string) => {
          await warmUp(() => get(url));
          const samples: number[] = [];
          for (let i = 0; i < runs; i++) samples.push((await get(url)).ms);
          return summarize(name, samples, note);
        };
        const post = (url: string, body: unknown) =>
          new Promise<{ ms: number; body: string }>((resolve, reject) => {
            const payload = Buffer.from(JSON.stringify(body), 'utf8');
            const started = performance.now();
            const req = http.request(
              url,
              {
                method: 'POST',
                agent,
                headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': payload.length },
              },
              (res) => {
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => {
                  const ms = performance.now() - started;
                  const text = Buffer.concat(chunks).toString('utf8');
                  if (res.statusCode !== 200) reject(new Error(`POST ${url} → ${res.statusCode} ${text.slice(0, 300)}`));
                  else resolve({ ms, body: text });
                });
              },
            );
            req.on('error', reject);
            req.end(payload);
          });
        const timePost = async (name: string, url: string, body: unknown) => {
          let rows = 0;
          await warmUp(async () => (rows = (JSON.parse((await post(url, body)).body) as { results: unknown[] }).results.length));
          const samples: number[] = [];
          for (let i = 0; i < runs; i++) samples.push((await post(url, body)).ms);
          return summarize(name, samples, `${rows} rows`);
        };
        const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
        const stats: Stat[] = [];
        const materializeLines: string[] = [];
        let materializedSize: string | undefined;
        try {
          stats.push(await time('latest 100', `${base}/events/`));
          stats.push(await time('event = $pageview, last 7 days', `${base}/events/?${q({ event: '$pageview', after: '-7d' })}`));
          stats.push(
            await time(
              'property $browser = Chrome',
              `${base}/events/?${q({ properties: JSON.stringify([{ key: '$browser', value: 'Chrome' }]) })}`,
            ),
          );
          stats.push(
            await time(
              'rare property $browser = Opera Mini',
              `${base}/events/?${q({ properties: JSON.stringify([{ key: '$browser', value: 'Opera Mini' }]) })}`,
              `${Number(rareCount.n)} matching events of ${s1.inserted.toLocaleString('en-US')}`,
            ),
          );
          stats.push(
            await time('person_id (busiest person)', `${base}/events/?${q({ person_id: busy.uuid })}`, `${Number(busy.n)} events`),
          );
          stats.push(await time('values of $browser', `${base}/events/values/?${q({ key: '$browser' })}`));
          for (const shape of HOGQL_SHAPES)
            stats.push(await timePost(shape.name, `${base}/query/`, { query: { kind: 'HogQLQuery', query: shape.query } }));
          // Paging through 10,000 rows by following next (100 per page): one sample = one whole walk.
          const walks: number[] = [];
          const perPage: number[] = [];
          for (let w = 0; w < Math.max(5, Math.floor(runs / 10)); w++) {
            let url: string | null = `${base}/events/?limit=100`;
            let rows = 0;
            const started = performance.now();
            while (url && rows < 10_000) {
              const { ms, body } = await get(url);
              perPage.push(ms);
              const page = JSON.parse(body) as { next: string | null; results: unknown[] };
              rows += page.results.length;
              url = page.next;
            }
            walks.push(performance.now() - started);
          }
          stats.push(summarize('paging 10,000 rows via next (per page)', perPage));
          stats.push(summarize('paging 10,000 rows via next (whole walk)', walks));
          if (o.materialize) {
            // the columns are added beside the running server, as an operator would (storage/events/materialized.ts)
            const admin =
              target.kind === 'sqlite'
                ? openStore({ dataDir: target.dataDir, lockTimeoutMs: 600_000 })
                : openStore({ databaseUrl: target.url });
            try {
              const done = new Set((await listMaterializedColumns(admin.db)).map((c) => c.property));
              for (const property of DEMO_HOT_PROPERTIES) {
                if (done.has(property)) {
                  materializeLines.push(`materialize ${property}: materialized already (store reused)`);
                  continue;
                }
                const started = performance.now();
                const c = await materializeProperty(admin, 'event', property);
                materializeLines.push(`materialize ${property} (${c.column}): ${((performance.now() - started) / 1000).toFixed(1)} s`);
              }
              if (admin.dialect === 'postgres') await sql`analyze events`.execute(admin.db);
              materializedSize = await storeSize(admin, target);
            } finally {
              await admin.close();
            }
            // the server closed the idle keep-alive connection while the columns were built
            agent.destroy();
            agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
            stats.push(
              await time(
                'materialized: property $browser = Chrome',
                `${base}/events/?${q({ properties: JSON.stringify([{ key: '$browser', value: 'Chrome' }]) })}`,
              ),
            );
            stats.push(
              await time(
                'materialized: rare property $browser = Opera Mini',
                `${base}/events/?${q({ properties: JSON.stringify([{ key: '$browser', value: 'Opera Mini' }]) })}`,
                `${Number(rareCount.n)} matching events`,
              ),
            );
            stats.push(await time('materialized: values of $browser', `${base}/events/values/?${q({ key: '$browser' })}`));
            for (const shape of HOGQL_SHAPES)
              stats.push(
                await timePost(`materialized: ${shape.name}`, `${base}/query/`, { query: { kind: 'HogQLQuery', query: shape.query } }),
              );
          }
        } finally {
          const mem = server.pid ? memoryOf(server.pid) : undefined;
          server.kill('SIGTERM');
          agent.destroy();
          const rate = Math.round(imported / importSeconds);
          const lines = [
            `Events benchmark — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores`,
            `Store: ${target.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${imported.toLocaleString('en-US')} events in 2 projects (project ${team1}: ${s1.inserted.toLocaleString('en-US')})`,
            boot.created
              ? `Import: ${rate.toLocaleString('en-US')} events/s (${importSeconds.toFixed(1)} s for ${imported.toLocaleString('en-US')} events, demo generation included${o.materializeFirst ? `; columns of ${DEMO_HOT_PROPERTIES.join(', ')} materialized first` : ''})`
              : 'Import: not measured (store reused)',
            '',
            '| query shape | runs | median ms | p95 ms | note |',
            '|---|---|---|---|---|',
            ...stats.map((s) => `| ${s.name} | ${s.runs} | ${s.median.toFixed(2)} | ${s.p95.toFixed(2)} | ${s.note ?? ''} |`),
            '',
            `Size: ${size}`,
            ...(materializedSize ? [`Size with the materialized columns: ${materializedSize}`, ...materializeLines] : []),
            mem ? `Server memory after the runs: RSS ${mem.rss} MB, peak ${mem.peak} MB` : 'Server memory: /proc not available',
            '',
            '## HogQL query plans (project 1)',
            '',
            ...plans,
          ];
          console.log(lines.join('\n'));
        }
      } finally {
        await store.close().catch(() => undefined);
        await cleanup();
      }
    },
  );

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
