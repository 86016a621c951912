/**
 * PostHog's product-analytics query kinds, run on HogQL the way PostHog's query runners do
 * (posthog/hogql_queries/insights/): each kind compiles to HogQL SELECTs over the project's events,
 * which the caller's `InsightContext` runs on whichever events store the project uses, and answers
 * its kind's fixed result shape. One runner per kind, one file each: `./trends.ts` (TrendsQuery).
 *
 * What comes in: the kind's query (the contract's schema), and the context (./context.ts). What goes
 * out: the kind's answer, or an `InsightQueryError` (./errors.ts) naming the field it cannot run;
 * HogQL's own errors pass through for the caller to map. Nothing here knows HTTP, SQL or a store.
 */
import type { InsightContext, TrendsQueryInput } from './context.js';
import { runTrendsQuery, type TrendsAnswer } from './trends.js';

export { InsightQueryError } from './errors.js';
export type { EventsWindow, InsightContext, RawProperties, SelectAnswer, TrendsQueryInput } from './context.js';
export type { TrendsAnswer } from './trends.js';

/** An insight query this layer runs. */
export type InsightQueryInput = TrendsQueryInput;

/** The answer of an insight query. */
export type InsightAnswer = TrendsAnswer;

/** Runs one insight query for the context's project. Throws `InsightQueryError` (400) or HogQL's errors. */
export function runInsightQuery(ctx: InsightContext, query: InsightQueryInput): Promise<InsightAnswer> {
  return runTrendsQuery(ctx, query);
}
