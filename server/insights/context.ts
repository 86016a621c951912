/**
 * What a query runner asks of the server: the project, the clock, and one way to read events,
 * `select` (a HogQL SELECT over the project's events, with the events filters of a series applied
 * first). The domain builds it (server/domain/query.ts) over the project's events store, so a
 * runner is the same on SQLite, PostgreSQL and ClickHouse, and never sees SQL or a store.
 */
import type { components } from '../../generated/api.js';

/** A TrendsQuery as the contract has it (schema `TrendsQuery`). */
export type TrendsQueryInput = components['schemas']['TrendsQuery'];
/** One series of an insight (schema `InsightSeriesNode`). */
export type SeriesNode = components['schemas']['InsightSeriesNode'];
/** PostHog's property filters as a request holds them: a list of filters, or a group `{type, values}`. */
export type RawProperties = Record<string, unknown>[] | Record<string, unknown> | null | undefined;

/** The events a query reads: the filters of one series over one window. */
export interface EventsWindow {
  /** an exact event name; undefined for all events */
  event?: string | undefined;
  /** property filter lists or groups, all of which must hold */
  properties: RawProperties[];
  /** the window in ms since the epoch (UTC): `from` included, `to` excluded */
  from: number;
  to: number;
}

/** One HogQL answer as a runner reads it. */
export interface SelectAnswer {
  results: unknown[][];
  /** whether the query had more rows than its LIMIT */
  hasMore: boolean;
  hogql: string;
}

/** The server as a runner sees it. */
export interface InsightContext {
  team: { id: number; timezone: string };
  now: Date;
  /**
   * Runs a HogQL SELECT over the project's events restricted to `window` (undefined: every event
   * of the project). Throws `InsightQueryError` for a bad property filter, the HogQL layer's
   * errors (as the domain maps them) for bad HogQL. Its LIMIT is at most 50,000 rows unless
   * `maxRows` raises that cap (a runner reading every row of a grouped read in one query).
   */
  select(hogql: string, window?: EventsWindow, opts?: { maxRows?: number }): Promise<SelectAnswer>;
  /**
   * A user's date (`dateRange.date_from` / `date_to`: ISO 8601, or relative as `-7d`), as PostHog's
   * relative_date_parse reads it in the project's timezone; ms since the epoch, or undefined when
   * it reads as no date.
   */
  parseDate(text: string): number | undefined;
  /**
   * The project's persons with these uuids (a uuid without a person left out), as an actor column
   * shows them (PostHog's actor_strategies.py PersonStrategy).
   */
  persons(uuids: readonly string[]): Promise<ActorPerson[]>;
}

/** A person as an actors query answers it (PostHog's PersonStrategy: no `uuid` key, `id` is the uuid). */
export interface ActorPerson {
  /** the person's uuid */
  id: string;
  properties: Record<string, unknown>;
  is_identified: boolean;
  /** ISO 8601 UTC */
  created_at: string;
  distinct_ids: string[];
  /** the person's display name (the team's display-name properties, else a distinct id) */
  display_name: string;
}

/** An InsightActorsQuery as the contract has it (schema `InsightActorsQuery`): one point of an insight. */
export type InsightPoint = components['schemas']['InsightActorsQuery'];

/** One person of a point (./actors.ts), with what the source kind gives about them. */
export interface ActorRow {
  /** the person's uuid */
  person: string;
  /** their matching events at the point (trends, paths, stickiness) */
  events?: number;
  /** retention: the periods after the cohort's in which they came back (0 included) */
  appearances?: number[];
}
