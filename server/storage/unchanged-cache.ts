/**
 * Reads kept between requests for as long as the tables they were read from are unchanged (used
 * by the security handler for keys and project access, and by plugin configs for an organization's
 * plugins and for answers): every entry is dropped as soon as `changeCounter(reads)` moves (a
 * write through this store to one of the `reads` tables or to a table whose changes cannot be told
 * apart, or a commit by another process; see `Store.changeCounter` in db.ts and
 * server/storage/change-tracker.ts), so a revoked key, a deactivated user or a changed membership
 * is refused on the very next request, as without the cache, while a write to an unrelated table
 * (a plugin config, the activity log) keeps it. `reads` must name every table the loads read: a
 * table left out would let a stale value through (test/storage/change-tracker.test.ts checks the
 * lists the server uses against the SQL of their loads). A value loaded while one of those tables
 * changed is not kept. At most `max` entries (all dropped when full; default 10,000). Values are
 * shared between requests: callers must not change them.
 */
export class UnchangedStoreCache<V> {
  private mark = Number.NaN;
  private readonly entries = new Map<string, V>();
  private readonly reads: readonly string[];
  private readonly max: number;

  constructor(
    private readonly changeCounter: (tables?: readonly string[]) => number,
    options: { reads: readonly string[]; max?: number },
  ) {
    this.reads = options.reads;
    this.max = options.max ?? 10_000;
  }

  /**
   * The value for `key`: kept (returned as it is, not wrapped in a promise: a kept key or project
   * access is read on every request), or loaded by `load` (not kept when undefined or when the
   * one of the `reads` tables changed meanwhile).
   */
  get(key: string, load: () => Promise<V | undefined>, usable: (v: V) => boolean = () => true): V | Promise<V | undefined> {
    const mark = this.changeCounter(this.reads);
    if (mark !== this.mark) {
      this.entries.clear();
      this.mark = mark;
    }
    const kept = this.entries.get(key);
    if (kept !== undefined && usable(kept)) return kept;
    return this.loadAndKeep(key, load, mark);
  }

  private async loadAndKeep(key: string, load: () => Promise<V | undefined>, mark: number): Promise<V | undefined> {
    const value = await load();
    if (value !== undefined && this.changeCounter(this.reads) === mark) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
