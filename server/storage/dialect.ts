/**
 * The one module that knows which SQL dialect is in use. Everything else is Kysely that runs on
 * SQLite and PostgreSQL alike; what differs (column types in migrations, and later JSON property
 * access and upserts) is answered here. Text read as a number or a date-time alike on both stores
 * is ./text-values.ts (which takes the `DialectName` from here).
 */
import type { ColumnDataType, CreateTableBuilder, Kysely, RawBuilder } from 'kysely';
import { PostgresAdapter, sql } from 'kysely';
import { RE2JS } from 're2js';

/** The dialect names this project supports. */
export type DialectName = 'sqlite' | 'postgres';

/** Column types per dialect, for migrations. */
export interface ColumnTypes {
  bool: ColumnDataType;
  json: ColumnDataType;
  timestamp: ColumnDataType;
}

/** Column types for `dialect`: SQLite stores booleans as integer, JSON and timestamps as text. */
export function columnTypes(dialect: DialectName): ColumnTypes {
  return dialect === 'postgres'
    ? { bool: 'boolean', json: 'jsonb', timestamp: 'timestamptz' }
    : { bool: 'integer', json: 'text', timestamp: 'text' };
}

/** Adds `id`, an auto-incrementing integer primary key, in the dialect's own way (migrations). */
export function withSerialId<T extends string>(dialect: DialectName, b: CreateTableBuilder<T>): CreateTableBuilder<T | 'id'> {
  return dialect === 'postgres'
    ? b.addColumn('id', 'serial', (c) => c.primaryKey())
    : b.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/**
 * The dialect of a Kysely instance or transaction, read from its adapter (so it also holds for the
 * instances Kysely's Migrator and transactions hand out).
 */
export function dialectOf<DB>(db: Kysely<DB>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * A JSON object column or subquery whose properties a filter reads: `events.properties`, or the
 * properties of the event's person.
 */
export type JsonSource = RawBuilder<unknown>;

/** SQLite's JSON path for one top-level key: `$."key"` (a `$` at the start of a bare key is a path). */
function sqlitePath(key: string): string {
  return `$."${key}"`;
}

/**
 * Keys SQLite's quoted path label cannot hold, read through json_each instead: `"` and `\` (the
 * label has no escapes), and the control characters U+0000–U+001F and U+007F (the path is parsed as
 * a C string, so a NUL cuts it short and answers "bad JSON path"; the others are kept off the path
 * parser so that no key's text depends on how it treats them). json_each compares the decoded key
 * with the bound parameter, so any key is found exactly, and a key no event has reads as NULL.
 */
function sqliteNeedsEach(key: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what SQLite's JSON paths cannot quote
  return /["\\\u0000-\u001f\u007f]/.test(key);
}

/**
 * Text PostgreSQL cannot hold: U+0000, in `text` or in `jsonb` (a bound parameter with it fails,
 * "invalid byte sequence for encoding UTF8: 0x00"). No stored key or value can contain it, so a
 * key with it is missing from every row and a needle with it is in no text; the functions below
 * answer that without sending the text to the server.
 */
function postgresCannotHold(text: string): boolean {
  return text.includes('\u0000');
}

/**
 * PostgreSQL: the property `key` (bound, or a literal for a column expression) of `source`, a
 * `json` column (`events.properties`, text kept as written: migration 0017) or `jsonb`
 * (`persons.properties`), as `jsonText` words it. Objects and arrays are the JSON's own text (an
 * event's keys in the order they were sent, as PostHog's ClickHouse keeps them); every other value
 * is read through jsonb (strings unquoted, numbers in jsonb's plain decimals, booleans), so the
 * text matches the containment that `jsonTextInByContainment` writes and the GIN index answers.
 * The casts are no-ops on the other type.
 */
function postgresJsonText(source: JsonSource, key: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<
    string | null
  >`(case when jsonb_typeof((${source})::jsonb -> ${key}) in ('object', 'array') then ((${source})::json -> ${key})::text else ((${source})::jsonb ->> ${key}) end)`;
}

/**
 * The property `key` of `source` as text, as PostHog compares properties (the raw JSON value with
 * a string's quotes removed): strings as they are, numbers as written, booleans `true`/`false`,
 * objects and arrays as JSON text (an event's keys in the order they were sent); NULL when the
 * key is missing or holds JSON null.
 */
export function jsonText(dialect: DialectName, source: JsonSource, key: string): RawBuilder<string | null> {
  if (dialect === 'postgres')
    return postgresCannotHold(key) ? sql<string | null>`(null::text)` : postgresJsonText(source, sql`${key}::text`);
  if (sqliteNeedsEach(key)) {
    return sql<
      string | null
    >`(select case type when 'true' then 'true' when 'false' then 'false' when 'null' then null when 'object' then json(value) when 'array' then json(value) else cast(value as text) end from json_each(${source}) where key = ${key})`;
  }
  return sqliteJsonText(source, sql`${sqlitePath(key)}`);
}

/** SQLite: the text form of `jsonText` for a key its JSON path can hold, `path` bound or literal. */
function sqliteJsonText(source: JsonSource, path: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql<
    string | null
  >`(case json_type(${source}, ${path}) when 'true' then 'true' when 'false' then 'false' when 'null' then null when 'object' then json_extract(${source}, ${path}) when 'array' then json_extract(${source}, ${path}) else cast(json_extract(${source}, ${path}) as text) end)`;
}

/**
 * `jsonText` with the key written into the SQL as a literal instead of a bound parameter: the
 * expression of a generated column (storage/events/materialized.ts), which may hold no parameter. The
 * same text as `jsonText` gives for every row, so a column made of it answers exactly as the
 * expression it replaces. Throws for a key that only a subquery can read (SQLite: `"`, `\`,
 * control characters; PostgreSQL: U+0000): a generated column may not hold a subquery.
 */
export function jsonTextLiteral(dialect: DialectName, source: JsonSource, key: string): RawBuilder<string | null> {
  if (!canBeLiteralKey(key)) throw new Error(`the key ${JSON.stringify(key)} cannot be written into a column expression`);
  if (dialect === 'postgres') return postgresJsonText(source, sql`${sql.lit(key)}::text`);
  return sqliteJsonText(source, sql.lit(sqlitePath(key)));
}

/** Whether `jsonTextLiteral` can write `key` (on either dialect): no `"`, `\`, control character or U+0000. */
export function canBeLiteralKey(key: string): boolean {
  return !sqliteNeedsEach(key) && !postgresCannotHold(key);
}

/** Texts a jsonb number can have: PostgreSQL writes them in plain decimals (numeric_out: no exponent). */
const DECIMAL_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;
/** At most this many containment documents in one filter; more texts are compared as texts. */
const MAX_CONTAINMENT_DOCUMENTS = 64;
/** A UTF-16 surrogate without its pair (the driver sends it as U+FFFD; JSON.stringify escapes it, which jsonb refuses). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * JSON objects (as text, one top-level key each) such that a JSON object contains (`@>`) one of
 * them exactly when its property `key` has one of `texts` as its text form (`jsonText`,
 * PostgreSQL's `->>`), or undefined when no such set exists or can be written.
 *
 * The text form of a value is a string's own text, `true`/`false`, a number in plain decimals
 * (`12`, `12.0`: the number as written, scale kept), an object's or array's JSON text (beginning
 * with `{` or `[`), and none for null. So a text t that is not a decimal and does not begin with
 * `{` or `[` is the text of the string t and of nothing else (and `true`/`false` also of that
 * boolean): `{key: "t"}` (and `{key: true}`) say exactly that, as jsonb compares strings and
 * booleans by equality. Undefined when a text looks like a decimal (jsonb compares numbers by
 * value: 12 would contain 12.0, whose text is not `12`) or begins with `{` or `[` (containment of
 * objects and arrays is not equality), when the key or a text holds U+0000 or a lone surrogate
 * (jsonb cannot hold them), when `texts` is empty, or past 64 documents.
 */
export function containmentDocuments(key: string, texts: readonly string[]): string[] | undefined {
  if (texts.length === 0 || postgresCannotHold(key) || LONE_SURROGATE.test(key)) return undefined;
  const k = JSON.stringify(key);
  const docs = new Set<string>();
  for (const t of texts) {
    if (DECIMAL_TEXT.test(t) || t.startsWith('{') || t.startsWith('[') || postgresCannotHold(t) || LONE_SURROGATE.test(t)) return undefined;
    docs.add(`{${k}: ${JSON.stringify(t)}}`);
    if (t === 'true' || t === 'false') docs.add(`{${k}: ${t}}`);
  }
  return docs.size <= MAX_CONTAINMENT_DOCUMENTS ? [...docs] : undefined;
}

/**
 * PostgreSQL: `jsonText(source, key) IN (texts)` written as jsonb containment, `(source::jsonb @>
 * $1::jsonb OR …)` with one bound document per `containmentDocuments`, which a GIN
 * `jsonb_path_ops` index on `(properties)::jsonb` answers (migration 0017; 0007 before). The same rows for every JSON value of `source` (one that
 * is not an object has no property: neither holds); where the property is missing the condition is
 * false rather than NULL, which selects the same rows in a WHERE and in the AND/OR groups filters
 * compile to (they never negate it). Undefined on SQLite and where
 * `containmentDocuments` is: the caller compares texts then.
 *
 * No text comparison is kept beside it as a recheck: PostgreSQL would multiply its guessed
 * selectivity (0.5 %) into the containment's, think a value common in the project rare, and read
 * all of its events through the GIN index to sort them instead of reading the newest few in
 * order (measured many times slower for a common value, docs/performance.md).
 */
export function jsonTextInByContainment(
  dialect: DialectName,
  source: JsonSource,
  key: string,
  texts: readonly string[],
): RawBuilder<boolean> | undefined {
  if (dialect !== 'postgres') return undefined;
  const docs = containmentDocuments(key, texts);
  if (docs === undefined) return undefined;
  return sql<boolean>`(${sql.join(
    docs.map((d) => sql`(${source})::jsonb @> ${d}::jsonb`),
    sql` or `,
  )})`;
}

/** Whether `source` has the key `key` at all (JSON null counts as set, as PostHog's JSONHas). */
export function jsonHas(dialect: DialectName, source: JsonSource, key: string): RawBuilder<boolean> {
  if (dialect === 'postgres')
    return postgresCannotHold(key) ? sql<boolean>`false` : sql<boolean>`coalesce(jsonb_exists((${source})::jsonb, ${key}), false)`;
  if (sqliteNeedsEach(key)) return sql<boolean>`exists (select 1 from json_each(${source}) where key = ${key})`;
  return sql<boolean>`(json_type(${source}, ${sqlitePath(key)}) is not null)`;
}

/**
 * Whether `text` contains `needle`, ignoring case beyond ASCII (`ZÜR` finds `Zürich`), as
 * ClickHouse's ILIKE does. SQLite: the `icontains` function registered by `openStore` (SQLite's own
 * LIKE folds ASCII only); PostgreSQL: ILIKE on the escaped needle.
 */
export function icontains(dialect: DialectName, text: RawBuilder<unknown>, needle: string): RawBuilder<boolean> {
  if (dialect === 'postgres') {
    // a needle PostgreSQL cannot hold is in no stored text: false, or NULL for a NULL text (as ILIKE)
    if (postgresCannotHold(needle)) return sql<boolean>`(case when ${text} is not null then false end)`;
    const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return sql<boolean>`(${text} ilike ${pattern} escape '\\')`;
  }
  return sql<boolean>`(icontains(${text}, ${needle}) = 1)`;
}

/**
 * Keyset condition "(timestamp, uuid) before the cursor" for a list ordered by timestamp desc, uuid
 * desc, written so that each engine starts its index range at the cursor instead of filtering rows
 * out of it. PostgreSQL: the row comparison `(timestamp, uuid) < (c.timestamp, c.uuid)`, which a
 * btree on (…, timestamp, uuid) takes as one range bound, so a page after 10,000 rows that share a
 * timestamp reads only its own rows. SQLite does not start an index scan from a row value: there the
 * range starts at the cursor's timestamp (`timestamp <= c`) and rows of that timestamp at or after
 * the cursor's uuid are filtered out.
 */
export function beforeCursor(
  dialect: DialectName,
  timestamp: RawBuilder<unknown>,
  uuid: RawBuilder<unknown>,
  c: { timestamp: unknown; uuid: unknown },
): RawBuilder<boolean> {
  if (dialect === 'postgres') return sql<boolean>`((${timestamp}, ${uuid}) < (${c.timestamp}, ${c.uuid}))`;
  return sql<boolean>`(${timestamp} <= ${c.timestamp} and (${timestamp} < ${c.timestamp} or ${uuid} < ${c.uuid}))`;
}

/** `beforeCursor` the other way: `(timestamp, uuid) > cursor`, for a list in ascending order. */
export function afterCursor(
  dialect: DialectName,
  timestamp: RawBuilder<unknown>,
  uuid: RawBuilder<unknown>,
  c: { timestamp: unknown; uuid: unknown },
): RawBuilder<boolean> {
  if (dialect === 'postgres') return sql<boolean>`((${timestamp}, ${uuid}) > (${c.timestamp}, ${c.uuid}))`;
  return sql<boolean>`(${timestamp} >= ${c.timestamp} and (${timestamp} > ${c.timestamp} or ${uuid} > ${c.uuid}))`;
}

/**
 * A pattern compiled with RE2 syntax and semantics (re2js), or null when RE2 cannot compile it
 * (backreferences, lookaround, bad syntax). RE2 is what ClickHouse's `match()` uses, so the
 * patterns PostHog accepts are the ones accepted here, and matching is linear in the text.
 */
export function compileRe2(pattern: string): RE2JS | null {
  try {
    return RE2JS.compile(pattern);
  } catch {
    return null;
  }
}

/**
 * Why RE2 refuses `pattern` (re2js's message, e.g. "invalid or unsupported Perl syntax: `(?=`"), or
 * undefined when it compiles.
 */
export function re2Error(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Regular-expression match. SQLite: the `regexp` function registered by `openStore` (RE2).
 * PostgreSQL: its own `~` (patterns are first checked to compile with RE2, so both stores accept
 * the same patterns; PostgreSQL's engine is bounded by the statement timeout, `QUERY_TIMEOUT_MS`).
 */
export function regexMatch(dialect: DialectName, text: RawBuilder<unknown>, pattern: string): RawBuilder<boolean> {
  return dialect === 'postgres' ? sql<boolean>`(${text} ~ ${pattern})` : sql<boolean>`(${text} regexp ${pattern})`;
}

/**
 * `text` compared byte by byte (code-point order for UTF-8), on both stores: PostgreSQL orders
 * text by the database's collation otherwise (`en_US` puts `$pageview` among the `p`s), SQLite
 * already compares bytes. For `ORDER BY` of names that must page the same way on both stores.
 */
export function bytewise(dialect: DialectName, text: RawBuilder<unknown>): RawBuilder<string> {
  return dialect === 'postgres' ? sql<string>`(${text} collate "C")` : sql<string>`${text}`;
}
