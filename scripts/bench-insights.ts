/**
 * `npm run bench:insights`: the query kinds over 30 days of demo data, on SQLite or on ClickHouse
 * (embedded chDB), recorded in docs/performance.md (issue 40's targets: on ClickHouse at 10M events
 * a median of at most 1 s for every kind and 300 ms for trends).
 *
 *   npm run bench:insights -- [--store sqlite|clickhouse] [--events N] [--runs 10] [--seed 42] [--keep DIR]
 *                             [--kinds TrendsQuery,FunnelsQuery,…]
 *
 * Defaults: 1,000,000 events on SQLite, 10,000,000 on ClickHouse. One run:
 * 1. A fresh data dir (or `--keep DIR`, reused when it holds the events already): the SQLite
 *    configuration store, the events in it or on chDB in DATA_DIR/clickhouse/, opened as the CLI
 *    opens them; `--events` demo events (the Hedgebox generator, 30 days up to now, the path of
 *    `envapi demo`) in project 1.
 * 2. Each query kind's queries run in the bench process through the domain's `QueryService` (the
 *    code the query endpoint runs, without HTTP), each `--runs` times after one warm-up: median
 *    and p95 in ms.
 * 3. The engine's own limit beside them: the daily trend's question written by hand as the store's
 *    SQL (a `GROUP BY` day of `count()` over `events`), and on ClickHouse the stickiness so written
 *    (the engine doing the per-person work), run on the same data in the same run, and the ratios.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { bootstrap } from '../server/bootstrap.js';
import { QueryService, type QueryInput } from '../server/domain/query.js';
import { generateDemoEvents } from '../server/ingest/demo.js';
import { importEvents } from '../server/ingest/import.js';
import { migrateToLatest, openStore, type Store } from '../server/storage/db.js';
import { openClickHouseEvents, useClickHouseEvents, type ClickHouseEvents } from '../server/storage/events/index.js';
import { AccountsRepository } from '../server/storage/repositories/accounts.js';
import { median, positive, writePerformanceBlock } from './bench-lib.js';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string' },
    runs: { type: 'string', default: '10' },
    seed: { type: 'string', default: '42' },
    keep: { type: 'string' },
    kinds: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(
    'Usage: npm run bench:insights -- [--store sqlite|clickhouse] [--events N] [--runs 10] [--seed 42] [--keep DIR] [--kinds TrendsQuery,…]',
  );
  process.exit(0);
}
const clickhouse = args.store === 'clickhouse';
if (!clickhouse && args.store !== 'sqlite') throw new Error(`--store must be sqlite or clickhouse, got ${args.store}`);
const EVENTS = args.events ? positive('--events')(args.events) : clickhouse ? 10_000_000 : 1_000_000;
const RUNS = positive('--runs')(args.runs!);
const SEED = positive('--seed')(args.seed!);

const RANGE = { date_from: '-30d' };
/** The queries timed, by kind: what PostHog's insights ask most. */
const QUERIES: { kind: string; name: string; query: QueryInput }[] = [
  {
    kind: 'TrendsQuery',
    name: 'daily pageviews',
    query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE, interval: 'day' },
  },
  {
    kind: 'TrendsQuery',
    name: 'daily active users',
    query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange: RANGE },
  },
  {
    kind: 'TrendsQuery',
    name: 'pageviews by browser',
    query: {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: RANGE,
      breakdownFilter: { breakdown: '$browser' },
    },
  },
  {
    kind: 'TrendsQuery',
    name: 'weekly active users',
    query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }], dateRange: RANGE },
  },
  {
    kind: 'TrendsQuery',
    name: 'compare + formula',
    query: {
      kind: 'TrendsQuery',
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: null },
      ],
      dateRange: RANGE,
      compareFilter: { compare: true },
      trendsFilter: { formula: 'A / B' },
    },
  },
  {
    kind: 'FunnelsQuery',
    name: 'pageview → upload, 14 days',
    query: {
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: 'uploaded_file' },
      ],
      dateRange: RANGE,
    },
  },
  {
    kind: 'RetentionQuery',
    name: 'daily, 8 intervals',
    query: { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 8 }, dateRange: RANGE },
  },
  {
    kind: 'LifecycleQuery',
    name: 'pageviews, daily',
    query: { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE },
  },
  {
    kind: 'StickinessQuery',
    name: 'pageviews, daily',
    query: { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE },
  },
  {
    kind: 'PathsQuery',
    name: 'pageviews, 5 steps',
    query: { kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['$pageview'] }, dateRange: RANGE },
  },
];

/** `fn`'s median and p95 over RUNS runs after one warm-up, in ms. */
async function timed(fn: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  await fn();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: median(ms), p95: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)]! };
}

/** The daily trend's question as the store's own SQL (the engine's limit). */
async function rawTrend(store: Store, ch: ClickHouseEvents | undefined, since: Date): Promise<void> {
  if (ch) {
    const from = since.toISOString().replace('T', ' ').replace('Z', '');
    const r = await ch.connection.client.query({
      query: `SELECT toStartOfDay(timestamp) AS d, count() FROM events WHERE team_id = 1 AND event = '$pageview' AND timestamp >= toDateTime64('${from}', 6, 'UTC') GROUP BY d`,
      format: 'JSONEachRow',
    });
    await r.json();
    return;
  }
  // the row store keeps times as integer microseconds (migration 0013)
  await sql`select timestamp / 86400000000 as d, count(*) from events where team_id = 1 and event = '$pageview' and timestamp >= ${since.getTime() * 1000} group by d`.execute(
    store.db,
  );
}

/**
 * Stickiness as ClickHouse's own SQL (the engine doing the per-person work PostHog's runner gives
 * it: the active days of each person, then the persons per number of days), the limit of the
 * per-person kinds on ClickHouse.
 */
async function rawStickiness(ch: ClickHouseEvents, since: Date): Promise<void> {
  const from = since.toISOString().replace('T', ' ').replace('Z', '');
  const r = await ch.connection.client.query({
    query: `SELECT n, count() FROM (SELECT person_id, uniqExact(toStartOfDay(timestamp)) AS n FROM events WHERE team_id = 1 AND event = '$pageview' AND timestamp >= toDateTime64('${from}', 6, 'UTC') GROUP BY person_id) GROUP BY n`,
    format: 'JSONEachRow',
  });
  await r.json();
}

/** The line comparing the StickinessQuery's median with `rawStickiness` on the same data. */
async function stickinessLimit(ch: ClickHouseEvents, now: Date, measured: number): Promise<string> {
  const raw = await timed(() => rawStickiness(ch, new Date(now.getTime() - 31 * 86_400_000)));
  return `\nThe per-person kinds' limit: stickiness written by hand as ClickHouse SQL (each person's active days in the engine, then persons per count), median ${raw.median.toFixed(1)} ms; the StickinessQuery takes ${(measured / raw.median).toFixed(1)}× that.`;
}

async function main(): Promise<void> {
  const dataDir = args.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-insights-'));
  fs.mkdirSync(dataDir, { recursive: true });
  const store = openStore({ dataDir });
  let ch: ClickHouseEvents | undefined;
  try {
    await migrateToLatest(store);
    await bootstrap(store);
    if (clickhouse) {
      ch = await openClickHouseEvents({ dataDir }, { budgetMs: 300_000 });
      useClickHouseEvents(store, ch);
    }
    const team = await new AccountsRepository(store.db).findTeam(1);
    if (!team) throw new Error(`${dataDir} has no project 1`);
    const service = new QueryService(store);
    const count = await service.run(team, { kind: 'HogQLQuery', query: 'select count() from events' });
    const have = Number((count as { results: unknown[][] }).results[0]![0]);
    let imported = `reused ${have.toLocaleString('en-US')} events`;
    if (have < EVENTS) {
      console.error(`Importing ${EVENTS.toLocaleString('en-US')} demo events (30 days) into ${dataDir} …`);
      const t0 = performance.now();
      let last = 0;
      const s = await importEvents(store, 1, generateDemoEvents({ count: EVENTS, seed: SEED, now: new Date(), days: 30 }), {
        onProgress: (done: number) => {
          if (performance.now() - last > 5000) {
            last = performance.now();
            console.error(`  ${done.toLocaleString('en-US')} events…`);
          }
        },
      });
      imported = `imported ${s.inserted.toLocaleString('en-US')} events in ${((performance.now() - t0) / 1000).toFixed(0)} s`;
    }
    console.error(imported);
    const rows: string[] = [];
    const now = new Date();
    const raw = await timed(() => rawTrend(store, ch, new Date(now.getTime() - 31 * 86_400_000)));
    let trend: number | undefined;
    let stickiness: number | undefined;
    const kinds = args.kinds ? new Set(args.kinds.split(',')) : undefined;
    for (const q of QUERIES.filter((x) => !kinds || kinds.has(x.kind))) {
      const r = await timed(() => service.run(team, q.query));
      if (q.kind === 'TrendsQuery') trend ??= r.median;
      if (q.kind === 'StickinessQuery') stickiness ??= r.median;
      console.error(`  ${q.kind} ${q.name}: median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms`);
      rows.push(`| ${q.kind} | ${q.name} | ${r.median.toFixed(1)} | ${r.p95.toFixed(1)} |`);
    }
    const store_ = clickhouse ? 'ClickHouse (embedded chDB)' : 'SQLite';
    const text = [
      `${store_}, ${EVENTS.toLocaleString('en-US')} demo events over 30 days in project 1 (${imported}); ${RUNS} runs each after a warm-up, in the bench process through the domain's QueryService (no HTTP), ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, Node ${process.version}.`,
      '',
      '| kind | query | median ms | p95 ms |',
      '|---|---|---:|---:|',
      ...rows,
      '',
      ...(trend === undefined
        ? []
        : [
            `The engine's limit on the same data: the daily pageviews written by hand as the store's SQL, median ${raw.median.toFixed(1)} ms; the TrendsQuery takes ${(trend / raw.median).toFixed(2)}× that.`,
          ]),
      ...(ch && stickiness !== undefined ? [await stickinessLimit(ch, now, stickiness)] : []),
    ].join('\n');
    writePerformanceBlock(`insights-${clickhouse ? 'clickhouse' : 'sqlite'}`, text, `Insights on ${store_} (npm run bench:insights)`);
    console.log(text);
  } finally {
    if (ch) {
      useClickHouseEvents(store, undefined);
      await ch.close();
    }
    await store.close();
    if (!args.keep) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
