/**
 * Group commit of captured events: a request's rows wait in a queue, and one writer takes
 * everything queued so far (it starts on the event loop's next turn, so the requests received
 * meanwhile join) and writes it in ONE transaction (server/ingest/write-events.ts, the
 * import's write path, once per project of the group); each request is answered only after that
 * transaction has committed (a 200 means durable). While a group is being written the next
 * requests queue up, so the busier the server, the bigger the groups and the fewer the commits.
 *
 * Bounded: at most `maxQueuedEvents` events may be accepted and not yet committed (queued or being
 * written); a request that would pass the bound is refused at once with 503 and `Retry-After`
 * (PostHog's `transient error, please retry`; its SDKs retry 503s). A request larger than the bound
 * on its own is accepted when nothing else waits (it could never be accepted otherwise).
 *
 * Failures: the store's write lock stayed with another writer (SQLite `StoreBusyError`) or the
 * store is unreachable → every request of the group answers 503. A lost race on a unique key with
 * another server process (PostgreSQL) → the group is written again. Any other failure of a group of
 * several requests is retried request by request, each in its own transaction, so that one
 * request's failure reaches that request only.
 */
import type { Store } from '../storage/db.js';
import { clickhouseEventsOf } from '../storage/events/index.js';
import { isTransientStoreError } from '../storage/errors.js';
import { writeEventRows, type NormalizedEventRow } from '../ingest/write-events.js';
import { CaptureError } from './errors.js';

/** Default of `maxQueuedEvents`: events accepted and not yet committed. */
export const DEFAULT_MAX_QUEUED_EVENTS = 50_000;
/** The `Retry-After` of a refused request, seconds. */
export const RETRY_AFTER_SECONDS = 1;

/** PostgreSQL's `unique_violation` SQLSTATE. */
const UNIQUE_VIOLATION = '23505';
const RACE_RETRIES = 3;
/** Thrown inside a group's first transaction to roll it back when the insert met a stored uuid. */
const MET_STORED_UUID = new Error('the group holds a stored uuid: written again with the look-up');

interface Job {
  teamId: number;
  rows: NormalizedEventRow[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Options of `GroupCommitQueue`. */
export interface QueueOptions {
  /** events accepted and not yet committed, at most (default `DEFAULT_MAX_QUEUED_EVENTS`) */
  maxQueuedEvents?: number | undefined;
  /** told the number of events accepted and not yet committed, each time it changes (tests, metrics) */
  onQueueChange?: ((events: number) => void) | undefined;
}

/** The queue and its one writer (module doc). */
export class GroupCommitQueue {
  private waiting: Job[] = [];
  private pendingEvents = 0;
  private writing = false;
  private readonly max: number;

  constructor(
    private readonly store: Store,
    private readonly opts: QueueOptions = {},
  ) {
    this.max = opts.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
  }

  /** Events accepted and not yet committed. */
  get queuedEvents(): number {
    return this.pendingEvents;
  }

  /**
   * Resolves once `rows` of project `teamId` are committed. Throws `CaptureError` 503 at once when
   * the queue is full, and rejects with 503 when the store is busy or unreachable.
   */
  submit(teamId: number, rows: NormalizedEventRow[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    if (this.pendingEvents > 0 && this.pendingEvents + rows.length > this.max) {
      return Promise.reject(new CaptureError(503, 'transient error, please retry', RETRY_AFTER_SECONDS));
    }
    this.changeBy(rows.length);
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ teamId, rows, resolve, reject }));
    if (!this.writing) {
      // The writer starts on the next turn of the event loop, not now: every request whose body
      // has arrived by then joins the group. SQLite's statements are synchronous, so a group
      // written at once would hold the event loop, leaving the requests already received unread
      // until it commits: each request would be committed alone (about 100 events a commit).
      this.writing = true;
      setImmediate(() => void this.drain());
    }
    return done;
  }

  private changeBy(n: number): void {
    this.pendingEvents += n;
    this.opts.onQueueChange?.(this.pendingEvents);
  }

  /** Writes groups while requests wait; one writer at a time (`writing` is set by `submit`). */
  private async drain(): Promise<void> {
    try {
      while (this.waiting.length) {
        const group = this.waiting;
        this.waiting = [];
        await this.writeGroup(group);
      }
    } finally {
      this.writing = false;
    }
  }

  private async writeGroup(group: Job[]): Promise<void> {
    const events = group.reduce((n, j) => n + j.rows.length, 0);
    try {
      await this.commitRetryingRaces(group);
      for (const j of group) j.resolve();
    } catch (err) {
      if (group.length === 1 || isTransientStoreError(err)) for (const j of group) j.reject(asCaptureError(err));
      else {
        // one request's failure must not fail the others: each again in its own transaction
        for (const j of group) {
          try {
            await this.commitRetryingRaces([j]);
            j.resolve();
          } catch (e) {
            j.reject(asCaptureError(e));
          }
        }
      }
    } finally {
      this.changeBy(-events);
    }
  }

  /**
   * `commit`, tried again (at most `RACE_RETRIES` times) when it lost a race on a unique key to
   * another process writing the same new distinct id or uuid (PostgreSQL with several server
   * processes: both read "no such row", the second insert fails once the first commits); the next
   * attempt reads the committed row. SQLite writers hold the write lock for the whole
   * transaction, so this never happens there.
   */
  private async commitRetryingRaces(group: Job[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.commit(group);
      } catch (err) {
        if (attempt >= RACE_RETRIES || (err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      }
    }
  }

  /**
   * One transaction: per project, the rows of the group in arrival order. Written first without
   * looking up stored uuids (one query fewer per 500 events: a sent uuid is new but for an SDK's
   * retry); when the insert met a stored uuid, that transaction is rolled back and the group
   * written again with the look-up, so a duplicate changes nothing (write-events.ts).
   */
  private async commit(group: Job[]): Promise<void> {
    const byTeam = new Map<number, NormalizedEventRow[]>();
    for (const j of group) {
      const rows = byTeam.get(j.teamId);
      if (rows) for (const r of j.rows) rows.push(r);
      else byTeam.set(j.teamId, [...j.rows]);
    }
    const write = (lookUp: boolean) =>
      this.store.db.transaction().execute(async (trx) => {
        for (const [teamId, rows] of byTeam) {
          if ((await writeEventRows(trx, teamId, rows, lookUp, clickhouseEventsOf(this.store)?.writer)).aborted) throw MET_STORED_UUID;
        }
      });
    try {
      await write(false);
    } catch (err) {
      if (err !== MET_STORED_UUID) throw err;
      await write(true);
    }
  }
}

/** A store that is busy or unreachable → 503 with `Retry-After`; anything else unchanged (a 500). */
function asCaptureError(err: unknown): unknown {
  return isTransientStoreError(err) ? new CaptureError(503, 'transient error, please retry', RETRY_AFTER_SECONDS) : err;
}
