/**
 * The SQLite driver for this Node line: better-sqlite3, in the build that works on it.
 *
 * - Node 22 and 24: better-sqlite3 13 (installed as `better-sqlite3-napi`, an optional dependency
 *   aliasing `better-sqlite3@13.2.0`), the Node-API build. It ships its binary inside the package.
 *   better-sqlite3 12 built from source against Node 24.19 or newer aborts the process when the
 *   garbage collector frees a statement (`Assertion failed: (env) != nullptr` in
 *   `node::RemoveEnvironmentCleanupHook`: Node 24's `node::ObjectWrap`, which 12 subclasses, now
 *   removes a cleanup hook in its destructor; WiseLibs/better-sqlite3#1515, closed unfixed for 12).
 * - Node 20: better-sqlite3 12.11.1 (the `better-sqlite3` dependency), built from source by its
 *   install script; 13 segfaults in `new Database()` there (WiseLibs/better-sqlite3#1514), and npm
 *   skips the optional 13 on Node 20 (its engines say `>=22`).
 * The two have the same API (`@types/better-sqlite3`). When the optional one is missing on Node 22
 * or 24 (an install with `--omit=optional`), 12 is used.
 */
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** The package this process opens SQLite files with, e.g. `better-sqlite3-napi` (13.2.0). */
export interface SqliteDriver {
  /** the module name loaded: `better-sqlite3-napi` or `better-sqlite3` */
  module: string;
  /** its package.json version, e.g. `13.2.0` */
  version: string;
  /** better-sqlite3's Database constructor */
  Database: typeof SQLite;
}

/** Whether `err` says that `name` itself is not installed (not that something inside it failed). */
function isMissing(err: unknown, name: string): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === 'MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes(`'${name}'`);
}

function load(): SqliteDriver {
  const major = Number(process.versions.node.split('.')[0]);
  const candidates = major >= 22 ? ['better-sqlite3-napi', 'better-sqlite3'] : ['better-sqlite3'];
  for (const name of candidates) {
    try {
      const Database = require(name) as typeof SQLite;
      const version = (require(`${name}/package.json`) as { version: string }).version;
      return { module: name, version, Database };
    } catch (err) {
      if (!isMissing(err, name) || name === candidates[candidates.length - 1]) throw err;
    }
  }
  throw new Error('unreachable: no SQLite driver candidate');
}

let loaded: SqliteDriver | undefined;

/** The driver of this process, loaded on first use (see the module doc). Throws when none is installed. */
export function sqliteDriver(): SqliteDriver {
  loaded ??= load();
  return loaded;
}

/**
 * Opens the SQLite file `file` (or `:memory:`) with this Node line's driver; `options` are
 * better-sqlite3's (`readonly`, `fileMustExist`, `timeout`, …). Throws better-sqlite3's errors
 * (`SqliteError` with `code`, e.g. `SQLITE_CANTOPEN`).
 */
export function openSqlite(file: string, options?: SQLite.Options): SQLite.Database {
  const { Database } = sqliteDriver();
  return new Database(file, options);
}
