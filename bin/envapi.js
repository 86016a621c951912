#!/usr/bin/env node
/**
 * The `envapi` command (and `npm start`, which is `envapi serve`). It runs the compiled CLI,
 * `dist/server/cli/index.js`, after making sure `dist/` was built from the sources as they are now;
 * node then loads plain JavaScript: about 0.1 s for `--help` and 0.2–0.4 s for a command that opens
 * the store, instead of 1–4 s loading the TypeScript sources through tsx (`npm run bench:cli`).
 *
 * When `dist/` is fresh (the rule):
 * - `dist/.envapi-build.json` (the manifest) lists every input of the last successful build: each
 *   file under `server/` and `generated/` ending in `.ts`, and `tsconfig.json`,
 *   `tsconfig.build.json`, `package.json` (module type) — with its size, mtime and SHA-256, taken
 *   *before* tsc read it, so an edit saved during a build makes the next run build again;
 * - `dist/` is fresh when the manifest lists exactly the files there are now, each with the same
 *   content (same size and mtime, or else the same SHA-256: a `touch` or a checkout that changes
 *   nothing does not rebuild), and every source has its `dist/<path>.js`.
 * Otherwise this builds it: `tsc -p tsconfig.build.json` (incremental, so a rebuild after one edit
 * costs a few seconds, not the ~15 s of a full build), saying so on stderr, under a lock
 * (`dist/.envapi-build.lock`, a directory holding the builder's pid) so that concurrent commands
 * build once and the others wait; a lock whose process is gone is taken over. tsc's output goes to
 * stderr (stdout stays the command's, e.g. `--json`).
 *
 * When the build fails (type errors, or typescript not installed: `npm ci --omit=dev`), the command
 * runs from the TypeScript sources with tsx instead, after a line on stderr that says so — never
 * from a stale `dist/`. A failed build is remembered (`dist/.envapi-build-failed.json`, the same
 * manifest) so the next commands on the same sources go straight to tsx instead of failing again.
 * `envapi build` (`npm run build`, and the `prepare` script that `npm ci` runs) does only the
 * build, trying a failed one again to show its errors: exit 0 when `dist/` is fresh, 1 when the
 * build failed (0 with a note when typescript is not installed).
 *
 * Before all that, the command checks that it runs on a Node.js of package.json's `engines`
 * (bin/node-version.js): on another, one line on stderr names the running and the supported
 * versions, and it exits 1 (npm's engine-strict is off, .npmrc says why).
 *
 * Importing this module runs nothing: it exports `ensureBuild` and `checkBuild` (with a `root`
 * option, for tests on a scratch project); run as the main module it is the command.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeVersionProblem } from './node-version.js';

/** The project root (where `server/`, `generated/` and `dist/` are). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Directories whose `.ts` files are inputs of the build (tsconfig.build.json's `include`). */
const SOURCE_DIRS = ['server', 'generated'];
/** Files of the project root that change what tsc emits. */
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const MANIFEST = '.envapi-build.json';
const FAILED_MANIFEST = '.envapi-build-failed.json';
const LOCK = '.envapi-build.lock';
/** How long a command waits for another process's build before giving up (ms). */
const LOCK_WAIT_MS = 10 * 60_000;
/** A lock directory without an owner file older than this (ms) is an abandoned one. */
const OWNERLESS_LOCK_MS = 30_000;

/**
 * @typedef {{ size: number, mtimeMs: number, sha256: string }} InputEntry
 * @typedef {{ version: 1, files: Record<string, InputEntry> }} Manifest
 * @typedef {{ fresh: boolean, reason: string }} BuildCheck
 * @typedef {{ ok: boolean, built: boolean, reason: string, noCompiler?: boolean }} BuildOutcome
 */

/** Project-relative paths (with `/`) of the build's inputs under `root`, sorted. */
function listInputs(root) {
  const found = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (e.isFile() && e.name.endsWith('.ts')) found.push(child);
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  for (const file of CONFIG_FILES) if (fs.existsSync(path.join(root, file))) found.push(file);
  return found.sort();
}

/** `server/a.ts` → `dist/server/a.js`; undefined for a file with no output (`.d.ts`, config files). */
function outputOf(rel) {
  if (!rel.endsWith('.ts') || rel.endsWith('.d.ts')) return undefined;
  return path.join('dist', rel.slice(0, -3) + '.js');
}

function sha256Of(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** The manifest of the inputs as they are now (stat before read: see the module doc). */
function snapshot(root) {
  /** @type {Manifest} */
  const manifest = { version: 1, files: {} };
  for (const rel of listInputs(root)) {
    const file = path.join(root, rel);
    const st = fs.statSync(file);
    manifest.files[rel] = { size: st.size, mtimeMs: st.mtimeMs, sha256: sha256Of(file) };
  }
  return manifest;
}

function readManifest(file) {
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    return m && m.version === 1 && m.files && typeof m.files === 'object' ? m : undefined;
  } catch {
    return undefined;
  }
}

function writeManifest(file, manifest) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(manifest));
  fs.renameSync(tmp, file);
}

/** Whether the inputs under `root` are the ones `manifest` lists (see the module doc); the reason when not. */
function compare(root, manifest) {
  const now = listInputs(root);
  const before = Object.keys(manifest.files);
  const added = now.filter((f) => !(f in manifest.files));
  if (added.length) return { fresh: false, reason: `${added[0]} is new` };
  const removed = before.filter((f) => !now.includes(f));
  if (removed.length) return { fresh: false, reason: `${removed[0]} was removed` };
  for (const rel of now) {
    const entry = manifest.files[rel];
    const file = path.join(root, rel);
    let st;
    try {
      st = fs.statSync(file);
    } catch {
      return { fresh: false, reason: `${rel} was removed` };
    }
    if ((st.size !== entry.size || st.mtimeMs !== entry.mtimeMs) && sha256Of(file) !== entry.sha256)
      return { fresh: false, reason: `${rel} changed` };
  }
  return { fresh: true, reason: 'up to date' };
}

/**
 * Whether `dist/` under `root` (default: this project) was built from the sources as they are now.
 * @param {{ root?: string }} [options]
 * @returns {BuildCheck}
 */
export function checkBuild(options = {}) {
  const root = options.root ?? ROOT;
  const manifest = readManifest(path.join(root, 'dist', MANIFEST));
  if (!manifest) return { fresh: false, reason: 'dist/ was never built by envapi' };
  const cmp = compare(root, manifest);
  if (!cmp.fresh) return cmp;
  for (const rel of Object.keys(manifest.files)) {
    const out = outputOf(rel);
    if (out && !fs.existsSync(path.join(root, out))) return { fresh: false, reason: `${out} is missing` };
  }
  return cmp;
}

/** True when a process with this pid exists (EPERM: it exists, owned by someone else). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Takes the build lock of `root`'s dist/, waiting for another builder while it lives (a dead one's
 * lock is taken over). Returns a release function, or undefined after `LOCK_WAIT_MS`.
 */
function takeLock(root, log) {
  const dir = path.join(root, 'dist', LOCK);
  const owner = path.join(dir, 'owner');
  const deadline = Date.now() + LOCK_WAIT_MS;
  let said = false;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(owner, String(process.pid));
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let pid = NaN;
    try {
      pid = Number(fs.readFileSync(owner, 'utf8'));
    } catch {
      // created, owner not written yet (or abandoned right after mkdir)
    }
    let abandoned = Number.isInteger(pid) && pid > 0 ? !alive(pid) : false;
    if (!Number.isInteger(pid) || pid <= 0) {
      try {
        abandoned = Date.now() - fs.statSync(dir).mtimeMs > OWNERLESS_LOCK_MS;
      } catch {
        continue; // released meanwhile
      }
    }
    if (abandoned) {
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) return undefined;
    if (!said) {
      log(`envapi: waiting for another process building dist/ (pid ${Number.isInteger(pid) ? pid : '?'})…`);
      said = true;
    }
    sleep(200);
  }
}

/** The path of typescript's `tsc` script, or undefined when typescript is not installed. */
function tscPath() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** Runs `tsc -p tsconfig.build.json` in `root`, its output on our stderr; true when it exits 0. */
function runTsc(root, tsc) {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  return r.status === 0;
}

/**
 * Builds `dist/` under `root` (default: this project) when it is not fresh (see the module doc),
 * once across concurrent callers. Lines for the user go to `log` (default: stderr). Synchronous.
 * A build that failed on the same sources before is not tried again unless `retryFailed`.
 * @param {{ root?: string, log?: (line: string) => void, retryFailed?: boolean }} [options]
 * @returns {BuildOutcome} ok: dist/ is fresh now; built: this call ran tsc; reason: why it built,
 *   or why it could not (then ok is false and the caller runs the sources)
 */
export function ensureBuild(options = {}) {
  const root = options.root ?? ROOT;
  const log = options.log ?? ((line) => process.stderr.write(line + '\n'));
  const first = checkBuild({ root });
  if (first.fresh) return { ok: true, built: false, reason: first.reason };
  const failed = options.retryFailed ? undefined : readManifest(path.join(root, 'dist', FAILED_MANIFEST));
  if (failed && compare(root, failed).fresh)
    return { ok: false, built: false, reason: 'the last build of these sources failed (`npm run build` shows the errors)' };
  const tsc = tscPath();
  if (!tsc)
    return { ok: false, built: false, noCompiler: true, reason: 'typescript is not installed (installed without devDependencies?)' };
  const release = takeLock(root, log);
  if (!release) return { ok: false, built: false, reason: `another process kept dist/${LOCK} for ${LOCK_WAIT_MS / 60_000} minutes` };
  try {
    const again = checkBuild({ root });
    if (again.fresh) return { ok: true, built: false, reason: 'built by another process' };
    const started = Date.now();
    log(`envapi: building dist/ (${again.reason}; tsc -p tsconfig.build.json)…`);
    const manifest = snapshot(root);
    let ok = runTsc(root, tsc);
    // an incremental tsc does not re-emit an output deleted behind its back: build again from scratch
    if (ok && Object.keys(manifest.files).some((rel) => outputOf(rel) && !fs.existsSync(path.join(root, outputOf(rel))))) {
      fs.rmSync(path.join(root, 'dist', '.tsbuildinfo'), { force: true });
      ok = runTsc(root, tsc);
    }
    if (!ok) {
      writeManifest(path.join(root, 'dist', FAILED_MANIFEST), manifest);
      return { ok: false, built: true, reason: 'tsc reported errors (above)' };
    }
    writeManifest(path.join(root, 'dist', MANIFEST), manifest);
    fs.rmSync(path.join(root, 'dist', FAILED_MANIFEST), { force: true });
    log(`envapi: built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { ok: true, built: true, reason: again.reason };
  } finally {
    release();
  }
}

/** The command: build if needed, then run the compiled CLI (or the sources when the build failed). */
/**
 * With the events on embedded ClickHouse (EVENTS_STORE=clickhouse, no CLICKHOUSE_URL), libuv's
 * thread pool is raised to 16 threads unless UV_THREADPOOL_SIZE is set: each chDB query in flight
 * holds one of its threads (server/storage/clickhouse/connection.ts), and file reads and DNS
 * share them. Set here, before anything of the process uses the pool, which libuv sizes once.
 */
function sizeThreadPool(env = process.env) {
  if (env.UV_THREADPOOL_SIZE || (env.EVENTS_STORE ?? '').trim().toLowerCase() !== 'clickhouse' || env.CLICKHOUSE_URL) return;
  env.UV_THREADPOOL_SIZE = '16';
}

async function main() {
  const unsupported = nodeVersionProblem({ root: ROOT });
  if (unsupported) {
    process.stderr.write(unsupported + '\n');
    process.exitCode = 1;
    return;
  }
  sizeThreadPool();
  const args = process.argv.slice(2);
  const buildOnly = args[0] === 'build' && !args.some((a) => a === '-h' || a === '--help');
  const outcome = ensureBuild({ retryFailed: buildOnly });
  if (buildOnly) {
    if (outcome.ok) console.log(outcome.built ? 'dist/ built.' : 'dist/ is up to date.');
    else if (outcome.noCompiler) console.log(`envapi: dist/ not built: ${outcome.reason}; envapi runs from the sources with tsx.`);
    else console.error(`envapi: dist/ not built: ${outcome.reason}.`);
    process.exitCode = outcome.ok || outcome.noCompiler ? 0 : 1;
    return;
  }
  let cli;
  if (outcome.ok) {
    cli = await import(pathToFileURL(path.join(ROOT, 'dist', 'server', 'cli', 'index.js')).href);
  } else {
    process.stderr.write(`envapi: dist/ not built: ${outcome.reason}; running from the TypeScript sources with tsx (slower).\n`);
    const { register } = await import('tsx/esm/api');
    register();
    cli = await import(pathToFileURL(path.join(ROOT, 'server', 'cli', 'index.ts')).href);
  }
  await cli.runCli();
}

/** The real path of the main script (argv[1], through `npx`'s or npm's bin links), or '' when there is none. */
function mainScript() {
  try {
    return process.argv[1] ? fs.realpathSync(path.resolve(process.argv[1])) : '';
  } catch {
    return '';
  }
}

if (mainScript() === fileURLToPath(import.meta.url)) await main();
