/**
 * Background WAL checkpoints for a SQLite store (`StorageConfig.backgroundCheckpoints`).
 *
 * In WAL mode a commit appends pages to the `-wal` file; a checkpoint copies them back into the
 * database file and, with `synchronous = NORMAL`, is the one step that calls fsync. By default
 * SQLite runs it inside the commit that takes the WAL past 1,000 pages (`wal_autocheckpoint`), on
 * the committing thread: in the server that is the event loop, which then waits for the copy and
 * the fsync (about a third of the capture benchmark's write path; docs/performance.md). SQLite's
 * documentation suggests turning auto-checkpoints off and running them from another thread or
 * process instead (sqlite.org/wal.html, "Application-Initiated Checkpoints"); this module does.
 *
 * `startBackgroundCheckpoints(sqlite, file, opts)` sets `wal_autocheckpoint = 0` on the server's
 * connection and starts one worker thread (a piscina pool of one; ./checkpoint-worker.ts) with a
 * connection of its own; every `intervalMs` (default 100 ms) it runs `PRAGMA
 * wal_checkpoint(PASSIVE)` there, one at a time, unless the connection changed no row since a
 * checkpoint last copied the whole WAL (other processes of the same file checkpoint their own
 * writes, or let SQLite do it: the CLI keeps auto-checkpoints). PASSIVE never waits for a lock and never blocks
 * writers or readers: it copies what no reader still needs, and the next commit after a complete
 * checkpoint starts the WAL from its beginning again, so the file stays about the size of ~100 ms
 * of writes. `journal_size_limit` (set on every writable connection, ./db.ts) truncates the WAL back
 * after a burst.
 *
 * Durability is unchanged: a commit is in the WAL before the write is answered (a process crash
 * loses nothing; docs/reliability.md). If a checkpoint task fails (the worker died, the file
 * cannot be opened), the connection goes back to SQLite's auto-checkpoints and the worker stops
 * (`onFailure` is told), so the WAL never grows without bound. `stop()` closes the worker's
 * connection and the pool.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type SQLite from 'better-sqlite3';
import type { CheckpointOutcome, CheckpointTask } from './checkpoint-worker.js';
import { workerExecArgv } from './worker-threads.js';

/** Options of `startBackgroundCheckpoints`. */
export interface BackgroundCheckpointOptions {
  /** ms between two checkpoints (default `DEFAULT_CHECKPOINT_INTERVAL_MS`) */
  intervalMs?: number | undefined;
  /** told when a checkpoint failed and the connection went back to auto-checkpoints */
  onFailure?: ((err: Error) => void) | undefined;
}

/** Default ms between two background checkpoints. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100;
/** SQLite's own default of `wal_autocheckpoint`, pages: restored when the worker fails. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/** A running checkpoint worker. */
export interface BackgroundCheckpoints {
  /** Stops the timer, closes the worker's connection and the pool. Never rejects. */
  stop(): Promise<void>;
}

/** Starts background checkpoints of `file`, opened by `sqlite` (module doc). */
export function startBackgroundCheckpoints(
  sqlite: SQLite.Database,
  file: string,
  opts: BackgroundCheckpointOptions = {},
): BackgroundCheckpoints {
  const ownUrl = import.meta.url;
  // the sources run through tsx (npm run dev, vitest); the build runs the compiled worker
  const filename = fileURLToPath(new URL(ownUrl.endsWith('.ts') ? './checkpoint-worker.ts' : './checkpoint-worker.js', ownUrl));
  sqlite.pragma('wal_autocheckpoint = 0');
  const pool = new Piscina({
    filename,
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: Infinity,
    // require(esm) off (a worker stopped while loading would abort the process), tsx for the sources
    execArgv: workerExecArgv(filename),
  });
  let running: Promise<unknown> | undefined;
  let stopped = false;
  // rows this connection changed, ever, and their count when a checkpoint last emptied the WAL: a
  // tick with nothing new since then posts no task (an idle server wakes no thread)
  const totalChanges = sqlite.prepare('select total_changes()').pluck();
  let checkpointedAt = -1;
  const fail = (err: unknown) => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    opts.onFailure?.(err instanceof Error ? err : new Error(String(err)));
    void pool.destroy();
  };
  const timer = setInterval(() => {
    // one checkpoint at a time: a tick that finds one still running is skipped
    if (running || stopped || !sqlite.open) return;
    const changes = totalChanges.get() as number;
    if (changes === checkpointedAt) return;
    const task: CheckpointTask = { file, op: 'checkpoint' };
    running = pool.run(task).then(
      (outcome: CheckpointOutcome | undefined) => {
        running = undefined;
        if (outcome && !outcome.busy && outcome.checkpointedFrames === outcome.walFrames) checkpointedAt = changes;
      },
      (err: unknown) => {
        running = undefined;
        fail(err);
      },
    );
  }, opts.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS);
  // the timer must not keep the process alive on its own
  timer.unref();
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      const close: CheckpointTask = { file, op: 'close' };
      await pool.run(close).catch(() => undefined);
      await pool.destroy();
    },
  };
}
