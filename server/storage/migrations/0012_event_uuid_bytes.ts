/**
 * Migration 0012, SQLite only: each event's uuid stored as its 16 bytes (a BLOB) instead of its
 * 36-character text (storage/events/uuids.ts). One `UPDATE` of every event whose uuid is in the
 * API's form (lowercase hex with dashes: every uuid written since 2026-11-21); a row in another
 * form keeps its text, which the reads handle. The column keeps its declared type (`text`, whose
 * affinity leaves a BLOB as it is) and its indexes, which the update rewrites: it reads and
 * writes every event once (~1.2 s for 200,000 events on this machine, docs/deploy.md), and the
 * space it frees inside the file is reused by later writes (`VACUUM` gives it back to the disk).
 * Nothing changes on PostgreSQL, whose uuids stay text (the migration is recorded there and does
 * nothing).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../dialect.js';

/** Converts the SQLite events' uuids in the API's form to their 16 bytes (module doc). */
export const migration0012: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (dialectOf(db) !== 'sqlite') return;
    await sql`update events set uuid = unhex(replace(uuid, '-', ''))
      where typeof(uuid) = 'text' and length(uuid) = 36 and uuid not glob '*[^0-9a-f-]*'
        and substr(uuid, 9, 1) = '-' and substr(uuid, 14, 1) = '-' and substr(uuid, 19, 1) = '-' and substr(uuid, 24, 1) = '-'`.execute(db);
  },
};
