/**
 * The autocaptured elements' click counts (`GET …/elements/stats/`, PostHog's
 * `ElementViewSet.stats`, posthog/api/element.py; `@posthog/cli`'s `elements-stats-retrieve`
 * and PostHog's toolbar heatmap call it): the project's `$autocapture`, `$rageclick` and
 * `$dead_click` events grouped by elements chain and event name, most first, each group with
 * its elements (the chain read as PostHog's `chain_to_element_dicts`, ./elements-chain.ts).
 *
 * PostHog's rules: `include` picks the event names (repeated, a JSON array, or a comma list; only
 * those three), `date_from` (default `-7d`) is read from the start of its day (a relative value in
 * the project's time zone), `date_to` defaults
 * to now, `properties` filters the events, `limit` (1–999,999, default 50,000) and `offset` page
 * the groups, `sampling_factor` must be in (0, 1] (the count is exact here: nothing is sampled).
 * The answer is `{results: [{count, hash, type, elements}], next, previous}`. `hash` is a stable
 * key of the chain: the first 16 hex digits of its SHA-256 (PostHog's is ClickHouse's
 * `cityHash64`, not computable on the row stores; clients use it as an opaque key). The groups run
 * as one EventsQuery through the events reads, so on every events store alike.
 */
import { createHash } from 'node:crypto';
import type { Team } from '../storage/repositories/accounts.js';
import { validationError } from './errors.js';
import { parseElementsChain, type Element } from './elements-chain.js';
import type { EventsReads } from './events-reads.js';
import { withQuery } from './pagination.js';

/** The event names the stats count (PostHog's). */
const KINDS = ['$autocapture', '$rageclick', '$dead_click'] as const;
/** `limit`'s default and bounds (PostHog's `ELEMENT_STATS_DEFAULT_LIMIT`, 1–999,999). */
const DEFAULT_LIMIT = 50_000;
const MAX_LIMIT = 999_999;
/** The most groups one query reads (HogQL's row limit); a larger `limit` is served in pages of this. */
const QUERY_LIMIT = 50_000;

/** The query parameters, as validated text. */
export interface ElementStatsParams {
  include?: string | string[] | undefined;
  date_from?: string | undefined;
  date_to?: string | undefined;
  properties?: string | undefined;
  limit?: string | number | undefined;
  offset?: string | number | undefined;
  sampling_factor?: string | number | undefined;
}

/** One group of the answer. */
export interface ElementStat {
  count: number;
  hash: string;
  type: string;
  elements: Element[];
}

function integer(raw: string | number | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw validationError(`${name} must be an integer`);
  return n;
}

/** The event names `include` asks for (module doc); 400 for another name or a bad JSON array. */
function includedKinds(raw: string | string[] | undefined): string[] {
  if (raw === undefined) return [...KINDS];
  const values: string[] = [];
  for (const item of Array.isArray(raw) ? raw : [raw]) {
    const text = item.trim();
    if (text.startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw validationError('include must be a valid JSON array when passed as one');
      }
      if (!Array.isArray(parsed)) throw validationError('include must be a valid JSON array when passed as one');
      values.push(...parsed.map(String));
    } else
      values.push(
        ...text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
  }
  if (values.length === 0 || values.some((v) => !(KINDS as readonly string[]).includes(v)))
    throw validationError('Only $autocapture, $rageclick, and $dead_click are supported.');
  return [...new Set(values)];
}

/** The element stats of one project (module doc). */
export class ElementStatsService {
  constructor(private readonly events: EventsReads) {}

  /** The groups of `team`'s events (module doc); throws 400 for a bad parameter. */
  async stats(
    team: Team,
    params: ElementStatsParams,
    url: URL,
  ): Promise<{ results: ElementStat[]; next: string | null; previous: string | null }> {
    const kinds = includedKinds(params.include);
    const limit = integer(params.limit, 'limit', DEFAULT_LIMIT);
    if (limit < 1 || limit > MAX_LIMIT) throw validationError(`limit must be between 1 and ${MAX_LIMIT}`);
    const offset = integer(params.offset, 'offset', 0);
    if (offset < 0) throw validationError('offset must be zero or greater');
    if (params.sampling_factor !== undefined && params.sampling_factor !== '') {
      const f = Number(params.sampling_factor);
      if (!Number.isFinite(f)) throw validationError('sampling_factor must be a float');
      if (!(f > 0 && f <= 1)) throw validationError('sampling_factor must be greater than 0 and at most 1');
    }
    let properties: unknown;
    if (params.properties !== undefined && params.properties !== '') {
      try {
        properties = JSON.parse(params.properties);
      } catch {
        throw validationError('Properties are unparsable!');
      }
    }
    // PostHog reads date_from from the start of its day: a relative `-7d` as `-7dStart`
    const rawFrom = params.date_from || '-7d';
    const dateFrom = /^-?\d+[hdwmqy]$/.test(rawFrom) ? `${rawFrom}Start` : rawFrom;
    const results: ElementStat[] = [];
    // a page of `limit` groups, read in queries of at most QUERY_LIMIT rows
    for (let read = 0; read < limit;) {
      const size = Math.min(QUERY_LIMIT, limit - read);
      const answer = await this.events.query(team, {
        kind: 'EventsQuery',
        select: ['elements_chain', 'event', 'count()'],
        where: [`event in (${kinds.map((k) => `'${k}'`).join(', ')})`, "elements_chain != ''"],
        after: dateFrom,
        ...(params.date_to ? { before: params.date_to } : {}),
        ...(properties !== undefined ? { properties: properties as never } : {}),
        orderBy: ['count() DESC', 'elements_chain', 'event'],
        limit: size,
        offset: offset + read,
      } as never);
      const rows = (answer as { results: unknown[][] }).results;
      for (const [chain, event, count] of rows)
        results.push({
          count: Number(count),
          hash: createHash('sha256').update(String(chain)).digest('hex').slice(0, 16),
          type: String(event),
          elements: parseElementsChain(String(chain)),
        });
      read += rows.length;
      if (rows.length < size) break;
    }
    const more = results.length === limit;
    return {
      results,
      next: more ? withQuery(url, { offset: String(offset + limit), limit: String(limit) }) : null,
      previous: offset > 0 ? withQuery(url, { offset: String(Math.max(0, offset - limit)), limit: String(limit) }) : null,
    };
  }
}
