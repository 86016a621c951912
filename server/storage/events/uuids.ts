/**
 * Event uuids as the store holds them. On SQLite (migration 0012) an event's uuid is its 16 bytes,
 * a BLOB, instead of its 36-character text: the uuid is in the row, its unique key and the three
 * indexes of the events list (its tie-break), so the bytes save ~100 bytes an event
 * (docs/performance.md, "Event uuids as 16 bytes"). PostgreSQL keeps the text.
 *
 * - The API's form is lowercase hex with dashes (`01934e70-0000-7000-8000-000000000005`); every
 *   write path gives that form (capture and import validate and lowercase it).
 * - Order is kept: SQLite compares BLOBs byte by byte, which orders 16-byte uuids as their
 *   lowercase hex text orders (`0`–`9` before `a`–`f`), so `uuid desc` and the cursor's
 *   `(timestamp, uuid) <` give the same rows and order as before and as on PostgreSQL.
 * - A row the migration could not convert (a uuid not in that form, which no write path since
 *   2026-11-21 stores) keeps its text; `eventUuidOut` and `eventUuidText` read both kinds, and a
 *   look-up of a text not in the API's form is sent as text (`eventUuidIn`), so it still finds
 *   such a row.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from '../dialect.js';

/** An events row's `uuid` as the driver gives it: text (PostgreSQL, unconverted SQLite rows) or bytes (SQLite; `Uint8Array` once passed between threads). */
export type StoredEventUuid = string | Uint8Array;

/** A uuid in the API's form: lowercase hex, dashes after the 8th, 12th, 16th and 20th digit. */
const API_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * `uuid` as `dialect` stores it (module doc): on SQLite its 16 bytes when it is in the API's form,
 * else the text itself (what an unconverted row holds); the text on PostgreSQL.
 */
export function eventUuidIn(dialect: DialectName, uuid: string): StoredEventUuid {
  if (dialect === 'postgres' || !API_FORM.test(uuid)) return uuid;
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

/** A stored uuid (`StoredEventUuid`) in the API's form: bytes as lowercase hex with dashes, text as it is. */
export function eventUuidOut(stored: StoredEventUuid): string {
  if (typeof stored === 'string') return stored;
  const hex = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The SQLite literal of `uuid`'s 16 bytes (`X'0190…'`) when it is in the API's form, else
 * undefined: what HogQL's `uuid = '…'` compares the stored column with, so that the uuid's key
 * serves it (the events table's `storedUuid`, ./table.ts).
 */
export function eventUuidLiteral(uuid: string): RawBuilder<Uint8Array> | undefined {
  return API_FORM.test(uuid) ? sql.raw<Uint8Array>(`X'${uuid.replace(/-/g, '')}'`) : undefined;
}

/**
 * SQL text of a stored event uuid `column` in the API's form (HogQL's `uuid`, scripts that read
 * the table): on SQLite the bytes as lowercase hex with dashes, a text row as it is; the column
 * itself on PostgreSQL. An expression, so a comparison on it uses no index.
 */
export function eventUuidText(dialect: DialectName, column: RawBuilder<unknown>): RawBuilder<string> {
  if (dialect === 'postgres') return sql<string>`${column}`;
  return sql<string>`(select case when typeof(u) = 'blob' then lower(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-' || substr(h, 13, 4) || '-' || substr(h, 17, 4) || '-' || substr(h, 21)) else u end from (select ${column} as u, hex(${column}) as h))`;
}
