/**
 * Cancellation of a read on a ClickHouse server (server/storage/clickhouse/kysely-dialect.ts,
 * `cancelOnBudget`): the read carries its budget as `max_execution_time` and
 * `cancel_http_readonly_queries_on_client_close=1`, and when the server has not answered
 * `CANCEL_GRACE_MS` after the budget, the client closes the request, which is what makes the
 * server cancel the query, and the read fails with `QueryTimeoutError` (504). No ClickHouse
 * server can run here: a local HTTP server stands in for one that never answers, and records
 * what it was sent and that the connection closed.
 */
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseKysely } from '../../server/storage/clickhouse/kysely-dialect.js';
import { QueryTimeoutError } from '../../server/storage/errors.js';

let server: http.Server;
let url = '';
const seen: { query: string; closed: Promise<void> }[] = [];

beforeAll(async () => {
  server = http.createServer((req: IncomingMessage) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    const closed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push({ query: (u.searchParams.get('query') ?? '') + body, closed });
      // never answers: a query the server keeps running
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('a read on a ClickHouse server past its budget', () => {
  it('is sent with the budget and the cancel setting, then its request is closed and it fails with QueryTimeoutError', async () => {
    const client = createClient({ url, request_timeout: 600_000 });
    const db = clickhouseKysely({ client, maxQueries: 1, budgetMs: 300, cancelOnBudget: true });
    try {
      await expect(sql`select count() from events`.execute(db)).rejects.toBeInstanceOf(QueryTimeoutError);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.query).toMatch(/SETTINGS .*max_execution_time=1\b/);
      expect(seen[0]!.query).toMatch(/cancel_http_readonly_queries_on_client_close=1/);
      await seen[0]!.closed;
    } finally {
      await client.close();
    }
  });

  it('embedded (no cancelOnBudget) leaves the stop to the engine: no cancel setting is sent', async () => {
    seen.length = 0;
    const client = createClient({ url, request_timeout: 1_000 });
    const db = clickhouseKysely({ client, maxQueries: 1, budgetMs: 300 });
    try {
      await expect(sql`select 1`.execute(db)).rejects.toThrow();
      expect(seen[0]!.query).not.toMatch(/cancel_http_readonly_queries_on_client_close/);
    } finally {
      await client.close();
    }
  });
});
