/** `chunks` (server/storage/chunks.ts): the slices every long `IN (…)` list and multi-row INSERT is sent in. */
import { describe, expect, it } from 'vitest';
import { chunks, ITEMS_PER_STATEMENT } from '../../server/storage/chunks.js';

describe('chunks', () => {
  it('slices in order, the last one shorter, none for an empty list', () => {
    expect([...chunks([1, 2, 3, 4, 5], 2)]).toEqual([[1, 2], [3, 4], [5]]);
    expect([...chunks([1, 2, 3, 4], 2)]).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect([...chunks([], 2)]).toEqual([]);
  });

  it('takes ITEMS_PER_STATEMENT by default', () => {
    const items = Array.from({ length: ITEMS_PER_STATEMENT * 2 + 1 }, (_, i) => i);
    expect([...chunks(items)].map((c) => c.length)).toEqual([ITEMS_PER_STATEMENT, ITEMS_PER_STATEMENT, 1]);
    expect([...chunks(items)].flat()).toEqual(items);
  });
});
