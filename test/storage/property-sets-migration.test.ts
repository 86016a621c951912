/**
 * Migration 0011 (server/storage/migrations/0011_property_sets.ts) on a store that materialized
 * event properties before it (SQLite: virtual generated columns computed from `events.properties`):
 * the column of a shared key (`$browser`) becomes a plain column with the same values, its index
 * and `events_team_time` built again; the column of an own key (`plan`) stays virtual. Then events
 * written through the store's write path (their `$browser` in a property set) fill the plain column,
 * and the events list's filter and the values read through the columns answer both kinds of rows.
 * On PostgreSQL the migration does nothing and the same reads answer alike. Each on a fresh store
 * migrated to 0010 first.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootstrap } from '../../server/bootstrap.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';
import { migrateToLatest, type Store } from '../../server/storage/db.js';
import { jsonTextLiteral } from '../../server/storage/dialect.js';
import { eventPropertiesIn } from '../../server/storage/events/property-sets.js';
import { loadMaterializedColumns, materializedColumnName } from '../../server/storage/events/materialized.js';
import { RowEventsStore } from '../../server/storage/events/row-store.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';
import { createTestStoreLocation, openMigratedTo, timeIndexColumns, type TestStoreLocation } from '../helpers/store.js';

let location: TestStoreLocation;
let store: Store;

beforeEach(async () => {
  location = await createTestStoreLocation('envapi-0011-');
  store = await openMigratedTo(location, '0010_element_groups');
});

afterEach(async () => {
  await store?.close();
  await location?.cleanup();
});

/** A materialized event column as `envapi events materialize` made it before migration 0011: column, index, record, time index. */
async function materializedBefore0011(property: string, createdAt: string, all: string[]): Promise<string> {
  const column = materializedColumnName('event', property);
  const storage = store.dialect === 'postgres' ? sql`stored` : sql`virtual`;
  await sql`alter table events add column ${sql.ref(column)} text generated always as (${jsonTextLiteral(store.dialect, sql.ref('properties'), property)}) ${storage}`.execute(
    store.db,
  );
  await sql`create index ${sql.ref(`events_${column}`)} on events (team_id, ${sql.ref(column)}, timestamp, uuid)`.execute(store.db);
  await store.db
    .insertInto('materialized_columns')
    .values({ kind: 'event', property, column_name: column, created_at: createdAt })
    .execute();
  all.push(column);
  await sql`drop index events_team_time`.execute(store.db);
  const extra = sql.join(all.map((c) => sql.ref(c)));
  if (store.dialect === 'postgres')
    await sql`create index events_team_time on events (team_id, timestamp, uuid) include (${extra})`.execute(store.db);
  else await sql`create index events_team_time on events (team_id, timestamp, uuid, ${extra})`.execute(store.db);
  return column;
}

const uuid = (n: number) => `0190d000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const at = (n: number) => formatTimestamp(new Date(Date.now() - (100 - n) * 60_000));
const OLD = [
  { $browser: 'Chrome', plan: 'pro', $os: 'Mac OS X' },
  { $browser: 'Firefox', plan: 'free' },
  { plan: 'pro' },
  { $browser: 'Chrome', $session_id: 's' },
];
const NEW = [{ $browser: 'Chrome', plan: 'free', $os: 'Linux' }, { $browser: 'Safari' }, { plan: 'pro', n: 1 }];

describe('migration 0011 on a store with materialized event properties', () => {
  it("makes a shared key's column plain with the same values; new events fill it; filters and values read both", async () => {
    const columns: string[] = [];
    const browser = await materializedBefore0011('$browser', '2026-11-01T00:00:00.000Z', columns);
    const plan = await materializedBefore0011('plan', '2026-11-02T00:00:00.000Z', columns);
    // the project (its tables are those of 0010 already), then rows as a store written before 0011 holds them
    await bootstrap(store);
    for (const [n, p] of OLD.entries()) {
      await sql`insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)
        values (${uuid(n)}, 1, 'e', 'd', ${eventPropertiesIn(store.dialect, JSON.stringify(p))}, ${at(n)}, '', ${new Date().toISOString()})`.execute(
        store.db,
      );
    }
    await migrateToLatest(store);
    if (store.dialect === 'sqlite') {
      const kinds = await sql<{
        name: string;
        hidden: number;
      }>`select name, hidden from pragma_table_xinfo('events') where name in (${browser}, ${plan})`.execute(store.db);
      // hidden 0: a plain column; 2: a virtual generated one
      expect(Object.fromEntries(kinds.rows.map((r) => [r.name, r.hidden]))).toEqual({ [browser]: 0, [plan]: 2 });
    }
    expect(await timeIndexColumns(store)).toEqual(['team_id', 'timestamp', 'uuid', browser, plan]);
    await store.db.transaction().execute((trx) =>
      new EventsWriteRepository(trx).insertEvents(
        1,
        NEW.map((p, i) => ({ uuid: uuid(10 + i), event: 'e', distinct_id: 'd', properties: p, timestamp: at(10 + i), elements_chain: '' })),
      ),
    );
    const cells = await sql<{
      uuid: string;
      b: string | null;
      p: string | null;
    }>`select uuid, ${sql.ref(browser)} as b, ${sql.ref(plan)} as p from events order by uuid`.execute(store.db);
    expect(cells.rows.map((r) => [r.b, r.p])).toEqual(
      [...OLD, ...NEW].map((p) => [(p as { $browser?: string }).$browser ?? null, (p as { plan?: string }).plan ?? null]),
    );
    const read = new RowEventsStore(store.db);
    const materialized = await loadMaterializedColumns(store.db);
    const chrome = {
      kind: 'group' as const,
      type: 'AND' as const,
      values: [{ kind: 'filter' as const, key: '$browser', type: 'event' as const, operator: 'exact' as const, texts: ['Chrome'] }],
    };
    const listed = await read.list({
      teamId: 1,
      before: formatTimestamp(new Date(Date.now() + 60_000)),
      properties: chrome,
      materialized,
      offset: 0,
      limit: 100,
    });
    expect(listed.map((e) => e.uuid).sort()).toEqual([uuid(0), uuid(3), uuid(10)]);
    const values = await read.values({
      teamId: 1,
      key: '$browser',
      isColumn: false,
      since: at(-1),
      until: at(50),
      scan: 1000,
      limit: 10,
      order: 'value',
    });
    expect(values).toEqual([
      { value: 'Chrome', count: 3 },
      { value: 'Firefox', count: 1 },
      { value: 'Safari', count: 1 },
    ]);
  });
});
