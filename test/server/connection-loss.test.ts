/**
 * PostgreSQL ending the server's idle connections (a restart, `pg_terminate_backend`,
 * `idle_session_timeout`): the process keeps serving. node-postgres emits such a failure on the
 * pool, and an unheard 'error' event ends a Node process (issue 16's CI run died of one).
 * PostgreSQL pass only: SQLite has no connections to lose.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';

describe.skipIf(!usesPostgres())('PostgreSQL connection loss', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('idle connections ended by PostgreSQL are reported and replaced; the next requests are answered', async () => {
    const lost: Error[] = [];
    // reads in place (no worker threads): every connection of the schema is this store's
    t = await startTestServer({ readPool: { threads: 0 }, onConnectionError: (err) => lost.push(err) });
    expect((await t.fetch('/api/environments/1/dashboards/')).status).toBe(200);
    expect((await t.fetch('/api/environments/1/events/?limit=5')).status).toBe(200);

    const ended = await t.pg!.terminateBackends();
    expect(ended).toBeGreaterThan(0);
    // each idle connection learns of its end when PostgreSQL's notice arrives
    await vi.waitFor(() => expect(lost).toHaveLength(ended), { timeout: 15_000, interval: 20 });
    expect(lost[0]?.message).toMatch(/terminat/i);

    for (const p of [
      '/api/environments/1/dashboards/',
      '/api/environments/1/events/?limit=5',
      '/api/environments/1/pipeline_frontend_apps_configs/',
    ]) {
      expect((await t.fetch(p)).status, p).toBe(200);
    }
  });
});
