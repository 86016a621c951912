#!/usr/bin/env node
// The PostgreSQL pass of `npm test`: when TEST_DATABASE_URL is set (e.g.
// postgres://postgres@127.0.0.1:5432/test), runs every suite that has a store again with
// TEST_STORE=postgres (the first pass, `vitest run`, stays on SQLite); otherwise says it skipped
// and exits 0. In this pass each test server (test/helpers/server.ts) and each store of the
// suites that drive the real processes or open the store themselves (test/helpers/store.ts:
// import, CLI, crash safety, shutdown, the compiled start, store contention) gets a fresh
// PostgreSQL schema, reached by child processes through DATABASE_URL, and dropped afterwards;
// test/storage holds the suites of PostgreSQL alone (partitions, introspection), skipped in the
// first pass. Not run again: test/domain (no store),
// test/multiprocess.test.ts and test/bootstrap-race.test.ts (on PostgreSQL in the first pass
// already), and test/redis-down.test.ts (about Redis; its store does not matter).
import { spawnSync } from 'node:child_process';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: TEST_DATABASE_URL=postgres://… node scripts/test-postgres.mjs');
  console.log("Runs npm test's PostgreSQL pass (every suite with a store, TEST_STORE=postgres); says it skipped when TEST_DATABASE_URL is not set.");
  process.exit(0);
}
const url = process.env.TEST_DATABASE_URL;
if (!url) {
  console.log('PostgreSQL pass skipped: TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).');
  process.exit(0);
}
const shown = new URL(url);
shown.password = '';
console.log(`PostgreSQL pass on ${shown.toString()}`);
const dirs = [
  'test/server',
  'test/client',
  'test/capture',
  'test/hogql',
  'test/contract',
  'test/fuzz',
  'test/storage',
  'test/store-contention.test.ts',
  'test/events-import.test.ts',
  'test/cli/',
  'test/crash-safety.test.ts',
  'test/shutdown.test.ts',
  'test/production-start.test.ts',
];
const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...dirs], { stdio: 'inherit', env: { ...process.env, TEST_STORE: 'postgres' } });
process.exit(r.status ?? 1);
