/**
 * vitest global setup: brings `dist/` up to date once before any test file runs
 * (`node bin/envapi.js build`: a no-op when no build input changed, an incremental tsc otherwise),
 * so that tests spawning `envapi` or the built server never pay, or print, a build of their own.
 * `npm test` builds before vitest as well; this covers `npx vitest run <file>` on a fresh checkout.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export default function setup(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'bin', 'envapi.js'), 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
