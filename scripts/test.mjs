#!/usr/bin/env node
/**
 * `npm test` (the whole run) and `npm run test:fast` (`--fast`, the tier to run before a commit).
 *
 * Both run the static checks first, side by side (as many at once as the machine has cores; each
 * one's output is printed whole when it ends, in this order):
 *   1. `redocly lint` of openapi.yaml and of the bundle made from it, generated/openapi.bundle.yaml
 *   (`npm run lint:spec`; zero warnings), 2. `eslint .` and `prettier --check .` (`npm run lint`),
 *   3. the generated files are up to date (`npm run check:gen`), 4. `tsc --noEmit`, 5. the build
 *   (`envapi build`).
 * When all of them pass, 6. vitest: every suite on SQLite (the whole run) or the suites of
 * FAST_SUITES (`--fast`).
 * The whole run then runs 7. the PostgreSQL pass (scripts/test-postgres.mjs: every suite with a
 * store again, TEST_STORE=postgres) when a PostgreSQL answers: TEST_DATABASE_URL, or else the
 * machine's default address (scripts/test-targets.mjs) — no variable needed; and 8. the ClickHouse
 * pass (scripts/test-clickhouse.mjs: the events, persons, HogQL, capture and import suites with
 * the events on embedded chDB, TEST_EVENTS_STORE=clickhouse), skipped with its reason when the
 * optional package chdb cannot be loaded.
 *
 * At the end it prints one line for each suite that skipped for want of something, with the reason
 * and the command that would run it (`… skipped: no Chromium at /usr/bin/chromium — apt-get install
 * chromium`): the suites record their skips in the file named by ENVAPI_TEST_SKIPS, which this
 * script sets (test/helpers/skips.ts). Exit status: that of the first failed step, else 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresTarget, readSkips, shownUrl, skipLine } from './test-targets.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The checks' caches (eslint's and prettier's `--cache`, tsc's `--incremental` build info): a
 * check then reads again only the files changed since its last run. Under node_modules/, so a
 * fresh `npm ci` (CI) starts without them.
 */
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'envapi-test');

/**
 * The fast tier's suites: in-process only (no child process, no browser), on SQLite; together
 * they cover the domain rules, HogQL, the contract, the request path, capture and every
 * operation's handler once. Vitest filters (a path or a prefix of one).
 */
export const FAST_SUITES = [
  'test/domain/',
  'test/lint/',
  'test/contract/spec.test.ts',
  'test/hogql/',
  'test/insights/',
  'test/server/',
  'test/storage/',
  'test/capture/',
  'test/client/client.test.ts',
];

/**
 * Suites under FAST_SUITES left to `npm test`: a browser (docs-page), killed processes
 * (crash-safety), or many repetitions of the slowest shapes to prove a bound (the time budget,
 * the materialized-column and property equivalences, the read pool's blocking workers).
 */
export const FAST_EXCLUDED = [
  'test/server/docs-page.test.ts',
  'test/capture/crash-safety.test.ts',
  'test/hogql/budget.test.ts',
  'test/hogql/materialized.test.ts',
  'test/hogql/property.test.ts',
  'test/server/read-pool.test.ts',
];

const USAGE = `usage: npm test            (node scripts/test.mjs)
       npm run test:fast  (node scripts/test.mjs --fast)

Lints the spec and the code, checks generated/, type-checks, builds, then runs vitest:
  npm test         every suite on SQLite, then the PostgreSQL pass when a PostgreSQL answers
                   (TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test;
                   TEST_POSTGRES=off turns the pass off), then the ClickHouse pass (the events
                   suites on embedded chDB; npm run test:clickhouse runs it alone)
  --fast           the suites that start no process or browser, on SQLite (before a commit)
Ends with one line for each suite skipped for want of something, and how to run it.`;

/**
 * Runs the static checks `[title, command, args]` side by side, at most `os.availableParallelism()`
 * at once, each with its output captured; prints each one's title, seconds and output in the
 * given order once it and those before it have ended. Returns the exit status of the first check
 * (in that order) that failed, else 0.
 */
async function checks(list, env) {
  const runs = list.map(() => undefined);
  let next = 0;
  const runOne = (i) =>
    new Promise((resolve) => {
      const [, command, args] = list[i];
      const started = Date.now();
      const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('error', (err) => (output += `${err.message}\n`));
      child.on('close', (code) => resolve({ code: code ?? 1, output, seconds: (Date.now() - started) / 1000 }));
    });
  const worker = async () => {
    while (next < list.length) {
      const i = next++;
      runs[i] = await runOne(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(os.availableParallelism(), list.length) }, worker));
  let status = 0;
  list.forEach(([title], i) => {
    const { code, output, seconds } = runs[i];
    console.log(`\n── ${title} (${seconds.toFixed(1)} s)${code === 0 ? '' : `: failed (exit ${code})`}`);
    if (output.trim()) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
    if (code !== 0 && status === 0) status = code;
  });
  return status;
}

/** Runs one step with this terminal; returns its exit status. */
function step(title, command, args, env = process.env) {
  console.log(`\n── ${title}`);
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env });
  if (r.error) console.error(`${title}: ${r.error.message}`);
  return r.status ?? 1;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const bin = (name) => path.join(ROOT, 'node_modules', '.bin', name);

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  const unknown = args.filter((a) => a !== '--fast');
  if (unknown.length) {
    console.error(`unknown argument ${unknown[0]}\n${USAGE.split('\n')[0]}`);
    return 2;
  }
  const fast = args.includes('--fast');
  const skipsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-test-')), 'skips.jsonl');
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', ENVAPI_TEST_SKIPS: skipsFile };
  const vitest = [path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'];
  // the fast tier's suites are in-process and mostly wait on I/O: one fork per core (vitest's
  // default leaves one core to its main process); the whole run keeps the default, for the
  // suites that start servers and kill processes
  const fastWorkers = ['--maxWorkers', String(os.availableParallelism())];
  const staticChecks = [
    ['the spec (redocly lint)', bin('redocly'), ['lint', 'openapi.yaml', 'generated/openapi.bundle.yaml']],
    ['the code (eslint)', bin('eslint'), ['--cache', '--cache-location', path.join(CACHE, 'eslint'), '.']],
    ['the format (prettier --check)', bin('prettier'), ['--check', '--cache', '--cache-location', path.join(CACHE, 'prettier'), '.']],
    ['generated/ up to date', npm, ['run', '--silent', 'check:gen']],
    [
      'types (tsc --noEmit)',
      bin('tsc'),
      ['--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', path.join(CACHE, 'tsc.tsbuildinfo')],
    ],
    ['the build (envapi build)', process.execPath, ['bin/envapi.js', 'build']],
  ];
  let status = await checks(staticChecks, env);
  if (status === 0) {
    status = fast
      ? step(
          'the fast suites (vitest, SQLite)',
          process.execPath,
          [...vitest, ...fastWorkers, ...FAST_SUITES, ...FAST_EXCLUDED.flatMap((f) => ['--exclude', f])],
          env,
        )
      : step('every suite on SQLite (vitest)', process.execPath, vitest, env);
  }
  const extra = [];
  if (status === 0 && !fast) {
    const pgTarget = await postgresTarget(env);
    if (pgTarget.url) {
      status = step(`every suite with a store on PostgreSQL (${shownUrl(pgTarget.url)})`, process.execPath, ['scripts/test-postgres.mjs'], {
        ...env,
        TEST_DATABASE_URL: pgTarget.url,
      });
    } else {
      extra.push({ suite: 'the PostgreSQL pass', reason: pgTarget.reason, fix: pgTarget.fix });
    }
  }
  if (status === 0 && !fast) {
    status = step('the events suites on ClickHouse (embedded chDB)', process.execPath, ['scripts/test-clickhouse.mjs'], env);
  }
  const skips = [...readSkips(skipsFile), ...extra];
  fs.rmSync(path.dirname(skipsFile), { recursive: true, force: true });
  console.log('');
  if (fast) console.log('Fast tier only: the suites with child processes, browsers and the PostgreSQL pass run in npm test.');
  for (const s of skips) console.log(skipLine(s));
  if (!skips.length && !fast) console.log('Nothing skipped.');
  console.log(
    status === 0
      ? fast
        ? 'npm run test:fast passed.'
        : 'npm test passed.'
      : `npm ${fast ? 'run test:fast' : 'test'} failed (exit ${status}).`,
  );
  return status;
}

process.exitCode = await main();
