/**
 * A person's attempts at a funnel, from their events: the per-person part of PostHog's funnel
 * queries (posthog/hogql_queries/insights/funnels/funnel.py (ordered), funnel_strict.py,
 * funnel_unordered.py), run in TypeScript on the rows the runner reads. Pure: no I/O.
 *
 * Instants are microseconds since the epoch (UTC). An attempt starts at one event of step 0 (any
 * step for `unordered`) and holds the time of each step it reached, in step order, every one
 * within the conversion window of its start (`deadline(start)`, inclusive, as PostHog's
 * `latest_i <= latest_0 + INTERVAL`).
 */

/** PostHog's funnelOrderType values. */
export type FunnelOrder = 'ordered' | 'strict' | 'unordered';

/** One event of the person that matches at least one step. */
export interface StepEvent {
  /** microseconds since the epoch (UTC) */
  t: number;
  /** the event's uuid, to order events of the same instant */
  uuid: string;
  /** the steps (0-based) it matches */
  steps: Set<number>;
  /** the breakdown property's value on the event (or its person), null when missing; undefined without a breakdown */
  value?: string | null;
}

/** One attempt: the times of the steps reached (`times[0]` is the start). */
export interface Attempt {
  times: number[];
}

/** Orders a person's events by time, then uuid (the same order on every store). */
export function sortEvents(events: StepEvent[]): StepEvent[] {
  return events.sort((a, b) => a.t - b.t || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}

/**
 * `ordered`: from each step-0 event, each next step is the earliest later event of that step (a
 * different event; the same instant counts as later), within the window.
 */
function ordered(events: StepEvent[], n: number, deadline: (t: number) => number): Attempt[] {
  const out: Attempt[] = [];
  events.forEach((start, k) => {
    if (!start.steps.has(0)) return;
    const end = deadline(start.t);
    const times = [start.t];
    let at = k;
    for (let step = 1; step < n; step++) {
      let found = -1;
      for (let j = at + 1; j < events.length && events[j]!.t <= end; j++)
        if (events[j]!.steps.has(step)) {
          found = j;
          break;
        }
      if (found < 0) break;
      times.push(events[found]!.t);
      at = found;
    }
    out.push({ times });
  });
  return out;
}

/** `strict`: from each step-0 event, step i must be the i-th next event of the person's step events. */
function strict(events: StepEvent[], n: number, deadline: (t: number) => number): Attempt[] {
  const out: Attempt[] = [];
  events.forEach((start, k) => {
    if (!start.steps.has(0)) return;
    const end = deadline(start.t);
    const times = [start.t];
    for (let step = 1; step < n; step++) {
      const next = events[k + step];
      if (!next || next.t > end || !next.steps.has(step)) break;
      times.push(next.t);
    }
    out.push({ times });
  });
  return out;
}

/**
 * `unordered`: from each step event, the distinct steps done from it within the window; the
 * times are the first event of each such step, sorted.
 */
function unordered(events: StepEvent[], n: number, deadline: (t: number) => number): Attempt[] {
  const out: Attempt[] = [];
  events.forEach((start, k) => {
    const end = deadline(start.t);
    const first = new Map<number, number>();
    for (let j = k; j < events.length && events[j]!.t <= end; j++)
      for (const s of events[j]!.steps) if (!first.has(s)) first.set(s, events[j]!.t);
    const times = [...first.values()].sort((a, b) => a - b).slice(0, n);
    out.push({ times });
  });
  return out;
}

/** The attempts of a person whose events are sorted (`sortEvents`), in the order they start. */
export function attemptsOf(events: StepEvent[], n: number, order: FunnelOrder, deadline: (t: number) => number): Attempt[] {
  if (order === 'strict') return strict(events, n, deadline);
  if (order === 'unordered') return unordered(events, n, deadline);
  return ordered(events, n, deadline);
}

/** The first attempt that reached the furthest step (PostHog counts a person once, at the furthest step), or undefined. */
export function bestAttempt(attempts: Attempt[]): Attempt | undefined {
  let best: Attempt | undefined;
  for (const a of attempts) if (!best || a.times.length > best.times.length) best = a;
  return best;
}

/** The median of numbers (the mean of the two middle ones for an even count), null for none. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
