/**
 * Normalisation of column values at the storage boundary, so that repositories return the same
 * plain objects on SQLite and PostgreSQL (see `./schema.ts` for the physical representations).
 */
import type { BoolColumn, JsonColumn, TimestampColumn } from './schema.js';

/**
 * Sets `key` of `obj` as an own, enumerable data property, whatever the key: an assignment with
 * the key `__proto__` would set the object's prototype instead, losing the key. For objects whose
 * keys come from users (properties).
 */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/** 1/0 for a boolean column: accepted by SQLite (which cannot bind booleans) and PostgreSQL alike. */
export function boolValue(v: boolean): number {
  return v ? 1 : 0;
}

/** A boolean column as read: 1/0 (SQLite) or true/false (PostgreSQL). */
export function toBool(v: BoolColumn | null | undefined): boolean {
  return v === true || v === 1;
}

/** A nullable boolean column as read; null stays null. */
export function toBoolOrNull(v: BoolColumn | null | undefined): boolean | null {
  return v === null || v === undefined ? null : toBool(v);
}

/** JSON text for a JSON column (TEXT in SQLite, jsonb in PostgreSQL accepts the text). */
export function jsonValue(v: unknown): string {
  return JSON.stringify(v);
}

/** A JSON column as read: text from SQLite is parsed; PostgreSQL's jsonb arrives parsed already. */
export function fromJson<T>(v: JsonColumn | null | undefined): T {
  if (typeof v === 'string') return JSON.parse(v) as T;
  return v as T;
}

/** `toISOString()`'s form: what this store writes (`nowIso`), and what `toIso` returns. */
const CANONICAL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A timestamp as an ISO 8601 UTC string with milliseconds and `Z`, e.g. `2024-11-05T09:14:22.531Z`.
 * Text already in that form (what SQLite holds: this store writes `toISOString()`'s output) is
 * returned as it is; parsing and re-formatting it would cost more than the rest of the read, several per row. So
 * text of that shape that names no real instant (`2024-02-30T…`) is returned unchanged too, where
 * `Date` would roll it over; only text written by something else than this store can be such.
 */
export function toIso(v: TimestampColumn): string {
  if (typeof v === 'string' && CANONICAL_ISO.test(v)) return v;
  return (v instanceof Date ? v : new Date(v)).toISOString();
}

/** The current time as stored: ISO 8601 UTC with milliseconds. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** A count as read: `pg` returns bigint counts as strings, SQLite as numbers. */
export function toInt(v: number | string | bigint | null | undefined): number {
  return v === null || v === undefined ? 0 : Number(v);
}
