/**
 * The Node options of the server's worker threads (the piscina pools of server/read-pool/ and
 * ./checkpoints.ts).
 *
 * `--no-experimental-require-module`: piscina loads a worker's module with `require()` first and
 * falls back to `import()`. On Node 20.19 and later `require()` loads an ES module synchronously
 * (require(esm)), and a worker terminated while that synchronous load instantiates the module
 * graph aborts the whole process: V8's "FATAL ERROR: v8::Module::IsGraphAsync must be used on an
 * instantiated module", SIGABRT, exit by signal. It happened when SIGTERM stopped the server about a
 * second after its start, while the read pool's first worker was still loading (about 1 start in
 * 40 on a loaded machine; `pool.destroy()` at random moments of a worker's load reproduces it).
 * With the flag, `require()` of an ES module throws at once and piscina imports it asynchronously,
 * which a termination interrupts cleanly. The flag is given only where this Node knows it.
 *
 * An explicit `execArgv` replaces the one a worker would inherit; that is wanted here, as a worker
 * refuses per-process V8 flags such as `--max-semi-space-size` (server/main.ts SERVER_NODE_FLAGS).
 */

/** Node's option that turns require(esm) off, when this Node has it. */
const NO_REQUIRE_ESM = process.allowedNodeEnvironmentFlags.has('--experimental-require-module') ? ['--no-experimental-require-module'] : [];

/**
 * `execArgv` for a worker thread whose module is `filename`: the flag above, and `--import tsx`
 * when the module is TypeScript (the sources run through tsx under `npm run dev` and vitest).
 */
export function workerExecArgv(filename: string): string[] {
  return [...NO_REQUIRE_ESM, ...(filename.endsWith('.ts') ? ['--import', 'tsx'] : [])];
}
