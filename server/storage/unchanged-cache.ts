/**
 * Reads kept between requests for as long as the store is unchanged (used by the security handler
 * for keys and project access, and by plugin configs for an organization's plugins): every entry
 * is dropped as soon as `changeCounter()` moves (any write through this store, or a commit by
 * another process; see `Store.changeCounter` in db.ts), so a revoked key, a deactivated user or a
 * changed membership is refused on the very next request, as without the cache. A value loaded
 * while the store changed is not kept. At most `max` entries (all dropped when full). Values are shared between requests: callers
 * must not change them.
 */
export class UnchangedStoreCache<V> {
  private mark = Number.NaN;
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly changeCounter: () => number,
    private readonly max = 10_000,
  ) {}

  /**
   * The value for `key`: kept (returned as it is, not wrapped in a promise: a kept key or project
   * access is read on every request), or loaded by `load` (not kept when undefined or when the
   * store changed meanwhile).
   */
  get(key: string, load: () => Promise<V | undefined>, usable: (v: V) => boolean = () => true): V | Promise<V | undefined> {
    const mark = this.changeCounter();
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
    if (value !== undefined && this.changeCounter() === mark) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
