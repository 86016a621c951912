/**
 * Monthly partitions of `events` on PostgreSQL (migration 0008 makes the table partitioned).
 *
 * `events` is partitioned by range of `timestamp` (fixed-width ISO 8601 UTC text, collation "C",
 * so text bounds compare byte-wise and chronologically): one partition a month, named
 * `events_pYYYY_MM`, holding `'YYYY-MM' <= timestamp < 'YYYY-MM+1'` (the bound `'2024-11'` sorts
 * before every `'2024-11-…'` timestamp), and a default partition `events_default` for every
 * timestamp no month partition covers (an event from years ago, or from a clock far ahead).
 * Queries bounded in time read only the partitions that can hold their rows (partition pruning);
 * answers never depend on where a row is.
 *
 * New months are created ahead by `ensureEventPartitions`, which the server runs at start and
 * about daily (server/main.ts); the migration creates the months already holding events and a
 * few ahead. A month that is missing when its events arrive is not an error: they go to the
 * default partition, and stay there (PostgreSQL then refuses to create that month's partition,
 * which `ensureEventPartitions` reports and skips).
 *
 * SQLite has no partitions: everything here is a no-op there.
 */
import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/** Months ahead of the current one that `ensureEventPartitions` keeps created (the server's default). */
export const PARTITION_MONTHS_AHEAD = 3;

/** How often the server runs `ensureEventPartitions`, ms (a day). */
export const PARTITION_CHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The default partition of `events`: rows of any month without its own partition. */
export const DEFAULT_EVENTS_PARTITION = 'events_default';

/** A month as `{ year, month }`, month 1–12. */
export interface Month {
  year: number;
  month: number;
}

/** The UTC month of `date`. */
export function monthOf(date: Date): Month {
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
}

/** `m` moved by `n` months (negative: back). */
export function addMonths(m: Month, n: number): Month {
  const index = m.year * 12 + (m.month - 1) + n;
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
}

/** Months from `a` to `b`, both included, in order (empty when `b` is before `a`). */
export function monthRange(a: Month, b: Month): Month[] {
  const out: Month[] = [];
  for (let m = a; m.year * 12 + m.month <= b.year * 12 + b.month; m = addMonths(m, 1)) out.push(m);
  return out;
}

/** `'2024-11'`: the month's lower bound, and the prefix of every timestamp in it. */
export function monthKey(m: Month): string {
  return `${String(m.year).padStart(4, '0')}-${String(m.month).padStart(2, '0')}`;
}

/** `events_p2024_11`: the partition of a month. */
export function partitionName(m: Month): string {
  return `events_p${monthKey(m).replace('-', '_')}`;
}

/**
 * Creates the partition of month `m` unless it exists (`create table if not exists … partition of
 * events for values from ('YYYY-MM') to ('YYYY-MM+1')`). The new partition gets every index and
 * constraint of `events` (PostgreSQL copies the partitioned indexes). Throws PostgreSQL's error,
 * e.g. SQLSTATE 23514 when the default partition holds rows of that month.
 */
export async function createMonthPartition(db: Kysely<unknown>, m: Month): Promise<void> {
  const from = monthKey(m);
  const to = monthKey(addMonths(m, 1));
  await sql`create table if not exists ${sql.table(partitionName(m))} partition of events for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(
    db,
  );
}

/** What `ensureEventPartitions` did. */
export interface EnsurePartitionsResult {
  /** partitions created by this call, e.g. `['events_p2025_03']` */
  created: string[];
  /**
   * months PostgreSQL refused, with its message (the default partition already holds rows of
   * that month: they stay there, and the answers are the same)
   */
  refused: { partition: string; reason: string }[];
}

/** The advisory lock that serializes `ensureEventPartitions` across server processes (any constant). */
const PARTITIONS_LOCK = 0x65766e74;

/** SQLSTATE 23514 check_violation: the default partition holds rows the new partition would take. */
function isCheckViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23514';
}

/** Whether `events` is a partitioned table in the connection's schema (PostgreSQL). */
async function eventsIsPartitioned(db: Kysely<unknown>): Promise<boolean> {
  const r = await sql<{ n: number }>`select count(*)::int as n from pg_partitioned_table where partrelid = to_regclass('events')`.execute(
    db,
  );
  return (r.rows[0]?.n ?? 0) > 0;
}

/**
 * Creates the missing monthly partitions of `events` from the month of `now` (UTC) through
 * `monthsAhead` months after it, each in its own short transaction under an advisory lock (so
 * that several server processes do not race). A month whose rows are already in the default
 * partition is refused by PostgreSQL; it is reported in `refused` and skipped (its rows stay in
 * the default partition). Creating a partition takes a brief exclusive lock on `events` and scans
 * the default partition. A no-op on SQLite, and on PostgreSQL when `events` is not partitioned
 * (before migration 0008). Throws other errors of the store (connection, lock timeout).
 */
export async function ensureEventPartitions<DB>(
  store: Kysely<DB>,
  now: Date,
  monthsAhead: number = PARTITION_MONTHS_AHEAD,
): Promise<EnsurePartitionsResult> {
  const db = store as unknown as Kysely<unknown>;
  const result: EnsurePartitionsResult = { created: [], refused: [] };
  if (dialectOf(db) !== 'postgres' || !(await eventsIsPartitioned(db))) return result;
  const first = monthOf(now);
  const wanted = monthRange(first, addMonths(first, monthsAhead));
  const existing = await sql<{
    name: string;
  }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass('events')`.execute(
    db,
  );
  const have = new Set(existing.rows.map((r) => r.name));
  for (const m of wanted) {
    const name = partitionName(m);
    if (have.has(name)) continue;
    try {
      await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${PARTITIONS_LOCK})`.execute(trx);
        const there = await sql<{ n: number }>`select count(*)::int as n from pg_class where oid = to_regclass(${name})`.execute(trx);
        if ((there.rows[0]?.n ?? 0) > 0) return;
        await createMonthPartition(trx, m);
        result.created.push(name);
      });
    } catch (err) {
      if (!isCheckViolation(err)) throw err;
      result.refused.push({ partition: name, reason: (err as Error).message });
    }
  }
  return result;
}

/** Where `keepEventPartitions` reports (a pino logger fits). */
export interface PartitionsLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** A running `keepEventPartitions`. */
export interface PartitionKeeper {
  /** settles when the first run (at start) is done; never rejects (failures are logged) */
  first: Promise<void>;
  /** stops the timer and waits for a run in progress; never rejects */
  stop(): Promise<void>;
}

/**
 * Runs `ensureEventPartitions` (the current month and `PARTITION_MONTHS_AHEAD` after it) now and
 * then every `intervalMs` (default a day) on an unref'd timer, until `stop`. Partitions created
 * are logged at info; months refused (rows already in the default partition) and failures (the
 * store unreachable, a lock timeout: the next run tries again, and a month is created months
 * before it is needed) at warn. On SQLite nothing runs and no timer is set.
 */
export function keepEventPartitions<DB>(
  store: Kysely<DB>,
  log: PartitionsLog,
  intervalMs: number = PARTITION_CHECK_INTERVAL_MS,
): PartitionKeeper {
  if (dialectOf(store) !== 'postgres') return { first: Promise.resolve(), stop: () => Promise.resolve() };
  let running: Promise<void> = Promise.resolve();
  const run = (): Promise<void> => {
    running = ensureEventPartitions(store, new Date()).then(
      (r) => {
        if (r.created.length) log.info({ partitions: r.created }, 'created monthly partitions of events');
        for (const refused of r.refused)
          log.warn(refused, 'a month of events stays in the default partition (it held rows of that month already)');
      },
      (err: unknown) =>
        log.warn(
          { err: { message: (err as Error).message } },
          'could not create the monthly partitions of events; trying again at the next check',
        ),
    );
    return running;
  };
  const first = run();
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    first,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
