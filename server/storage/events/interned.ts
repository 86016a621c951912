/**
 * Tables that hold each distinct text of a project once, the events keeping its id instead of the
 * text: `element_groups` (elements chains, migration 0010), `property_sets` and
 * `property_key_orders` (session-constant properties and key orders, migration 0011). Each has
 * the columns `(id, team_id, hash, <value>)` and is unique on `(team_id, hash)`, the hash being
 * SHA-256 of the text (UTF-8, lowercase hex). Rows are never deleted (nor are events).
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { chunks } from '../chunks.js';
import type { Database } from '../schema.js';

/** Each interning table and the column holding its text. */
const VALUE_COLUMN = {
  element_groups: 'elements_chain',
  property_sets: 'properties',
  property_key_orders: 'keys',
} as const;

/** A table of distinct texts (module doc). */
export type InternedTable = keyof typeof VALUE_COLUMN;

/** SHA-256 of `text` (UTF-8), lowercase hex: the row's `hash`. */
export function internHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The id of each distinct text of `texts` in `table` for project `teamId`: text → id (`undefined`
 * entries of `texts` are skipped). Reads the rows first; the ones missing are created (`insert …
 * on conflict do nothing`) and read again, so a batch whose texts are all known costs one query a
 * `chunks` of them. `jsonb`: the text is JSON, stored as SQLite's JSONB (`jsonb(?)`; the tables of
 * migration 0011, which exist on SQLite only). Call it inside the transaction that writes the
 * events, so that a failed batch leaves no row behind; on PostgreSQL a concurrent writer of the
 * same text waits for the other's commit, then reads its row. Throws the driver's error.
 */
export async function internedIds(
  db: Kysely<Database>,
  table: InternedTable,
  teamId: number,
  texts: Iterable<string | undefined>,
  jsonb = false,
): Promise<Map<string, number>> {
  const byHash = new Map<string, string>();
  const seen = new Set<string>();
  for (const text of texts) {
    if (text === undefined || seen.has(text)) continue;
    seen.add(text);
    byHash.set(internHash(text), text);
  }
  const out = new Map<string, number>();
  if (byHash.size === 0) return out;
  await readIds(db, table, teamId, [...byHash.keys()], byHash, out);
  const missing = [...byHash].filter(([, text]) => !out.has(text));
  if (missing.length === 0) return out;
  const column = VALUE_COLUMN[table];
  for (const slice of chunks(missing)) {
    const rows = slice.map(([hash, text]) => sql`(${teamId}, ${hash}, ${jsonb ? sql`jsonb(${text})` : text})`);
    await sql`insert into ${sql.table(table)} (team_id, hash, ${sql.ref(column)}) values ${sql.join(rows)} on conflict (team_id, hash) do nothing`.execute(
      db,
    );
  }
  await readIds(
    db,
    table,
    teamId,
    missing.map(([hash]) => hash),
    byHash,
    out,
  );
  return out;
}

/** Adds to `out` (text → id) the rows of `hashes` that exist (`chunks` of them a query). */
async function readIds(
  db: Kysely<Database>,
  table: InternedTable,
  teamId: number,
  hashes: readonly string[],
  byHash: ReadonlyMap<string, string>,
  out: Map<string, number>,
): Promise<void> {
  for (const slice of chunks(hashes)) {
    const found = await sql<{
      id: number;
      hash: string;
    }>`select id, hash from ${sql.table(table)} where team_id = ${teamId} and hash in (${sql.join(slice)})`.execute(db);
    for (const r of found.rows) out.set(byHash.get(r.hash)!, r.id);
  }
}
