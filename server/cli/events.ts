/**
 * `envapi import events` and `envapi demo`: events into a project through the import pipeline
 * (server/ingest/import.ts), from a PostHog export file or from the Hedgebox demo generator
 * (server/ingest/demo.ts); `demo --output FILE` writes the generated events as a JSON Lines export
 * file instead (examples/hedgebox-events.jsonl was made so).
 *
 * Progress goes to stderr (not with `--json`; progress.ts): on a terminal a bar redrawn in place;
 * otherwise (a log, a pipe, CI) the same line without the bar, printed when a phase starts, every
 * 5 s while it runs and when it ends, never twice for the same count within 5 s. A line also says
 * when a batch waits for the store's write lock. The project of `--project` must exist: else exit 1
 * with what to do (shared.ts `requireProjects`: on a store never started, `npm start` or
 * `envapi bootstrap`; otherwise the projects there are).
 */
import fs from 'node:fs';
import { once } from 'node:events';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseIsoTimestamp } from '../storage/timestamps.js';
import type { BatchSink, ImportFormat, ImportSummary, LockWaitCallback, ProgressCallback } from '../ingest/import.js';
import type { Store } from '../storage/db.js';
import { CliError, clickhouseHolder, out, parseInteger, parsePositive, requireProjects, withStore } from './shared.js';
import { DEMO_HOT_PROPERTIES, materializeAll } from './materialize.js';
import { importProgress, type ProgressReporter } from './progress.js';

/**
 * `import events` and `demo`: a batch gives up on the store's write lock after this many ms and is
 * retried at once, so that a line can say the import is waiting (the server's bound is 10 s).
 */
const IMPORT_LOCK_WAIT_MS = 2_000;
/** While a batch keeps waiting, one line every this many ms. */
const LOCK_WAIT_LINE_EVERY_MS = 30_000;

/** A count with thousands separators, e.g. `12,345`. */
const n = (x: number): string => x.toLocaleString('en-US');

/**
 * A stderr line when a batch has waited `IMPORT_LOCK_WAIT_MS` for the store's write lock (another
 * writer kept it), then one every `LOCK_WAIT_LINE_EVERY_MS` while it keeps waiting; the batch is
 * retried until it is written.
 */
function lockWaitLines(): LockWaitCallback {
  let batch = 0;
  let printedAt = -Infinity;
  return (w) => {
    if (w.from_row !== batch) {
      batch = w.from_row;
      printedAt = -Infinity;
    }
    if (w.waited_ms - printedAt < LOCK_WAIT_LINE_EVERY_MS) return;
    printedAt = w.waited_ms;
    console.error(
      `envapi: the store is locked by another writer (a server or another import); waiting to write rows ${n(w.from_row)}–${n(w.to_row)} ` +
        `(${(w.waited_ms / 1000).toFixed(0)} s so far); the import goes on as soon as it can`,
    );
  };
}

/** The human summary of an import: counts, skip reasons, persons created, duration and rate. */
function summaryLines(s: ImportSummary, projectId: number): string[] {
  const reasons = Object.entries(s.skipped_reasons).map(([reason, count]) => `${reason}: ${n(count)}`);
  if (s.sent_to)
    return [
      `Sent ${s.source} to project ${projectId} through the server at ${s.sent_to}: ${n(s.rows_read)} rows read and accepted (the server skips uuids it stores already).`,
      `${(s.duration_ms / 1000).toFixed(1)} s, ${n(s.events_per_second)} events/s.`,
    ];
  return [
    `Imported ${s.source} into project ${projectId}: ${n(s.rows_read)} rows read, ${n(s.inserted)} inserted, ${n(s.skipped)} skipped${reasons.length ? ` (${reasons.join(', ')})` : ''}.`,
    `${n(s.persons_created)} persons created; ${(s.duration_ms / 1000).toFixed(1)} s, ${n(s.events_per_second)} events/s.`,
  ];
}

/** `--batch-size`: rows per transaction, 1 to 100,000. */
function parseBatchSize(value: string): number {
  const size = parseInteger(value);
  if (size < 1 || size > 100_000) throw new InvalidArgumentError('Expected 1 to 100000.');
  return size;
}

/** The hooks an import runs with (progress lines, lock-wait lines, and where the batches go). */
interface ImportHooks {
  onProgress: ProgressCallback | undefined;
  onLockWait: LockWaitCallback;
  /** set when a running server holds the embedded ClickHouse store: the batches go to it */
  sink: BatchSink | undefined;
}

/**
 * Runs one import into project `projectId` on the store of the global options (its write-lock
 * wait bounded by `IMPORT_LOCK_WAIT_MS`), with progress lines unless `json`, then hands the
 * summary to `report`. When a running server holds the embedded ClickHouse events store (chDB
 * lets one process hold it), the rows go to that server's `/batch/` with `historical_migration`
 * instead (../ingest/import/http-sink.ts), said on stderr; `before` (demo's `--materialize`) then
 * cannot run and is refused. CliError (`requireProjects`) when the project does not exist, before
 * `before` and the import run.
 */
async function runImport(
  program: Command,
  projectId: number,
  json: boolean,
  run: (store: Store, hooks: ImportHooks) => Promise<ImportSummary>,
  report: (summary: ImportSummary) => void,
  before?: (store: Store) => Promise<void>,
): Promise<void> {
  const holder = await clickhouseHolder(program);
  if (holder && before)
    throw new CliError(
      `The server (pid ${holder.pid}, ${holder.url}) holds the embedded ClickHouse events store: stop it to materialize columns, or import without --materialize.`,
    );
  await withStore(
    program,
    async (store) => {
      await requireProjects(store, [projectId]);
      let sink: BatchSink | undefined;
      if (holder) {
        const { httpBatchSink } = await import('../ingest/import/http-sink.js');
        const team = await store.db.selectFrom('teams').select('api_token').where('id', '=', projectId).executeTakeFirstOrThrow();
        sink = httpBatchSink(holder.url, team.api_token);
        if (!json)
          console.error(
            `envapi: the server (pid ${holder.pid}) holds the embedded ClickHouse events store: sending the events to it at ${holder.url} (/batch/, historical_migration)`,
          );
      }
      await before?.(store);
      const progress = importProgress(json);
      let summary: ImportSummary;
      try {
        summary = await run(store, { onProgress: progress.onProgress, onLockWait: lockWaitLines(), sink });
      } finally {
        progress.stop();
      }
      report(summary);
    },
    IMPORT_LOCK_WAIT_MS,
    { events: !holder },
  );
}

/** Adds `import` and `demo` to `program`. */
export function registerEventCommands(program: Command): void {
  program
    .command('import')
    .description('import data into a project')
    .command('events')
    .description(
      "import events from a JSON Lines (.jsonl, .ndjson, .json) or CSV (.csv) file in PostHog's export shape " +
        '(event, distinct_id, properties, timestamp, optional uuid, elements_chain, $set, $set_once). The whole file is ' +
        'checked first: a bad line stops the import before anything is written, with FILE:LINE: reason. Rows are then ' +
        'written in batches, each in one transaction; rows whose uuid is stored already are skipped, so importing a ' +
        'file twice inserts nothing twice. Progress goes to stderr: a bar on a terminal, otherwise a line every 5 s.',
    )
    .argument('<file>', 'the file (.gz accepted)')
    .requiredOption('--project <id>', 'project id', parsePositive)
    .addOption(new Option('--format <format>', 'file format (default: from the file name)').choices(['jsonl', 'csv']))
    .option('--batch-size <n>', 'rows per transaction (default 2000; 10000 with the events on ClickHouse, one insert each)', parseBatchSize)
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, o: { project: number; format?: ImportFormat; batchSize?: number; json?: boolean }) => {
      const { importEventsFile } = await import('../ingest/import.js');
      await runImport(
        program,
        o.project,
        !!o.json,
        (store, hooks) => importEventsFile(store, o.project, file, { format: o.format, batchSize: o.batchSize, ...hooks }),
        (summary) => out(!!o.json, { ...summary, project_id: o.project }, () => summaryLines(summary, o.project)),
      );
    });

  program
    .command('demo')
    .description(
      'generate a realistic product-analytics data set (Hedgebox, a file-sharing app: pageviews, autocaptures with ' +
        'elements chains, custom events, identified and anonymous persons, browsers, OS, UTM sources) spread over ' +
        'the last --days days up to --now, and import it into --project through the same path as "import events", ' +
        'or write it to --output as a JSON Lines export file. The same --seed, --now, --days and --events give the ' +
        'same events, uuids included. Progress goes to stderr: a bar on a terminal, otherwise a line every 5 s.',
    )
    .addOption(new Option('--project <id>', 'project id to import into').argParser(parsePositive).conflicts('output'))
    .option('--output <file>', "write the events to this JSON Lines file (PostHog's export shape) instead of importing them")
    .requiredOption('--events <n>', 'number of events', parseInteger)
    .option('--seed <n>', 'random seed (default: a random one, printed in the summary)', parseInteger)
    .option('--days <n>', 'length of the period in days', parsePositive, 30)
    .option('--now <timestamp>', 'end of the period, ISO 8601 (default: now)', (value: string) => {
      const ts = parseIsoTimestamp(value);
      if (!ts) throw new InvalidArgumentError('Expected an ISO 8601 timestamp, e.g. 2025-01-15T12:00:00Z.');
      return new Date(ts.value.slice(0, 23) + 'Z');
    })
    .option('--batch-size <n>', 'rows per transaction (default 2000; 10000 with the events on ClickHouse, one insert each)', parseBatchSize)
    .addOption(
      new Option(
        '--materialize',
        `first materialize the demo's hot event properties (${DEMO_HOT_PROPERTIES.join(', ')}) not materialized yet, as "events materialize" does`,
      ).conflicts('output'),
    )
    .option('--json', 'print the summary as JSON')
    .action(
      async (
        o: {
          project?: number;
          output?: string;
          events: number;
          seed?: number;
          days: number;
          now?: Date;
          batchSize?: number;
          materialize?: boolean;
          json?: boolean;
        },
        cmd: Command,
      ) => {
        // bad usage: commander prints it with the usage hint, exit 2 (index.ts)
        if (o.project === undefined && o.output === undefined)
          cmd.error('error: name the project to import into (--project ID), or a file to write (--output FILE)', {
            exitCode: 2,
            code: 'envapi.usage',
          });
        const seed = o.seed ?? Math.floor(Math.random() * 1_000_000);
        const now = o.now ?? new Date();
        const repeat = `Seed ${seed}, ${o.days} days up to ${now.toISOString()} (repeat with --seed ${seed} --now ${now.toISOString()}).`;
        // the importer and the demo generator (faker's data) load only when these commands run
        const { generateDemoEvents } = await import('../ingest/demo.js');
        const rows = generateDemoEvents({ count: o.events, seed, now, days: o.days });
        if (o.output !== undefined) {
          const written = await writeJsonLines(o.output, rows, o.events, importProgress(!!o.json));
          out(!!o.json, { output: o.output, events: written, seed, now: now.toISOString(), days: o.days }, () => [
            `Wrote ${n(written)} events to ${o.output}.`,
            repeat,
          ]);
          return;
        }
        const project = o.project!;
        const { importEvents } = await import('../ingest/import.js');
        await runImport(
          program,
          project,
          !!o.json,
          (store, hooks) => importEvents(store, project, rows, { source: 'demo', total: o.events, batchSize: o.batchSize, ...hooks }),
          (summary) =>
            out(!!o.json, { ...summary, project_id: project, seed, now: now.toISOString(), days: o.days }, () => [
              ...summaryLines(summary, project),
              repeat,
            ]),
          o.materialize ? async (store) => void (await materializeAll(store, 'event', DEMO_HOT_PROPERTIES, !!o.json)) : undefined,
        );
      },
    );
}

/**
 * Writes `rows` to `file` as JSON Lines (one JSON object per line, UTF-8), reporting progress every
 * 1,000 rows; returns the number written. The file is replaced; on failure it is removed.
 */
async function writeJsonLines(file: string, rows: Iterable<unknown>, total: number, progress: ProgressReporter): Promise<number> {
  const stream = fs.createWriteStream(file);
  let written = 0;
  try {
    progress.onProgress(0, total, 'writing');
    for (const row of rows) {
      if (!stream.write(JSON.stringify(row) + '\n')) await once(stream, 'drain');
      if (++written % 1_000 === 0) progress.onProgress(written, total, 'writing');
    }
    progress.onProgress(written, total, 'writing');
    stream.end();
    await once(stream, 'finish');
  } catch (err) {
    stream.destroy();
    fs.rmSync(file, { force: true });
    throw err;
  } finally {
    progress.stop();
  }
  return written;
}
