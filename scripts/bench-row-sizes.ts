/**
 * Row-size study of the SQLite events table (not a test; issue 22's "compact rows"): how many bytes
 * an event takes, indexes included, under migration 0002's layout, today's (JSONB properties) and
 * candidate layouts, measured on the same events.
 *
 *   npm run bench:row-sizes -- --store FILE [--events 100000] [--team 1]
 *
 * Reads the `--events` oldest events of project `--team` from an existing SQLite store (e.g. one
 * kept by `npm run bench:events -- --keep DIR`; opened read-only), copies them into a fresh file
 * per layout in the system's temporary directory (journal off, one transaction, then `VACUUM`),
 * and reports bytes an event: the whole file, and per table and index from SQLite's `dbstat`.
 * The layouts, each adding to the one before unless said:
 *
 * 1. migration 0002's: uuid text primary key, `timestamp` / `created_at` ISO text,
 *    `properties` JSON text, the three indexes of the events list;
 * 2. `properties` as SQLite's JSONB (`jsonb()`): what the store wrote from 2026-11-27 to migration 0010
 *    (server/storage/events/property-sets.ts `eventPropertiesIn`);
 * 3. `timestamp` and `created_at` as integer microseconds since the epoch (UTC);
 * 4. uuids as 16-byte blobs (in the key and the indexes);
 * 5. layout 4 as a `WITHOUT ROWID` table clustered on (team_id, timestamp, uuid), a unique index on
 *    uuid, the other two indexes (instead of 4, not after it);
 * 6. layout 4 with the properties that do not change within a session (`SESSION_KEYS`) stored once
 *    per distinct set in `property_sets` and each distinct elements chain once in `chains`, the
 *    event keeping their ids and its own properties;
 * 7. layout 6 with the order of all of the event's keys kept, each distinct order once in
 *    `key_orders` and the event holding its id, so that a read can give back the object with its
 *    keys in the order captured;
 * 8. layout 7's sets and chains on layout 2 (uuid text, ISO timestamps as text): what the sets
 *    alone save;
 * 9. layout 2 with each elements chain once per project in `element_groups` (hash unique per
 *    project), the event holding the group's id: what the store writes since migration 0010
 *    (server/storage/events/element-groups.ts).
 *
 * Layouts 3–7 are candidates only: nothing in the server writes them. Layout 8 is close to what the
 * server writes since migration 0011 (server/storage/events/property-sets.ts: per-project sets and key
 * orders with their hash columns, chains through layout 9's groups). Prints a Markdown table.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openSqlite } from '../server/storage/sqlite-driver.js';
import { Command } from 'commander';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { elementsChainOf } from '../server/storage/events/element-groups.js';
import { eventPropertiesWhole } from '../server/storage/events/property-sets.js';
import { eventTimeText } from '../server/storage/events/times.js';
import { eventUuidText } from '../server/storage/events/uuids.js';

/** An events row as migration 0002 stores it on SQLite. */
interface EventRow {
  uuid: string;
  team_id: number;
  event: string;
  distinct_id: string;
  properties: string;
  timestamp: string;
  elements_chain: string;
  created_at: string;
}

/** Properties of the demo's events (server/ingest/demo/sessions.ts) that are the same for every event of a session. */
const SESSION_KEYS = new Set([
  '$os',
  '$os_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$screen_width',
  '$screen_height',
  '$lib',
  '$lib_version',
  '$session_id',
  '$window_id',
  '$referrer',
  '$referring_domain',
  '$geoip_country_code',
  '$geoip_country_name',
  '$host',
]);

/** Microseconds since the epoch (UTC) of a stored ISO timestamp (`…T…[.ffffff]Z`). */
function micros(iso: string): number {
  const fraction = (/\.(\d+)/.exec(iso)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return Math.floor(Date.parse(iso) / 1000) * 1_000_000 + Number(fraction);
}

/** A uuid's 16 bytes. */
function uuidBlob(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

/** One layout: its schema and how it stores the rows. */
interface Layout {
  name: string;
  schema: string;
  store(db: Database.Database, rows: EventRow[]): void;
}

const INDEXES = `
  create index events_team_time on events (team_id, timestamp, uuid);
  create index events_team_event_time on events (team_id, event, timestamp, uuid);
  create index events_team_distinct_id_time on events (team_id, distinct_id, timestamp, uuid);`;

/** The plain table with the given column types (and `extraColumns`, e.g. `, element_group_id integer`), and the three indexes. */
function plainSchema(types: { uuid: string; properties: string; time: string }, extraColumns = ''): string {
  return `create table events (uuid ${types.uuid} primary key, team_id integer not null, event text not null, distinct_id text not null,
    properties ${types.properties} not null, timestamp ${types.time} not null, elements_chain text not null, created_at ${types.time} not null${extraColumns});${INDEXES}`;
}

/** Stores each row through `insert` with the values `values` makes of it. */
function storeEach(sqlText: string, values: (r: EventRow) => unknown[]): Layout['store'] {
  return (db, rows) => {
    const insert = db.prepare(sqlText);
    for (const r of rows) insert.run(...values(r));
  };
}

/** Column types of a layout that keeps session-constant properties and chains apart (layouts 6–8). */
interface CompactTypes {
  uuid: 'blob' | 'text';
  time: 'integer' | 'text';
  /** whether the order of all of the event's keys, own ones included, is kept: once per distinct order in `key_orders`, the event holding its id */
  keyOrder: boolean;
}

function compactSchema(t: CompactTypes): string {
  return `create table events (uuid ${t.uuid} primary key, team_id integer not null, event text not null, distinct_id text not null,
      properties blob not null, property_set_id integer not null, timestamp ${t.time} not null, chain_id integer, created_at ${t.time} not null${t.keyOrder ? ', key_order_id integer not null' : ''});${INDEXES}
    create table property_sets (id integer primary key, digest blob not null unique, properties blob not null);
    create table key_orders (id integer primary key, keys text not null unique);
    create table chains (id integer primary key, chain text not null unique);`;
}

/**
 * Stores rows with the properties of `SESSION_KEYS` once per distinct set, each elements chain once,
 * and with `keyOrder` each distinct order of an event's keys once.
 */
function storeCompact(opts: { uuid: (u: string) => unknown; time: (iso: string) => unknown; keyOrder: boolean }): Layout['store'] {
  return (db, rows) => {
    const insert = db.prepare(
      `insert into events (uuid, team_id, event, distinct_id, properties, property_set_id, timestamp, chain_id, created_at${opts.keyOrder ? ', key_order_id' : ''})
       values (?, ?, ?, ?, jsonb(?), ?, ?, ?, ?${opts.keyOrder ? ', ?' : ''})`,
    );
    const insertSet = db.prepare('insert into property_sets (digest, properties) values (?, jsonb(?))');
    const insertChain = db.prepare('insert into chains (chain) values (?)');
    const insertOrder = db.prepare('insert into key_orders (keys) values (?)');
    const sets = new Map<string, number>();
    const chains = new Map<string, number>();
    const orders = new Map<string, number>();
    for (const r of rows) {
      const all = JSON.parse(r.properties) as Record<string, unknown>;
      const shared: Record<string, unknown> = {};
      const own: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(all)) (SESSION_KEYS.has(k) ? shared : own)[k] = v;
      const sharedText = JSON.stringify(shared);
      let setId = sets.get(sharedText);
      if (setId === undefined) {
        setId = Number(insertSet.run(crypto.createHash('sha256').update(sharedText).digest(), sharedText).lastInsertRowid);
        sets.set(sharedText, setId);
      }
      let chainId: number | null = null;
      if (r.elements_chain) {
        chainId = chains.get(r.elements_chain) ?? Number(insertChain.run(r.elements_chain).lastInsertRowid);
        chains.set(r.elements_chain, chainId);
      }
      const values = [
        opts.uuid(r.uuid),
        r.team_id,
        r.event,
        r.distinct_id,
        JSON.stringify(own),
        setId,
        opts.time(r.timestamp),
        chainId,
        opts.time(r.created_at),
      ];
      if (opts.keyOrder) {
        const keys = JSON.stringify(Object.keys(all));
        const orderId = orders.get(keys) ?? Number(insertOrder.run(keys).lastInsertRowid);
        orders.set(keys, orderId);
        values.push(orderId);
      }
      insert.run(...values);
    }
  };
}

const INSERT = 'insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)';

const LAYOUTS: Layout[] = [
  {
    name: 'before 2026-11-27: uuid text key, ISO timestamps as text, properties as JSON text',
    schema: plainSchema({ uuid: 'text', properties: 'text', time: 'text' }),
    store: storeEach(`${INSERT} values (?, ?, ?, ?, ?, ?, ?, ?)`, (r) => [
      r.uuid,
      r.team_id,
      r.event,
      r.distinct_id,
      r.properties,
      r.timestamp,
      r.elements_chain,
      r.created_at,
    ]),
  },
  {
    name: "properties as SQLite's JSONB (the store's layout from 2026-11-27 to migration 0010)",
    schema: plainSchema({ uuid: 'text', properties: 'blob', time: 'text' }),
    store: storeEach(`${INSERT} values (?, ?, ?, ?, jsonb(?), ?, ?, ?)`, (r) => [
      r.uuid,
      r.team_id,
      r.event,
      r.distinct_id,
      r.properties,
      r.timestamp,
      r.elements_chain,
      r.created_at,
    ]),
  },
  {
    name: '+ timestamp and created_at as integer µs',
    schema: plainSchema({ uuid: 'text', properties: 'blob', time: 'integer' }),
    store: storeEach(`${INSERT} values (?, ?, ?, ?, jsonb(?), ?, ?, ?)`, (r) => [
      r.uuid,
      r.team_id,
      r.event,
      r.distinct_id,
      r.properties,
      micros(r.timestamp),
      r.elements_chain,
      micros(r.created_at),
    ]),
  },
  {
    name: '+ uuids as 16-byte blobs',
    schema: plainSchema({ uuid: 'blob', properties: 'blob', time: 'integer' }),
    store: storeEach(`${INSERT} values (?, ?, ?, ?, jsonb(?), ?, ?, ?)`, (r) => [
      uuidBlob(r.uuid),
      r.team_id,
      r.event,
      r.distinct_id,
      r.properties,
      micros(r.timestamp),
      r.elements_chain,
      micros(r.created_at),
    ]),
  },
  {
    name: 'the same, WITHOUT ROWID clustered on (team_id, timestamp, uuid)',
    schema: `create table events (team_id integer not null, timestamp integer not null, uuid blob not null, event text not null, distinct_id text not null,
        properties blob not null, elements_chain text not null, created_at integer not null, primary key (team_id, timestamp, uuid)) without rowid;
      create unique index events_uuid on events (uuid);
      create index events_team_event_time on events (team_id, event, timestamp);
      create index events_team_distinct_id_time on events (team_id, distinct_id, timestamp);`,
    store: storeEach(`${INSERT} values (?, ?, ?, ?, jsonb(?), ?, ?, ?)`, (r) => [
      uuidBlob(r.uuid),
      r.team_id,
      r.event,
      r.distinct_id,
      r.properties,
      micros(r.timestamp),
      r.elements_chain,
      micros(r.created_at),
    ]),
  },
  {
    name: '+ session-constant properties once per distinct set, elements chains once per distinct chain',
    schema: compactSchema({ uuid: 'blob', time: 'integer', keyOrder: false }),
    store: storeCompact({ uuid: uuidBlob, time: micros, keyOrder: false }),
  },
  {
    name: "the same, with the order of the event's keys kept: each distinct order once, the event holding its id (every read gives back the object as captured)",
    schema: compactSchema({ uuid: 'blob', time: 'integer', keyOrder: true }),
    store: storeCompact({ uuid: uuidBlob, time: micros, keyOrder: true }),
  },
  {
    name: "today's layout (2) with only the sets (key order kept) and chains: uuid text, ISO timestamps",
    schema: compactSchema({ uuid: 'text', time: 'text', keyOrder: true }),
    store: storeCompact({ uuid: (u) => u, time: (t) => t, keyOrder: true }),
  },
  {
    name: "layout 2 with each elements chain once per project in element_groups (today's: migration 0010)",
    schema: `${plainSchema({ uuid: 'text', properties: 'blob', time: 'text' }, ', element_group_id integer')}
      create table element_groups (id integer primary key autoincrement, team_id integer not null, hash text not null, elements_chain text not null, unique (team_id, hash));`,
    store(db, rows) {
      const insert = db.prepare(
        "insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at, element_group_id) values (?, ?, ?, ?, jsonb(?), ?, '', ?, ?)",
      );
      const insertGroup = db.prepare('insert into element_groups (team_id, hash, elements_chain) values (?, ?, ?)');
      const groups = new Map<string, number>();
      for (const r of rows) {
        let groupId: number | null = null;
        if (r.elements_chain) {
          const hash = crypto.createHash('sha256').update(r.elements_chain).digest('hex');
          groupId = groups.get(hash) ?? Number(insertGroup.run(r.team_id, hash, r.elements_chain).lastInsertRowid);
          groups.set(hash, groupId);
        }
        insert.run(r.uuid, r.team_id, r.event, r.distinct_id, r.properties, r.timestamp, r.created_at, groupId);
      }
    },
  },
];

/** Bytes an event of one layout: the file, and each table or index (`dbstat`). */
function measure(
  layout: Layout,
  rows: EventRow[],
  dir: string,
  index: number,
): { total: number; parts: { name: string; bytes: number }[] } {
  const file = path.join(dir, `layout-${index + 1}.sqlite3`);
  const db = openSqlite(file);
  try {
    db.pragma('journal_mode = off');
    db.exec(layout.schema);
    db.transaction(() => layout.store(db, rows))();
    db.exec('vacuum');
    const pages = db.pragma('page_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const parts = db.prepare('select name, sum(pgsize) as bytes from dbstat group by name having bytes > 0 order by bytes desc').all() as {
      name: string;
      bytes: number;
    }[];
    return { total: (pages * pageSize) / rows.length, parts: parts.map((p) => ({ name: p.name, bytes: p.bytes / rows.length })) };
  } finally {
    db.close();
    fs.rmSync(file, { force: true });
  }
}

const program = new Command('bench-row-sizes')
  .description("bytes an event of the SQLite events table, today and under candidate layouts (see the script's header)")
  .requiredOption('--store <file>', 'an existing SQLite store with events (opened read-only)')
  .option('--events <n>', 'events to copy (the oldest of the project)', (v) => Number(v), 100_000)
  .option('--team <id>', 'the project whose events are copied', (v) => Number(v), 1)
  .action((o: { store: string; events: number; team: number }) => {
    if (!fs.existsSync(o.store)) throw new Error(`no such file: ${o.store}`);
    const source = openSqlite(o.store, { readonly: true, fileMustExist: true });
    // the chain of a row written since migration 0010 is in element_groups, and since migration
    // 0011 its session-constant properties are in property_sets: read through the server's own
    // expressions (server/storage/events/element-groups.ts, property-sets.ts) when the store has them
    const has = (column: string) =>
      (source.prepare("select count(*) as n from pragma_table_info('events') where name = ?").get(column) as { n: number }).n > 0;
    const chain = has('element_group_id') ? elementsChainOf() : sql`events.elements_chain`;
    const properties = has('key_order_id') ? eventPropertiesWhole('sqlite') : sql`events.properties`;
    const reader = new Kysely<unknown>({ dialect: new SqliteDialect({ database: source }) });
    // json(): the store holds JSONB (or, written before 2026-11-27, text); layout 1 is the text
    // the uuid as text whether the store holds its 16 bytes (migration 0012) or its text
    // the times as text whether the store holds microseconds (migration 0013) or the text itself
    const timeText = (column: string) =>
      sql`(case when typeof(${sql.ref(`events.${column}`)}) = 'integer' then ${eventTimeText('sqlite', sql.ref(`events.${column}`))} else ${sql.ref(`events.${column}`)} end)`;
    const query =
      sql`select ${eventUuidText('sqlite', sql`events.uuid`)} as uuid, team_id, event, distinct_id, json(${properties}) as properties, ${timeText('timestamp')} as timestamp, ${chain} as elements_chain, ${timeText('created_at')} as created_at
      from events where team_id = ${o.team} order by timestamp limit ${o.events}`.compile(reader);
    const rows = source.prepare(query.sql).all(...query.parameters) as EventRow[];
    source.close();
    if (rows.length === 0) throw new Error(`project ${o.team} of ${o.store} has no events`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-row-sizes-'));
    try {
      console.log(`${rows.length.toLocaleString('en-US')} events of project ${o.team} from ${o.store} — ${new Date().toISOString()}\n`);
      console.log('| layout | bytes an event | tables and indexes, bytes an event |\n|---|---:|---|');
      LAYOUTS.forEach((layout, i) => {
        process.stderr.write(`layout ${i + 1} of ${LAYOUTS.length}…\n`);
        const m = measure(layout, rows, dir, i);
        console.log(
          `| ${i + 1}. ${layout.name} | ${Math.round(m.total).toLocaleString('en-US')} | ${m.parts.map((p) => `${p.name} ${Math.round(p.bytes)}`).join(', ')} |`,
        );
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

program.parse();
