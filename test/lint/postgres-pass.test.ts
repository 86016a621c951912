/**
 * `npm test`'s PostgreSQL pass (scripts/test-postgres.mjs) runs a list of test paths again with
 * TEST_STORE=postgres. A suite left out of that list runs on SQLite alone, and a suite written
 * for PostgreSQL alone (`describe.skipIf(!usesPostgres())`) then never runs at all: that happened
 * to test/storage/partitions.test.ts for a week. This checks that every suite whose store follows
 * TEST_STORE (it calls `usesPostgres()`, starts a test server, or makes a test store) is matched by
 * an entry of the list (vitest's filters match a substring of the path), except the suites the
 * script names as left out on purpose.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(ROOT, 'scripts', 'test-postgres.mjs');

/** Suites the script's header says are not run again, and why (kept in step with it). */
const LEFT_OUT = ['test/multiprocess.test.ts', 'test/bootstrap-race.test.ts', 'test/redis-down.test.ts'];

/** What makes a suite's store follow TEST_STORE (the helpers of test/helpers/). */
const FOLLOWS_TEST_STORE = /\busesPostgres\(|\bstartTestServer\(|\bcreateTestStoreLocation\(|\bnewStore\(|\buseCliProcesses\(/;

/** The entries of `const dirs = [...]` in scripts/test-postgres.mjs. */
function passEntries(): string[] {
  const text = fs.readFileSync(SCRIPT, 'utf8');
  const list = /const dirs = \[([\s\S]*?)\];/.exec(text);
  if (!list) throw new Error(`no \`const dirs = [...]\` in ${SCRIPT}`);
  return [...list[1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** Every `*.test.ts` under test/, as `test/…` paths. */
function testFiles(dir = path.join(ROOT, 'test')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(full);
    return e.name.endsWith('.test.ts') ? [path.relative(ROOT, full).split(path.sep).join('/')] : [];
  });
}

describe("npm test's PostgreSQL pass", () => {
  it('runs every suite whose store follows TEST_STORE, except those it leaves out on purpose', () => {
    const entries = passEntries();
    expect(entries.length).toBeGreaterThan(5);
    const header = fs.readFileSync(SCRIPT, 'utf8');
    for (const file of LEFT_OUT) expect(header, `the script's header names ${file} as left out`).toContain(file);
    const self = path
      .relative(ROOT, fileURLToPath(import.meta.url))
      .split(path.sep)
      .join('/');
    const suites = testFiles().filter((f) => f !== self && FOLLOWS_TEST_STORE.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(suites).toContain('test/storage/partitions.test.ts');
    const missed = suites.filter((f) => !LEFT_OUT.includes(f) && !entries.some((e) => f.includes(e)));
    expect(missed, 'add these to `dirs` in scripts/test-postgres.mjs, or name them as left out there and here').toEqual([]);
  });
});
