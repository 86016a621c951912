/**
 * bin/node-version.js, the check of the running Node.js against package.json's `engines` that
 * bin/envapi.js makes first (npm's engine-strict is off, .npmrc says why): the range read by hand
 * (package.json's own, and the forms it refuses), versions in and out of each line; then the
 * command itself on a Node that reports another version (`process.version` redefined by an
 * `--import` before bin/envapi.js runs): one line on stderr naming both, exit 1, nothing on stdout,
 * for `--version` and for `build` (what `npm ci`'s prepare script runs); on this Node it runs.
 * SQLite pass only: no store involved.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, node, T, useCliProcesses } from '../helpers/cli.js';
import { usesPostgres } from '../helpers/pg.js';
import { ROOT } from '../helpers/process.js';

useCliProcesses();

type Version = [number, number, number];
/** bin/node-version.js's exports (a JavaScript module without types). */
interface NodeVersionModule {
  parseVersion(text: string): Version;
  parseEngines(range: string): Array<{ atLeast?: Version; below?: Version }>;
  satisfies(version: string, range: string): boolean;
  enginesOf(root: string): string | undefined;
  nodeVersionProblem(o: { root: string; version?: string; engines?: string }): string | undefined;
}

const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };
const ENGINES = PKG.engines.node;

/** `node --import <redefine process.version> bin/envapi.js <args>`. */
function binOnNode(version: string, args: string[]) {
  const fake = `data:text/javascript,Object.defineProperty(process,'version',{value:${JSON.stringify(version)}})`;
  return node(['--import', fake, BIN, ...args], childEnv({}));
}

describe.skipIf(usesPostgres())("bin/envapi.js: the running Node.js against package.json's engines", () => {
  let m: NodeVersionModule;
  beforeAll(async () => {
    m = (await import(pathToFileURL(path.join(ROOT, 'bin', 'node-version.js')).href)) as NodeVersionModule;
  });

  it("reads package.json's range as its three lines", () => {
    expect(m.enginesOf(ROOT)).toBe(ENGINES);
    expect(m.parseEngines(ENGINES)).toEqual([
      { atLeast: [20, 20, 0], below: [21, 0, 0] },
      { atLeast: [22, 22, 0], below: [23, 0, 0] },
      { atLeast: [24, 0, 0], below: [25, 0, 0] },
    ]);
  });

  it('accepts each line from its first supported version, and nothing between or after them', () => {
    for (const v of ['v20.20.0', 'v20.20.2', 'v20.99.9', 'v22.22.0', 'v22.30.1', 'v24.0.0', 'v24.11.1', 'v24.1.0-rc.1'])
      expect(m.satisfies(v, ENGINES), v).toBe(true);
    for (const v of ['v18.20.8', 'v20.19.9', 'v21.7.3', 'v22.13.0', 'v22.21.99', 'v23.0.0', 'v25.0.0', 'v26.1.0'])
      expect(m.satisfies(v, ENGINES), v).toBe(false);
    expect(m.satisfies(process.version, ENGINES)).toBe(true);
  });

  it('parses versions with one to three parts, with or without the v', () => {
    expect(m.parseVersion('v20.20.2')).toEqual([20, 20, 2]);
    expect(m.parseVersion('22.22')).toEqual([22, 22, 0]);
    expect(m.parseVersion('24')).toEqual([24, 0, 0]);
    expect(m.parseVersion('v24.0.0-nightly20250101')).toEqual([24, 0, 0]);
    expect(() => m.parseVersion('lts/iron')).toThrow(/not a version/);
  });

  it('refuses a range in another form instead of letting every Node through', () => {
    for (const range of ['^18.17 || ^22.13', '>=20 <=22', '20.x', '', '>=20 ||', '>=20 >=22', '>20'])
      expect(() => m.parseEngines(range), range).toThrow(/engines\.node/);
  });

  it('says which Node runs and which are supported, or nothing', () => {
    expect(m.nodeVersionProblem({ root: ROOT, version: 'v22.22.0' })).toBeUndefined();
    expect(m.nodeVersionProblem({ root: ROOT })).toBeUndefined();
    expect(m.nodeVersionProblem({ root: ROOT, version: 'v18.19.1' })).toBe(
      `envapi: Node.js v18.19.1 is not supported; envapi runs on Node.js ${ENGINES} (package.json "engines").`,
    );
    expect(m.nodeVersionProblem({ root: ROOT, version: 'v25.0.0', engines: '>=25' })).toBeUndefined();
  });

  it(
    'on another Node the command prints that one line to stderr and exits 1, for --version and for build',
    async () => {
      for (const [version, args] of [
        ['v18.19.1', ['--version']],
        ['v20.19.9', ['--version']],
        ['v25.0.0', ['build']],
      ] as const) {
        const r = await binOnNode(version, [...args]);
        expect(r, `${version} envapi ${args.join(' ')}`).toEqual({
          code: 1,
          stdout: '',
          stderr: `envapi: Node.js ${version} is not supported; envapi runs on Node.js ${ENGINES} (package.json "engines").\n`,
        });
      }
    },
    T,
  );

  it(
    'on a supported Node the command runs',
    async () => {
      const r = await binOnNode('v22.22.0', ['--version']);
      expect(r.stderr).toBe('');
      expect(r).toMatchObject({ code: 0, stdout: `${PKG.version}\n` });
    },
    T,
  );
});
