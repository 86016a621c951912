/**
 * HogQL for this server: PostHog's query language over the events and persons it stores.
 *
 * What comes in: a HogQL SELECT (`HogQLQuery`) or an EventsQuery's expressions, the caller's team,
 * the database to run on, and the store's events table (`EventsTable`,
 * ../storage/events/index.ts: the SQL of each field of `events` and the materialized columns,
 * which the caller gets from its `EventsStore`). What goes out: `{results, columns, types,
 * hasMore, limit, offset, hogql}` as PostHog's query endpoint answers, or a `HogQLError`
 * (./errors.ts: PostHog's `code`, `detail` and `attr`, kind `invalid` or `timeout`) naming the
 * construct outside the subset and its line/column. HogQL knows no HTTP and imports nothing of the
 * domain: the domain, which calls it, turns its errors into PostHog's answers
 * (../domain/errors.ts `withHogQLErrors`). Nor does it know how the store lays out the events
 * rows: every field of `events` is the `EventsTable`'s SQL.
 *
 * How: `./parser.ts` runs PostHog's own parser (`@posthog/hogql-parser`, WASM) to PostHog's AST;
 * `./select.ts`, `./expr.ts`, `./functions.ts`, `./patterns.ts`, `./fields.ts` compile that AST to one
 * parameterized SQL statement through the store's dialect (`./dialect-sqlite.ts`,
 * `./dialect-postgres.ts`, `./dialect-clickhouse.ts`, with `./text-forms.ts` for the texts both must write alike: a Float's
 * `toString`, JSON numbers); `./run.ts` runs it and reads values back by HogQL type. Both stores
 * answer every query alike (test/hogql/property.test.ts). The team filter
 * is added by the compiler; every value of the query is a bound parameter; a WHERE comparison of a
 * property with a string reads the property's materialized column where the store has one
 * (`EventsTable.materializedColumn`), with the same answer; only `events` and
 * `persons`, and only the functions of the subset, can be named. The rules taken from PostHog
 * (posthog/hogql/printer.py, posthog/hogql/functions/mapping.py,
 * posthog/hogql_queries/events_query_runner.py) are cited where they are applied.
 */
import type { Kysely } from 'kysely';
import type { EventsDialectName, EventsTable } from '../storage/events/index.js';
import type { HogQLDialect, Sql } from './dialect.js';
import { clickhouseDialect } from './dialect-clickhouse.js';
import { postgresDialect } from './dialect-postgres.js';
import { sqliteDialect } from './dialect-sqlite.js';
import { checkHogQL, type HogQLMetadataAnswer } from './metadata.js';
import { compileEventsQuery, compileEventsWhere, foldStar, type EventsQueryParts } from './events-query.js';
import { parseSelect } from './parser.js';
import { runCompiled, type HogQLResult } from './run.js';
import { compileSelect, DEFAULT_LIMIT, MAX_LIMIT } from './select.js';

export { HogQLError } from './errors.js';
export { parseExpr, type AstNode } from './parser.js';
export type { HogQLResult } from './run.js';
export type { EventsQueryParts } from './events-query.js';
export type { HogQLMetadataAnswer } from './metadata.js';
export { DEFAULT_LIMIT, MAX_LIMIT };

/** A query's answer and the HogQL it ran. */
export interface HogQLAnswer extends HogQLResult {
  hogql: string;
}

/** The HogQL dialect of a store. */
export function hogqlDialect(name: EventsDialectName): HogQLDialect {
  if (name === 'clickhouse') return clickhouseDialect;
  return name === 'postgres' ? postgresDialect : sqliteDialect;
}

/**
 * Runs a HogQL SELECT for one team on `db`, whose events table is `events`. Default LIMIT 100, at
 * most 50,000 rows. `now` is `now()`. `tableWhere` (SQL on `events` rows, `EventsStore.conditions`)
 * restricts the events it reads, before its own WHERE: the query runners' series filters (server/insights/);
 * `maxLimit` raises the 50,000 cap for the runners' internal reads (never a request's).
 * Throws `HogQLError` (400) for a syntax error or anything outside the subset.
 */
export async function runHogQLQuery<DB>(
  db: Kysely<DB>,
  events: EventsTable,
  teamId: number,
  text: string,
  now: Date = new Date(),
  tableWhere?: Sql[],
  maxLimit?: number,
): Promise<HogQLAnswer> {
  const ast = await parseSelect(text, 'query');
  const compiled = compileSelect(ast, {
    dialect: hogqlDialect(events.dialect),
    events,
    teamId,
    source: text,
    attr: 'query',
    now,
    tableWhere,
    maxLimit,
  });
  return { ...(await runCompiled(db, compiled)), hogql: text };
}

/**
 * Runs an EventsQuery's `select`/`where`/`orderBy` for one team, with `tableWhere` (the events
 * filters, SQL on `events`: `EventsStore.conditions`) applied first. Throws `HogQLError` (400).
 */
export async function runEventsQuery<DB>(
  db: Kysely<DB>,
  events: EventsTable,
  teamId: number,
  parts: EventsQueryParts,
  tableWhere: Sql[],
  now: Date = new Date(),
): Promise<HogQLAnswer> {
  const compiled = await compileEventsQuery(parts, { dialect: hogqlDialect(events.dialect), events, teamId, now, tableWhere });
  const answer = await runCompiled(db, compiled);
  return { ...answer, results: answer.results.map((r) => foldStar(r, compiled.star)), hogql: compiled.hogql };
}

/**
 * The events list's `where` (without `select`) as one SQL condition on `events` rows, for the
 * list's own query; `events`: the store's events table (its materialized columns, which the
 * condition may read). Throws `HogQLError` (400, `attr` `where`).
 */
export async function eventsWhereCondition(where: readonly string[], events: EventsTable, now: Date = new Date()): Promise<Sql> {
  return compileEventsWhere(where, hogqlDialect(events.dialect), events, now);
}

/**
 * PostHog's HogQLMetadata for a text (./metadata.ts): valid or not, with the error's offset, and the
 * tables it reads; the store's dialect compiles it, nothing runs.
 */
export function hogqlMetadata(
  events: EventsTable,
  teamId: number,
  language: 'hogQL' | 'hogQLExpr',
  text: string,
  now: Date,
  sourceQuery?: string,
): Promise<HogQLMetadataAnswer> {
  return checkHogQL(hogqlDialect(events.dialect), events, teamId, language, text, now, sourceQuery);
}
