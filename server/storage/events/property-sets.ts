/**
 * Session-constant properties stored once per distinct set (SQLite only; migration 0011). Of an
 * event's ~575 bytes of properties, the keys that the SDKs send unchanged for every event of a
 * page load or session (`$os`, `$browser`, `$session_id`, `$referrer`, `$geoip_…`:
 * `SHARED_PROPERTY_KEYS`) are most of the bytes and repeat for every event of the session. An event
 * that has any of them keeps in `events.properties` only its other keys; the shared ones go to a
 * row of `property_sets` (one per distinct set in a project), and the order of all its keys to a
 * row of `property_key_orders` (a few dozen in all), the event holding both ids
 * (`property_set_id`, `key_order_id`). docs/performance.md ("Session-constant properties stored
 * once") measures what it saves.
 *
 * Every read gives the properties back as captured, key for key and byte for byte:
 * - one key: it is read from the set for a shared key of a row with a set, from
 *   `events.properties` otherwise (rows without a set, written before the migration or with no
 *   shared key, hold all their keys): `readEventProperty` (HogQL's `properties.<key>`, `values`,
 *   the materialized columns' backfill, the property filters), one look-up of the set by primary
 *   key a row.
 * - the whole object, in the events list: `joinSharedProperties` joins the page's rows in
 *   JavaScript (two queries for the page's sets and key orders); elsewhere (an event by uuid,
 *   HogQL's `properties`) `eventPropertiesWhole(dialect)` rebuilds it in SQL from the key order,
 *   taking each value from the event's own keys or its set (copied as its JSON text, so numbers
 *   such as `1.50` or `1e21` keep their text).
 *
 * The key list (migration 0011's) is part of the storage format: a read routes a key by it, so
 * changing it needs a migration that moves the key between the sets and the events. A
 * materialized column of a shared key is a stored column, filled on insert
 * (storage/events/materialized.ts). PostgreSQL is unchanged: the read functions answer
 * `events.properties` there.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectName, JsonSource } from '../dialect.js';
import { internedIds } from './interned.js';
import { setOwn } from '../values.js';
import { SHARED_PROPERTY_KEYS_0011 } from '../migrations/0011_property_sets.js';
import type { Database } from '../schema.js';

/**
 * `events.properties` as written, from its JSON text: SQLite stores it as its binary JSONB
 * (`jsonb(?)`), which SQLite's JSON functions read without parsing text (a filter on a property
 * of every row of a project, docs/performance.md) and which is a little smaller; PostgreSQL's jsonb column takes the text. Rows written before 2026-11-27 hold the
 * JSON text on SQLite: every JSON function reads both forms, and `eventPropertiesOut` answers both
 * as text, so such stores need no rewrite.
 */
export function eventPropertiesIn(dialect: DialectName, text: string): RawBuilder<unknown> | string {
  return dialect === 'sqlite' ? sql`jsonb(${text})` : text;
}

/**
 * `events.properties` (as `column`, e.g. `sql.ref('events.properties')`) read back whole, as JSON
 * text on SQLite (`json()`: the very text that was written, byte for byte, for text that
 * `JSON.stringify` wrote; SQLite's JSONB is not for applications to decode) and as jsonb on
 * PostgreSQL (decoded by the driver). See `eventPropertiesIn`.
 */
export function eventPropertiesOut(dialect: DialectName, column: RawBuilder<unknown>): RawBuilder<unknown> {
  return dialect === 'sqlite' ? sql`json(${column})` : column;
}

/** The keys stored in the property sets: migration 0011's list (see there). */
export const SHARED_PROPERTY_KEYS: ReadonlySet<string> = SHARED_PROPERTY_KEYS_0011;

/** An event's properties as stored: `own` always; `shared` and `keys` when it has a shared key. */
export interface SplitProperties {
  /** JSON text of the event's own keys, in their order (all of its keys when `shared` is absent) */
  own: string;
  /** JSON text of its shared keys, in the order captured (an SDK sends them in one order: equal sets are one row) */
  shared?: string;
  /**
   * JSON object text whose members are all its keys, in the order `JSON.stringify` writes them
   * (each with the value 0): an object, so that SQLite's `json_each` gives each key's quoted path
   */
  keys?: string;
}

/**
 * Splits `properties` (a captured object) into what `events` keeps and what goes to the sets.
 * Keys whose value JSON cannot write (undefined, functions) are left out, as `JSON.stringify`
 * leaves them out of the whole object. `orders`: key orders already written in this batch (the
 * keys joined → the order's text), which a batch's events mostly share.
 */
export function splitProperties(properties: Record<string, unknown>, orders: Map<string, string> = new Map()): SplitProperties {
  const own: Record<string, unknown> = {};
  const shared: Record<string, unknown> = {};
  let hasShared = false;
  const keys: string[] = [];
  for (const key of Object.keys(properties)) {
    const value = properties[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    keys.push(key);
    const into = SHARED_PROPERTY_KEYS.has(key) ? ((hasShared = true), shared) : own;
    // an assignment to `__proto__` would set the prototype: define it as a key like any other
    if (key === '__proto__') setOwn(into, key, value);
    else into[key] = value;
  }
  if (!hasShared) return { own: JSON.stringify(properties) };
  const signature = keys.join('\u0000');
  let order = orders.get(signature);
  if (order === undefined) {
    order = JSON.stringify(Object.fromEntries(keys.map((k) => [k, 0])));
    orders.set(signature, order);
  }
  return { own: JSON.stringify(own), shared: JSON.stringify(shared), keys: order };
}

/**
 * The ids of the sets and key orders of `splits` in project `teamId` (text → id), creating the
 * ones the store lacks (storage/events/interned.ts). Call it inside the transaction that writes the
 * events. Throws the driver's error.
 */
export async function propertySetIds(
  db: Kysely<Database>,
  teamId: number,
  splits: readonly SplitProperties[],
): Promise<{ sets: Map<string, number>; orders: Map<string, number> }> {
  const sets = await internedIds(
    db,
    'property_sets',
    teamId,
    splits.map((s) => s.shared),
    true,
  );
  const orders = await internedIds(
    db,
    'property_key_orders',
    teamId,
    splits.map((s) => s.keys),
    true,
  );
  return { sets, orders };
}

/**
 * `read(json)` of the query's `events` row for property `key` (a value such as `jsonText`; module
 * doc): on SQLite, for a shared key, `read` of the row's set, evaluated inside one subquery on the
 * set's primary key, or `read(events.properties)` for a row without a set; `read(events.properties)`
 * for any other key, and always on PostgreSQL.
 */
export function readEventProperty<T>(dialect: DialectName, key: string, read: (json: JsonSource) => RawBuilder<T>): RawBuilder<T> {
  const own = read(sql`events.properties`);
  if (dialect === 'postgres' || !SHARED_PROPERTY_KEYS.has(key)) return own;
  return sql<T>`(case when events.property_set_id is null then ${own} else (select ${read(sql`s.properties`)} from property_sets s where s.id = events.property_set_id) end)`;
}

/**
 * All the properties of the query's `events` row, as captured (module doc): on SQLite SQLite's
 * JSONB (read it out with `eventPropertiesOut` or `json()`); jsonb on PostgreSQL. A row without a
 * set (written before migration 0011, or without a shared key) is its own JSONB (or the stored
 * text of rows written before 2026-11-27); a row with a set is rebuilt by walking its key order
 * (an object whose members are the keys in order: `json_each` gives each key's quoted path,
 * `fullkey`), each value taken as its JSON text from the event or else its set: ~13 µs an event
 * (docs/performance.md).
 */
export function eventPropertiesWhole(dialect: DialectName): RawBuilder<unknown> {
  if (dialect === 'postgres') return sql`events.properties`;
  return sql`(case when events.key_order_id is null then events.properties else (
    select jsonb_group_object(o.key, json(coalesce(events.properties -> o.fullkey, s.properties -> o.fullkey)))
    from property_key_orders k join property_sets s on s.id = events.property_set_id, json_each(k.keys) o where k.id = events.key_order_id
  ) end)`;
}

/** An events row as a page of the events list reads it on SQLite: its own properties' JSON text and the ids of its set and key order. */
export interface PageRow {
  properties: unknown;
  set_id: number | null;
  order_id: number | null;
}

/**
 * Puts the whole properties' JSON text into each row of a page of `rows` that has a set (module
 * doc), replacing its own keys' text: the page's sets and key orders are read once (one query
 * each, through `fetch`, which answers rows as arrays), and each event's object is built in its
 * key order from its own keys and its set's, each member written as `JSON.stringify` writes it:
 * the very text captured, as every stored text was written by `JSON.stringify` (storage/values.ts
 * `jsonValue`; no whitespace, members in order). What `eventPropertiesWhole` does in SQL, for the
 * events list's page, where it costs a fraction of the SQL's work, and only for the page's rows
 * (not for every event a person filter sorts). Throws the driver's error.
 */
export async function joinSharedProperties(rows: PageRow[], fetch: (query: RawBuilder<unknown>) => Promise<unknown[][]>): Promise<void> {
  const withSet = rows.filter((r) => r.set_id !== null && r.order_id !== null);
  if (withSet.length === 0) return;
  // each set's members as `key → value's JSON text`; each order as `[key, '"key":']`
  const sets = new Map<number, Map<string, string>>();
  for (const [id, text] of await fetch(
    sql`select id, json(properties) from property_sets where id in (${sql.join([...new Set(withSet.map((r) => r.set_id))])})`,
  )) {
    const set = JSON.parse(String(text)) as Record<string, unknown>;
    sets.set(Number(id), new Map(Object.keys(set).map((k) => [k, JSON.stringify(set[k])])));
  }
  const orders = new Map<number, (readonly [string, string])[]>();
  for (const [id, text] of await fetch(
    sql`select id, json(keys) from property_key_orders where id in (${sql.join([...new Set(withSet.map((r) => r.order_id))])})`,
  )) {
    orders.set(
      Number(id),
      Object.keys(JSON.parse(String(text)) as object).map((k) => [k, `${JSON.stringify(k)}:`] as const),
    );
  }
  for (const row of withSet) {
    const own = JSON.parse(String(row.properties)) as Record<string, unknown>;
    const set = sets.get(row.set_id!)!;
    const members: string[] = [];
    for (const [key, keyText] of orders.get(row.order_id!)!)
      members.push(keyText + (Object.hasOwn(own, key) ? JSON.stringify(own[key]) : set.get(key)!));
    row.properties = `{${members.join(',')}}`;
  }
}
