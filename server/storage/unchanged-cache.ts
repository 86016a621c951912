/**
 * Reads kept between requests for as long as the tables they were read from are unchanged (the
 * security handler's keys and project access, plugin configs' plugins by kind and answers, the
 * plugins repository's decoded plugins). A cache is made from a load registered in
 * server/storage/cached-loads.ts (`cachedLoad`), whose `reads` name every table the load reads
 * (test/storage/change-tracker.test.ts checks each list against the SQL its load runs): every
 * entry is dropped as soon as `changeCounter(reads)` moves (a write through this store to one of
 * the `reads` tables or to a table whose changes cannot be told apart, or a commit by another
 * process; see `Store.changeCounter` in db.ts and server/storage/change-tracker.ts), so a revoked
 * key, a deactivated user or a changed membership is refused on the very next request, as without
 * the cache, while a write to an unrelated table (a plugin config, the activity log) keeps it. A
 * value loaded while one of those tables changed is not kept. At most `max` entries (all dropped
 * when full; default 10,000). Values are shared between requests: callers must not change them.
 */
import { assertRegistered, type RegisteredLoad } from './cached-loads.js';

/** `Store.changeCounter`: a number that moves whenever one of `tables` may have changed. */
export type ChangeCounter = (tables?: readonly string[]) => number;

/**
 * The cache of one registered load (`C` its context, `A`/`B` its arguments, `R` what it answers)
 * keeping values `V` (by default `R`) by string key. `get` keeps the load's answers (`R` = `V`); a load answering
 * many values at once (the decoded plugins) uses `current`, `peek`, `load`, `unchangedSince` and
 * `keep` instead.
 *
 * `changeCounter` undefined (PostgreSQL): entries are never dropped for a change; only a key that
 * holds the row's version (the decoded plugins' `updated_at`) may be kept that way.
 */
export class UnchangedStoreCache<C, A, B, R, V = R> {
  private mark = Number.NaN;
  private readonly entries = new Map<string, V>();
  private readonly reads: readonly string[];
  private readonly max: number;
  private readonly registered: RegisteredLoad<C, A, B, R>;

  /** Throws when `registered` is not the load registered under its name (`cachedLoad`). */
  constructor(
    private readonly changeCounter: ChangeCounter | undefined,
    registered: RegisteredLoad<C, A, B, R>,
    options: { max?: number } = {},
  ) {
    assertRegistered(registered);
    this.registered = registered;
    this.reads = registered.reads;
    this.max = options.max ?? 10_000;
  }

  /**
   * The value for `key`: kept (returned as it is, not wrapped in a promise: a kept key or project
   * access is read on every request) while the load's `usable` accepts it, or loaded by the
   * registered load with `context`, `a` and `b` (not kept when undefined or when one of the `reads`
   * tables changed meanwhile).
   */
  get(this: UnchangedStoreCache<C, A, B, V, V>, key: string, context: C, a: A, b: B): V | Promise<V | undefined> {
    const mark = this.current();
    const kept = this.entries.get(key);
    if (kept !== undefined && (this.registered.usable === undefined || this.registered.usable(kept))) return kept;
    return this.loadAndKeep(key, context, a, b, mark);
  }

  /** The change mark of the `reads` tables now; every entry is dropped when it moved since the last call. */
  current(): number {
    const mark = this.changeCounter ? this.changeCounter(this.reads) : 0;
    if (mark !== this.mark) {
      this.entries.clear();
      this.mark = mark;
    }
    return mark;
  }

  /** The value kept under `key`, as of the last `current()`; undefined when none. */
  peek(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Runs the registered load (nothing is kept: see `unchangedSince` and `keep`). */
  load(context: C, a: A, b: B): Promise<R | undefined> {
    return this.registered.load(context, a, b);
  }

  /** Whether none of the `reads` tables changed since `current()` answered `mark`. */
  unchangedSince(mark: number): boolean {
    return (this.changeCounter ? this.changeCounter(this.reads) : 0) === mark;
  }

  /** Keeps `value` under `key` (call only when `unchangedSince` the mark it was loaded at). */
  keep(key: string, value: V): void {
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, value);
  }

  private async loadAndKeep(
    this: UnchangedStoreCache<C, A, B, V, V>,
    key: string,
    context: C,
    a: A,
    b: B,
    mark: number,
  ): Promise<V | undefined> {
    const value = await this.registered.load(context, a, b);
    if (value !== undefined && this.unchangedSince(mark)) this.keep(key, value);
    return value;
  }
}
