/**
 * Simultaneous first starts (issue 7): four real server processes (`node --import tsx
 * server/main.ts`) started at the same instant on one fresh, empty PostgreSQL schema. Exactly one
 * applies the migrations (Kysely's migration lock) and exactly one bootstraps (the bootstrap's
 * advisory lock): one organization, one project, one user, one API key, one copy of the catalog,
 * and one printed key, which every process accepts; every process starts and answers /_readyz.
 *
 * Needs PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test), like
 * test/multiprocess.test.ts; the file is skipped with a message when it is unreachable.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PLUGIN_CATALOG } from '../server/domain/plugin-catalog.js';
import { pgReachable } from './helpers/pg.js';
import { SERVER_FROM_SOURCE, spawnListening, type ListeningProcess } from './helpers/process.js';
import { reportSkip } from './helpers/skips.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PROCESSES = 4;
/** Without the bootstrap lock, 2 of the 4 processes crashed in every round tried; BOOTSTRAP_RACE_ROUNDS repeats it. */
const ROUNDS = Number(process.env.BOOTSTRAP_RACE_ROUNDS || 1);

const reason = (await pgReachable(PG_URL)) ? '' : `PostgreSQL not reachable at ${PG_URL}`;
if (reason) reportSkip('test/bootstrap-race.test.ts', reason, 'start PostgreSQL there or set TEST_DATABASE_URL=postgres://…');

const procs: ChildProcess[] = [];

type Started = ListeningProcess;

/** Spawns a server; resolves once it listens (rejects if it exits first or takes over 60 s). */
function spawnServer(env: Record<string, string>): Promise<Started> {
  const childEnv = { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', REDIS_URL: '' };
  return spawnListening(SERVER_FROM_SOURCE, childEnv, { timeoutMs: 60_000, track: (p) => procs.push(p) });
}

function kill(p: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGKILL');
  });
}

afterAll(async () => {
  await Promise.all(procs.map(kill));
});

describe.skipIf(Boolean(reason))(`${PROCESSES} server processes starting at once on an empty PostgreSQL schema`, () => {
  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${round}: one process migrates, one bootstraps, and all of them serve with its key`, async () => {
      const schema = `envapi_race_${process.pid}_${Date.now()}_${round}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        await admin.query(`create schema ${schema}`);
        const url = new URL(PG_URL);
        url.searchParams.set('options', `-c search_path=${schema}`);
        const env = { DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: '2' };

        const settled = await Promise.allSettled([...Array(PROCESSES)].map(() => spawnServer(env)));
        const failures = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => String(s.reason));
        expect(failures, failures.join('\n\n')).toEqual([]);
        const started = settled.map((s) => (s as PromiseFulfilledResult<Started>).value);

        const outputs = started.map((s) => s.output());
        expect(
          outputs.filter((o) => /Applied migrations:/.test(o)),
          outputs.join('\n----\n'),
        ).toHaveLength(1);
        const printers = outputs.filter((o) => /Personal API key/.test(o));
        expect(printers, outputs.join('\n----\n')).toHaveLength(1);
        const key = /^ {2}(phx_\S+)$/m.exec(printers[0]!)?.[1];
        expect(key).toBeTruthy();

        const count = async (table: string) => Number((await admin.query(`select count(*)::int as n from ${schema}.${table}`)).rows[0].n);
        expect(await count('organizations')).toBe(1);
        expect(await count('teams')).toBe(1);
        expect(await count('users')).toBe(1);
        expect(await count('personal_api_keys')).toBe(1);
        expect(await count('plugins')).toBe(PLUGIN_CATALOG.length);

        for (const s of started) {
          const ready = await fetch(`${s.url}/_readyz`);
          expect(ready.status).toBe(200);
          expect(await ready.json()).toEqual({ status: 'ok' });
          const res = await fetch(`${s.url}/api/environments/1/pipeline_frontend_apps_configs/`, {
            headers: { Authorization: `Bearer ${key}` },
          });
          expect(res.status).toBe(200);
        }
      } finally {
        await Promise.all(procs.splice(0).map(kill));
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      }
    }, 600_000);
  }
});
