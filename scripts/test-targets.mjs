/**
 * What `npm test` can reach on this machine, shared by scripts/test.mjs (the whole run) and
 * scripts/test-postgres.mjs (its PostgreSQL pass):
 *
 * - `postgresTarget()`: the database of the PostgreSQL pass. `TEST_DATABASE_URL` when set (an empty
 *   value, or `TEST_POSTGRES=off`, turns the pass off); otherwise the machine's default address,
 *   `postgres://postgres@127.0.0.1:5432/test`, when a connection and `select 1` succeed there
 *   within 2 s. Resolves `{ url }` or `{ url: undefined, reason, fix }`.
 * - the skip log: suites that skip for want of something (Chromium, Redis, PostgreSQL) append a
 *   line `{suite, reason, fix}` to the file named by `ENVAPI_TEST_SKIPS`
 *   (test/helpers/skips.ts writes it); `readSkips(file)` reads them back, one per suite.
 */
import fs from 'node:fs';
import pg from 'pg';

/** The address `npm test` tries when TEST_DATABASE_URL is not set. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** `url` without its password, for printing. */
export function shownUrl(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Whether a connection to `url` answers `select 1` within `timeoutMs` (ms). */
export async function pgAnswers(url, timeoutMs = 2_000) {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  c.on('error', () => {});
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * The PostgreSQL pass's database (see the module doc).
 * @returns {Promise<{ url: string } | { url: undefined, reason: string, fix: string }>}
 */
export async function postgresTarget(env = process.env) {
  const off = /^(0|off|false|no)$/i.test(env.TEST_POSTGRES ?? '');
  if (off || env.TEST_DATABASE_URL === '') {
    return {
      url: undefined,
      reason: 'turned off (TEST_POSTGRES=off or TEST_DATABASE_URL is empty)',
      fix: `TEST_DATABASE_URL=${DEFAULT_TEST_DATABASE_URL} npm run test:postgres`,
    };
  }
  if (env.TEST_DATABASE_URL) return { url: env.TEST_DATABASE_URL };
  if (await pgAnswers(DEFAULT_TEST_DATABASE_URL)) return { url: DEFAULT_TEST_DATABASE_URL };
  return {
    url: undefined,
    reason: `no PostgreSQL answers at ${DEFAULT_TEST_DATABASE_URL} and TEST_DATABASE_URL is not set`,
    fix: 'start PostgreSQL there (or set TEST_DATABASE_URL=postgres://…), then npm run test:postgres',
  };
}

/**
 * The skips recorded in `file` (JSON Lines of `{suite, reason, fix}`), the first of each suite,
 * in the order written; `[]` when the file is missing. Lines that are not JSON are ignored.
 * @returns {{ suite: string, reason: string, fix: string }[]}
 */
export function readSkips(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const seen = new Map();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const s = JSON.parse(line);
      if (s && typeof s.suite === 'string' && !seen.has(s.suite))
        seen.set(s.suite, { suite: s.suite, reason: String(s.reason ?? ''), fix: String(s.fix ?? '') });
    } catch {
      // a torn line of a process killed mid-write: nothing to report of it
    }
  }
  return [...seen.values()];
}

/** One line of the summary for a skip: `<suite> skipped: <reason> — <fix>`. */
export function skipLine(s) {
  return `${s.suite} skipped: ${s.reason}${s.fix ? ` — ${s.fix}` : ''}`;
}
