/**
 * Materialized property columns (server/storage/events/materialized.ts) answer exactly as the JSON they
 * replace, through the real HTTP stack, on the store of the pass (SQLite, or PostgreSQL in the
 * PostgreSQL pass). Over one dataset whose properties take every JSON form (strings, numbers of
 * every kind, booleans, null, arrays, objects, numeric and date strings, non-ASCII, a key with a
 * quote), the same requests are answered before any column exists, with every event and person
 * property of the dataset materialized, and after dematerializing them again; the three answers
 * must be equal: a fixed table of property filters, ~150 random filter groups (fast-check, every
 * operator, event and person types, AND/OR nesting), the values of every event property, and the
 * persons list's filters. The list's SQL for a materialized filter, as the repository builds it,
 * is also planned by the store and must use the column's index, so that the comparison does not
 * pass merely by reading the JSON both times; `events_team_time`, which the values read in time
 * order, must carry the event columns (and only those materialized at the time).
 */
import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';
import { timeIndexColumns } from '../helpers/store.js';
import { answerText, randomFilterGroups } from '../helpers/filter-groups.js';
import { EventsWriteRepository, type EventInput } from '../../server/storage/events/write.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import {
  dematerializeProperty,
  listMaterializedColumns,
  loadMaterializedColumns,
  materializeProperty,
  MaterializeError,
} from '../../server/storage/events/materialized.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';

let t: TestServer;
let pid: number;

const EVENT_KEYS = ['$browser', 'n', 's', 'flag', 'mixed', 'tags', 'obj', 'when', 'city', "it's", 'empty', 'big'] as const;
const PERSON_KEYS = ['email', 'plan', 'age'] as const;

/** Event properties; `mixed` changes JSON type from event to event. */
const PROPS: Record<string, unknown>[] = [
  {
    $browser: 'Chrome',
    n: 5,
    s: '10',
    flag: true,
    mixed: 'x',
    tags: ['a', 'b'],
    obj: { a: 1, b: [2, 'c'] },
    when: '2024-03-10T12:00:00Z',
    city: 'MÜNCHEN',
    "it's": 'yes',
    empty: '',
    big: 9007199254740992,
  },
  {
    $browser: 'Firefox',
    n: 15,
    s: '9',
    flag: false,
    mixed: 7,
    tags: [],
    obj: {},
    when: '2024-03-11T08:30:00Z',
    city: 'Zürich',
    "it's": "it's",
    empty: null,
    big: -1.5e300,
  },
  { $browser: 'Safari', n: 10.5, s: 'abc', mixed: true, when: '2024-03-10', city: 'zürich', big: 0.1 },
  { $browser: 'Chrome Mobile', n: '7', s: '20', mixed: null, obj: { nested: { deep: 'x' } }, when: 'not a date', empty: 'e' },
  { $browser: null, n: -3, s: '-3', mixed: [1, 2], flag: 'true' },
  {},
  { $browser: 'chrome', n: 0, s: '0', mixed: { k: 'v' }, tags: ['b'], city: 'Mün', "it's": '' },
  { $browser: 'Opera Mini', n: 1e21, s: '1e21', mixed: 2.5, when: '2024-03-12T00:00:00.000001Z' },
];
const PEOPLE: { distinct_id: string; set: Record<string, unknown> }[] = [
  { distinct_id: 'ada', set: { email: 'ada@hedgebox.net', plan: 'pro', age: 36 } },
  { distinct_id: 'bob', set: { email: 'bob@example.com', plan: 'free', age: '41' } },
  { distinct_id: 'cy', set: { plan: null, age: 12.5 } },
  { distinct_id: 'dee', set: { email: 'DEE@hedgebox.net', plan: ['pro'] } },
];

beforeAll(async () => {
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Materialized' })).id;
  const now = Date.now();
  const events: EventInput[] = [];
  for (let i = 0; i < 40; i++) {
    events.push({
      uuid: `0190a000-0000-7000-8000-${String(i).padStart(12, '0')}`,
      event: i % 3 === 0 ? '$pageview' : 'clicked',
      distinct_id: ['ada', 'bob', 'cy', 'dee', 'anon'][i % 5]!,
      properties: PROPS[i % PROPS.length]!,
      timestamp: formatTimestamp(new Date(now - (i + 1) * 60_000)),
      elements_chain: '',
    });
  }
  await t.store.db.transaction().execute(async (trx) => {
    const repo = new EventsWriteRepository(trx);
    await repo.insertEvents(pid, events);
    await repo.applyPersonUpdates(pid, PEOPLE);
  });
});

afterAll(async () => {
  await t?.close();
});

// ------------------------------------------------------------------------------------------------
// What is compared

/** One request's answer: status and body (the list's events as their uuids). */
const answer = (path: string) => answerText(t, path);

const eventsPath = (properties: unknown) =>
  `/api/environments/${pid}/events/?limit=100&properties=${encodeURIComponent(JSON.stringify(properties))}`;
const personsPath = (properties: unknown) =>
  `/api/environments/${pid}/persons/?properties=${encodeURIComponent(JSON.stringify(properties))}`;
const valuesPath = (key: string) => `/api/environments/${pid}/events/values/?key=${encodeURIComponent(key)}`;

/** The fixed cases: each event key's exact value, comparisons and set-ness, each person key. */
const FIXED: unknown[] = [
  ...EVENT_KEYS.flatMap((key) => [
    [{ key, value: 'Chrome' }],
    [{ key, operator: 'is_not', value: ['x', '7'] }],
    [{ key, operator: 'icontains', value: 'ü' }],
    [{ key, operator: 'gt', value: 3 }],
    [{ key, operator: 'is_set' }],
    [{ key, operator: 'is_date_after', value: '2024-03-10' }],
  ]),
  ...PERSON_KEYS.flatMap((key) => [
    [{ key, type: 'person', value: 'pro' }],
    [{ key, type: 'person', operator: 'icontains', value: 'HEDGEBOX' }],
    [{ key, type: 'person', operator: 'lt', value: 40 }],
  ]),
];

const RANDOM = randomFilterGroups(EVENT_KEYS, PERSON_KEYS, 150, 20261126);

/** Every request of the comparison, as paths. */
function requests(): string[] {
  return [
    ...FIXED.map(eventsPath),
    ...RANDOM.map((g) => eventsPath(g)),
    ...EVENT_KEYS.map(valuesPath),
    ...PERSON_KEYS.flatMap((key) => [
      personsPath([{ key, type: 'person', value: 'pro' }]),
      personsPath([{ key, type: 'person', operator: 'is_not', value: 'free' }]),
    ]),
    `/api/environments/${pid}/persons/?email=ada%40hedgebox.net`,
    `/api/environments/${pid}/persons/?search=hedgebox`,
  ];
}

async function answers(): Promise<string[]> {
  const out: string[] = [];
  for (const p of requests()) out.push(await answer(p));
  return out;
}

// ------------------------------------------------------------------------------------------------

describe('materialized property columns', () => {
  let before: string[];

  it('answers the same with every property materialized, and again after dematerializing', async () => {
    before = await answers();
    // the comparison means something: most requests select some events but not all
    expect(new Set(before).size).toBeGreaterThan(40);
    for (const key of EVENT_KEYS) await materializeProperty(t.store, 'event', key);
    for (const key of PERSON_KEYS) await materializeProperty(t.store, 'person', key);
    expect((await listMaterializedColumns(t.store.db)).length).toBe(EVENT_KEYS.length + PERSON_KEYS.length);
    const materialized = await answers();
    const paths = requests();
    for (let i = 0; i < paths.length; i++) expect(materialized[i], decodeURIComponent(paths[i]!)).toBe(before[i]);
    for (const key of EVENT_KEYS) expect(await dematerializeProperty(t.store, 'event', key)).toBe(true);
    for (const key of PERSON_KEYS) expect(await dematerializeProperty(t.store, 'person', key)).toBe(true);
    expect(await listMaterializedColumns(t.store.db)).toEqual([]);
    expect(await answers()).toEqual(before);
  }, 300_000);

  it('a filter reads the column through its index, and the column holds the JSON text', async () => {
    const col = await materializeProperty(t.store, 'event', '$browser');
    try {
      const cells = await sql<{
        v: string | null;
      }>`select ${sql.ref(col.column)} as v from events where team_id = ${pid} order by uuid`.execute(t.store.db);
      expect(cells.rows.slice(0, 8).map((r) => r.v)).toEqual([
        'Chrome',
        'Firefox',
        'Safari',
        'Chrome Mobile',
        null,
        null,
        'chrome',
        'Opera Mini',
      ]);
      const operaMini = eventsPath([{ key: '$browser', value: 'Opera Mini' }]);
      const uuids = [7, 15, 23, 31, 39].map((i) => `0190a000-0000-7000-8000-${String(i).padStart(12, '0')}`);
      // the repository's SQL for the filter, as the list builds it, planned by the store (PostgreSQL
      // told not to scan the table: it would, on 40 rows)
      const group = {
        kind: 'group' as const,
        type: 'AND' as const,
        values: [{ kind: 'filter' as const, key: '$browser', type: 'event' as const, operator: 'exact' as const, texts: ['Opera Mini'] }],
      };
      const plan = await t.store.db.transaction().execute(async (trx) => {
        const where = new RowEventsStore(trx).conditions({
          teamId: pid,
          before: formatTimestamp(new Date()),
          properties: group,
          materialized: await loadMaterializedColumns(trx),
        });
        const query = sql`select uuid from events where team_id = ${pid} and ${sql.join(where, sql` and `)} order by timestamp desc, uuid desc limit 100`;
        if (t.store.dialect === 'sqlite')
          return (await sql<{ detail: string }>`explain query plan ${query}`.execute(trx)).rows.map((r) => r.detail).join('; ');
        await sql`set local enable_seqscan = off`.execute(trx);
        return (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)).rows.map((r) => r['QUERY PLAN']).join('; ');
      });
      // PostgreSQL: events is partitioned by month (migration 0008); each partition has its copy of
      // the index, named after the partition and the columns (events_p2024_11_team_id_mat_…_idx)
      expect(plan).toMatch(
        t.store.dialect === 'postgres' ? new RegExp(`Index[^;]* (using|on) events_\\w*${col.column}`) : new RegExp(`events_${col.column}`),
      );
      expect(await answer(operaMini)).toBe(JSON.stringify(uuids));
    } finally {
      await dematerializeProperty(t.store, 'event', '$browser');
    }
  });

  it('reports its steps; on SQLite a key of the property sets is filled, on PostgreSQL it vacuums and analyzes the rewritten table, so the new column has statistics', async () => {
    const steps: string[] = [];
    const col = await materializeProperty(t.store, 'event', '$browser', (step) => steps.push(step));
    try {
      // $browser is a key of the property sets: on SQLite a stored column, filled by an UPDATE (storage/events/property-sets.ts)
      expect(steps).toEqual([
        'column',
        ...(t.store.dialect === 'sqlite' ? ['backfill'] : []),
        'index',
        'record',
        'time index',
        ...(t.store.dialect === 'postgres' ? ['vacuum'] : []),
      ]);
      if (t.store.dialect === 'postgres') {
        // ANALYZE writes pg_stats rows of the column for the partitions that hold events
        const stats = await sql<{
          n: string;
        }>`select count(*) as n from pg_stats where schemaname = current_schema() and tablename like 'events%' and attname = ${col.column}`.execute(
          t.store.db,
        );
        expect(Number(stats.rows[0]!.n)).toBeGreaterThan(0);
      }
    } finally {
      await dematerializeProperty(t.store, 'event', '$browser');
    }
  });

  it('events_team_time carries the materialized event columns after its key, in the order they were added', async () => {
    const a = await materializeProperty(t.store, 'event', 'city');
    const b = await materializeProperty(t.store, 'event', '$browser');
    await materializeProperty(t.store, 'person', 'plan');
    try {
      expect(await timeIndexColumns(t.store)).toEqual(['team_id', 'timestamp', 'uuid', a.column, b.column]);
      expect(await answer(valuesPath('$browser'))).toBe(before[requests().indexOf(valuesPath('$browser'))]);
      expect(await dematerializeProperty(t.store, 'event', 'city')).toBe(true);
      expect(await timeIndexColumns(t.store)).toEqual(['team_id', 'timestamp', 'uuid', b.column]);
      expect(await dematerializeProperty(t.store, 'event', '$browser')).toBe(true);
      expect(await timeIndexColumns(t.store)).toEqual(['team_id', 'timestamp', 'uuid']);
    } finally {
      await dematerializeProperty(t.store, 'event', 'city');
      await dematerializeProperty(t.store, 'event', '$browser');
      await dematerializeProperty(t.store, 'person', 'plan');
    }
  });

  it('refuses a key no column can hold, a property twice, and an unknown one to dematerialize; nothing is left half-made', async () => {
    await expect(materializeProperty(t.store, 'event', 'a"b')).rejects.toThrow(MaterializeError);
    await expect(materializeProperty(t.store, 'event', 'back\\slash')).rejects.toThrow(MaterializeError);
    await expect(materializeProperty(t.store, 'event', '')).rejects.toThrow(MaterializeError);
    await materializeProperty(t.store, 'event', 'n');
    await expect(materializeProperty(t.store, 'event', 'n')).rejects.toThrow(/materialized already/);
    expect((await listMaterializedColumns(t.store.db)).map((c) => c.property)).toEqual(['n']);
    expect(await dematerializeProperty(t.store, 'event', 'n')).toBe(true);
    expect(await dematerializeProperty(t.store, 'event', 'n')).toBe(false);
    expect(await dematerializeProperty(t.store, 'person', 'n')).toBe(false);
  });

  it.skipIf(usesPostgres())('SQLite: leaves no WAL behind, though the server keeps the store open', async () => {
    const wal = `${t.store.location}-wal`;
    const walSize = () => (fs.existsSync(wal) ? fs.statSync(wal).size : 0);
    // a small write: the WAL keeps its pages until a checkpoint
    const writeSomething = async () => {
      await sql`insert into materialized_columns (kind, property, column_name, created_at) values ('event', 'probe', 'probe', '2024-01-01T00:00:00.000000Z')`.execute(
        t.store.db,
      );
      await sql`delete from materialized_columns where property = 'probe'`.execute(t.store.db);
    };
    // the read pool's worker keeps its own connection to the file open, as a running server does
    await t.client.GET('/api/environments/{project_id}/events/', { params: { path: { project_id: String(pid) } } });
    await writeSomething();
    expect(walSize()).toBeGreaterThan(0);
    await materializeProperty(t.store, 'event', 'city');
    expect(walSize()).toBe(0);
    await writeSomething();
    expect(walSize()).toBeGreaterThan(0);
    expect(await dematerializeProperty(t.store, 'event', 'city')).toBe(true);
    expect(walSize()).toBe(0);
  });
});
