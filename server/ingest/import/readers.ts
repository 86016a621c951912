/**
 * The file readers of an import: the format of a file from its name (`detectFormat`), and its raw
 * rows with the line each starts on, from JSON Lines (one object per line, blank lines and a BOM
 * skipped) or CSV with a header row (`properties` and `$set` / `$set_once` JSON cells, flattened
 * `properties.<key>` columns); a `.gz` file is decompressed on the way. A line that cannot be a row
 * throws ImportError naming the file and line; a read or gzip error throws one naming the file.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { CsvError, parse as parseCsv } from 'csv-parse';
import { ImportError, RowProblem, isPlainObject, kindOf, shorten, toImportError, type NumberedRow, type RawEventRow } from './normalize.js';

/** Input file formats. */
export type ImportFormat = 'jsonl' | 'csv';

/** The format of `file` from its name (`.gz` looked through); undefined when it cannot be told. */
export function detectFormat(file: string): ImportFormat | undefined {
  const name = file.toLowerCase().replace(/\.gz$/, '');
  if (/\.(jsonl|ndjson|json)$/.test(name)) return 'jsonl';
  if (name.endsWith('.csv')) return 'csv';
  return undefined;
}

/** The file's bytes, decompressed for `.gz`; read errors reach whoever consumes the stream. */
function openInput(file: string): Readable {
  const stream = fs.createReadStream(file);
  return file.toLowerCase().endsWith('.gz') ? pipeline(stream, zlib.createGunzip(), () => undefined) : stream;
}

/** A read or decompression error as a clear one naming the file; ImportErrors pass through. */
function readError(file: string, err: unknown): unknown {
  if (err instanceof ImportError || !(err instanceof Error)) return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return new Error(code.startsWith('Z_') ? `${file}: not a valid gzip file (${err.message})` : `${file}: cannot read (${err.message})`);
}

const JSON_ARRAY_HINT = "a JSON array: the importer reads JSON Lines, one event object per line (convert with: jq -c '.[]' FILE)";

/** Raw rows of a JSON Lines file with their line numbers; throws ImportError on a line that is not a JSON object. */
async function* readJsonl(file: string): AsyncGenerator<NumberedRow> {
  const input = openInput(file);
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let first = true;
  try {
    for await (let text of lines) {
      line += 1;
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (!text.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        if (first && text.trimStart().startsWith('[')) {
          throw new ImportError(file, line, JSON_ARRAY_HINT);
        }
        throw new ImportError(file, line, `invalid JSON: ${shorten(err instanceof Error ? err.message : String(err))}`);
      }
      if (!isPlainObject(value)) {
        if (first && Array.isArray(value)) throw new ImportError(file, line, JSON_ARRAY_HINT);
        throw new ImportError(file, line, `expected a JSON object, got ${kindOf(value)}`);
      }
      first = false;
      yield { line, row: value };
    }
  } catch (err) {
    throw readError(file, err);
  } finally {
    lines.close();
    input.destroy();
  }
}

const CSV_REQUIRED_COLUMNS = ['event', 'distinct_id', 'timestamp'] as const;

function parseJsonCell(text: string, column: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RowProblem(`invalid JSON in column "${column}": ${shorten(err instanceof Error ? err.message : String(err))}`);
  }
  if (!isPlainObject(value)) throw new RowProblem(`column "${column}" must hold a JSON object, got ${kindOf(value)}`);
  return value;
}

/** A CSV record (header → cell) as a raw row; throws RowProblem on a bad JSON cell. */
function csvRecordToRow(record: Record<string, string>): RawEventRow {
  const properties: Record<string, unknown> = parseJsonCell(record.properties ?? '', 'properties') ?? {};
  const row: RawEventRow = {};
  for (const [column, cell] of Object.entries(record)) {
    if (column.startsWith('properties.') && column.length > 'properties.'.length) {
      if (cell !== '') properties[column.slice('properties.'.length)] = cell;
    } else if (column === '$set' || column === '$set_once') {
      const obj = parseJsonCell(cell, column);
      if (obj) row[column] = obj;
    } else if (
      column === 'event' ||
      column === 'distinct_id' ||
      column === 'timestamp' ||
      column === 'uuid' ||
      column === 'id' ||
      column === 'elements_chain'
    ) {
      if (cell !== '') row[column] = cell;
    }
  }
  row.properties = properties;
  return row;
}

/** Raw rows of a CSV file with the line each record starts on; throws ImportError on unparsable CSV. */
async function* readCsv(file: string): AsyncGenerator<NumberedRow> {
  const input = openInput(file);
  const parser = pipeline(input, parseCsv({ columns: true, info: true, bom: true, skip_empty_lines: true }), () => undefined);
  let first = true;
  let overCounted = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      const { record, info } = item;
      if (first) {
        first = false;
        const missing = CSV_REQUIRED_COLUMNS.filter((c) => !(c in record));
        if (missing.length)
          throw new ImportError(
            file,
            1,
            `the header row lacks column${missing.length > 1 ? 's' : ''} ${missing.map((c) => `"${c}"`).join(', ')}`,
          );
      }
      // csv-parse reports the line a record ends on, and counts a \r\n inside quoted cells as two
      // line breaks (for the rest of the file too): correct for both, to the line the record starts on.
      let breaks = 0;
      for (const cell of Object.values(record)) {
        if (cell.indexOf('\n') < 0 && cell.indexOf('\r') < 0) continue;
        for (let i = 0; i < cell.length; i++) {
          const c = cell.charCodeAt(i);
          if (c === 10) breaks++;
          else if (c === 13) {
            breaks++;
            if (cell.charCodeAt(i + 1) === 10) {
              overCounted++;
              i++;
            }
          }
        }
      }
      const line = info.lines - overCounted - breaks;
      let row: RawEventRow;
      try {
        row = csvRecordToRow(record);
      } catch (err) {
        throw toImportError(file, line, err);
      }
      yield { line, row };
    }
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines ?? 0;
      throw new ImportError(file, line, `invalid CSV: ${err.message}`);
    }
    throw readError(file, err);
  } finally {
    input.destroy();
  }
}

/** Raw rows of `file` read as `format`, with the line each starts on (see readJsonl, readCsv). */
export function readRows(file: string, format: ImportFormat): AsyncGenerator<NumberedRow> {
  return format === 'csv' ? readCsv(file) : readJsonl(file);
}
