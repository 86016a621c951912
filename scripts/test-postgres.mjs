#!/usr/bin/env node
// The PostgreSQL pass of `npm test`: when TEST_DATABASE_URL is set (e.g.
// postgres://postgres@127.0.0.1:5432/test), runs the suites that go through the test server
// (test/helpers/server.ts) again with TEST_STORE=postgres, so every test server gets a fresh
// PostgreSQL schema (the first pass stays on SQLite); otherwise says it skipped and exits 0.
// Suites that drive SQLite files directly (import, crash safety, CLI) run once, in the first pass.
import { spawnSync } from 'node:child_process';

const url = process.env.TEST_DATABASE_URL;
if (!url) {
  console.log('PostgreSQL pass skipped: TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test).');
  process.exit(0);
}
const shown = new URL(url);
shown.password = '';
console.log(`PostgreSQL pass on ${shown.toString()}`);
const dirs = ['test/server', 'test/client', 'test/contract', 'test/fuzz'];
const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...dirs], { stdio: 'inherit', env: { ...process.env, TEST_STORE: 'postgres' } });
process.exit(r.status ?? 1);
