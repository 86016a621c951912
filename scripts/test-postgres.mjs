#!/usr/bin/env node
// The PostgreSQL pass of `npm test` (scripts/test.mjs runs it last): on TEST_DATABASE_URL, or when
// that is not set on postgres://postgres@127.0.0.1:5432/test if it answers (scripts/test-targets.mjs),
// runs every suite that has a store again with TEST_STORE=postgres (the first pass, `vitest run`,
// stays on SQLite); otherwise says why it skipped and exits 0. In this pass each test server (test/helpers/server.ts) and each store of the
// suites that drive the real processes or open the store themselves (test/helpers/store.ts:
// import, CLI, crash safety, shutdown, the compiled start, store contention) gets a fresh
// PostgreSQL schema, reached by child processes through DATABASE_URL, and dropped afterwards;
// test/storage holds the suites of PostgreSQL alone (partitions, introspection), skipped in the
// first pass. Not run again: test/domain (no store),
// test/multiprocess.test.ts and test/bootstrap-race.test.ts (on PostgreSQL in the first pass
// already), and test/redis-down.test.ts (about Redis; its store does not matter).
import { spawnSync } from 'node:child_process';
import { postgresTarget, shownUrl } from './test-targets.mjs';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: node scripts/test-postgres.mjs   (npm run test:postgres)');
  console.log("Runs npm test's PostgreSQL pass (every suite with a store, TEST_STORE=postgres) on TEST_DATABASE_URL,");
  console.log('else on postgres://postgres@127.0.0.1:5432/test when it answers; says why it skipped otherwise.');
  process.exit(0);
}
const target = await postgresTarget();
if (!target.url) {
  console.log(`PostgreSQL pass skipped: ${target.reason} — ${target.fix}`);
  process.exit(0);
}
const url = target.url;
console.log(`PostgreSQL pass on ${shownUrl(url)}`);
const dirs = [
  'test/server',
  'test/client',
  'test/capture',
  'test/hogql',
  'test/insights',
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
const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...dirs], {
  stdio: 'inherit',
  env: { ...process.env, TEST_DATABASE_URL: url, TEST_STORE: 'postgres' },
});
process.exit(r.status ?? 1);
