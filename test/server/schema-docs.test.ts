/**
 * The contract and its reference, served (issue 21): `GET /api/schema/` (`schema_retrieve`,
 * server/http/schema.ts) answers the contract without a key, YAML by default and JSON by `format`
 * or `Accept` as drf-spectacular negotiates; `GET /docs` (server/http/docs.ts) answers the page
 * built by `npm run gen`; and the events operations that answer CSV do so for `Accept: text/csv`
 * as for `format=csv` (DRF's content negotiation), `format` winning when both are given. Through
 * the real HTTP stack with response validation on, on both stores.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../server/app.js';
import { createHttpServer } from '../../server/http/compose.js';
import { DOCS_HTML_PATH } from '../../server/http/docs.js';
import { negotiate } from '../../server/http/negotiate.js';
import { loadSpec, SPEC_PATH } from '../../server/http/spec.js';
import { EventsWriteRepository } from '../../server/storage/repositories/events-write.js';
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
const EVENT_ID = randomUUID();

beforeAll(async () => {
  t = await startTestServer();
  await t.store.db.transaction().execute(async (trx) => {
    await new EventsWriteRepository(trx).insertEvents(t.boot.team.id, [
      { uuid: EVENT_ID, event: '$pageview', distinct_id: 'user-1', properties: { $browser: 'Firefox', $current_url: 'https://hedgebox.net/' }, timestamp: new Date().toISOString(), elements_chain: '' },
    ]);
  });
});

afterAll(async () => {
  await t?.close();
});

/** A request without any key. */
const anonymous = (path: string, headers: Record<string, string> = {}) => fetch(t.url + path, { headers });

describe('GET /api/schema/', () => {
  it('without a key, answers the bytes of openapi.yaml as application/vnd.oai.openapi', async () => {
    const res = await anonymous('/api/schema/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.oai.openapi; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/Accept/);
    expect(await res.text()).toBe(fs.readFileSync(SPEC_PATH, 'utf8'));
  });

  it('with ?format=json, answers the parsed contract as application/vnd.oai.openapi+json', async () => {
    const res = await anonymous('/api/schema/?format=json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.oai.openapi+json; charset=utf-8');
    expect(await res.json()).toEqual(loadSpec());
  });

  it('with Accept: application/json, answers application/json; with Accept: application/yaml, YAML', async () => {
    const json = await anonymous('/api/schema', { Accept: 'application/json' });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await json.json()).toEqual(loadSpec());
    const yaml = await anonymous('/api/schema/', { Accept: 'application/yaml' });
    expect(yaml.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    expect(parseYaml(await yaml.text())).toEqual(loadSpec());
  });

  it('format wins over Accept: ?format=yaml with Accept: application/json answers YAML', async () => {
    const res = await anonymous('/api/schema/?format=yaml', { Accept: 'application/json' });
    expect(res.headers.get('content-type')).toBe('application/vnd.oai.openapi; charset=utf-8');
    expect(parseYaml(await res.text())).toEqual(loadSpec());
  });

  it('with a key, answers the same (the key is not needed, and not refused)', async () => {
    const res = await t.fetch('/api/schema/?format=json');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(loadSpec());
  });

  it('with an unknown key, answers 401 authentication_failed (a key sent must be valid, as DRF authenticates it)', async () => {
    const res = await t.fetch('/api/schema/', { key: `phx_${'0'.repeat(43)}` });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'authentication_error', code: 'authentication_failed', attr: null });
  });

  it('HEAD answers the headers of GET without a body', async () => {
    const get = await anonymous('/api/schema/');
    const head = await fetch(`${t.url}/api/schema/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
  });

  it('answers 400 invalid_choice with attr format for a format other than yaml and json', async () => {
    const res = await anonymous('/api/schema/?format=xml');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ type: 'validation_error', code: 'invalid_choice', detail: '"xml" is not a valid choice.', attr: 'format' });
  });
});

describe('GET /docs', () => {
  it('answers the built reference page (generated/api-docs.html) as text/html, without a key', async () => {
    const res = await anonymous('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const body = await res.text();
    expect(body).toBe(fs.readFileSync(DOCS_HTML_PATH, 'utf8'));
    expect(body).toContain('envapi — PostHog environment API');
    // no script, image or stylesheet from another host in the markup (links to read elsewhere are fine)
    expect(body).not.toMatch(/\ssrc="https?:\/\//);
    expect(body).not.toMatch(/<link[^>]*\shref="https?:\/\//);
  });

  it('answers gzip to a client that accepts it, and the same page once decompressed; /docs/ too', async () => {
    const { request } = await import('node:http');
    const raw = await new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      const req = request(`${t.url}/docs/`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(raw.status).toBe(200);
    expect(raw.encoding).toBe('gzip');
    expect(gunzipSync(raw.body).equals(fs.readFileSync(DOCS_HTML_PATH))).toBe(true);
  });

  it('HEAD answers the headers only; POST answers 405 with Allow: GET, HEAD', async () => {
    const head = await fetch(`${t.url}/docs`, { method: 'HEAD', headers: { 'Accept-Encoding': 'identity' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(fs.statSync(DOCS_HTML_PATH).size));
    const post = await fetch(`${t.url}/docs`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('Accept: text/csv on the operations that answer CSV', () => {
  const pid = () => t.boot.team.id;
  const paths = () => [`/api/environments/${pid()}/events/`, `/api/projects/${pid()}/events/values/?key=$browser`, `/api/environments/${pid()}/events/${EVENT_ID}/`];

  it('answers the same text/csv as format=csv (events list, values, retrieve)', async () => {
    for (const path of paths()) {
      const byAccept = await t.fetch(path, { headers: { Accept: 'text/csv' } });
      const byFormat = await t.fetch(path + (path.includes('?') ? '&' : '?') + 'format=csv');
      expect(byAccept.status, path).toBe(200);
      expect(byAccept.headers.get('content-type'), path).toMatch(/^text\/csv/);
      expect(byAccept.headers.get('vary'), path).toMatch(/Accept/);
      const text = await byAccept.text();
      expect(text, path).toBe(await byFormat.text());
      expect(text.length, path).toBeGreaterThan(0);
    }
  });

  it('format wins: format=json with Accept: text/csv answers JSON', async () => {
    for (const path of paths()) {
      const res = await t.fetch(path + (path.includes('?') ? '&' : '?') + 'format=json', { headers: { Accept: 'text/csv' } });
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      await res.json();
    }
  });

  it('JSON as DRF chooses it: Accept: text/csv, application/json (JSON offered first), */*, or no Accept', async () => {
    for (const accept of ['text/csv, application/json', 'application/json', '*/*', undefined, 'text/html']) {
      const res = await t.fetch(`/api/environments/${pid()}/events/`, accept === undefined ? {} : { headers: { Accept: accept } });
      expect(res.headers.get('content-type'), String(accept)).toMatch(/^application\/json/);
      await res.json();
    }
    // a full type is preferred to a wildcard, whatever the order and q values
    const csv = await t.fetch(`/api/environments/${pid()}/events/`, { headers: { Accept: '*/*;q=1, text/csv;q=0.1' } });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  });
});

describe('x-required-detail on a required query parameter', () => {
  it("a contract declaring the events values' key required, with PostHog's message, answers that message when key is missing", async () => {
    const spec = loadSpec();
    const op = (spec.paths['/api/environments/{project_id}/events/values/'] as Record<string, { parameters: Array<Record<string, unknown>> }>).get!;
    const key = op.parameters.find((p) => p.name === 'key')!;
    Object.assign(key, { required: true, 'x-required-detail': 'You must provide a key' });
    const server = createHttpServer(createApp({ store: t.store, spec, rateLimit: false, logger: silentLogger() }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/environments/${t.boot.team.id}/events/values/`;
      const res = await fetch(url, { headers: { Authorization: `Bearer ${t.boot.key}` } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: 'validation_error', code: 'required', detail: 'You must provide a key', attr: 'key' });
      // with key, the same contract answers
      const ok = await fetch(`${url}?key=$browser`, { headers: { Authorization: `Bearer ${t.boot.key}` } });
      expect(ok.status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('negotiate (DRF content negotiation)', () => {
  const offered = ['application/json', 'text/csv'];
  it.each([
    [undefined, 'application/json'],
    ['text/csv', 'text/csv'],
    ['TEXT/CSV', 'text/csv'],
    ['text/csv;q=0.1, application/json', 'application/json'],
    ['application/json, text/csv', 'application/json'],
    ['text/*', 'text/csv'],
    ['text/csv, */*', 'text/csv'],
    ['application/xml', undefined],
    ['text/csv;header=present', undefined],
    ['', 'application/json'],
  ])('Accept %j picks %j', (accept, expected) => {
    expect(negotiate(accept, offered)).toBe(expected);
  });
});
