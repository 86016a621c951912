/**
 * `envapi import events` and `envapi demo --output` as a user runs them (`node bin/envapi.js`) on a
 * fresh store (test/helpers/cli.ts): the example file the README names imports with progress lines
 * on stderr (no terminal control sequences when stderr is not a terminal) and its summary on stdout,
 * idempotently; `demo --output` writes that same file from the README's command; progress lines,
 * stderr piped, never repeat a count within the 5 s between two lines; a project that does not
 * exist is refused with what to do (on a store never started: `npm start` or `envapi bootstrap`);
 * `events materialize`, `events materialized` and `events dematerialize` add, list and drop a
 * column, refusing a name no column can hold before adding any.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliJson, EXAMPLE, newStore, ok, T, useCliProcesses } from '../helpers/cli.js';
import { usesPostgres } from '../helpers/pg.js';
import { ROOT } from '../helpers/process.js';
import type { TestStoreLocation } from '../helpers/store.js';

useCliProcesses();

describe('events: the example file, progress lines, demo --output', () => {
  let store: TestStoreLocation;
  beforeAll(async () => {
    store = await newStore();
    await ok(['bootstrap'], store);
  }, T);

  it(
    `import events ${EXAMPLE} prints progress lines on stderr when it is not a terminal, and the summary on stdout`,
    async () => {
      const r = await ok(['import', 'events', EXAMPLE, '--project', '1'], store);
      expect(r.stdout).toMatch(/^Imported examples\/hedgebox-events\.jsonl into project 1: 200 rows read, 200 inserted, 0 skipped\.$/m);
      expect(r.stderr).toMatch(/^Checking {2}200 rows \| \d+s$/m);
      expect(r.stderr).toMatch(/^Importing 100% \| 200\/200 events \| \d+s elapsed, (\d+s|\?) left$/m);
      // PostgreSQL: the vacuum after the last batch says so; SQLite has none
      if (usesPostgres())
        expect(r.stderr).toMatch(/^Vacuuming the tables written \(PostgreSQL VACUUM ANALYZE: statistics, index-only reads\) \| \d+s$/m);
      else expect(r.stderr).not.toContain('Vacuuming');
      expect(r.stderr).not.toContain('\u001b['); // no terminal control sequences in a log
      const json = await ok(['import', 'events', EXAMPLE, '--project', '1', '--json'], store);
      expect(JSON.parse(json.stdout)).toMatchObject({ rows_read: 200, inserted: 0, skipped: 200 });
      expect(json.stderr).not.toMatch(/Importing|Checking/);
    },
    T,
  );

  it(
    `demo --output writes the events as JSON Lines; ${EXAMPLE} is the file its README command gives`,
    async () => {
      const file = path.join(store.dir, 'demo.jsonl');
      const r = await ok(['demo', '--events', '200', '--seed', '42', '--now', '2026-01-15T12:00:00Z', '--days', '7', '--output', file]);
      expect(r.stdout).toMatch(/^Wrote 200 events to /);
      expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(path.join(ROOT, EXAMPLE), 'utf8'));
      const refused = await cli(['demo', '--events', '5']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--project ID\), or a file to write \(--output FILE\)/);
    },
    T,
  );

  /** One progress line: its phase, the count it says (none for Vacuuming) and its elapsed seconds. */
  interface ProgressLine {
    line: string;
    phase: string;
    count: number | undefined;
    seconds: number;
  }
  /** The progress lines of `stderr` (PROGRESS_LINE_EVERY_MS apart when stderr is not a terminal, server/cli/progress.ts). */
  function progressLines(stderr: string): ProgressLine[] {
    const lines = stderr.split('\n').filter((l) => /^(Checking|Importing|Writing|Vacuuming) /.test(l));
    return lines.map((line) => {
      const time = /\| (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?: elapsed|$)/.exec(line);
      expect(time, line).not.toBeNull();
      const [, h = '0', m = '0', sec = '0'] = time!;
      const count = /^Checking {2}(\d+) rows/.exec(line)?.[1] ?? /^(?:Importing|Writing) (?:\d+% \| )?(\d+)/.exec(line)?.[1];
      return {
        line,
        phase: line.split(' ')[0]!,
        count: count === undefined ? undefined : Number(count),
        seconds: Number(h) * 3600 + Number(m) * 60 + Number(sec),
      };
    });
  }
  /**
   * What holds whatever the machine's speed: within a phase, each line says a larger count than
   * the one before, or the same count at least 5 s later (a long batch: a line every 5 s).
   */
  function expectNoRepeatedProgress(stderr: string): void {
    const lines = progressLines(stderr);
    expect(lines.length, stderr).toBeGreaterThan(0);
    for (let i = 1; i < lines.length; i++) {
      const [a, b] = [lines[i - 1]!, lines[i]!];
      expect(b.line, stderr).not.toBe(a.line);
      if (a.phase !== b.phase) continue;
      if (b.count === a.count) expect(b.seconds - a.seconds, `the same count twice within 5 s:\n${stderr}`).toBeGreaterThanOrEqual(5);
      else expect(b.count!, stderr).toBeGreaterThan(a.count!);
    }
  }

  it(
    'with stderr piped, no progress line repeats a count within 5 s: import events, demo, demo --output',
    async () => {
      const project = await cliJson<{ id: number }>(store, ['projects', 'create', '--name', 'Progress']);
      const imported = await ok(['import', 'events', EXAMPLE, '--project', String(project.id)], store);
      expect(progressLines(imported.stderr).map((l) => l.phase)).toEqual(expect.arrayContaining(['Checking', 'Importing']));
      expectNoRepeatedProgress(imported.stderr);
      const demo = await ok(['demo', '--project', String(project.id), '--events', '3000', '--batch-size', '250', '--seed', '1'], store);
      expectNoRepeatedProgress(demo.stderr);
      expect(demo.stderr).toMatch(/^Importing 100% \| 3000\/3000 events \| \d+s elapsed, 0s left$/m);
      const written = await ok(['demo', '--events', '3000', '--seed', '1', '--output', path.join(store.dir, 'progress.jsonl')]);
      expectNoRepeatedProgress(written.stderr);
      expect(written.stderr).toMatch(/^Writing 100% \| 3000\/3000 events/m);
    },
    T,
  );
});

describe('a project that does not exist', () => {
  it(
    'on a store never started: says it has no projects yet and names npm start and envapi bootstrap (import events, demo)',
    async () => {
      const store = await newStore();
      const message =
        'envapi: Project 1 does not exist: this store has no projects yet. Start the server once (npm start) or run `envapi bootstrap` to create the default organization and project 1.';
      for (const args of [
        ['demo', '--project', '1', '--events', '10'],
        ['import', 'events', EXAMPLE, '--project', '1'],
      ]) {
        const r = await cli(args, store);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr.trim()).toBe(message);
      }
      expect(await cliJson<unknown[]>(store, ['projects', 'list'])).toEqual([]);
    },
    T,
  );

  it(
    'on a store with projects: names the ones there are and envapi projects list; a key is not limited to a missing project',
    async () => {
      const store = await newStore();
      await ok(['bootstrap'], store);
      const r = await cli(['import', 'events', EXAMPLE, '--project', '7'], store);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim()).toBe(
        'envapi: Project 7 does not exist. This store has one project: 1 "Default project" (see envapi projects list).',
      );
      const key = await cli(['keys', 'create', '--user', 'admin@envapi.local', '--scopes', 'plugin:read', '--projects', '1,7,8'], store);
      expect(key.code, key.stderr).toBe(1);
      expect(key.stderr).toContain('Projects 7, 8 do not exist. This store has one project: 1 "Default project"');
      expect(key.stdout).not.toMatch(/phx_/);
      expect(await cliJson<unknown[]>(store, ['keys', 'list'])).toHaveLength(1);
    },
    T,
  );
});

describe('events materialize, materialized, dematerialize', () => {
  let store: TestStoreLocation;
  beforeAll(async () => {
    store = await newStore();
    await ok(['bootstrap'], store);
    await ok(['import', 'events', EXAMPLE, '--project', '1'], store);
  }, T);

  it(
    'adds, lists and drops columns; a name no column can hold is refused before any is added',
    async () => {
      const added = await ok(['events', 'materialize', '$browser', 'email', '--person'], store);
      expect(added.stderr).toMatch(/Materializing person property \$browser/);
      const listed = await cliJson<{ kind: string; property: string; column: string }[]>(store, ['events', 'materialized', '--json']);
      expect(listed.map((c) => `${c.kind} ${c.property}`).sort()).toEqual(['person $browser', 'person email']);
      const refused = await cli(['events', 'materialize', '$os', 'a"b', ''], store);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the property "a\\"b" cannot be materialized');
      expect(refused.stderr).toContain('the property name is empty');
      // $os, named first, was not added either
      expect((await cliJson<unknown[]>(store, ['events', 'materialized', '--json'])).length).toBe(2);
      await ok(['events', 'dematerialize', '$browser', '--person'], store);
      const left = await cliJson<{ property: string }[]>(store, ['events', 'materialized', '--json']);
      expect(left.map((c) => c.property)).toEqual(['email']);
    },
    3 * T,
  );
});

const chdb = await import('chdb').then(
  () => true,
  () => false,
);

describe.runIf(chdb && !usesPostgres())('events materialize, materialized, dematerialize on ClickHouse (EVENTS_STORE=clickhouse)', () => {
  const CH = { EVENTS_STORE: 'clickhouse' };
  let store: TestStoreLocation;
  /** `envapi <args>` on ClickHouse, expecting exit 0. */
  async function chOk(args: string[]) {
    const r = await cli(args, store, CH);
    expect(r.code, `envapi ${args.join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
    return r;
  }
  beforeAll(async () => {
    store = await newStore();
    await ok(['bootstrap'], store);
  }, T);

  it(
    "demo --materialize adds the hot properties as PostHog's mat_ columns; a later one is written into the stored parts; list and drop",
    async () => {
      const demo = await chOk(['demo', '--project', '1', '--events', '200', '--seed', '7', '--materialize']);
      expect(demo.stderr).toMatch(/^Materializing event property \$browser:$/m);
      // with the events beside the configuration (EVENTS_STORE=sqlite, also in npm test's ClickHouse pass) the row store's list: none there
      const rows = await cli(['events', 'materialized', '--json'], store, { EVENTS_STORE: 'sqlite' });
      expect(rows.code, rows.stderr).toBe(0);
      expect(JSON.parse(rows.stdout)).toEqual([]);
      const onClickHouse = JSON.parse((await chOk(['events', 'materialized', '--json'])).stdout) as { property: string; column: string }[];
      expect(onClickHouse.map((c) => `${c.property} ${c.column}`)).toEqual([
        '$browser mat_$browser',
        '$current_url mat_$current_url',
        '$device_type mat_$device_type',
        '$os mat_$os',
        '$pathname mat_$pathname',
      ]);
      const added = await chOk(['events', 'materialize', '$lib', 'plan', '--person']);
      expect(added.stderr).toMatch(/^ {2}adding the column… [\d.]+ s$/m);
      expect(added.stderr).toMatch(/^ {2}writing it into every stored part \(MATERIALIZE COLUMN, then INDEX\)… [\d.]+ s$/m);
      expect(added.stdout).toMatch(/^Materialized person {2}\$lib {2}→ person\.pmat_\$lib {2}\(since /m);
      const again = await cli(['events', 'materialize', '$lib', '--person'], store, CH);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('person property $lib is materialized already');
      const refused = await cli(['events', 'materialize', 'a"b'], store, CH);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the property "a\\"b" cannot be materialized');
      await chOk(['events', 'dematerialize', '$browser']);
      const gone = await cli(['events', 'dematerialize', '$browser'], store, CH);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('The event property $browser is not materialized');
      const left = (await chOk(['events', 'materialized'])).stdout;
      expect(left).not.toContain('$browser');
      expect(left).toMatch(/^person {2}plan {2}→ person\.pmat_plan$/m);
    },
    3 * T,
  );
});
