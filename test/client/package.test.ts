/**
 * The `@envapi/client` package as a service installs it: the client is built by its own tsup
 * config (the `tsup` field of client/package.json) into a temporary copy of the package (client/package.json,
 * README.md, LICENSE), packed with `npm pack`, and the tarball installed into an empty temporary
 * project (`npm install <tarball>`; `openapi-fetch` comes from the npm cache or the registry).
 * There a three-line ESM service and a CommonJS one are type-checked under
 * `module`/`moduleResolution` `NodeNext` with the root's TypeScript (no `skipLibCheck`, so the
 * published `.d.ts` / `.d.cts` are checked too), compiled, and run with plain `node` against a real
 * server in-process (`startTestServer`).
 *
 * Building into a temporary directory (not client/dist; tsup writes nothing else, its config
 * being JSON) keeps two simultaneous `npm test` runs apart. The store plays no part here, so the PostgreSQL pass skips this file. Every step has a
 * wide timeout; no duration is asserted.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);

/** A generous bound for one step (build, pack, install, compile) on a loaded 2-core machine, in ms. */
const STEP_MS = 240_000;

/** What the tarball holds: the build, package.json, the README and the LICENSE, nothing else. */
const PACKED_FILES = ['LICENSE', 'README.md', 'dist/index.cjs', 'dist/index.d.cts', 'dist/index.d.ts', 'dist/index.js', 'package.json'];

/** The environment for child npm processes: this process's, without the `npm_*` variables `npm test` sets for its own run. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_userconfig', 'npm_config_registry']);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_') || keep.has(k.toLowerCase())) env[k] = v;
  return { ...env, ...extra };
}

/** Runs a command (no shell), returning stdout; on failure the error carries its stdout and stderr. */
async function sh(file: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd, env: childEnv(extraEnv), timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n--- stdout\n${e.stdout ?? ''}\n--- stderr\n${e.stderr ?? ''}`,
      { cause: err },
    );
  }
}

/** The npm that runs this Node (the one on PATH). */
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The three-line service (ESM). */
const SERVICE_ESM = `import { createClient, unwrap } from '@envapi/client';
const api = createClient({ baseUrl: process.env.ENVAPI_URL!, apiKey: process.env.ENVAPI_KEY! });
console.log(JSON.stringify((await unwrap(api.GET('/api/projects/', {}))).results.map((p) => p.id)));
`;

/** The same through \`require\` (a .cts compiles to CommonJS), plus a CSV answer read as a string. */
const SERVICE_CJS = `import { createClient, unwrap } from '@envapi/client';
const api = createClient({ baseUrl: process.env.ENVAPI_URL!, apiKey: process.env.ENVAPI_KEY! });
const project_id = process.env.ENVAPI_PROJECT!;
async function main(): Promise<void> {
  const { data, response } = await api.GET('/api/projects/', {});
  const csv = await unwrap(api.GET('/api/environments/{project_id}/events/', { params: { path: { project_id }, query: { format: 'csv' } }, parseAs: 'text' }));
  console.log(JSON.stringify({ status: response.status, ids: data?.results.map((p) => p.id), csvType: typeof csv, entry: require.resolve('@envapi/client') }));
}
main().catch((err: unknown) => { console.error(err); process.exit(1); });
`;

/** Type-level checks on the published types (compiled, never run): real types, not \`any\`. */
const TYPE_CHECKS = `import { createClient, EnvApiError, paginate, type components } from '@envapi/client';
const api = createClient({ baseUrl: 'http://127.0.0.1:8000', apiKey: 'phx_x' });
export async function checks(): Promise<void> {
  const js = await api.GET('/api/environments/{project_id}/pipeline_destination_configs/{id}/frontend/', { params: { path: { project_id: '1', id: 1 } } });
  const script: string | undefined = js.data;
  // @ts-expect-error the frontend's JavaScript is a string, not a number
  const notNumber: number | undefined = js.data;
  const csv = await api.GET('/api/environments/{project_id}/events/', { params: { path: { project_id: '1' }, query: { format: 'csv' } }, parseAs: 'text' });
  const text: string | undefined = csv.data;
  const events = await api.GET('/api/environments/{project_id}/events/', { params: { path: { project_id: '1' } } });
  const either: components['schemas']['PaginatedClickhouseEventList'] | components['schemas']['EventsSelectResult'] | string | undefined = events.data;
  // @ts-expect-error an unknown path is a type error
  await api.GET('/api/no_such_thing/', {});
  const page = await api.GET('/api/projects/', {});
  if (page.data) for await (const p of paginate(api, page.data)) { const id: number = p.id; void id; }
  void [script, notNumber, text, either, new EnvApiError(400, undefined).code];
}
`;

describe.skipIf(usesPostgres())('the @envapi/client package, packed and installed', () => {
  let t: TestServer;
  let tmp: string;
  let packed: string[] = [];
  let appDir: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-client-pkg-'));
    const pkgDir = path.join(tmp, 'pkg');
    fs.mkdirSync(pkgDir);
    for (const f of ['package.json', 'README.md', 'LICENSE']) fs.copyFileSync(path.join(ROOT, 'client', f), path.join(pkgDir, f));

    // build with the package's own tsup config, into the copy
    const tsup = fs.realpathSync(path.join(ROOT, 'node_modules', '.bin', 'tsup'));
    await sh(process.execPath, [tsup, '--out-dir', path.join(pkgDir, 'dist')], path.join(ROOT, 'client'));

    // pack (no prepack: it is built already)
    const out = JSON.parse(await sh(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], pkgDir)) as {
      filename: string;
      files: { path: string }[];
    }[];
    const tarball = path.join(tmp, out[0]!.filename);
    packed = out[0]!.files.map((f) => f.path).sort();

    // an empty project installs the tarball
    appDir = path.join(tmp, 'app');
    fs.mkdirSync(appDir);
    fs.writeFileSync(
      path.join(appDir, 'package.json'),
      JSON.stringify({ name: 'a-service', version: '1.0.0', private: true, type: 'module' }, null, 2),
    );
    await sh(NPM, ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], appDir);
    fs.writeFileSync(path.join(appDir, 'service.ts'), SERVICE_ESM);
    fs.writeFileSync(path.join(appDir, 'service-cjs.cts'), SERVICE_CJS);
    fs.writeFileSync(path.join(appDir, 'type-checks.ts'), TYPE_CHECKS);
    fs.writeFileSync(
      path.join(appDir, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2022'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: false,
            outDir: 'out',
            // a service has @types/node; this one borrows the root's
            typeRoots: [path.join(ROOT, 'node_modules', '@types')],
            types: ['node'],
          },
          files: ['service.ts', 'service-cjs.cts', 'type-checks.ts'],
        },
        null,
        2,
      ),
    );
    t = await startTestServer();
  }, 4 * STEP_MS);

  afterAll(async () => {
    await t?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the tarball holds only the build, package.json, README.md and LICENSE', () => {
    expect(packed).toEqual(PACKED_FILES);
  });

  it('installs with openapi-fetch as its only dependency and no copy of the repository', () => {
    const installed = JSON.parse(fs.readFileSync(path.join(appDir, 'node_modules', '@envapi', 'client', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(installed.dependencies).toEqual({ 'openapi-fetch': root.dependencies['openapi-fetch'] });
    for (const f of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      const text = fs.readFileSync(path.join(appDir, 'node_modules', '@envapi', 'client', 'dist', f), 'utf8');
      expect(text, f).not.toMatch(/generated\/api|\.\.\//);
    }
  });

  it(
    'a three-line service type-checks under NodeNext (ESM and CJS) with the published types',
    async () => {
      await sh(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], appDir);
      expect(fs.existsSync(path.join(appDir, 'out', 'service.js'))).toBe(true);
      expect(fs.readFileSync(path.join(appDir, 'out', 'service-cjs.cjs'), 'utf8')).toContain('require("@envapi/client")');
    },
    STEP_MS,
  );

  it(
    'the ESM service, run by plain node, gets a 200 answer from the real server',
    async () => {
      const out = await sh(process.execPath, ['out/service.js'], appDir, { ENVAPI_URL: t.url, ENVAPI_KEY: t.boot.key });
      expect(JSON.parse(out.trim()) as number[]).toContain(t.boot.team.id);
    },
    STEP_MS,
  );

  it(
    'the CJS entry, loaded by require, gets a 200 answer and a CSV answer as a string',
    async () => {
      const out = await sh(process.execPath, ['out/service-cjs.cjs'], appDir, {
        ENVAPI_URL: t.url,
        ENVAPI_KEY: t.boot.key,
        ENVAPI_PROJECT: String(t.boot.team.id),
      });
      const r = JSON.parse(out.trim()) as { status: number; ids: number[]; csvType: string; entry: string };
      expect(r.status).toBe(200);
      expect(r.ids).toContain(t.boot.team.id);
      expect(r.csvType).toBe('string');
      expect(path.basename(r.entry)).toBe('index.cjs');
    },
    STEP_MS,
  );
});
