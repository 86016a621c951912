/**
 * The Node.js lines envapi runs on, checked by bin/envapi.js before it does anything else: the
 * range of package.json's `engines.node` (`>=20.20 <21 || >=22.22 <23 || >=24 <25`). npm's
 * `engine-strict` used to refuse an install on any other Node; it is off (.npmrc says why: a
 * devDependency's own `engines` exclude Node 20 and 24), so the command refuses to run instead, with
 * one line on stderr naming the Node running and the lines supported, and exit status 1. As
 * `npm ci` runs `envapi build` (the `prepare` script), an install on another Node still fails, with
 * that line.
 *
 * The range is read by hand, in the one form package.json uses: alternatives joined by `||`, each
 * a lower bound `>=X[.Y[.Z]]` and/or an upper bound `<X[.Y[.Z]]` (missing parts are 0). Anything
 * else throws, so that engines rewritten in another form fail loudly (test/cli/node-version.test.ts
 * parses the real package.json) rather than let every Node through. A pre-release or build suffix
 * of the running version (`v24.0.0-rc.1`) is ignored.
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * @typedef {[number, number, number]} Version
 * @typedef {{ atLeast?: Version, below?: Version }} Interval
 */

/** `v20.20.2`, `20.20.2`, `20.20` or `20` → [20, 20, 2] (missing parts 0); throws on anything else. */
export function parseVersion(text) {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(String(text).trim());
  if (!m) throw new Error(`not a version: ${JSON.stringify(text)}`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

/** <0, 0 or >0 as version a is before, equal to or after b. */
function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The intervals of an engines range (module doc): `>=20.20 <21 || >=24` →
 * `[{ atLeast: [20, 20, 0], below: [21, 0, 0] }, { atLeast: [24, 0, 0] }]`; throws on another form.
 * @returns {Interval[]}
 */
export function parseEngines(range) {
  if (typeof range !== 'string' || !range.trim()) throw new Error(`engines.node is not a range: ${JSON.stringify(range)}`);
  return range.split('||').map((alternative) => {
    /** @type {Interval} */
    const interval = {};
    const parts = alternative.trim().split(/\s+/).filter(Boolean);
    if (!parts.length) throw new Error(`engines.node has an empty alternative: ${JSON.stringify(range)}`);
    for (const part of parts) {
      const m = /^(>=|<)(\d+(?:\.\d+){0,2})$/.exec(part);
      const key = m?.[1] === '>=' ? 'atLeast' : 'below';
      if (!m || interval[key])
        throw new Error(`engines.node: ${JSON.stringify(part)} is not a >=X.Y or <X bound this check reads (${range})`);
      interval[key] = parseVersion(m[2]);
    }
    return interval;
  });
}

/** Whether `version` (`v22.22.0`) is in one of the intervals of the engines range. */
export function satisfies(version, range) {
  const v = parseVersion(version);
  return parseEngines(range).some((i) => (!i.atLeast || compare(v, i.atLeast) >= 0) && (!i.below || compare(v, i.below) < 0));
}

/** package.json's `engines.node` under `root`, or undefined when it has none. */
export function enginesOf(root) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  return pkg?.engines?.node;
}

/**
 * The line to print when `version` (default: this process's) is not in the range `engines`
 * (default: package.json's under `root`), else undefined; undefined too when there is no range.
 * @param {{ root: string, version?: string, engines?: string }} options
 */
export function nodeVersionProblem(options) {
  const engines = options.engines ?? enginesOf(options.root);
  if (engines === undefined) return undefined;
  const version = options.version ?? process.version;
  if (satisfies(version, engines)) return undefined;
  return `envapi: Node.js ${version} is not supported; envapi runs on Node.js ${engines} (package.json "engines").`;
}
