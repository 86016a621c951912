/**
 * `UnchangedStoreCache` and the registry of cached loads (server/storage/cached-loads.ts), with a
 * hand-moved change counter: a cache is made only from a registered load; it keeps what that load
 * answers until the counter of the load's `reads` moves, does not keep what was loaded while it
 * moved, reloads what `usable` refuses, and empties itself when full. (That each server load's
 * `reads` match its SQL is test/storage/change-tracker.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { cachedLoad, registeredLoads, type RegisteredLoad } from '../../server/storage/cached-loads.js';
import { UnchangedStoreCache } from '../../server/storage/unchanged-cache.js';

/** A counter per table list moved by hand, and the lists it was asked about. */
function handCounter() {
  let value = 0;
  const asked: (readonly string[] | undefined)[] = [];
  return {
    counter: (tables?: readonly string[]) => {
      asked.push(tables);
      return value;
    },
    move: () => void (value += 1),
    asked,
  };
}

/** The context of the test loads: how many times each was run. */
interface Calls {
  n: number;
}

const DOUBLE = cachedLoad({
  name: 'test: double',
  reads: ['t1', 't2'],
  load: async (calls: Calls, x: number) => {
    calls.n += 1;
    return { doubled: x * 2 };
  },
});

const FRESH = cachedLoad({
  name: 'test: fresh only',
  reads: ['t1'],
  load: async (calls: Calls, x: number) => {
    calls.n += 1;
    return { x, stale: false };
  },
  usable: (v) => !v.stale,
});

describe('cachedLoad (the registry)', () => {
  it('registers each load once, frozen, and lists it', () => {
    expect(registeredLoads()).toContain(DOUBLE);
    expect(Object.isFrozen(DOUBLE) && Object.isFrozen(DOUBLE.reads)).toBe(true);
    expect(() => cachedLoad({ name: 'test: double', reads: ['t1'], load: async () => 1 })).toThrow(/registered twice/);
  });

  it('refuses an empty or repeated reads list, and readsThroughArgument outside reads', () => {
    expect(() => cachedLoad({ name: 'test: empty', reads: [], load: async () => 1 })).toThrow(/each table once/);
    expect(() => cachedLoad({ name: 'test: twice', reads: ['a', 'a'], load: async () => 1 })).toThrow(/each table once/);
    expect(() => cachedLoad({ name: 'test: through', reads: ['a'], readsThroughArgument: ['b'], load: async () => 1 })).toThrow(
      /readsThroughArgument/,
    );
  });
});

describe('UnchangedStoreCache', () => {
  it('cannot be made from a load that is not registered', () => {
    const forged = { name: 'test: forged', reads: ['t1'], load: async () => 1 } as unknown as RegisteredLoad<
      unknown,
      unknown,
      void,
      number
    >;
    expect(() => new UnchangedStoreCache(() => 0, forged)).toThrow(/not registered/);
    // a copy of a registered load is not the registered load
    const copy = { ...DOUBLE } as typeof DOUBLE;
    expect(() => new UnchangedStoreCache(() => 0, copy)).toThrow(/not registered/);
  });

  it('keeps a value until the counter of its reads moves, and asks the counter with the load’s own list', async () => {
    const c = handCounter();
    const calls = { n: 0 };
    const cache = new UnchangedStoreCache(c.counter, DOUBLE);
    expect(await cache.get('k', calls, 2)).toEqual({ doubled: 4 });
    const kept = cache.get('k', calls, 2);
    expect(kept).toEqual({ doubled: 4 });
    expect(kept).not.toBeInstanceOf(Promise);
    expect(calls.n).toBe(1);
    c.move();
    expect(await cache.get('k', calls, 2)).toEqual({ doubled: 4 });
    expect(calls.n).toBe(2);
    expect(c.asked.every((t) => t === DOUBLE.reads)).toBe(true);
  });

  it('does not keep a value loaded while the counter moved', async () => {
    const c = handCounter();
    const calls = { n: 0 };
    const cache = new UnchangedStoreCache(c.counter, DOUBLE);
    const pending = cache.get('k', calls, 1);
    c.move();
    await pending;
    await cache.get('k', calls, 1);
    expect(calls.n).toBe(2);
  });

  it('loads again a kept value its load’s `usable` refuses', async () => {
    const calls = { n: 0 };
    const cache = new UnchangedStoreCache(() => 0, FRESH);
    const v = (await cache.get('k', calls, 1))!;
    cache.get('k', calls, 1);
    expect(calls.n).toBe(1);
    (v as { stale: boolean }).stale = true;
    await cache.get('k', calls, 1);
    expect(calls.n).toBe(2);
  });

  it('drops every entry when full', async () => {
    const calls = { n: 0 };
    const cache = new UnchangedStoreCache(() => 0, DOUBLE, { max: 2 });
    for (const k of ['a', 'b', 'c']) await cache.get(k, calls, 1);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('c')).toEqual({ doubled: 2 });
  });

  it('without a counter (PostgreSQL), keeps entries for good; the batch methods keep what the caller checked', async () => {
    const cache = new UnchangedStoreCache<Calls, number, void, { doubled: number }, string>(undefined, DOUBLE);
    const mark = cache.current();
    expect(await cache.load({ n: 0 }, 3)).toEqual({ doubled: 6 });
    expect(cache.unchangedSince(mark)).toBe(true);
    cache.keep('k', 'six');
    expect(cache.current()).toBe(mark);
    expect(cache.peek('k')).toBe('six');
  });
});
