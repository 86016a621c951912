/**
 * The fields every insight answer carries besides its results: PostHog's cache fields
 * (`CachedQueryResponseMixin` in frontend/src/queries/schema/schema-general.ts, filled by
 * posthog/hogql_queries/query_runner.py) and the `AnalyticsQueryResponseBase` extras. Nothing is
 * cached here: `is_cached` is false, `last_refresh` is the context's now (UTC, ISO 8601 with ms),
 * `next_allowed_client_refresh` one minute later (PostHog's base refresh interval), `cache_key`
 * a hash of the team and the query, `timings` empty, `modifiers` empty, `query_status` null.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { InsightContext } from './context.js';

/** PostHog's base refresh interval for insights (ms): `next_allowed_client_refresh` is this after `last_refresh`. */
const REFRESH_MS = 60_000;

/** The cache fields of an answer (module doc). */
export interface CacheFields {
  is_cached: false;
  last_refresh: string;
  next_allowed_client_refresh: string;
  cache_key: string;
  timezone: string;
  query_status: null;
  timings: never[];
  modifiers: Record<string, never>;
}

/** The cache fields of `query`'s answer for the context's team (module doc). */
export function cacheFields(ctx: InsightContext, query: unknown): CacheFields {
  const now = DateTime.fromJSDate(ctx.now, { zone: 'UTC' });
  return {
    is_cached: false,
    last_refresh: now.toISO() ?? '',
    next_allowed_client_refresh: now.plus({ milliseconds: REFRESH_MS }).toISO() ?? '',
    cache_key: `cache_${createHash('sha256')
      .update(JSON.stringify({ team: ctx.team.id, query }))
      .digest('hex')
      .slice(0, 32)}`,
    timezone: ctx.team.timezone,
    query_status: null,
    timings: [],
    modifiers: {},
  };
}
