/**
 * The registry of cached loads: every cache of the store (`UnchangedStoreCache`,
 * server/storage/unchanged-cache.ts) is made from one entry registered here, `{ name, reads, load }`:
 * the function that reads the store, and the tables it reads, whose changes drop what the cache
 * keeps (see `Store.changeCounter`). A cache cannot be made from a load that is not registered
 * (`RegisteredLoad` is only returned by `cachedLoad`, and the cache checks the registry again at
 * run time), and test/storage/change-tracker.test.ts runs every registered load on a logging
 * connection and compares the tables its SQL reads with `reads`: a table left out of a list would
 * let a stale key or membership through, so a list that is wrong fails the suite.
 *
 * Each entry is declared beside the code it loads (the repository or domain module) with
 * `cachedLoad`, at module load; the test finds those modules by the text `cachedLoad(` under
 * `server/`.
 */

/**
 * A load whose answers a cache keeps while the tables it reads are unchanged. `load` takes a
 * context (a repository, a service: whatever it reads through) and at most two arguments, passed
 * positionally so that a cache hit allocates nothing to carry them.
 */
export interface CachedLoad<C, A, B, V> {
  /** Unique among registered loads; says what is kept (`'personal API key by value'`). */
  readonly name: string;
  /**
   * Every table the value depends on: each table the load's SQL reads (`from` and `join`), plus
   * `readsThroughArgument`. Table names as in the schema (lower-case). Read by every cache hit:
   * the same array is handed to `Store.changeCounter` each time (it keeps its sum per array).
   */
  readonly reads: readonly string[];
  /**
   * Tables of `reads` that the load does not query but whose rows its arguments carry into the
   * value kept (the project's team and organization baked into a plugin config answer). Empty
   * when absent.
   */
  readonly readsThroughArgument?: readonly string[];
  /** Reads the store; undefined when there is nothing to keep (never kept). */
  readonly load: (context: C, a: A, b: B) => Promise<V | undefined>;
  /** Whether a kept value may still be answered (default: always); when not, it is loaded again. */
  readonly usable?: (value: V) => boolean;
}

declare const registered: unique symbol;

/** A `CachedLoad` that `cachedLoad` registered: the only kind a cache can be made from. */
export type RegisteredLoad<C, A, B, V> = CachedLoad<C, A, B, V> & { readonly [registered]: true };

/** Any registered load, as the registry lists them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds loads of every signature
export type AnyRegisteredLoad = RegisteredLoad<any, any, any, any>;

const registry = new Map<string, AnyRegisteredLoad>();

/**
 * Registers `definition` (frozen, `reads` too) and returns it as a `RegisteredLoad`. Throws when
 * the name is taken, when `reads` is empty or names a table twice, or when `readsThroughArgument`
 * names a table missing from `reads`.
 */
export function cachedLoad<C, A, B = void, V = unknown>(definition: CachedLoad<C, A, B, V>): RegisteredLoad<C, A, B, V> {
  const { name, reads, readsThroughArgument = [] } = definition;
  if (registry.has(name)) throw new Error(`cached load "${name}" is registered twice`);
  if (reads.length === 0 || new Set(reads).size !== reads.length) throw new Error(`cached load "${name}": reads must name each table once`);
  for (const t of readsThroughArgument) {
    if (!reads.includes(t)) throw new Error(`cached load "${name}": readsThroughArgument names "${t}", which reads does not`);
  }
  const entry = Object.freeze({
    ...definition,
    reads: Object.isFrozen(reads) ? reads : Object.freeze([...reads]),
    readsThroughArgument: Object.freeze([...readsThroughArgument]),
  }) as RegisteredLoad<C, A, B, V>;
  registry.set(name, entry);
  return entry;
}

/** Throws unless `load` is the entry registered under its name (a cache is made only from one). */
export function assertRegistered(load: { readonly name: string }): void {
  if (registry.get(load.name) !== load) {
    throw new Error(`cached load "${load.name}" is not registered: declare it with cachedLoad() (server/storage/cached-loads.ts)`);
  }
}

/** Every registered load, in registration order (the modules that declare them must be loaded). */
export function registeredLoads(): readonly AnyRegisteredLoad[] {
  return [...registry.values()];
}
