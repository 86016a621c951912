/**
 * Suites that skip for want of something on the machine (Chromium, Redis, PostgreSQL) say so here,
 * so that `npm test` can list them at its end with the command that would run them
 * (scripts/test.mjs reads the file; scripts/test-targets.mjs `readSkips`).
 */
import fs from 'node:fs';

/**
 * Records that `suite` (a test file's path, e.g. `test/client/posthog-js.test.ts`) is skipped for
 * `reason`, and `fix`, what would run it (`apt-get install chromium`). Prints it on stderr and
 * appends a JSON line to the file named by ENVAPI_TEST_SKIPS (set by `npm test`); never throws.
 */
export function reportSkip(suite: string, reason: string, fix: string): void {
  console.warn(`${suite} skipped: ${reason} — ${fix}`);
  const file = process.env.ENVAPI_TEST_SKIPS;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${JSON.stringify({ suite, reason, fix })}\n`);
  } catch {
    // the run's summary then lacks this line; the warning above was printed
  }
}
