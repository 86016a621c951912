/**
 * PostHog's product-analytics query kinds, run on HogQL the way PostHog's query runners do
 * (posthog/hogql_queries/insights/): each kind compiles to HogQL SELECTs over the project's events,
 * which the caller's `InsightContext` runs on whichever events store the project uses, and answers
 * its kind's fixed result shape. One runner per kind, one file each: `./trends.ts` (TrendsQuery),
 * `./funnels.ts` (FunnelsQuery), `./retention.ts` (RetentionQuery), `./lifecycle.ts`
 * (LifecycleQuery), `./stickiness.ts` (StickinessQuery), `./paths.ts` (PathsQuery). The runners other than trends read grouped
 * per-person rows (./actor-rows.ts) and do the per-person logic in TypeScript. `./actors.ts`
 * (ActorsQuery) lists the persons behind a point of any of them, from the same per-person models.
 *
 * What comes in: the kind's query (the contract's schema), and the context (./context.ts). What goes
 * out: the kind's answer, or an `InsightQueryError` (./errors.ts) naming the field it cannot run;
 * HogQL's own errors pass through for the caller to map. Nothing here knows HTTP, SQL or a store.
 */
import type { InsightContext, TrendsQueryInput } from './context.js';
import { runFunnelsQuery, type FunnelsAnswer, type FunnelsQueryInput } from './funnels.js';
import { runLifecycleQuery, type LifecycleAnswer, type LifecycleQueryInput } from './lifecycle.js';
import { runPathsQuery, type PathsAnswer, type PathsQueryInput } from './paths.js';
import { runRetentionQuery, type RetentionAnswer, type RetentionQueryInput } from './retention.js';
import { runStickinessQuery, type StickinessAnswer, type StickinessQueryInput } from './stickiness.js';
import { runTrendsQuery, type TrendsAnswer } from './trends.js';

export { InsightQueryError } from './errors.js';
export { runActorsQuery, type ActorsAnswer, type ActorsQueryInput } from './actors.js';
export type { ActorPerson, EventsWindow, InsightContext, RawProperties, SelectAnswer, TrendsQueryInput } from './context.js';
export type { TrendsAnswer } from './trends.js';
export type { FunnelsAnswer, FunnelsQueryInput } from './funnels.js';
export type { RetentionAnswer, RetentionQueryInput } from './retention.js';
export type { LifecycleAnswer, LifecycleQueryInput } from './lifecycle.js';
export type { StickinessAnswer, StickinessQueryInput } from './stickiness.js';
export type { PathsAnswer, PathsQueryInput } from './paths.js';

/** An insight query this layer runs. */
export type InsightQueryInput =
  TrendsQueryInput | FunnelsQueryInput | RetentionQueryInput | LifecycleQueryInput | StickinessQueryInput | PathsQueryInput;

/** The answer of an insight query. */
export type InsightAnswer = TrendsAnswer | FunnelsAnswer | RetentionAnswer | LifecycleAnswer | StickinessAnswer | PathsAnswer;

/** Runs one insight query for the context's project, by its `kind`. Throws `InsightQueryError` (400) or HogQL's errors. */
export function runInsightQuery(ctx: InsightContext, query: InsightQueryInput): Promise<InsightAnswer> {
  switch (query.kind) {
    case 'FunnelsQuery':
      return runFunnelsQuery(ctx, query);
    case 'RetentionQuery':
      return runRetentionQuery(ctx, query);
    case 'LifecycleQuery':
      return runLifecycleQuery(ctx, query);
    case 'StickinessQuery':
      return runStickinessQuery(ctx, query);
    case 'PathsQuery':
      return runPathsQuery(ctx, query);
    default:
      return runTrendsQuery(ctx, query);
  }
}
