/**
 * The worker thread of background checkpoints (./checkpoints.ts, a piscina pool of one thread):
 * each task is `{ file, op }`. `'checkpoint'` opens the SQLite file on first use and runs
 * `PRAGMA wal_checkpoint(PASSIVE)` on this thread, so that copying the WAL into the database file
 * and its fsync never hold the server's event loop; it answers the WAL's frames and how many of
 * them are now in the database file, or `busy` when another checkpoint (another server process of
 * the same file) or a recovery held the file (the next tick tries again). `'close'` closes the
 * connection. Any other error is thrown to the pool.
 */
import type SQLite from 'better-sqlite3';
import { openSqlite } from './sqlite-driver.js';

/** One task of the checkpoint worker. */
export interface CheckpointTask {
  file: string;
  op: 'checkpoint' | 'close';
}

/** What a `'checkpoint'` task did: frames in the WAL, frames copied into the database file. */
export type CheckpointOutcome = { busy: true } | { busy: false; walFrames: number; checkpointedFrames: number };

let sqlite: SQLite.Database | undefined;
let statement: SQLite.Statement | undefined;

/** Runs one task (module doc). */
export default function run(task: CheckpointTask): CheckpointOutcome | undefined {
  if (task.op === 'close') {
    sqlite?.close();
    sqlite = undefined;
    statement = undefined;
    return undefined;
  }
  if (!sqlite || !statement) {
    sqlite = openSqlite(task.file, { fileMustExist: true });
    // a checkpoint that meets a lock gives up at once rather than sleep in SQLite's busy handler
    sqlite.pragma('busy_timeout = 0');
    statement = sqlite.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  }
  try {
    const row = statement.get() as { busy: number; log: number; checkpointed: number };
    return row.busy ? { busy: true } : { busy: false, walFrames: row.log, checkpointedFrames: row.checkpointed };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return { busy: true };
    throw err;
  }
}
