/**
 * Preloaded into Prism's node process by scripts/mock.mjs (`node --import <this file> prism …`):
 * Prism ends when the wrapper that started it ends, however the wrapper ends — SIGKILL and crashes
 * included, which the wrapper cannot pass on.
 *
 * The wrapper gives Prism a pipe as its stdin and never writes to it nor closes it. When the
 * wrapper's process ends, the kernel closes the pipe's write end, and this end reads end-of-file:
 * Prism then exits at once, after removing the contract's temporary copy (the folder the wrapper
 * names in ENVAPI_MOCK_TMP_DIR, which it can no longer remove itself). The read is unref'd, so it
 * never keeps Prism alive on its own (Prism still exits when it cannot start).
 */
import fs from 'node:fs';

const tmpDir = process.env.ENVAPI_MOCK_TMP_DIR;

/** The wrapper is gone: remove the contract's copy and exit. */
function parentGone() {
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  process.exit(0);
}

process.stdin.once('end', parentGone);
process.stdin.once('close', parentGone);
process.stdin.once('error', parentGone);
process.stdin.on('data', () => {}); // nothing is ever written; discard it if something is
process.stdin.unref();
