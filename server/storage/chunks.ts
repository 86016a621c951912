/**
 * Splitting a long list of ids or rows over several statements: SQLite allows at most 32,766
 * bound parameters a statement, so an `IN (…)` list or a multi-row INSERT is sent in slices.
 */

/**
 * Items a statement by default: ids of an `IN (…)` list, or rows of a multi-row INSERT of up to
 * ~60 parameters a row, well under SQLite's limit of 32,766 parameters.
 */
export const ITEMS_PER_STATEMENT = 500;

/**
 * `items` in consecutive slices of at most `size` (> 0) items, in order; the last may be shorter,
 * and an empty list gives none.
 */
export function* chunks<T>(items: readonly T[], size: number = ITEMS_PER_STATEMENT): Generator<T[], void, undefined> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** `chunks` with the index in `items` of each slice's first item: `[index, slice]`. */
export function* chunksAt<T>(items: readonly T[], size: number = ITEMS_PER_STATEMENT): Generator<[number, T[]], void, undefined> {
  for (let i = 0; i < items.length; i += size) yield [i, items.slice(i, i + size)];
}
