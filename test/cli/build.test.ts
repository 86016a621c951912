/**
 * bin/envapi.js's rule for rebuilding dist/ (`checkBuild`, `ensureBuild`), on a scratch project in
 * a temporary directory (SQLite pass only: no store involved): built when never built, not again
 * while nothing changed; a touch is not a change, a changed byte, a new or removed source, a changed
 * tsconfig or a missing output is; a failed build is remembered; concurrent commands build once and
 * a lock left by a dead process is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, node, T, useCliProcesses } from '../helpers/cli.js';
import { usesPostgres } from '../helpers/pg.js';

// no `envapi build` of the project first: these tests build a scratch project, never dist/
useCliProcesses({ build: false });

/** bin/envapi.js's exports (a JavaScript module without types). */
interface BinModule {
  checkBuild(o?: { root?: string }): { fresh: boolean; reason: string };
  ensureBuild(o?: { root?: string; log?: (line: string) => void }): { ok: boolean; built: boolean; reason: string };
}

describe.skipIf(usesPostgres())('bin/envapi.js: when dist/ is rebuilt (a scratch project)', () => {
  let bin: BinModule;
  let root: string;
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  const build = (): { ok: boolean; built: boolean; reason: string; log: string[] } => {
    const log: string[] = [];
    return { ...bin.ensureBuild({ root, log: (l) => log.push(l) }), log };
  };
  const compiled = (rel: string): string => fs.readFileSync(path.join(root, 'dist', rel), 'utf8');

  beforeAll(async () => {
    bin = (await import(pathToFileURL(BIN).href)) as BinModule;
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-build-test-'));
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      types: [],
      skipLibCheck: true,
      noEmit: true,
    };
    write('tsconfig.json', JSON.stringify({ compilerOptions }));
    const build = { noEmit: false, outDir: 'dist', rootDir: '.', incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo' };
    write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', compilerOptions: build, include: ['server', 'generated'] }));
    write('package.json', '{"type": "module"}');
    write('server/a.ts', 'export const answer: number = 41;\n');
    write('server/b.ts', "import { answer } from './a.js';\nexport const next = answer + 1;\n");
    write('generated/types.d.ts', 'export type Id = number;\n');
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it(
    'builds when dist/ was never built, then not again while nothing changed',
    () => {
      const first = build();
      expect(first).toMatchObject({ ok: true, built: true });
      expect(first.log[0]).toMatch(/^envapi: building dist\/ \(dist\/ was never built by envapi; /);
      expect(compiled('server/b.js')).toContain('answer + 1');
      expect(build()).toEqual({ ok: true, built: false, reason: 'up to date', log: [] });
    },
    T,
  );

  it(
    'a touch or a rewrite with the same bytes does not rebuild; a changed byte does, once',
    () => {
      const a = path.join(root, 'server/a.ts');
      fs.utimesSync(a, new Date(), new Date(Date.now() + 5_000));
      fs.writeFileSync(path.join(root, 'server/b.ts'), fs.readFileSync(path.join(root, 'server/b.ts')));
      expect(bin.checkBuild({ root }).fresh).toBe(true);
      expect(build().built).toBe(false);
      fs.writeFileSync(a, 'export const answer: number = 42;\n');
      expect(bin.checkBuild({ root })).toEqual({ fresh: false, reason: 'server/a.ts changed' });
      expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/a.ts changed' });
      expect(compiled('server/a.js')).toContain('= 42');
      expect(build().built).toBe(false);
    },
    T,
  );

  it(
    'a new source, a removed source, a changed tsconfig or a deleted output rebuilds',
    () => {
      write('server/c.ts', 'export const c = 1;\n');
      expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/c.ts is new' });
      expect(fs.existsSync(path.join(root, 'dist/server/c.js'))).toBe(true);
      fs.rmSync(path.join(root, 'server/c.ts'));
      expect(build()).toMatchObject({ ok: true, built: true, reason: 'server/c.ts was removed' });
      write(
        'tsconfig.build.json',
        fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8').replace('"rootDir"', '"newLine":"lf","rootDir"'),
      );
      expect(build()).toMatchObject({ ok: true, built: true, reason: 'tsconfig.build.json changed' });
      fs.rmSync(path.join(root, 'dist/server/b.js'));
      expect(build()).toMatchObject({ ok: true, built: true, reason: 'dist/server/b.js is missing' });
      expect(compiled('server/b.js')).toContain('answer + 1');
    },
    2 * T,
  );

  it(
    'a failed build is reported (ok false) and remembered: the same sources are not built again; a fix builds',
    () => {
      write('server/a.ts', 'export const answer: number = "not a number";\n');
      expect(build()).toMatchObject({ ok: false, built: true, reason: 'tsc reported errors (above)' });
      expect(build()).toMatchObject({ ok: false, built: false, log: [] });
      write('server/a.ts', 'export const answer: number = 43;\n');
      expect(build()).toMatchObject({ ok: true, built: true });
      expect(bin.checkBuild({ root }).fresh).toBe(true);
    },
    T,
  );

  it(
    'concurrent commands build once; a lock left by a dead process is taken over',
    async () => {
      write('server/a.ts', 'export const answer: number = 44;\n');
      const script = 'const m = await import(process.argv[1]); console.log(JSON.stringify(m.ensureBuild({ root: process.argv[2] })));';
      const runs = await Promise.all(
        [1, 2].map(() => node(['--input-type=module', '-e', script, pathToFileURL(BIN).href, root], childEnv({}))),
      );
      const outcomes = runs.map((r) => JSON.parse(r.stdout) as { ok: boolean; built: boolean });
      expect(outcomes.every((x) => x.ok)).toBe(true);
      expect(outcomes.filter((x) => x.built)).toHaveLength(1);
      expect(runs.map((r) => r.stderr.match(/^envapi: building dist/gm)?.length ?? 0).reduce((x, y) => x + y)).toBe(1);
      const dead = await node(['-e', 'console.log(process.pid)'], childEnv({}));
      write('dist/.envapi-build.lock/owner', dead.stdout.trim());
      write('server/a.ts', 'export const answer: number = 45;\n');
      expect(build()).toMatchObject({ ok: true, built: true });
      expect(fs.existsSync(path.join(root, 'dist/.envapi-build.lock'))).toBe(false);
    },
    2 * T,
  );
});
