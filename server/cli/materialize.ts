/**
 * `envapi events materialize | materialized | dematerialize`: materialized property columns,
 * chosen by an operator as PostHog's are, where the events are (`EVENTS_STORE`): the row store's
 * (server/storage/events/materialized.ts) or ClickHouse's (server/storage/events/clickhouse/
 * materialize.ts), through the dispatch of server/storage/events/index.ts. One step line per step
 * on stderr (not with `--json`), with its time. Row store: the column, the index (which computes
 * the value of every stored row: the long step), the record, for an event property the time index
 * built again with the column (as long again), and on PostgreSQL the vacuum of the rewritten
 * table. ClickHouse: the column, its minmax index, and the backfill of the stored parts (a
 * mutation: the long step).
 */
import type { Command } from 'commander';
import type { Store } from '../storage/db.js';
import type { MaterializedColumn, MaterializedKind, MaterializeStep } from '../storage/events/index.js';
import { CliError, out, withStore } from './shared.js';

/** How long the command waits for SQLite's write lock held by the server or an import, ms. */
const DDL_LOCK_WAIT_MS = 60_000;

/** The demo's hot properties (`envapi demo --materialize`): what its filters and breakdowns read most. */
export const DEMO_HOT_PROPERTIES = ['$browser', '$os', '$current_url', '$pathname', '$device_type'] as const;

const STEP_LINES: Record<MaterializeStep, string> = {
  column: 'adding the column',
  backfill: 'filling it from the property sets (SQLite)',
  index: 'indexing every stored row',
  record: 'recording it',
  'time index': 'adding it to the time index (events_team_time)',
  vacuum: 'vacuuming and analyzing the rewritten table (PostgreSQL)',
};

/** The steps' lines on ClickHouse (server/storage/events/clickhouse/materialize.ts). */
const CLICKHOUSE_STEP_LINES: Partial<Record<MaterializeStep, string>> = {
  column: 'adding the column',
  index: 'adding its minmax index',
  backfill: 'writing it into every stored part (MATERIALIZE COLUMN, then INDEX)',
};

/** A step reporter on stderr: `  <step>… ` then the step's time when the next one starts. */
function stepReporter(quiet: boolean, onClickHouse: boolean): { onStep(step: MaterializeStep): void; done(): void } {
  let started: number | undefined;
  const finish = () => {
    if (started !== undefined) process.stderr.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  };
  return {
    onStep(step) {
      if (quiet) return;
      finish();
      process.stderr.write(`  ${(onClickHouse && CLICKHOUSE_STEP_LINES[step]) || STEP_LINES[step]}… `);
      started = performance.now();
    },
    done() {
      if (!quiet) finish();
      started = undefined;
    },
  };
}

/**
 * Materializes each of `properties` of `kind` not materialized yet (the others are left and
 * named), where the events of `store` are (ClickHouse when the store has its ClickHouse events:
 * `withStore(…, { events: true })`); progress on stderr unless `quiet`. Returns the new columns.
 * Used by `events materialize` and `demo --materialize`.
 */
export async function materializeAll(
  store: Store,
  kind: MaterializedKind,
  properties: readonly string[],
  quiet: boolean,
): Promise<MaterializedColumn[]> {
  const { clickhouseEventsOf, listMaterializedColumns, materializeProperty, MaterializeError, whyNotMaterializable } =
    await import('../storage/events/index.js');
  // every name is checked before any column is added
  const refused = properties.map(whyNotMaterializable).filter((why) => why !== undefined);
  if (refused.length) throw new CliError(refused.join('; '));
  const existing = new Set((await listMaterializedColumns(store)).filter((c) => c.kind === kind).map((c) => c.property));
  const onClickHouse = clickhouseEventsOf(store) !== undefined;
  const added: MaterializedColumn[] = [];
  for (const property of properties) {
    if (existing.has(property)) {
      if (!quiet) process.stderr.write(`${kind} property ${property} is materialized already\n`);
      continue;
    }
    if (!quiet) process.stderr.write(`Materializing ${kind} property ${property}:\n`);
    const steps = stepReporter(quiet, onClickHouse);
    try {
      added.push(await materializeProperty(store, kind, property, steps.onStep));
    } catch (err) {
      if (!quiet) process.stderr.write('\n');
      if (err instanceof MaterializeError) throw new CliError(err.message);
      throw err;
    } finally {
      steps.done();
    }
  }
  return added;
}

/** One column as listed: kind, property, table.column (ClickHouse's person mirror is `person`), and since when when known. */
function columnLine(c: MaterializedColumn, onClickHouse: boolean): string {
  const table = c.kind === 'event' ? 'events' : onClickHouse ? 'person' : 'persons';
  return `${c.kind.padEnd(6)}  ${c.property}  → ${table}.${c.column}${c.createdAt ? `  (since ${c.createdAt})` : ''}`;
}

/** Whether the events of `store` are on ClickHouse. */
async function onClickHouse(store: Store): Promise<boolean> {
  const { clickhouseEventsOf } = await import('../storage/events/index.js');
  return clickhouseEventsOf(store) !== undefined;
}

/** Registers `events materialize | materialized | dematerialize`. */
export function registerMaterializeCommands(program: Command): void {
  const events = program.command('events').description('events administration: materialized property columns');
  events
    .command('materialize')
    .description(
      "copy a property into a real, indexed column (PostHog's materialized columns): the events filters, values and HogQL " +
        'then read the column instead of the JSON, with the same answers. Acts where the events are (EVENTS_STORE). ' +
        'SQLite and PostgreSQL: adds a generated column (SQLite: virtual; PostgreSQL: stored, which rewrites the events ' +
        'table) and an index on (team_id, column, timestamp, uuid) in one transaction; the index computes every stored ' +
        "event's value, so writes wait while it runs (docs/deploy.md). Every write of an event then updates the index " +
        "too: materialize the properties that filters read most. ClickHouse: adds PostHog's nullable mat_<property> " +
        'column (pmat_ on person with --person) with its column_materializer comment and minmax index, then writes it ' +
        'into every stored part (a mutation, waited for; reads and writes go on meanwhile). With embedded chDB, stop the ' +
        'server first: one process holds its data directory (docs/deploy.md, "Materialized property columns").',
    )
    .argument('<property...>', 'property names, e.g. $browser')
    .option('--person', 'a person property (a column of persons, indexed by team_id and column; on ClickHouse of the person mirror)')
    .option('--json', 'print the new columns as JSON')
    .action(async (properties: string[], o: { person?: boolean; json?: boolean }) => {
      const kind: MaterializedKind = o.person ? 'person' : 'event';
      await withStore(
        program,
        async (store) => {
          const added = await materializeAll(store, kind, properties, !!o.json);
          const clickhouse = await onClickHouse(store);
          out(!!o.json, added, () => added.map((c) => `Materialized ${columnLine(c, clickhouse)}`));
        },
        DDL_LOCK_WAIT_MS,
        { events: true },
      );
    });
  events
    .command('materialized')
    .description('list the materialized property columns (where the events are: EVENTS_STORE)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      await withStore(
        program,
        async (store) => {
          const { listMaterializedColumns } = await import('../storage/events/index.js');
          const list = await listMaterializedColumns(store);
          const clickhouse = await onClickHouse(store);
          out(!!o.json, list, () =>
            list.length
              ? list.map((c) => columnLine(c, clickhouse))
              : ['No materialized columns: add one with envapi events materialize PROPERTY'],
          );
        },
        undefined,
        { events: true },
      );
    });
  events
    .command('dematerialize')
    .description(
      'drop the materialized column of a property, with its index (where the events are: EVENTS_STORE); reads take the ' +
        'property out of the JSON again',
    )
    .argument('<property>', 'property name')
    .option('--person', 'a person property')
    .action(async (property: string, o: { person?: boolean }) => {
      const kind: MaterializedKind = o.person ? 'person' : 'event';
      await withStore(
        program,
        async (store) => {
          const { dematerializeProperty, MaterializeError } = await import('../storage/events/index.js');
          let dropped: boolean;
          try {
            dropped = await dematerializeProperty(store, kind, property);
          } catch (err) {
            if (err instanceof MaterializeError) throw new CliError(err.message);
            throw err;
          }
          if (!dropped) throw new CliError(`The ${kind} property ${property} is not materialized (see envapi events materialized)`);
          console.log(`Dematerialized ${kind} property ${property}`);
        },
        DDL_LOCK_WAIT_MS,
        { events: true },
      );
    });
}
