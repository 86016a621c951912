/**
 * HogQL reads materialized property columns (server/storage/events/materialized.ts) where it can, with the
 * same answers, through the real HTTP stack on the store of the pass. Over the fixed dataset
 * (./dataset.ts: strings, numbers written every way, booleans, null, objects, arrays), the same
 * queries are answered before any column exists and with every event and person property of the
 * dataset materialized: WHERE comparisons of each property with strings that a column writes as
 * HogQL does (`Chrome`, `true`, `''`) and with strings it does not (`12`, `1440`, `-3`,
 * `{"a":1}`), `in`/`not in`, the events list's `where`, `FROM persons`, and 200 random queries of
 * the subset's grammar (./helpers/grammar.ts). The SQL of a comparison is also planned by the
 * store and must use the column's index, so that the comparison does not pass merely by reading
 * the JSON both times.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hogqlDialect } from '../../server/hogql/index.js';
import { parseSelect } from '../../server/hogql/parser.js';
import { compileSelect } from '../../server/hogql/select.js';
import { eventsStore } from '../../server/storage/events/index.js';
import { dematerializeProperty, materializeProperty } from '../../server/storage/events/materialized.js';
import { usesPostgres } from '../helpers/pg.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedDataset } from './dataset.js';
import { query } from './helpers/grammar.js';

let t: TestServer;
let P: number;

const EVENT_KEYS = [
  '$browser',
  '$current_url',
  'price',
  'plan',
  'flag',
  'nested',
  'tags',
  'tiny',
  'ratio',
  'city',
  'revenue',
  '$event_type',
  'a b',
];
const PERSON_KEYS = ['email', 'plan', 'name'];
/** Strings a column writes as HogQL does, and strings it may not (numbers, JSON). */
const STRINGS = [
  'Chrome',
  'chrome',
  'Firefox',
  'pro',
  'free',
  'true',
  'false',
  '',
  'Zürich',
  'spaced',
  'alice@hedgebox.net',
  '12',
  '1440',
  '9.5',
  '-3',
  '99.99',
  '0.00000015',
  '{"a":1}',
  '["beta","new-nav"]',
  'null',
];

function fixedQueries(): string[] {
  const out: string[] = [];
  const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  for (const key of EVENT_KEYS) {
    const f = `properties[${lit(key)}]`;
    for (const s of STRINGS) {
      out.push(`select uuid from events where ${f} = ${lit(s)} order by uuid`);
      out.push(`select uuid from events where ${lit(s)} != ${f} order by uuid`);
    }
    out.push(`select uuid from events where ${f} in ('Chrome', '12', 'true', '') order by uuid`);
    out.push(`select uuid from events where ${f} not in ('pro', '1440', 'Zürich') order by uuid`);
    out.push(`select ${f}, count() from events where ${f} != 'Chrome' group by ${f} order by ${f}`);
  }
  for (const key of PERSON_KEYS) {
    for (const s of STRINGS) out.push(`select id from persons where properties.${key} = ${lit(s)} order by id`);
    for (const s of ['pro', 'alice@hedgebox.net'])
      out.push(`select uuid from events where person.properties.${key} = ${lit(s)} order by uuid`);
  }
  return out;
}

const RANDOM = fc.sample(query, { numRuns: 200, seed: 22 });

/** One query's answer: its rows (person ids replaced by their position: each store makes its own), or the status. */
async function answerOf(q: string): Promise<string> {
  const res = await t.fetch(`/api/environments/${P}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: q } }),
  });
  const text = await res.text();
  if (res.status !== 200) return `${res.status}`;
  return JSON.stringify((JSON.parse(text) as { results: unknown }).results);
}

/** The events list's `where` (without `select`): the uuids it answers. */
async function listWhere(where: string): Promise<string> {
  const res = await t.fetch(`/api/environments/${P}/events/?limit=100&where=${encodeURIComponent(JSON.stringify([where]))}`);
  const text = await res.text();
  if (res.status !== 200) return `${res.status} ${text}`;
  return JSON.stringify((JSON.parse(text) as { results: { id: string }[] }).results.map((r) => r.id));
}

const LIST_WHERES = [
  "properties.$browser = 'Chrome'",
  "properties.plan != 'pro'",
  "properties.price = '1440'",
  "properties.flag = 'true'",
  "person.properties.plan = 'pro'",
];

async function answers(): Promise<string[]> {
  const out: string[] = [];
  for (const q of [...fixedQueries(), ...RANDOM]) out.push(`${q} → ${await answerOf(q)}`);
  for (const w of LIST_WHERES) out.push(`list where ${w} → ${await listWhere(w)}`);
  return out;
}

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'HogQL materialized other project' })).id;
  await seedDataset(t.store, P, Q);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** The store's events table as the server reads it now (its materialized columns). */
async function eventsTable() {
  const events = eventsStore(t.store.db);
  return events.table(await events.materializedColumns());
}

/**
 * The store's plan of HogQL query `q` as compiled for project P, its steps joined by `; `
 * (PostgreSQL told not to scan the table: it would, on a few rows; with `noSort`, not to sort).
 */
async function planOf(q: string, opts: { noSort?: boolean } = {}): Promise<string> {
  const compiled = compileSelect(await parseSelect(q, 'query'), {
    dialect: hogqlDialect(t.store.dialect),
    teamId: P,
    source: q,
    attr: 'query',
    now: new Date(),
    events: await eventsTable(),
  });
  return t.store.db.transaction().execute(async (trx) => {
    // SQLite: the outer query's steps only (parent 0), not those of the subqueries inside expressions
    if (t.store.dialect === 'sqlite')
      return (await sql<{ parent: number; detail: string }>`explain query plan ${compiled.sql}`.execute(trx)).rows
        .filter((r) => r.parent === 0)
        .map((r) => r.detail)
        .join('; ');
    await sql`set local enable_seqscan = off`.execute(trx);
    if (opts.noSort) await sql`set local enable_sort = off`.execute(trx);
    return (await sql<{ 'QUERY PLAN': string }>`explain ${compiled.sql}`.execute(trx)).rows.map((r) => r['QUERY PLAN']).join('; ');
  });
}

describe('HogQL: which index a read of the project takes (SQLite)', () => {
  // before any column is materialized in this file: materializing builds events_team_time again,
  // which changes the order in which SQLite weighs its indexes
  it.skipIf(usesPostgres())(
    'a read of the whole project through the JSON walks events_team_time; an equality keeps its own index',
    async () => {
      // without the compiler's `timestamp >= ''` SQLite took events_team_distinct_id_time here: the
      // rows in distinct_id order, 4.6x slower at 500,000 events (docs/performance.md)
      expect(await planOf("select count() from events where properties.$browser = 'Chrome'")).toMatch(
        /USING INDEX events_team_time \(team_id=\? AND timestamp>\?\)/,
      );
      expect(await planOf("select count() from events where event = '$pageview'")).toMatch(
        /events_team_event_time \(team_id=\? AND event=\?/,
      );
      expect(await planOf("select count() from events where distinct_id = 'user-1'")).toMatch(
        /events_team_distinct_id_time \(team_id=\? AND distinct_id=\?/,
      );
      expect(await planOf('select event, count() from events group by event')).toMatch(/COVERING INDEX events_team_event_time/);
      // the uuid is stored as its 16 bytes (storage/events/uuids.ts): an equality with a uuid constant reads its key
      expect(await planOf("select event from events where uuid = '01934e70-0000-7000-8000-000000000005'")).toMatch(
        /sqlite_autoindex_events_1 \(uuid=\?\)/,
      );
      // the timestamp is stored as microseconds (storage/events/times.ts): a comparison with a date,
      // a constant or computed once, is a range of the time index, and ORDER BY timestamp reads it in order
      expect(await planOf("select count() from events where timestamp >= '2024-11-02' and timestamp < now()")).toMatch(
        /events_team_time \(team_id=\? AND timestamp>\? AND timestamp<\?\)/,
      );
      expect(await planOf("select count() from events where event = 'signup' and timestamp > now() - interval 30 day")).toMatch(
        /events_team_event_time \(team_id=\? AND event=\? AND timestamp>\?\)/,
      );
      const latest = await planOf('select uuid, timestamp from events order by timestamp desc limit 10');
      expect(latest).toMatch(/(SCAN|SEARCH) events USING (COVERING )?INDEX events_team_time/);
      expect(latest).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    },
  );
});

describe('HogQL with materialized columns', () => {
  it('answers every query as it does without them', async () => {
    const before = await answers();
    // the fixed queries are not all empty: they compare something
    expect(before.filter((a) => a.endsWith('→ []')).length).toBeLessThan(before.length / 2);
    for (const key of EVENT_KEYS) await materializeProperty(t.store, 'event', key);
    for (const key of PERSON_KEYS) await materializeProperty(t.store, 'person', key);
    try {
      const after = await answers();
      expect(after).toEqual(before);
    } finally {
      for (const key of EVENT_KEYS) await dematerializeProperty(t.store, 'event', key);
      for (const key of PERSON_KEYS) await dematerializeProperty(t.store, 'person', key);
    }
  }, 900_000);

  it('the latest events in time order read the (team_id, timestamp) index, with no sort', async () => {
    // a NULLS LAST on the never-null timestamp kept PostgreSQL from walking the index backwards
    // (4 s instead of milliseconds at 5,000,000 events)
    for (const q of [
      'select uuid, event, timestamp from events order by timestamp desc limit 100',
      "select uuid from events where properties.$browser = 'Chrome' order by timestamp desc limit 10",
    ]) {
      // PostgreSQL told to avoid sorting: on a few rows it may prefer a bitmap scan and a sort, so
      // only "no Sort even then" shows that the index order can answer the ORDER BY
      const plan = await planOf(q, { noSort: true });
      if (t.store.dialect === 'postgres') {
        expect(plan).toMatch(/Index Scan Backward using events_\w*team_id_timestamp/);
        expect(plan).not.toMatch(/(^|; )\s*(->\s+)?Sort\s+\(cost/);
      } else {
        expect(plan).toMatch(/events_team_time/);
        expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      }
    }
  });

  it('a comparison with a string reads the column through its index', async () => {
    const col = await materializeProperty(t.store, 'event', '$browser');
    try {
      const plan = await planOf("select uuid from events where properties.$browser = 'Opera Mini' order by timestamp desc limit 10");
      // PostgreSQL: events is partitioned by month (migration 0008); each partition has its copy of
      // the index, named after the partition and the columns (events_p2024_11_team_id_mat_…_idx)
      expect(plan).toMatch(
        t.store.dialect === 'postgres' ? new RegExp(`Index[^;]* (using|on) events_\\w*${col.column}`) : new RegExp(`events_${col.column}`),
      );
    } finally {
      await dematerializeProperty(t.store, 'event', '$browser');
    }
  });
});
