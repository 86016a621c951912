#!/usr/bin/env node
// The PostgreSQL pass of `npm test`: runs the suites that go through the test server
// (test/helpers/server.ts) again with every test server on a fresh PostgreSQL schema, when
// TEST_DATABASE_URL is set (e.g. postgres://postgres@127.0.0.1:5432/test); says so and exits 0
// when it is not. Suites that drive SQLite files directly (import, crash safety, CLI) run once.
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
const r = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...dirs], { stdio: 'inherit', env: process.env });
process.exit(r.status ?? 1);
