/**
 * HogQL on ClickHouse (embedded chDB) gives the answers of the other stores: the dataset
 * (./dataset.ts) in a ClickHouse store (./helpers/clickhouse-dataset.ts) and in a SQLite store,
 * then (a) hand-picked queries (property access, NULL semantics, string functions, weeks and
 * intervals, aggregates, GROUP BY and ORDER BY, FROM persons, person properties, materialized
 * columns, the team guard) and (b) random queries of the subset's grammar (./helpers/grammar.ts),
 * each answered alike on both: the same rows, or a 400 on both. Skipped, with its reason, where
 * chDB cannot load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseDialect } from '../../server/hogql/dialect-clickhouse.js';
import { HogQLError, runHogQLQuery } from '../../server/hogql/index.js';
import { parseSelect } from '../../server/hogql/parser.js';
import { compileSelect } from '../../server/hogql/select.js';
import { openClickHouse, type ClickHouseConnection } from '../../server/storage/clickhouse/connection.js';
import { clickhouseKysely } from '../../server/storage/clickhouse/kysely-dialect.js';
import { clickhouseSchema, materializedColumnDdl, materializedColumnName } from '../../server/storage/clickhouse/schema.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { clickhouseEventsTable } from '../../server/storage/events/clickhouse/table.js';
import { eventsStore, type EventsTable } from '../../server/storage/events/index.js';
import { NO_MATERIALIZED_COLUMNS, type MaterializedColumns } from '../../server/storage/events/materialized.js';
import { importEvents } from '../../server/ingest/import.js';
import { AccountsRepository } from '../../server/storage/repositories/accounts.js';
import { seedDataset } from './dataset.js';
import { seedClickHouseDataset } from './helpers/clickhouse-dataset.js';
import { query } from './helpers/grammar.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const MATERIALIZED_EVENT_KEYS = ['$browser', 'plan', 'price', 'flag', '$current_url', 'odd', 'fine'];

/**
 * Project R: values of a property (`odd`) whose HogQL text its materialized column does not give
 * (JSON null, a missing key, numbers, which the column writes as Float64s, objects, arrays) beside
 * ones it writes alike (empty and `null` strings, escaped characters, text), and times around the
 * ends of ClickHouse's Date and DateTime.
 */
const ODD = [
  '',
  'null',
  null,
  undefined,
  'a"b',
  'back\\slash',
  'tab\there',
  1e21,
  1.5e-7,
  '1e5',
  12,
  -3.5,
  true,
  { b: 1, a: [1, 2] },
  [3, 'x'],
  'Zürich',
  '/pricing',
  'e',
];
const ODD_TIMES = [
  '2024-11-03T05:06:07.123456Z',
  '2024-11-09T23:59:59.999999Z',
  '1969-12-31T23:00:00Z',
  '2150-03-01T10:00:00Z',
  '1900-01-01T00:00:00Z',
];
const R_EVENTS = ODD.map((odd, i) => ({
  uuid: `01934e70-0000-7000-8000-0000000001${String(i).padStart(2, '0')}`,
  event: i % 2 ? 'odd' : 'even',
  distinct_id: `r${i % 5}`,
  timestamp: ODD_TIMES[i % ODD_TIMES.length]!,
  // `fine`: a value its column holds as HogQL writes it on every event (read without the JSON)
  properties: { ...(odd === undefined ? { other: 1 } : { odd }), fine: ['x', 'Zürich', '/a/b', 'true', '', 'null', 'a"b'][i % 7] },
}));

let dir: string;
let sqlite: Store;
let ch: ClickHouseConnection;
let chDb: Kysely<unknown>;
let teams: { p: number; q: number; r: number };
let materialized: MaterializedColumns;

beforeAll(async () => {
  sqlite = openStore({ inMemory: true });
  await migrateToLatest(sqlite);
  const accounts = new AccountsRepository(sqlite.db);
  const org = await accounts.createOrganization({ name: 'HogQL on ClickHouse' });
  teams = {
    p: (await accounts.createTeam({ organization_id: org.id, name: 'P' })).id,
    q: (await accounts.createTeam({ organization_id: org.id, name: 'Q' })).id,
    r: (await accounts.createTeam({ organization_id: org.id, name: 'R' })).id,
  };
  await seedDataset(sqlite, teams.p, teams.q);
  await importEvents(sqlite, teams.r, R_EVENTS);

  dir = mkdtempSync(join(tmpdir(), 'envapi-hogql-ch-'));
  ch = await openClickHouse({ dataDir: dir });
  for (const statement of clickhouseSchema()) await ch.client.command({ query: statement });
  const event = new Map<string, string>();
  for (const key of MATERIALIZED_EVENT_KEYS) {
    const column = materializedColumnName('events', key);
    for (const ddl of materializedColumnDdl('events', key, column)) await ch.client.command({ query: ddl });
    event.set(key, column);
  }
  materialized = { event, person: new Map() };
  await seedClickHouseDataset(ch.client, teams.p, teams.q, [[teams.r, R_EVENTS]]);
  chDb = clickhouseKysely({ client: ch.client, maxQueries: 1, budgetMs: 60_000 });
}, 120_000);

afterAll(async () => {
  await chDb?.destroy();
  await ch?.close();
  await sqlite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One store's answer: its rows, or 'HTTP 400' for a query it refuses. */
async function answer(db: Kysely<unknown>, table: EventsTable, q: string, team = teams.p): Promise<unknown> {
  try {
    return (await runHogQLQuery(db, table, team, q, NOW)).results;
  } catch (err) {
    // chDB (3.4.0) hands the partial output of a failed query to the session's next query: a
    // throwaway read takes it (reported; to be handled in server/storage/clickhouse/kysely-dialect.ts)
    if (db === chDb) await sql`select 1`.execute(chDb);
    if (err instanceof HogQLError && err.kind === 'invalid') return 'HTTP 400';
    throw err;
  }
}

async function sqliteAnswer(q: string, team = teams.p): Promise<unknown> {
  const events = eventsStore(sqlite.db);
  return answer(sqlite.db as Kysely<unknown>, events.table(await events.materializedColumns()), q, team);
}

const chAnswer = (q: string, mat: MaterializedColumns = NO_MATERIALIZED_COLUMNS, team = teams.p) =>
  answer(chDb, clickhouseEventsTable(mat), q, team);

/** Queries of project R (`R_EVENTS`): its property everywhere a query reads one, and its times. */
const R_QUERIES = [
  'select properties.odd as v, count() from events group by v order by v',
  "select uuid, properties.odd, length(properties.odd), concat(properties.odd, '|'), properties.odd is null from events order by uuid",
  'select uuid from events order by properties.odd, uuid',
  'select distinct properties.odd from events order by properties.odd',
  'select uniq(properties.odd), uniqExact(properties.odd), count(distinct properties.odd), min(properties.odd), max(properties.odd) from events',
  "select count() from events where properties.odd = ''",
  "select count() from events where properties.odd != ''",
  "select count() from events where properties.odd = 'null'",
  "select count() from events where properties.odd != 'null'",
  "select count() from events where properties.odd = 'a\"b'",
  "select count() from events where properties.odd = 'Zürich' or properties.odd = '/pricing' or properties.odd = 'e'",
  "select count() from events where properties.odd in ('true', '12', '1e5', '')",
  'select uuid, timestamp, toStartOfDay(timestamp), toStartOfHour(timestamp), toDate(timestamp), toStartOfWeek(timestamp), toStartOfMonth(timestamp) from events order by uuid',
  'select toStartOfWeek(timestamp) as w, toStartOfMonth(timestamp) as m, count() from events group by w, m order by w, m',
  'select toStartOfDay(timestamp) as d, uniq(distinct_id) from events group by d order by d',
  'select toStartOfHour(timestamp) as h, toDate(timestamp) as d, count() from events group by h, d order by h desc, d',
  "select count() from events where timestamp >= '1970-01-01' and timestamp < '2150-03-01T10:00:00.000001'",
  "select count() from events where timestamp > '1969-12-31 23:00:00' or timestamp <= toDate('1900-01-01')",
  "select count() from events where timestamp = '2024-11-03T05:06:07.123456Z' or timestamp != '2150-03-01 10:00:00'",
  "select count() from events where toStartOfDay(timestamp) = '2024-11-03' and timestamp < now()",
  'select min(timestamp), max(timestamp), uniq(timestamp), uniqExact(distinct_id), uniq(distinct_id) from events',
  'select timestamp from events order by timestamp desc limit 3',
  'select properties.fine as f, count() from events group by f order by f',
  "select properties.fine, length(properties.fine), concat(properties.fine, '!') from events where properties.fine != 'x' order by uuid",
  'select properties.fine as f, properties.odd as o from events order by f, o',
];

const HAND_PICKED = [
  'select count() from events',
  'select count(distinct event), uniq(distinct_id) from events',
  'select event, count() from events group by event order by event',
  'select distinct event from events order by event',
  "select event from events where uuid = '01934e70-0000-7000-8000-000000000005'",
  'select uuid, timestamp, created_at is not null from events order by timestamp desc limit 3',
  'select uuid from events order by timestamp limit 2 offset 10',
  'select properties.$browser as b, count() as c from events group by b order by c desc, b',
  "select count() from events where properties.$browser = 'Chrome'",
  "select count() from events where properties.$browser != 'Chrome'",
  'select count() from events where properties.$browser = null',
  "select count() from events where properties.$browser in ('Chrome', 'Safari')",
  "select count() from events where properties.$browser not in ('Chrome', 'Safari')",
  "select count() from events where properties.$browser ilike 'chr%'",
  "select uuid from events where properties.$current_url like '%50\\\\%%' order by uuid",
  "select uuid from events where properties.$current_url =~ 'hedgebox\\\\.net/[a-z]+' order by uuid",
  'select properties.price, toFloat(properties.price), toInt(properties.price) from events order by uuid',
  'select properties.flag, properties.nested, properties.tags, properties.tiny, properties.ratio from events order by uuid',
  "select properties['a b'], properties.city, length(properties.city), lower(properties.city), upper(properties.city) from events order by uuid",
  'select properties, toString(properties) from events order by uuid',
  'select count() from events group by properties order by count()',
  "select concat(event, '-', properties.plan), coalesce(properties.plan, 'none'), ifNull(properties.plan, event) from events order by uuid",
  "select if(properties.price > 10, 'big', 'small') from events order by uuid",
  'select toString(toFloat(properties.price) / 3), toString(0.1 + 0.2), toString(1e21), toString(1e-7), toString(-0.0) from events order by uuid',
  'select toDate(timestamp), toStartOfDay(timestamp), toStartOfHour(timestamp), toStartOfWeek(timestamp), toStartOfMonth(timestamp) from events order by uuid',
  'select toStartOfWeek(timestamp) as w, count() from events group by w order by w',
  'select timestamp + interval 1 month, timestamp - interval 3 day, toDate(timestamp) + interval 1 year, timestamp + interval 90 minute from events order by uuid',
  "select toDateTime('2024-01-31') + interval 1 month, toDate('2024-03-31') - interval 1 month",
  "select count() from events where timestamp > '2024-11-02' and timestamp < toDateTime('2024-11-05 12:00:00')",
  'select count() from events where timestamp >= now() - interval 2000 day',
  "select toDateTime(properties.revenue), toDateTime(if(event = '', '', '2024-01-01T10:00:00+02:00')), toDateTime(if(event = '', '', '2024-02-30')) from events order by uuid",
  'select sum(toFloat(properties.price)), avg(toFloat(properties.price)), sum(toInt(properties.price)), min(properties.price), max(timestamp) from events',
  'select sum(toFloat(properties.revenue)), avg(0.1), sum(0.1) from events',
  'select event, sum(toFloat(properties.price)) as s from events group by event having s > 0 order by s desc',
  'select countIf(properties.$browser is null), count(properties.$browser) from events',
  'select 9007199254740991 * 9007199254740991',
  'select toInt(properties.price) * 4294967296 * 4294967296 from events',
  'select 1e300 * 1e300',
  'select sum(toInt(properties.price) * 3037000500 * 3037000500) from events',
  'select 7 % 3, -7 % 3, 7 / 2, 1 / 0, 5 % 0',
  'select person.properties.email, person.properties.plan, person_id is null, person.created_at is not null from events order by uuid',
  'select person.properties.plan as plan, count() from events group by plan order by plan',
  'select properties.email, properties.plan, is_identified, created_at is not null from persons order by properties.email',
  'select count() from persons',
  "select count() from persons where properties.plan = 'pro'",
  "select count() from events where properties.secret = 'q-only'",
  "select count() from events where distinct_id = 'zed'",
  "select elements_chain from events where elements_chain != ''",
  "select match(properties.$current_url, '^https://hedgebox') from events order by uuid",
  'select uuid, event, properties, timestamp, distinct_id, elements_chain from events order by uuid limit 2',
  'select toString(timestamp), toString(toDate(timestamp)), toString(true), toString(3) from events order by uuid limit 3',
];

/**
 * The one known difference: the text of a Float beyond 1e21 or below 1e-6 (`toString(1e300 / 0.000015)`),
 * where ClickHouse writes JavaScript's shortest digits and SQLite/PostgreSQL (server/hogql/text-forms.ts)
 * may differ from them in the 17th digit. Such texts are compared to 15 digits here, the queries listed.
 */
const farFloats: string[] = [];
function roughFloats(json: string): string {
  return json.replace(/-?[0-9]+(\.[0-9]+)?e[-+][0-9]+/g, (x) => Number(x).toPrecision(15));
}

describe('HogQL on ClickHouse (chDB)', () => {
  it('answers hand-picked queries as SQLite does', async () => {
    const differ: unknown[] = [];
    for (const q of HAND_PICKED) {
      const [a, b] = [await sqliteAnswer(q), await chAnswer(q).catch((e: Error) => `ERROR ${e.message.slice(0, 400)}`)];
      if (JSON.stringify(a) !== JSON.stringify(b)) differ.push({ q, sqlite: a, clickhouse: b });
    }
    expect(differ.map((x) => JSON.stringify(x))).toEqual([]);
  }, 120_000);

  it('answers alike with materialized columns', async () => {
    for (const q of HAND_PICKED) expect(await chAnswer(q, materialized), q).toEqual(await sqliteAnswer(q));
    for (const key of MATERIALIZED_EVENT_KEYS)
      for (const s of ['Chrome', 'pro', 'true', 'Zürich', 'https://hedgebox.net/'])
        for (const op of ['=', '!=']) {
          const q = `select uuid from events where properties['${key}'] ${op} '${s}' order by uuid`;
          expect(await chAnswer(q, materialized), q).toEqual(await sqliteAnswer(q));
        }
  }, 120_000);

  it('reads a materialized property in SELECT, GROUP BY, ORDER BY and WHERE as without its column, and times natively', async () => {
    for (const q of R_QUERIES) {
      const expected = await sqliteAnswer(q, teams.r);
      expect(await chAnswer(q, NO_MATERIALIZED_COLUMNS, teams.r), q).toEqual(expected);
      expect(await chAnswer(q, materialized, teams.r), q).toEqual(expected);
    }
  }, 120_000);

  it('reads a materialized property without its JSON when no row needs the JSON', async () => {
    const compile = async (q: string) =>
      compileSelect(await parseSelect(q), {
        dialect: clickhouseDialect,
        events: clickhouseEventsTable(materialized),
        teamId: teams.r,
        source: q,
        attr: 'query',
        now: NOW,
      });
    const fine = await compile('select properties.fine as f, count() from events group by f order by f');
    expect(fine.optimistic).toBeDefined();
    // the probe finds no row of project R that needs the JSON for `fine`, one for `odd`
    expect((await fine.optimistic!.probe.execute(chDb)).rows).toEqual([]);
    const odd = await compile('select properties.odd as o, count() from events group by o order by o');
    expect((await odd.optimistic!.probe.execute(chDb)).rows).toHaveLength(1);
    // without the column's split (a JSON property read beside it), no optimistic query
    expect((await compile('select properties.fine, properties.other from events')).optimistic).toBeUndefined();
  });

  it('never shows another project its events or persons', async () => {
    expect(await chAnswer("select count() from events where distinct_id = 'zed' or properties.secret = 'q-only'")).toEqual([[0]]);
    expect(await chAnswer('select count() from persons')).toEqual([[5]]);
  });

  it('a random query gives the same answer on ClickHouse and SQLite', async () => {
    let accepted = 0;
    const differ: string[] = [];
    for (const [i, q] of fc.sample(query, { numRuns: 400, seed: Number(process.env.HOGQL_SEED ?? 39) }).entries()) {
      // every fourth also with the materialized columns (read where they hold the property's text)
      const mat = i % 4 === 0 ? materialized : NO_MATERIALIZED_COLUMNS;
      const [a, b] = [await sqliteAnswer(q), await chAnswer(q, mat).catch((e: Error) => `ERROR ${e.message.slice(0, 300)}`)];
      if (a !== 'HTTP 400') accepted++;
      const [ja, jb] = [JSON.stringify(a), JSON.stringify(b)];
      if (ja === jb) continue;
      if (roughFloats(ja) === roughFloats(jb)) farFloats.push(q);
      else differ.push(JSON.stringify({ q, sqlite: a, clickhouse: b }).slice(0, 1500));
    }
    expect(differ).toEqual([]);
    expect(accepted).toBeGreaterThan(40);
  }, 900_000);

  it.todo('a Float beyond 1e21 or below 1e-6 has the same text on all three stores (see `farFloats`)');
});
