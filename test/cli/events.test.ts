/**
 * `envapi import events` and `envapi demo --output` as a user runs them (`node bin/envapi.js`) on a
 * fresh store (test/helpers/cli.ts): the example file the README names imports with progress lines
 * on stderr (no terminal control sequences when stderr is not a terminal) and its summary on stdout,
 * idempotently; `demo --output` writes that same file from the README's command; `events
 * materialize`, `events materialized` and `events dematerialize` add, list and drop a column,
 * refusing a name no column can hold before adding any.
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

  it(`import events ${EXAMPLE} prints progress lines on stderr when it is not a terminal, and the summary on stdout`, async () => {
    const r = await ok(['import', 'events', EXAMPLE, '--project', '1'], store);
    expect(r.stdout).toMatch(/^Imported examples\/hedgebox-events\.jsonl into project 1: 200 rows read, 200 inserted, 0 skipped\.$/m);
    expect(r.stderr).toMatch(/^Checking {2}200 rows \| \d+s$/m);
    expect(r.stderr).toMatch(/^Importing 100% \| 200\/200 events \| \d+s elapsed, (\d+s|\?) left$/m);
    // PostgreSQL: the vacuum after the last batch says so; SQLite has none
    if (usesPostgres()) expect(r.stderr).toMatch(/^Vacuuming the tables written \(PostgreSQL VACUUM ANALYZE: statistics, index-only reads\) \| \d+s$/m);
    else expect(r.stderr).not.toContain('Vacuuming');
    expect(r.stderr).not.toContain('\u001b['); // no terminal control sequences in a log
    const json = await ok(['import', 'events', EXAMPLE, '--project', '1', '--json'], store);
    expect(JSON.parse(json.stdout)).toMatchObject({ rows_read: 200, inserted: 0, skipped: 200 });
    expect(json.stderr).not.toMatch(/Importing|Checking/);
  }, T);

  it(`demo --output writes the events as JSON Lines; ${EXAMPLE} is the file its README command gives`, async () => {
    const file = path.join(store.dir, 'demo.jsonl');
    const r = await ok(['demo', '--events', '200', '--seed', '42', '--now', '2026-01-15T12:00:00Z', '--days', '7', '--output', file]);
    expect(r.stdout).toMatch(/^Wrote 200 events to /);
    expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(path.join(ROOT, EXAMPLE), 'utf8'));
    const refused = await cli(['demo', '--events', '5']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--project ID\), or a file to write \(--output FILE\)/);
  }, T);
});

describe('events materialize, materialized, dematerialize', () => {
  let store: TestStoreLocation;
  beforeAll(async () => {
    store = await newStore();
    await ok(['bootstrap'], store);
    await ok(['import', 'events', EXAMPLE, '--project', '1'], store);
  }, T);

  it('adds, lists and drops columns; a name no column can hold is refused before any is added', async () => {
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
  }, 3 * T);
});
