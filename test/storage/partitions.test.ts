/**
 * The monthly partitions of `events` on PostgreSQL (migration 0008, server/storage/events/partitions.ts)
 * and the write path's global uuid guard (`event_uuids`, repositories/events-write.ts).
 *
 * Checks, each on a fresh schema: `events` is partitioned after migrating, with month partitions
 * and a default one; rows of different months land in their own partitions, rows of a month
 * without one in the default partition; one uuid is stored once whether it comes twice in one
 * batch or in two batches, with the same or another timestamp, in the same or another project;
 * `ensureEventPartitions` creates the months ahead, is idempotent, and skips (reports) a month
 * whose rows are in the default partition already; migrating a store that already holds events
 * and a materialized column (migrated to 0007 first) keeps every row, the column and its index,
 * and materialize/dematerialize still work on the partitioned table; a time-bounded list query
 * reads only the partitions of its months (plan-time pruning). Skipped on SQLite, where nothing
 * of this exists (the SQLite pass checks that the write path is unchanged through the other
 * suites).
 */
import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../server/bootstrap.js';
import { AccountsRepository } from '../../server/storage/repositories/accounts.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { dematerializeProperty, materializeProperty, materializedColumnName } from '../../server/storage/events/materialized.js';
import { migrationProvider } from '../../server/storage/migrations/index.js';
import { addMonths, ensureEventPartitions, keepEventPartitions, monthOf, partitionName } from '../../server/storage/events/partitions.js';
import { EventsWriteRepository, type EventInput } from '../../server/storage/events/write.js';
import { createTestPgSchema, usesPostgres, type TestPgSchema } from '../helpers/pg.js';

const NOW = new Date();
const THIS_MONTH = monthOf(NOW);

/** A fixed-width stored timestamp in month `m` (day 15, noon) plus `seconds`. */
function tsIn(m: { year: number; month: number }, seconds = 0): string {
  const d = new Date(Date.UTC(m.year, m.month - 1, 15, 12, 0, seconds));
  return d.toISOString().replace('Z', '000Z');
}

function event(
  uuid: string,
  timestamp: string,
  name = '$pageview',
  properties: Record<string, unknown> = { $browser: 'Chrome' },
): EventInput {
  return { uuid, event: name, distinct_id: 'd1', properties, timestamp, elements_chain: '' };
}

/** Partition → its rows' uuids (tableoid tells which partition holds a row). */
async function placement(store: Store): Promise<Map<string, string[]>> {
  const r = await sql<{ part: string; uuid: string }>`select tableoid::regclass::text as part, uuid from events order by uuid`.execute(
    store.db,
  );
  const out = new Map<string, string[]>();
  for (const row of r.rows) out.set(row.part, [...(out.get(row.part) ?? []), row.uuid]);
  return out;
}

async function partitions(store: Store): Promise<string[]> {
  const r = await sql<{
    name: string;
  }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass order by 1`.execute(
    store.db,
  );
  return r.rows.map((x) => x.name);
}

async function eventIndexes(store: Store): Promise<string[]> {
  const r = await sql<{
    name: string;
  }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'events' order by 1`.execute(store.db);
  return r.rows.map((x) => x.name);
}

describe.skipIf(!usesPostgres())('events partitioned by month (PostgreSQL)', () => {
  let schema: TestPgSchema;
  let store: Store;
  let teamId: number;

  beforeEach(async () => {
    schema = await createTestPgSchema();
    store = openStore({ databaseUrl: schema.url, poolSize: 2 });
  });
  afterEach(async () => {
    await store.close();
    await schema.drop();
  });

  async function migrated(): Promise<void> {
    await migrateToLatest(store);
    teamId = (await bootstrap(store)).team!.id;
  }

  it('is partitioned after migrating, with month partitions ahead and a default partition', async () => {
    await migrated();
    const kind = await sql<{ k: string }>`select relkind::text as k from pg_class where oid = 'events'::regclass`.execute(store.db);
    expect(kind.rows[0]?.k).toBe('p');
    const names = await partitions(store);
    expect(names).toContain('events_default');
    for (let i = 0; i <= 3; i++) expect(names).toContain(partitionName(addMonths(THIS_MONTH, i)));
    expect(names).toContain(partitionName(addMonths(THIS_MONTH, -12)));
    expect(await eventIndexes(store)).toEqual([
      'events_pkey',
      'events_properties_gin',
      'events_team_distinct_id_time',
      'events_team_event_time',
      'events_team_time',
    ]);
  });

  it('puts each row in its month, a month without partition in the default, and stores a uuid once', async () => {
    await migrated();
    const repo = new EventsWriteRepository(store.db);
    const last = addMonths(THIS_MONTH, -1);
    const ancient = { year: 1999, month: 1 };
    const batch = [
      event('u-now', tsIn(THIS_MONTH)),
      event('u-last', tsIn(last)),
      event('u-old', tsIn(ancient)),
      // the same uuid again in the batch, other timestamp and name: the first one wins
      event('u-now', tsIn(last, 5), '$other'),
      event('u-dup', tsIn(THIS_MONTH, 1)),
      event('u-dup', tsIn(THIS_MONTH, 1), '$second'),
    ];
    expect(await repo.insertEvents(teamId, batch)).toBe(4);
    // across batches: same timestamp, another timestamp (another partition), another project
    expect(
      await repo.insertEvents(teamId, [event('u-last', tsIn(last)), event('u-now', tsIn(ancient)), event('u-new', tsIn(last, 9))]),
    ).toBe(1);
    const where = await placement(store);
    expect(where.get(partitionName(THIS_MONTH))).toEqual(['u-dup', 'u-now']);
    expect(where.get(partitionName(last))).toEqual(['u-last', 'u-new']);
    expect(where.get('events_default')).toEqual(['u-old']);
    const rows = await store.db.selectFrom('events').select(['uuid', 'event', 'timestamp']).orderBy('uuid').execute();
    expect(rows.map((r) => [r.uuid, r.event])).toEqual([
      ['u-dup', '$pageview'],
      ['u-last', '$pageview'],
      ['u-new', '$pageview'],
      ['u-now', '$pageview'],
      ['u-old', '$pageview'],
    ]);
    expect(rows.find((r) => r.uuid === 'u-now')?.timestamp).toBe(tsIn(THIS_MONTH));
    const guarded = await sql<{ n: number }>`select count(*)::int as n from event_uuids`.execute(store.db);
    expect(guarded.rows[0]?.n).toBe(5);
  });

  it('stores a uuid once across projects', async () => {
    await migrated();
    const repo = new EventsWriteRepository(store.db);
    const { organization_id } = await store.db
      .selectFrom('teams')
      .select('organization_id')
      .where('id', '=', teamId)
      .executeTakeFirstOrThrow();
    const other = await new AccountsRepository(store.db).createTeam({ organization_id, name: 'Other' });
    expect(await repo.insertEvents(teamId, [event('u-x', tsIn(THIS_MONTH))])).toBe(1);
    // another project, another month, inside a transaction: nothing more
    await store.db.transaction().execute(async (trx) => {
      expect(await new EventsWriteRepository(trx).insertEvents(other.id, [event('u-x', tsIn(addMonths(THIS_MONTH, 1)))])).toBe(0);
    });
    expect(await repo.storedUuids(['u-x', 'u-y'])).toEqual(new Map([['u-x', teamId]]));
    expect(
      Number(
        (
          await store.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(1);
  });

  it('ensureEventPartitions creates the months ahead, is idempotent, and skips a month held by the default partition', async () => {
    await migrated();
    const later = new Date(Date.UTC(THIS_MONTH.year, THIS_MONTH.month - 1 + 10, 3));
    const laterMonth = monthOf(later);
    // an event of a month that will be in the default partition when its partition is wanted
    const repo = new EventsWriteRepository(store.db);
    expect(await repo.insertEvents(teamId, [event('u-future', tsIn(addMonths(laterMonth, 2)))])).toBe(1);
    const first = await ensureEventPartitions(store.db, later, 3);
    expect(first.created).toEqual([0, 1, 3].map((i) => partitionName(addMonths(laterMonth, i))));
    expect(first.refused.map((r) => r.partition)).toEqual([partitionName(addMonths(laterMonth, 2))]);
    expect(first.refused[0]?.reason).toMatch(/default partition/);
    const again = await ensureEventPartitions(store.db, later, 3);
    expect(again.created).toEqual([]);
    expect((await placement(store)).get('events_default')).toEqual(['u-future']);
    // the row is still found by a bounded query
    const found = await store.db
      .selectFrom('events')
      .select('uuid')
      .where('team_id', '=', teamId)
      .where('timestamp', '>', tsIn(addMonths(laterMonth, 2), -1))
      .execute();
    expect(found.map((r) => r.uuid)).toEqual(['u-future']);
  });

  it('keepEventPartitions creates a missing month at start, logs it, and stops', async () => {
    await migrated();
    const ahead = partitionName(addMonths(THIS_MONTH, 2));
    await sql`drop table ${sql.table(ahead)}`.execute(store.db);
    const lines: [string, object, string][] = [];
    const keeper = keepEventPartitions(store.db, {
      info: (d, m) => lines.push(['info', d, m]),
      warn: (d, m) => lines.push(['warn', d, m]),
    });
    await keeper.first;
    await keeper.stop();
    expect(lines).toEqual([['info', { partitions: [ahead] }, 'created monthly partitions of events']]);
    expect(await partitions(store)).toContain(ahead);
  });

  it('migrating a store with events and a materialized column keeps every row, the column and its index', async () => {
    const migrator = new Migrator({ db: store.db, provider: migrationProvider, migrationTableSchema: schema.name });
    const to7 = await migrator.migrateTo('0007_properties_gin');
    expect(to7.error).toBeUndefined();
    teamId = (await bootstrap(store)).team!.id;
    const column = materializedColumnName('event', '$browser');
    await materializeProperty(store, 'event', '$browser');
    const months = [-30, -2, 0, 5].map((i) => addMonths(THIS_MONTH, i));
    const rows = months.flatMap((m, i) =>
      Array.from({ length: 3 }, (_, j) => ({
        uuid: `m${i}-${j}`,
        team_id: teamId,
        event: '$pageview',
        distinct_id: `d${j}`,
        properties: JSON.stringify({ $browser: ['Chrome', 'Firefox', null][j] }),
        timestamp: tsIn(m, j),
        elements_chain: '',
        created_at: NOW.toISOString(),
      })),
    );
    await store.db.insertInto('events').values(rows).execute();
    const before =
      await sql`select uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at, ${sql.ref(column)} as mat from events order by uuid`.execute(
        store.db,
      );

    await migrateToLatest(store);
    const after =
      await sql`select uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at, ${sql.ref(column)} as mat from events order by uuid`.execute(
        store.db,
      );
    expect(after.rows).toEqual(before.rows);
    expect(after.rows).toHaveLength(12);
    expect(await eventIndexes(store)).toContain(`events_${column}`);
    const timeIndex = await sql<{
      def: string;
    }>`select indexdef as def from pg_indexes where schemaname = current_schema() and indexname = 'events_team_time'`.execute(store.db);
    expect(timeIndex.rows[0]?.def).toMatch(new RegExp(`\\(team_id, "timestamp", uuid\\) INCLUDE \\(${column}\\)$`));
    // migration 0017: properties are json (as sent), the GIN index over their jsonb
    const gin = await sql<{
      def: string;
    }>`select indexdef as def from pg_indexes where schemaname = current_schema() and indexname = 'events_properties_gin'`.execute(
      store.db,
    );
    expect(gin.rows[0]?.def).toMatch(/USING gin \(\(\(properties\)::jsonb\) jsonb_path_ops\)$/);
    const where = await placement(store);
    expect(where.get(partitionName(months[1]!))).toEqual(['m1-0', 'm1-1', 'm1-2']);
    expect(where.get('events_default')).toEqual(['m3-0', 'm3-1', 'm3-2']);
    const guarded = await sql<{ n: number }>`select count(*)::int as n from event_uuids`.execute(store.db);
    expect(guarded.rows[0]?.n).toBe(12);
    // the generated column is computed on new rows, in every partition
    const repo = new EventsWriteRepository(store.db);
    expect(
      await repo.insertEvents(teamId, [event('m0-0', tsIn(THIS_MONTH)), event('n-1', tsIn(THIS_MONTH), '$x', { $browser: 'Safari' })]),
    ).toBe(1);
    const mat = await sql<{ m: string }>`select ${sql.ref(column)} as m from events where uuid = 'n-1'`.execute(store.db);
    expect(mat.rows[0]?.m).toBe('Safari');

    // dematerialize and materialize again on the partitioned table
    expect(await dematerializeProperty(store, 'event', '$browser')).toBe(true);
    expect(await eventIndexes(store)).not.toContain(`events_${column}`);
    await materializeProperty(store, 'event', '$browser');
    expect(await eventIndexes(store)).toContain(`events_${column}`);
    const again = await sql<{ n: number }>`select count(*)::int as n from events where ${sql.ref(column)} = 'Chrome'`.execute(store.db);
    expect(again.rows[0]?.n).toBe(4);
    // each partition has its own copy of the column's index and of the time index, which
    // carries the column after its key (migration 0009, then materializeProperty)
    const perPartition = await sql<{
      def: string;
    }>`select indexdef as def from pg_indexes where schemaname = current_schema() and tablename = ${partitionName(THIS_MONTH)} and indexdef like ${`%${column}%`}`.execute(
      store.db,
    );
    expect(perPartition.rows.map((r) => r.def.replace(/^.* USING btree /, '')).sort()).toEqual([
      `(team_id, "timestamp", uuid) INCLUDE (${column})`,
      `(team_id, ${column}, "timestamp", uuid)`,
    ]);
  });

  it('a time-bounded list query reads only the partitions of its months', async () => {
    await migrated();
    const last = addMonths(THIS_MONTH, -1);
    const plan = await sql<{ 'QUERY PLAN': string }>`explain select uuid from events where team_id = ${sql.lit(teamId)}
      and timestamp > ${sql.lit(tsIn(last))} and timestamp < ${sql.lit(tsIn(last, 3600))} order by timestamp desc, uuid desc limit 100`.execute(
      store.db,
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain(partitionName(last));
    expect(text).not.toContain(partitionName(THIS_MONTH));
    expect(text).not.toContain('events_default');
  });
});
