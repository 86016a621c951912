/**
 * Limits and protocol edges: per-key rate limits (PostHog's classes, small limits here), 413 / 415
 * / parse_error, `/_health` and `/_readyz`, request ids, and the request log (which must never
 * carry a key).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../server/app.js';
import { bootstrap } from '../../server/bootstrap.js';
import {
  DEFAULT_RATE_LIMITS,
  parseRates,
  RateClassError,
  rateClassesOf,
  readRateLimitConfig,
  type RateLimitConfig,
} from '../../server/http/rate-limit.js';
import { loadSpec } from '../../server/http/spec.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { ApiKeysRepository } from '../../server/storage/repositories/api-keys.js';

interface App {
  url: string;
  store: Store;
  key: string;
  projectId: number;
  /** another key of the same owner */
  newKey(): Promise<string>;
  /** log lines written so far */
  logs: string[];
  fetch(p: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

async function start(opts: { rateLimit?: RateLimitConfig | false } = {}): Promise<App> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-limits-'));
  const store = openStore({ dataDir: dir });
  await migrateToLatest(store);
  const b = await bootstrap(store);
  if (!b.key || !b.team || !b.user) throw new Error('bootstrap did not run');
  const user = b.user;
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const errors: unknown[] = [];
  const app = createApp({
    store,
    validateResponses: true,
    rateLimit: opts.rateLimit ?? false,
    logger,
    onServerError: (e) => errors.push(e),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys = new ApiKeysRepository(store.db);
  const key = b.key;
  return {
    url,
    store,
    key,
    projectId: b.team.id,
    logs,
    async newKey() {
      return (await keys.create({ user_id: user.id, label: 'limits', scopes: ['*'], scoped_teams: null })).key;
    },
    fetch(p, init = {}) {
      const headers = new Headers(init.headers);
      const k = init.key === undefined ? key : init.key;
      if (k) headers.set('Authorization', `Bearer ${k}`);
      return fetch(url + p, { ...init, headers });
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
      if (errors.length) throw new Error(`unexpected server error: ${String(errors[0])}`);
    },
  };
}

const MINUTE = 60_000;
const small: RateLimitConfig = {
  classes: {
    events: [{ limit: 5, windowMs: MINUTE }],
    event_values: [{ limit: 2, windowMs: MINUTE }],
    query: [{ limit: 2, windowMs: MINUTE }],
    default: [
      { limit: 100, windowMs: MINUTE },
      { limit: 3, windowMs: 3_600_000 },
    ],
  },
};

/** A request log line, as far as these tests read it. */
interface LogLine {
  req?: { id?: string; method?: string; path?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

describe('rate limits', () => {
  let t: App;
  beforeAll(async () => {
    t = await start({ rateLimit: small });
  });
  afterAll(async () => t?.close());

  const events = () => `/api/environments/${t.projectId}/events/`;
  const values = () => `/api/environments/${t.projectId}/events/values/?key=event`;
  const configs = () => `/api/environments/${t.projectId}/pipeline_frontend_apps_configs/`;

  it('the values class is limited before the list class; then 429 with PostHog body and Retry-After', async () => {
    const key = await t.newKey();
    for (let i = 0; i < 2; i++) expect((await t.fetch(values(), { key })).status).toBe(200);
    const res = await t.fetch(values(), { key });
    expect(res.status).toBe(429);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    expect(body).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null });
    expect(body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds\.$/);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(body.detail).toBe(`Request was throttled. Expected available in ${retryAfter} seconds.`);
    // same key, events list: its own class still has room
    expect((await t.fetch(events(), { key })).status).toBe(200);
  });

  it('the events class: list and retrieve share 5/minute; then 429', async () => {
    const key = await t.newKey();
    for (let i = 0; i < 4; i++) expect((await t.fetch(events(), { key })).status).toBe(200);
    expect((await t.fetch(`/api/environments/${t.projectId}/events/00000000-0000-0000-0000-000000000000/`, { key })).status).toBe(404);
    expect((await t.fetch(events(), { key })).status).toBe(429);
    // the default class is separate
    expect((await t.fetch(configs(), { key })).status).toBe(200);
  });

  it("the query class (PostHog's APIQueriesThrottle): both prefixes share 2/minute here; then 429; the events class is separate", async () => {
    const key = await t.newKey();
    const query = (prefix: string) =>
      t.fetch(`/api/${prefix}/${t.projectId}/query/`, {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query: 'select 1' } }),
      });
    expect((await query('environments')).status).toBe(200);
    expect((await query('projects')).status).toBe(200);
    expect((await query('environments')).status).toBe(429);
    expect((await t.fetch(events(), { key })).status).toBe(200);
  });

  it('every window of a class applies (default: 3/hour here) and another key is not affected', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    for (let i = 0; i < 3; i++) expect((await t.fetch(configs(), { key: a })).status).toBe(200);
    const res = await t.fetch(configs(), { key: a });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(60);
    expect((await t.fetch(configs(), { key: b })).status).toBe(200);
  });

  it('requests without a valid key are not counted: 401, not 429', async () => {
    for (let i = 0; i < 8; i++) expect((await t.fetch(values(), { key: null })).status).toBe(401);
    for (let i = 0; i < 8; i++) expect((await t.fetch(values(), { key: 'phx_notavalidkey' })).status).toBe(401);
  });

  it('off when disabled', async () => {
    const off = await start({ rateLimit: false });
    try {
      for (let i = 0; i < 10; i++)
        expect((await off.fetch(`/api/environments/${off.projectId}/events/values/?key=event`)).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

describe('rate-limit configuration', () => {
  it("classes are PostHog's, as the spec declares them (x-rate-limit-class)", () => {
    const classes = rateClassesOf(loadSpec());
    expect(classes.get('environments_events_list')).toBe('events');
    expect(classes.get('environments_events_retrieve')).toBe('events');
    expect(classes.get('environments_events_values_retrieve')).toBe('event_values');
    expect(classes.get('environments_dashboards_list')).toBe('default');
    // the /api/projects/{project_id}/ copies are throttled as their twins
    expect(classes.get('events_list')).toBe('events');
    expect(classes.get('events_retrieve')).toBe('events');
    expect(classes.get('events_values_retrieve')).toBe('event_values');
    expect(classes.get('environments_query_create')).toBe('query');
    expect(classes.get('query_create')).toBe('query');
    expect([...classes.values()].filter((c) => c !== 'default')).toHaveLength(8);
  });

  it('createApp refuses a spec with an operation without a valid class, rate limits on or off', () => {
    const spec = loadSpec();
    delete (spec.paths['/api/environments/{project_id}/events/'] as Record<string, Record<string, unknown>>).get!['x-rate-limit-class'];
    const store = { db: undefined } as unknown as Store;
    for (const rateLimit of [DEFAULT_RATE_LIMITS, false] as const)
      expect(() => createApp({ store, spec, rateLimit })).toThrow(RateClassError);
  });

  it("defaults to PostHog's limits, on", () => {
    expect(readRateLimitConfig({})).toEqual(DEFAULT_RATE_LIMITS);
    expect(DEFAULT_RATE_LIMITS.classes.events.map((w) => w.limit)).toEqual([240, 1200]);
    expect(DEFAULT_RATE_LIMITS.classes.event_values.map((w) => w.limit)).toEqual([60, 300]);
    expect(DEFAULT_RATE_LIMITS.classes.query.map((w) => w.limit)).toEqual([240, 2400]);
    expect(DEFAULT_RATE_LIMITS.classes.default.map((w) => w.limit)).toEqual([480, 4800]);
  });

  it('RATE_LIMIT_ENABLED=0/false/off disables; multiplier and per-class rates apply', () => {
    for (const v of ['0', 'false', 'off', 'OFF']) expect(readRateLimitConfig({ RATE_LIMIT_ENABLED: v })).toBe(false);
    const c = readRateLimitConfig({ RATE_LIMIT_MULTIPLIER: '2', RATE_LIMIT_EVENT_VALUES: '7/second,10/day' });
    expect(c && c.classes.events.map((w) => w.limit)).toEqual([480, 2400]);
    expect(c && c.classes.event_values).toEqual([
      { limit: 14, windowMs: 1000 },
      { limit: 20, windowMs: 86_400_000 },
    ]);
    expect(() => parseRates('RATE_LIMIT_DEFAULT', '10 per minute')).toThrow(/RATE_LIMIT_DEFAULT/);
    expect(() => readRateLimitConfig({ RATE_LIMIT_MULTIPLIER: '-1' })).toThrow(/RATE_LIMIT_MULTIPLIER/);
  });
});

describe('protocol edges, health, request ids and logs', () => {
  let t: App;
  beforeAll(async () => {
    t = await start();
  });
  afterAll(async () => t?.close());

  const create = () => `/api/environments/${t.projectId}/pipeline_frontend_apps_configs/`;

  it('a 2 MiB body answers 413 request_too_large', async () => {
    const body = JSON.stringify({ plugin: 1, config: { big: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await t.fetch(create(), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      type: 'invalid_request',
      code: 'request_too_large',
      detail: 'Request body is too large.',
      attr: null,
    });
  });

  it('a text/plain body on a JSON operation answers 415 unsupported_media_type', async () => {
    const res = await t.fetch(create(), { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"plugin": 1}' });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      type: 'invalid_request',
      code: 'unsupported_media_type',
      detail: 'Unsupported media type "text/plain" in request.',
      attr: null,
    });
  });

  it('a POST with no body at all reads as {}: the required fields answer 400, not 415 (as DRF)', async () => {
    const query = await t.fetch(`/api/environments/${t.projectId}/query/`, { method: 'POST' });
    expect(query.status).toBe(400);
    expect(await query.json()).toMatchObject({ type: 'validation_error', code: 'required', attr: 'query' });
    const config = await t.fetch(create(), { method: 'POST' });
    expect(config.status).toBe(400);
  });

  it('malformed JSON answers 400 parse_error', async () => {
    const res = await t.fetch(create(), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"plugin": ' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'invalid_request', code: 'parse_error', attr: null });
  });

  it('GET /_health answers 200 {"status":"ok"} without a key', async () => {
    const res = await t.fetch('/_health', { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /_readyz answers 200 while storage works, 503 once it is closed', async () => {
    const res = await t.fetch('/_readyz', { key: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });

    const other = await start();
    await other.store.close();
    try {
      const down = await other.fetch('/_readyz', { key: null });
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'unavailable' });
    } finally {
      // close() closes the store again: tolerate it
      await other.close().catch(() => undefined);
    }
  });

  it('echoes an incoming X-Request-Id, otherwise generates one', async () => {
    const echoed = await t.fetch('/_health', { headers: { 'X-Request-Id': 'abc-123.def' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123.def');
    const generated = await t.fetch(`/api/environments/${t.projectId}/events/`);
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const error = await t.fetch(`/api/environments/${t.projectId}/events/`, { key: null });
    expect(error.status).toBe(401);
    expect(error.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // a header that is not a plain token is replaced
    const weird = await t.fetch('/_health', { headers: { 'X-Request-Id': 'a b<script>' } });
    expect(weird.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs method, path, status, duration and request id, and never a key', async () => {
    const secret = t.key;
    const start = t.logs.length;
    const res = await t.fetch(`/api/environments/${t.projectId}/events/?personal_api_key=${secret}&limit=1`, {
      headers: { 'X-Request-Id': 'log-test-1' },
    });
    expect(res.status).toBe(200);
    await t.fetch(`/api/environments/${t.projectId}/events/`, { key: 'phx_wrongkey123' });
    await t.fetch(`/api/environments/${t.projectId}/events/${secret}/`);
    // pino writes each line when the response has finished: wait for the three
    await vi.waitFor(() => expect(t.logs.length - start).toBeGreaterThanOrEqual(3));
    const lines = t.logs.slice(start).map((l) => JSON.parse(l) as LogLine);
    const line = lines.find((l) => l.req?.id === 'log-test-1');
    expect(line).toMatchObject({
      req: { id: 'log-test-1', method: 'GET', path: `/api/environments/${t.projectId}/events/` },
      res: { statusCode: 200 },
    });
    expect(typeof line?.responseTime).toBe('number');
    expect(lines.some((l) => l.res?.statusCode === 401)).toBe(true);
    const all = t.logs.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice(4));
    expect(all).not.toContain('phx_wrongkey123');
    expect(all).not.toMatch(/authorization/i);
    expect(all).not.toContain('personal_api_key');
  });
});
