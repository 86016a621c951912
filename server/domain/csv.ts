/**
 * CSV answers (`format=csv`), as PostHog renders them with django-rest-framework-csv's
 * `PaginatedCSVRenderer` (posthog/api/event.py `renderer_classes`; rest_framework_csv/renderers.py
 * `CSVRenderer.render`, `tablize`, `flatten_item`, `flatten_dict`, `flatten_list`,
 * `nest_flat_item`; the paginated renderer renders the page's `results` only).
 *
 * Shape:
 * - each row is flattened into one level: an object's keys and an array's indexes are joined with
 *   `.` (`properties.$browser`, `person.properties.email`, `elements.0.tag_name`,
 *   `person.distinct_ids.0`); a row that is not an object (a string, a number) is one column named
 *   `` (the empty string); an empty object or array produces no column at all;
 * - the header is the sorted union of every row's columns (Python `sorted`: by code point);
 * - a row without a column has an empty cell there;
 * - lines end with CRLF, the last one included; cells are quoted only when they contain `,`, `"`,
 *   CR or LF, with `"` doubled (Python's `csv.writer`, excel dialect); a line with a single empty
 *   cell is written `""`, as Python does, so that it is not a blank line;
 * - no rows → `''` (no header either).
 *
 * Cell values, our documented choice (openapi.yaml, events list, "CSV"): strings as they are,
 * numbers and booleans as JSON writes them (`1.5`, `true`; Python writes `True`), null as an empty
 * cell; values are read as `JSON.stringify` reads them (`toJSON` is applied, so a Date becomes its
 * ISO string; a non-finite number is null; an `undefined` property is absent). When two paths
 * flatten to the same column name (`{"a.b": 1, "a": {"b": 2}}`), the later one wins, as in the
 * renderer. The CSV text itself is written by csv-stringify.
 */
import { stringify } from 'csv-stringify/sync';

/** One flattened row: column name → cell value, in insertion order. */
export type FlatRow = Map<string, unknown>;

/**
 * Renders an events page (`ClickhouseEvent` objects, in page order) as CSV per the module doc.
 * `[]` → `''`. Never throws on JSON-like input.
 */
export function eventsToCsv(rows: readonly object[]): string {
  return rowsToCsv(rows);
}

/**
 * Renders any list of JSON-like rows as CSV, as rest_framework_csv's `CSVRenderer` does (see the
 * module doc): flattened columns joined with `.`, sorted header, CRLF. `[]` → `''`.
 */
export function rowsToCsv(rows: readonly unknown[]): string {
  if (rows.length === 0) return '';
  const flat = rows.map((row) => flattenItem(jsonValue(row, '')));
  const columns = new Set<string>();
  for (const row of flat) for (const key of row.keys()) columns.add(key);
  const header = [...columns].sort(compareCodePoints);
  const records = [header, ...flat.map((row) => header.map((key) => cellText(row.get(key))))];
  return stringify(records, {
    record_delimiter: '\r\n',
    // csv-stringify only quotes CR / LF by itself while the record delimiter is the default
    quote_record_delimiter: true,
    // Python's csv.writer writes a record made of one empty field as `""`
    quoted_empty: header.length === 1,
  });
}

/**
 * Flattens one row into a one-level map (rest_framework_csv `flatten_item`): arrays by index,
 * objects by key, anything else under the empty column name.
 */
export function flattenItem(item: unknown): FlatRow {
  if (Array.isArray(item)) {
    const out: FlatRow = new Map();
    item.forEach((value, index) => mergeNested(out, flattenItem(jsonValue(value, String(index)) ?? null), String(index)));
    return out;
  }
  if (item !== null && typeof item === 'object') {
    const out: FlatRow = new Map();
    for (const [key, raw] of Object.entries(item)) {
      const value = jsonValue(raw, key);
      if (value === undefined) continue;
      mergeNested(out, flattenItem(value), key);
    }
    return out;
  }
  return new Map([['', item]]);
}

/** `nest_flat_item` + `dict.update`: each column of `flat` goes under `prefix` (`prefix.col`, or `prefix` for ''). */
function mergeNested(into: FlatRow, flat: FlatRow, prefix: string): void {
  for (const [column, value] of flat) into.set(column ? `${prefix}.${column}` : prefix, value);
}

/** The value JSON.stringify would see: `toJSON` applied; functions and symbols are undefined. */
function jsonValue(value: unknown, key: string): unknown {
  let v = value;
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (typeof v === 'function' || typeof v === 'symbol') return undefined;
  return v;
}

/** The text of one cell: strings bare, numbers / booleans as in JSON, null and missing empty. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  return String(value);
}

/** Python's `str` ordering: by Unicode code point (UTF-16 order differs above U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
