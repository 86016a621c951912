/**
 * The demo generator's builder: plans every person's sessions in one pass (counting their events
 * without building them), then builds the sessions in start order and merges their events into
 * one time-ordered stream through a min-heap. See ../demo.ts for the data set and its guarantees.
 */
import { Faker, base, en } from '@faker-js/faker';
import { Seeds } from './random.js';
import { newPerson, session, type DemoEventRow, type DemoPerson } from './sessions.js';

/** Options of `generateDemoEvents`. */
export interface DemoOptions {
  /** number of events to produce (a non-negative integer) */
  count: number;
  /** any integer; the same seed (with the same `now` and `days`) gives the same rows */
  seed: number;
  /** the end of the period; no event is later than it. Default: the current time */
  now?: Date | undefined;
  /** length of the period in days, ending at `now` (positive integer, default 30) */
  days?: number | undefined;
}

const DAY_MS = 86_400_000;

/** A session decided by the planning pass, replayed by the output pass. */
interface PlannedSession {
  startMs: number;
  personIndex: number;
  index: number;
  /** the person as it was when the session began (the session changes it: sign-up, plan) */
  person: DemoPerson;
  /** events of the session to keep (the last planned session may be cut to reach `count`) */
  limit: number;
}

/**
 * The planning pass: persons one after another, each with their sessions (run without building
 * events, to count them) until `count` events are planned; returns the sessions by start time.
 * Memory: one small record per session (about a tenth of the events).
 */
function planSessions(seeds: Seeds, count: number, start: number, end: number): PlannedSession[] {
  const plan: PlannedSession[] = [];
  let planned = 0;
  for (let personIndex = 0; planned < count; personIndex++) {
    const rng = seeds.person(personIndex);
    const person = newPerson(rng);
    const firstSeen = start + rng.next() * (end - start);
    // Anonymous visitors come once or a few times; users keep coming back.
    const sessions = person.willSignUp ? 2 + Math.floor(rng.exp(7)) : 1 + Math.floor(rng.exp(1.2));
    const meanGap = Math.max(60_000, (end - firstSeen) / sessions);
    let sessionStart = firstSeen;
    for (let index = 0; index < sessions && planned < count; index++) {
      if (index > 0) sessionStart += 5 * 60_000 + rng.exp(meanGap);
      // Fewer sessions at night (UTC, where most of the traffic is): move most of them to the day.
      const hour = new Date(sessionStart).getUTCHours();
      if (hour < 6 && rng.chance(0.6) && sessionStart + 8 * 3_600_000 < end) sessionStart += 8 * 3_600_000;
      if (sessionStart >= end) break;
      const before: DemoPerson = { ...person };
      const { count: n } = session(seeds.session(personIndex, index), undefined, person, sessionStart, end, index, 0);
      if (n === 0) continue;
      const limit = Math.min(n, count - planned);
      plan.push({ startMs: Math.floor(sessionStart), personIndex, index, person: before, limit });
      planned += limit;
    }
  }
  return plan.sort((a, b) => a.startMs - b.startMs || a.personIndex - b.personIndex || a.index - b.index);
}

/** A binary min-heap of events by (time, sequence): the events of the sessions still open. */
class EventHeap {
  private readonly items: { ms: number; seq: number; row: DemoEventRow }[] = [];

  get size(): number {
    return this.items.length;
  }

  peekMs(): number {
    return this.items[0]!.ms;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!;
    const b = this.items[j]!;
    return a.ms < b.ms || (a.ms === b.ms && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = t;
  }

  push(ms: number, seq: number, row: DemoEventRow): void {
    this.items.push({ ms, seq, row });
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): DemoEventRow {
    const top = this.items[0]!;
    const last = this.items.pop()!;
    if (this.items.length) {
      this.items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.items.length && this.less(l, m)) m = l;
        if (r < this.items.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top.row;
  }
}

/**
 * Yields `count` Hedgebox events (see module doc) in time order (ties in a fixed order). Two
 * passes: the first plans every person's sessions (counting their events without building them),
 * the second builds the sessions in start order and merges their events; only the sessions open
 * at a time are in memory. Timestamps lie in `[now - days, now]`. Throws RangeError when `count`
 * is not a non-negative integer, `days` not a positive integer, `seed` not a finite number or
 * `now` not a valid date.
 */
export function* generateDemoEvents(opts: DemoOptions): Generator<DemoEventRow, void, undefined> {
  const { count, seed } = opts;
  const days = opts.days ?? 30;
  const now = opts.now ?? new Date();
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  if (Number.isNaN(now.getTime())) throw new RangeError('now must be a valid date');

  const seeds = new Seeds(seed);
  const faker = new Faker({ locale: [en, base] });
  const end = now.getTime();
  const start = end - days * DAY_MS;
  const plan = planSessions(seeds, count, start, end);
  const heap = new EventHeap();
  let seq = 0;
  for (const planned of plan) {
    while (heap.size && heap.peekMs() < planned.startMs) yield heap.pop();
    const { events } = session(
      seeds.session(planned.personIndex, planned.index),
      faker,
      { ...planned.person },
      planned.startMs,
      end,
      planned.index,
      seeds.faker(planned.personIndex),
    );
    for (let i = 0; i < planned.limit && i < events.length; i++) {
      const row = events[i]!;
      heap.push(Date.parse(row.timestamp), seq++, row);
    }
  }
  while (heap.size) yield heap.pop();
}
