/**
 * Which tables of an SQLite store may have changed, for caches kept while what they read is
 * unchanged (`Store.changeCounter`, `UnchangedStoreCache`; each cache is made from a load
 * registered in server/storage/cached-loads.ts, whose `reads` list is the one it asks about).
 *
 * Every writing statement prepared through the store (better-sqlite3's `readonly` false) is told
 * to `willWrite` before it runs, with its SQL text. When the text names its target table the way
 * Kysely writes it (`insert into "t"`, `update "t"`, `delete from "t"`, with `or …` and `replace`
 * variants), the statement counts for that table and for every table a foreign-key action
 * (`ON DELETE/UPDATE CASCADE`, `SET NULL`, `SET DEFAULT`) can reach from it, transitively (a
 * deleted team deletes its explicit memberships). Anything else counts as a change of every table:
 * a commit by another connection or process (`changedAnything`, from `PRAGMA data_version`), DDL,
 * a statement whose target cannot be read off its text, and a write reaching a table that has a
 * trigger. So a counter can only stay still when nothing it depends on was written: a revoked key or
 * a changed membership still moves the key and access caches' counters before the next request.
 *
 * The foreign keys and triggers are read from `sqlite_master` and `pragma_foreign_key_list` once
 * per schema version (`PRAGMA schema_version`, read on each writing statement, ~2 µs), so a
 * migration, run here or by another process, is taken into account by the next write.
 */
import type SQLite from 'better-sqlite3';

/** `insert into "t"`, `insert or replace into "t"`, `replace into "t"`, `update "t"`, `update or … "t"`, `delete from "t"`; not `"schema"."t"`. */
const WRITE_TARGET =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"((?:[^"]|"")+)"(?!\s*\.)/i;

/** Foreign-key actions that change the referencing table when the referenced row changes. */
const ACTIONS_THAT_WRITE = new Set(['CASCADE', 'SET NULL', 'SET DEFAULT']);

/** At most this many SQL texts keep their computed reach (all dropped when full). */
const REACH_MAX = 2_000;

/** The schema as far as the reach of a write is concerned. */
interface SchemaGraph {
  tables: Set<string>;
  /** Tables with at least one trigger. */
  triggered: Set<string>;
  /** Referenced table → tables whose foreign keys act when it changes. */
  actingChildren: Map<string, string[]>;
}

/** Change counts of one SQLite connection, per table (see the module's docs). */
export class ChangeTracker {
  /** Moves on every change whose tables are not known (see the module's docs). */
  private anything = 0;
  /** Moves on every change, whatever it is. */
  private total = 0;
  private readonly byTable = new Map<string, number>();
  /** Tables a write may change, by SQL text; null when not known. */
  private readonly reach = new Map<string, readonly string[] | null>();
  /** `counter(tables)` by list, with the `total` it was summed at. */
  private readonly sums = new WeakMap<readonly string[], { total: number; sum: number }>();
  private graph: SchemaGraph | undefined;
  private schemaVersion: number | undefined;
  private readonly schemaVersionStatement: SQLite.Statement;

  constructor(private readonly sqlite: SQLite.Database) {
    this.schemaVersionStatement = sqlite.prepare('PRAGMA schema_version').pluck();
  }

  /** Records a change that may have touched any table (another connection's commit, say). */
  changedAnything(): void {
    this.anything += 1;
    this.total += 1;
  }

  /** Records that the writing statement `sql` is about to run on this connection. */
  willWrite(sql: string): void {
    const version = this.schemaVersionStatement.get() as number;
    if (version !== this.schemaVersion) {
      this.schemaVersion = version;
      this.reach.clear();
      this.graph = undefined;
    }
    let tables = this.reach.get(sql);
    if (tables === undefined) {
      tables = this.reachOf(sql);
      if (this.reach.size >= REACH_MAX) this.reach.clear();
      this.reach.set(sql, tables);
    }
    if (tables === null) return this.changedAnything();
    for (const t of tables) this.byTable.set(t, (this.byTable.get(t) ?? 0) + 1);
    this.total += 1;
  }

  /**
   * A number that moves whenever any of `tables` (names in any case) may have changed, and on every
   * change when `tables` is undefined (the server's caches always pass their registered load's
   * `reads`, the same array each time; tests use both). Equal numbers mean none of them was written in between.
   */
  counter(tables?: readonly string[]): number {
    if (tables === undefined) return this.total;
    // every request asks for the same few lists: the sum is kept per list until anything changes
    const kept = this.sums.get(tables);
    if (kept !== undefined && kept.total === this.total) return kept.sum;
    let sum = this.anything;
    for (const t of tables) sum += this.byTable.get(t.toLowerCase()) ?? 0;
    this.sums.set(tables, { total: this.total, sum });
    return sum;
  }

  /** The tables `sql` may change: its target and what foreign-key actions reach; null when unknown. */
  private reachOf(sql: string): readonly string[] | null {
    const m = WRITE_TARGET.exec(sql);
    if (!m) return null;
    // SQLite's table names are case-insensitive: every name here is kept lower-cased
    const target = m[1]!.replaceAll('""', '"').toLowerCase();
    const graph = (this.graph ??= this.readGraph());
    if (!graph.tables.has(target)) return null;
    const reached = new Set([target]);
    for (const t of reached) {
      if (graph.triggered.has(t)) return null;
      for (const child of graph.actingChildren.get(t) ?? []) reached.add(child);
    }
    return [...reached];
  }

  private readGraph(): SchemaGraph {
    const objects = this.sqlite.prepare(`select type, name, tbl_name from sqlite_master where type in ('table', 'trigger')`).all() as {
      type: string;
      name: string;
      tbl_name: string;
    }[];
    const tables = new Set(objects.filter((o) => o.type === 'table').map((o) => o.name));
    const triggered = new Set(objects.filter((o) => o.type === 'trigger').map((o) => o.tbl_name.toLowerCase()));
    const actingChildren = new Map<string, string[]>();
    const keysOf = this.sqlite.prepare('select "table" as parent, on_update, on_delete from pragma_foreign_key_list(?)');
    for (const child of tables) {
      for (const fk of keysOf.all(child) as { parent: string; on_update: string; on_delete: string }[]) {
        if (!ACTIONS_THAT_WRITE.has(fk.on_update) && !ACTIONS_THAT_WRITE.has(fk.on_delete)) continue;
        const parent = fk.parent.toLowerCase();
        const list = actingChildren.get(parent) ?? [];
        list.push(child.toLowerCase());
        actingChildren.set(parent, list);
      }
    }
    return { tables: new Set([...tables].map((t) => t.toLowerCase())), triggered, actingChildren };
  }
}
