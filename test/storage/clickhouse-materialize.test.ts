/**
 * Materialized property columns on the ClickHouse events store (embedded chDB), through the real
 * HTTP stack (server/storage/events/clickhouse/materialize.ts, dispatched by
 * server/storage/events/index.ts): `$browser` materialized becomes PostHog's nullable
 * `mat_$browser` with its `column_materializer::properties::$browser` comment and minmax index,
 * written into the stored parts; the events list's property filters and `where`, the values
 * suggestions and HogQL (events and `FROM persons`, with the person property `plan` as
 * `pmat_plan` on the mirror) answer the same before, with and after the columns, over values that
 * tell the forms apart (`''`, the string `'null'`, JSON null, a missing key, quotes and
 * backslashes, numbers, booleans, objects); an event captured after the column has it; the reads
 * take the column at once (no restart), and take it indeed (the SQL names it); listing,
 * dematerializing, a second property that maps to the same name, and the errors. One server (one
 * chDB data directory) for the whole file. Skipped, and said so, when `chdb` cannot be loaded.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSelect } from '../../server/hogql/parser.js';
import { compileSelect } from '../../server/hogql/select.js';
import { hogqlDialect } from '../../server/hogql/index.js';
import {
  clickhouseEventsOf,
  dematerializeProperty,
  eventsStoreOf,
  listMaterializedColumns,
  MaterializeError,
  materializeProperty,
  type MaterializeStep,
} from '../../server/storage/events/index.js';
import { materializedColumnDdl, materializedColumnName } from '../../server/storage/clickhouse/schema.js';
import { MAX_MATERIALIZED_COLUMNS } from '../../server/storage/events/materialized.js';
import { capture } from '../capture/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { reportSkip } from '../helpers/skips.js';

const chdb = await import('chdb').then(
  () => true,
  () => false,
);
if (!chdb)
  reportSkip(
    'test/storage/clickhouse-materialize.test.ts',
    'the optional package chdb cannot be loaded',
    'npm install chdb (Linux x64/arm64 glibc, macOS)',
  );

let t: TestServer;
const P = 1;
const NOW = Date.now();
const AFTER = new Date(NOW - 86_400_000).toISOString();
const BEFORE = new Date(NOW + 86_400_000).toISOString();

const uuidOf = (n: number) => `01934e70-0000-7000-8000-${String(n).padStart(12, '0')}`;

/** `$browser` in every form the reads must tell apart (undefined: the key is missing). */
const BROWSERS: unknown[] = ['Chrome', '', 'null', null, undefined, 'a"b\\c', 'Zürich', 12, true, { x: 1 }, 'chrome', 'Chrome'];

async function batch(events: Record<string, unknown>[], token = t.boot.team.api_token): Promise<void> {
  const res = await capture(t, '/batch/', { api_key: token, historical_migration: true, batch: events });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The ClickHouse rows of `query` (the store's own connection). */
async function chRows<T>(query: string): Promise<T[]> {
  const client = clickhouseEventsOf(t.store)!.connection.client;
  return (await (await client.query({ query, format: 'JSONEachRow' })).json()) as T[];
}

const FILTERS: unknown[][] = [
  [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: ['Chrome', ''], operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: '', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: 'null', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: 'a"b\\c', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: '12', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: 'true', operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: 'Chrome', operator: 'is_not', type: 'event' }],
  [{ key: '$browser', value: '', operator: 'is_not', type: 'event' }],
  [{ key: '$browser', value: 'chr', operator: 'icontains', type: 'event' }],
  [{ key: '$browser', value: 'chr', operator: 'not_icontains', type: 'event' }],
  [{ key: '$browser', value: '^[A-Z]', operator: 'regex', type: 'event' }],
  [{ key: '$browser', value: '^[A-Z]', operator: 'not_regex', type: 'event' }],
  [{ key: '$browser', value: 5, operator: 'gt', type: 'event' }],
  [{ key: '$browser', value: 20, operator: 'lt', type: 'event' }],
  [{ key: '$browser', operator: 'is_set', type: 'event' }],
  [{ key: '$browser', operator: 'is_not_set', type: 'event' }],
  [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }],
];

const WHERES = [
  "properties.$browser = 'Chrome'",
  "properties.$browser = ''",
  "properties.$browser != 'null'",
  'properties.$browser is null',
];

/** HogQL over both columns (each a second or so on chDB: a few, each telling a form apart). */
const HOGQL = [
  'select properties.$browser as b, count() from events group by b order by b',
  "select uuid from events where properties.$browser = 'Chrome' order by uuid",
  "select uuid from events where properties.$browser = '' order by uuid",
  "select uuid from events where properties.$browser != 'null' order by uuid",
  "select uuid from events where properties.$browser = 'a\"b\\\\c' order by uuid",
  "select uuid from events where properties.$browser in ('Chrome', '', 'Zürich') order by uuid",
  'select properties.plan as plan, count() from persons group by plan order by plan',
  "select properties.plan from persons where properties.plan = '' order by properties.plan",
  "select count() from persons where properties.plan = 'null'",
];

/** Every answer the test compares: the events list per filter and `where`, the values, HogQL. */
async function answers(): Promise<string[]> {
  const out: string[] = [];
  const range = `&after=${encodeURIComponent(AFTER)}&before=${encodeURIComponent(BEFORE)}`;
  for (const f of FILTERS) {
    const page = (await t.json(`/api/environments/${P}/events/?limit=100${range}&properties=${encodeURIComponent(JSON.stringify(f))}`)) as {
      results: { id: string }[];
    };
    out.push(`list ${JSON.stringify(f)} → ${page.results.map((r) => r.id).join(' ')}`);
  }
  for (const w of WHERES) {
    const page = (await t.json(`/api/environments/${P}/events/?limit=100${range}&where=${encodeURIComponent(JSON.stringify([w]))}`)) as {
      results: { id: string }[];
    };
    out.push(`where ${w} → ${page.results.map((r) => r.id).join(' ')}`);
  }
  for (const q of ['', '&value=ch', '&value=z']) {
    out.push(`values${q} → ${JSON.stringify(await t.json(`/api/environments/${P}/events/values/?key=$browser${q}`))}`);
  }
  for (const q of HOGQL) out.push(`${q} → ${JSON.stringify(await t.hogql(P, q))}`);
  return out;
}

describe.runIf(chdb)('materialized columns on the ClickHouse events store (embedded chDB)', () => {
  let before: string[];

  beforeAll(async () => {
    t = await startTestServer({ eventsStore: 'clickhouse' });
    const at = (i: number) => new Date(NOW - (i + 1) * 60_000).toISOString();
    // persons: plan 'pro', '', the string 'null', JSON null, none
    const plans: unknown[] = ['pro', '', 'null', null, undefined];
    await batch(
      BROWSERS.map((b, i) => ({
        uuid: uuidOf(i + 1),
        event: '$pageview',
        distinct_id: `user-${i % plans.length}`,
        timestamp: at(i),
        properties: {
          ...(b === undefined ? {} : { $browser: b }),
          ...(i < plans.length && plans[i] !== undefined ? { $set: { plan: plans[i] } } : {}),
        },
      })),
    );
    before = await answers();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it("adds PostHog's nullable mat_$browser with its comment and minmax index, step by step, written into every part", async () => {
    const steps: MaterializeStep[] = [];
    const col = await materializeProperty(t.store, 'event', '$browser', (s) => steps.push(s));
    expect(col).toMatchObject({ kind: 'event', property: '$browser', column: 'mat_$browser' });
    expect(col.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(steps).toEqual(['column', 'index', 'backfill']);
    expect(
      await chRows(
        "select type, default_kind, default_expression, comment from system.columns where database = currentDatabase() and table = 'events' and name = 'mat_$browser'",
      ),
    ).toEqual([
      {
        type: 'Nullable(String)',
        default_kind: 'MATERIALIZED',
        default_expression: "JSONExtract(properties, '$browser', 'Nullable(String)')",
        comment: 'column_materializer::properties::$browser',
      },
    ]);
    expect(
      await chRows("select name, type, expr from system.data_skipping_indices where table = 'events' and name = 'minmax_mat_$browser'"),
    ).toEqual([{ name: 'minmax_mat_$browser', type: 'minmax', expr: '`mat_$browser`' }]);
    // the backfill wrote the column into every active part (a part without it would compute it when read)
    const parts = await chRows<{ name: string }>("select name from system.parts where table = 'events' and active");
    const written = await chRows<{ name: string }>(
      "select name from system.parts_columns where table = 'events' and active and column = 'mat_$browser'",
    );
    expect(parts.length).toBeGreaterThan(0);
    expect(written.map((r) => r.name).sort()).toEqual(parts.map((r) => r.name).sort());
    expect(await chRows<{ n: string }>("select count() as n from system.mutations where table = 'events' and not is_done")).toEqual([
      { n: '0' },
    ]);
  });

  it('holds the property text exactly: NULL for a missing key and for JSON null alike, strings unescaped, other values as JSON', async () => {
    const rows = await chRows<{ u: string; v: string | null }>('select toString(uuid) as u, `mat_$browser` as v from events order by u');
    expect(rows.map((r) => r.v)).toEqual([
      'Chrome',
      '',
      'null',
      null,
      null,
      'a"b\\c',
      'Zürich',
      '12',
      'true',
      '{"x":1}',
      'chrome',
      'Chrome',
    ]);
  });

  it('materializes the person property plan as pmat_plan on the person mirror', async () => {
    const col = await materializeProperty(t.store, 'person', 'plan');
    expect(col).toMatchObject({ kind: 'person', property: 'plan', column: 'pmat_plan' });
    expect(
      await chRows(
        "select type, comment from system.columns where database = currentDatabase() and table = 'person' and name = 'pmat_plan'",
      ),
    ).toEqual([{ type: 'Nullable(String)', comment: 'column_materializer::properties::plan' }]);
    expect((await listMaterializedColumns(t.store)).map((c) => `${c.kind} ${c.property} ${c.column}`)).toEqual([
      'event $browser mat_$browser',
      'person plan pmat_plan',
    ]);
  });

  it('reads the columns at once, without a restart: the filters and HogQL name them', async () => {
    const events = eventsStoreOf(t.store);
    const materialized = await events.materializedColumns();
    expect([...materialized.event]).toEqual([['$browser', 'mat_$browser']]);
    expect([...materialized.person]).toEqual([['plan', 'pmat_plan']]);
    const conditions = events.conditions({
      teamId: P,
      before: '2100-01-01T00:00:00.000000Z',
      properties: {
        kind: 'group',
        type: 'AND',
        values: [{ kind: 'filter', type: 'event', key: '$browser', operator: 'exact', texts: ['Chrome'] }],
      },
      materialized,
    });
    expect(sql.join(conditions).compile(events.db).sql).toContain('events."mat_$browser"');
    for (const [q, column] of [
      ["select count() from events where properties.$browser = 'Chrome'", 'events."mat_$browser"'],
      ["select count() from persons where properties.plan = 'pro'", 'persons."pmat_plan"'],
    ] as const) {
      const compiled = compileSelect(await parseSelect(q, 'query'), {
        dialect: hogqlDialect('clickhouse'),
        teamId: P,
        source: q,
        attr: 'query',
        now: new Date(),
        events: events.table(materialized),
      });
      expect(compiled.sql.compile(events.db).sql).toContain(column);
    }
  });

  it('answers every filter, where, values and HogQL query as before the columns', async () => {
    expect(await answers()).toEqual(before);
  });

  it('computes the column of an event captured after it (in another project, whose events the answers above do not see)', async () => {
    const other = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Materialized, later' });
    const late = { uuid: uuidOf(99), event: '$pageview', distinct_id: 'late', timestamp: new Date(NOW - 30_000).toISOString() };
    await batch([{ ...late, properties: { $browser: '' } }], other.api_token);
    expect(await chRows(`select \`mat_$browser\` as v from events where uuid = '${uuidOf(99)}'`)).toEqual([{ v: '' }]);
    const page = (await t.json(
      `/api/environments/${other.id}/events/?after=${encodeURIComponent(AFTER)}&properties=${encodeURIComponent(
        JSON.stringify([{ key: '$browser', value: '', operator: 'exact', type: 'event' }]),
      )}`,
    )) as { results: { id: string }[] };
    expect(page.results.map((r) => r.id)).toEqual([uuidOf(99)]);
  });

  it('refuses a property materialized already, a key no column holds, a ::disabled name and one past the limit, changing nothing', async () => {
    await expect(materializeProperty(t.store, 'event', '$browser')).rejects.toThrow(/materialized already/);
    await expect(materializeProperty(t.store, 'person', 'plan')).rejects.toThrow(MaterializeError);
    await expect(materializeProperty(t.store, 'event', 'a"b')).rejects.toThrow(/cannot be materialized/);
    await expect(materializeProperty(t.store, 'event', '')).rejects.toThrow(/the property name is empty/);
    await expect(materializeProperty(t.store, 'event', 'x::disabled')).rejects.toThrow(MaterializeError);
    // up to MAX_MATERIALIZED_COLUMNS event columns (added here by their DDL alone, without a backfill), then refused
    const client = clickhouseEventsOf(t.store)!.connection.client;
    const filler = Array.from({ length: MAX_MATERIALIZED_COLUMNS - 1 }, (_, i) => `filler_${i}`);
    for (const p of filler)
      for (const query of materializedColumnDdl('events', p, materializedColumnName('events', p), {
        database: clickhouseEventsOf(t.store)!.connection.database,
      }))
        await client.command({ query });
    await expect(materializeProperty(t.store, 'event', 'one_too_many')).rejects.toThrow(
      `at most ${MAX_MATERIALIZED_COLUMNS} event properties can be materialized; dematerialize one first`,
    );
    await client.command({
      query: `ALTER TABLE events ${filler.map((p) => `DROP COLUMN \`${materializedColumnName('events', p)}\``).join(', ')}`,
    });
    expect(await listMaterializedColumns(t.store)).toHaveLength(2);
  });

  it('gives a second property that maps to the same name its own column', async () => {
    const a = await materializeProperty(t.store, 'event', 'a b');
    const b = await materializeProperty(t.store, 'event', 'a_b');
    expect(a.column).toBe('mat_a_b');
    expect(b.column).toMatch(/^mat_a_b_[0-9a-f]{6}$/);
    expect(await dematerializeProperty(t.store, 'event', 'a b')).toBe(true);
    expect(await dematerializeProperty(t.store, 'event', 'a_b')).toBe(true);
  });

  it('dematerializes: the column and its index are dropped, the answers stay, and a second drop is refused', async () => {
    expect(await dematerializeProperty(t.store, 'event', '$browser')).toBe(true);
    expect(await dematerializeProperty(t.store, 'person', 'plan')).toBe(true);
    expect(await dematerializeProperty(t.store, 'event', '$browser')).toBe(false);
    expect(await dematerializeProperty(t.store, 'event', 'plan')).toBe(false);
    expect(await listMaterializedColumns(t.store)).toEqual([]);
    expect(await chRows("select name from system.columns where table in ('events', 'person') and name like '%mat_%'")).toEqual([]);
    expect(await chRows("select name from system.data_skipping_indices where table = 'events' and name like 'minmax_mat%'")).toEqual([]);
    expect(await answers()).toEqual(before);
  });
});
