/**
 * The production start path of `npm start`: the TypeScript build (`npm run build`: `envapi build`,
 * tsconfig.build.json → dist/, under the build's lock so that it never rewrites dist/ while another
 * test file builds or runs it) and `node dist/server/main.js` on a fresh store. It prints the first key, answers a keyed
 * request with 200 from the compiled code (contract loaded from generated/openapi.json), and exits 0
 * on SIGTERM. On SQLite, or on a fresh PostgreSQL schema in the PostgreSQL pass.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, spawnListening } from './helpers/process.js';
import { childEnv, createTestStoreLocation, type TestStoreLocation } from './helpers/store.js';

describe('npm start (compiled build)', () => {
  let store: TestStoreLocation;
  beforeAll(async () => {
    store = await createTestStoreLocation('envapi-prod-start-');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/envapi.js'), 'build'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  }, 180_000);
  afterAll(() => store.cleanup());

  it('starts from dist/, serves a keyed request, and exits 0 on SIGTERM', async () => {
    const env = childEnv({ ...store.env, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
    delete env.REDIS_URL;
    const server = await spawnListening(['dist/server/main.js'], env, { timeoutMs: 30_000 });
    const { url } = server;
    try {
      const out = server.output();
      expect(out).toContain(`store: ${store.dialect}`);
      const key = /^\s+(phx_\S+)$/m.exec(out)?.[1];
      expect(key, out).toBeTruthy();
      const res = await fetch(`${url}/api/environments/1/pipeline_frontend_apps_configs/`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ count: 0, results: [] });
      const refused = await fetch(`${url}/api/environments/1/pipeline_frontend_apps_configs/`, {
        headers: { Authorization: 'Bearer phx_wrong' },
      });
      expect(refused.status).toBe(401);
    } finally {
      server.proc.kill('SIGTERM');
    }
    // (the signal too: a run once saw code null, a death by signal, with no output to tell why)
    expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
  }, 180_000);
});
