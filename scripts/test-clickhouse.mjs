#!/usr/bin/env node
// The ClickHouse pass of `npm test` (scripts/test.mjs runs it after the PostgreSQL pass): the
// suites of events, persons, HogQL, capture, import and materialized columns again, with every
// test server's events on embedded ClickHouse (chDB, the optional npm package `chdb`):
// TEST_EVENTS_STORE=clickhouse. The configuration stays on SQLite. Each vitest file runs in its
// own process and holds one chDB data directory, in which each test server gets a fresh database
// (test/helpers/clickhouse.ts); the processes a suite starts (`envapi import`, `npm start`) get
// EVENTS_STORE=clickhouse (test/helpers/store.ts). The same assertions as on the row stores: the
// answers must be the same. Not run again here: the suites about the row stores' own storage
// (test/storage but ClickHouse's, test/server/materialized.test.ts, properties-gin, read-pool),
// the ones with no events (plugin configs, dashboards, the contract) and test/hogql/clickhouse.test.ts,
// which compares ClickHouse with SQLite in the first pass already.
// Skipped with a reason when chDB cannot be loaded (no build for this platform): exit 0.
// With TEST_CLICKHOUSE_URL (`http://user:password@host:8123`) the same suites then run again with
// the events on that ClickHouse server, a fresh database per test server (opt-in: no server can
// run on this project's CI machine).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { shownUrl } from './test-targets.mjs';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: node scripts/test-clickhouse.mjs   (npm run test:clickhouse)');
  console.log("Runs npm test's ClickHouse pass: the events, persons, HogQL, capture and import suites with the");
  console.log('events on embedded ClickHouse (chDB; TEST_EVENTS_STORE=clickhouse). Extra arguments go to vitest.');
  process.exit(0);
}
try {
  await import('chdb');
} catch (err) {
  const skip = {
    suite: 'the ClickHouse pass',
    reason: `the optional package chdb could not be loaded (${String(err).split('\n')[0]})`,
    fix: 'npm install chdb (Linux x64/arm64 with glibc, macOS)',
  };
  console.log(`${skip.suite} skipped: ${skip.reason} — ${skip.fix}`);
  if (process.env.ENVAPI_TEST_SKIPS) fs.appendFileSync(process.env.ENVAPI_TEST_SKIPS, `${JSON.stringify(skip)}\n`);
  process.exit(0);
}
/** The suites of the pass (vitest filters). */
export const CLICKHOUSE_SUITES = [
  'test/server/events.test.ts',
  'test/server/events-list-window.test.ts',
  'test/server/persons.test.ts',
  'test/server/event-definitions.test.ts',
  'test/server/property-text-values.test.ts',
  'test/server/identity.test.ts',
  'test/server/isolation.test.ts',
  'test/server/schema-docs.test.ts',
  'test/server/insights.test.ts',
  'test/server/dashboards-edit.test.ts',
  'test/server/mcp-tools.test.ts',
  'test/server/person-actions.test.ts',
  'test/server/element-stats.test.ts',
  'test/server/property-definitions.test.ts',
  'test/server/definition-writes.test.ts',
  'test/server/sdk-endpoints.test.ts',
  'test/hogql/',
  'test/insights/',
  'test/capture/',
  'test/client/client.test.ts',
  'test/client/posthog-node.test.ts',
  'test/cli/events.test.ts',
  'test/storage/clickhouse-events.test.ts',
  'test/storage/clickhouse-materialize.test.ts',
];
/**
 * Left out: test/hogql/clickhouse.test.ts compares ClickHouse with SQLite in the first pass
 * already, its fast-check grammar included; property.test.ts (hundreds of random queries for a
 * 5xx, which that grammar covers on ClickHouse), materialized.test.ts (the row stores' indexes;
 * ClickHouse's columns: test/storage/clickhouse-materialize.test.ts) and budget.test.ts (the
 * read pool's worker threads, which ClickHouse's reads do not use).
 */
export const CLICKHOUSE_EXCLUDED = [
  'test/hogql/clickhouse.test.ts',
  'test/hogql/property.test.ts',
  'test/hogql/materialized.test.ts',
  'test/hogql/budget.test.ts',
];
const extra = process.argv.slice(2);
const args = [
  'node_modules/vitest/vitest.mjs',
  'run',
  ...CLICKHOUSE_SUITES,
  ...CLICKHOUSE_EXCLUDED.flatMap((f) => ['--exclude', f]),
  ...extra,
];
const { TEST_CLICKHOUSE_URL: server, ...base } = process.env;
console.log('ClickHouse pass on embedded chDB');
let r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...base, TEST_EVENTS_STORE: 'clickhouse' } });
if (r.status === 0 && server) {
  // the opt-in run on a ClickHouse server, as the PostgreSQL pass runs on its URL
  console.log(`ClickHouse pass on the server at ${shownUrl(server)} (TEST_CLICKHOUSE_URL)`);
  r = spawnSync(process.execPath, args, {
    stdio: 'inherit',
    env: { ...base, TEST_EVENTS_STORE: 'clickhouse', TEST_CLICKHOUSE_URL: server },
  });
}
process.exit(r.status ?? 1);
