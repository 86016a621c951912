/**
 * The contract and its reference, served (issues 21 and 37): `GET /api/schema/` (`schema_retrieve`,
 * server/http/schema.ts) answers the contract without a key, YAML by default and JSON by `format`
 * or `Accept` as drf-spectacular negotiates, and in a type a browser displays when the client is
 * a browser; `GET /docs` (server/http/docs.ts) answers the page built by `npm run gen`, whose
 * document lists each operation once (scripts/gen-docs-html.mjs: the `/api/projects/` twins, their
 * `/api/environments/` aliases named); `GET /` leads a browser there and answers other clients
 * the JSON 404; the start banner names the reference's URL; and the events operations that answer
 * CSV do so for `Accept: text/csv` as for `format=csv` (DRF's content negotiation), `format`
 * winning when both are given. Through the real HTTP stack with response validation on, on both
 * stores.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../server/app.js';
import { DOCS_HTML_PATH } from '../../server/http/docs.js';
import { negotiate, prefersHtml } from '../../server/http/negotiate.js';
import { listCaptureOperations, listOperations, loadSpec, SPEC_PATH, type OpenApiDocument } from '../../server/http/spec.js';
import { readConfig } from '../../server/config.js';
import { startServer } from '../../server/main.js';
import { insertEvents } from '../helpers/events-store.js';
import { silentLogger, startTestServer, type TestServer } from '../helpers/server.js';
import { environmentsTwin, projectsCopies } from '../helpers/spec.js';

let t: TestServer;
const EVENT_ID = randomUUID();

beforeAll(async () => {
  t = await startTestServer();
  await insertEvents(t.store, t.boot.team.id, [
    {
      uuid: EVENT_ID,
      event: '$pageview',
      distinct_id: 'user-1',
      properties: { $browser: 'Firefox', $current_url: 'https://hedgebox.net/' },
      timestamp: new Date().toISOString(),
      elements_chain: '',
    },
  ]);
});

afterAll(async () => {
  await t?.close();
});

/** A request without any key. */
const anonymous = (path: string, headers: Record<string, string> = {}) => fetch(t.url + path, { headers });

/** What Chromium sends for a page it navigates to. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
/** What Firefox sends. */
const FIREFOX_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GET /api/schema/', () => {
  it('without a key, answers the bytes of the contract (generated/openapi.bundle.yaml) as application/vnd.oai.openapi', async () => {
    const res = await anonymous('/api/schema/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.oai.openapi; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/Accept/);
    const text = await res.text();
    expect(text).toBe(fs.readFileSync(SPEC_PATH, 'utf8'));
    // with the generated /api/projects/ copies, which the hand-written openapi.yaml does not hold
    expect(text).toContain('\n  /api/projects/{project_id}/dashboards/:\n');
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

  it('in a browser (Accept prefers text/html), answers the same YAML as text/plain, and with ?format=json the JSON as application/json', async () => {
    for (const accept of [BROWSER_ACCEPT, FIREFOX_ACCEPT, 'text/html']) {
      for (const query of ['', '?format=yaml']) {
        const yaml = await anonymous(`/api/schema/${query}`, { Accept: accept });
        expect(yaml.status).toBe(200);
        expect(yaml.headers.get('content-type'), `${accept} ${query}`).toBe('text/plain; charset=utf-8');
        expect(yaml.headers.get('vary')).toMatch(/Accept/);
        expect(await yaml.text()).toBe(fs.readFileSync(SPEC_PATH, 'utf8'));
      }
      const json = await anonymous('/api/schema/?format=json', { Accept: accept });
      expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await json.json()).toEqual(loadSpec());
    }
    // HEAD from a browser: the same headers
    const head = await fetch(`${t.url}/api/schema/`, { method: 'HEAD', headers: { Accept: BROWSER_ACCEPT } });
    expect(head.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await head.text()).toBe('');
  });

  it('tools keep their media types: */* answers application/vnd.oai.openapi; Accept: text/plain (or text/*) answers the YAML as text/plain', async () => {
    const any = await anonymous('/api/schema/', { Accept: '*/*' });
    expect(any.headers.get('content-type')).toBe('application/vnd.oai.openapi; charset=utf-8');
    await any.text();
    const json = await anonymous('/api/schema/?format=json', { Accept: '*/*' });
    expect(json.headers.get('content-type')).toBe('application/vnd.oai.openapi+json; charset=utf-8');
    await json.json();
    for (const accept of ['text/plain', 'text/*']) {
      const text = await anonymous('/api/schema/', { Accept: accept });
      expect(text.headers.get('content-type'), accept).toBe('text/plain; charset=utf-8');
      expect(await text.text()).toBe(fs.readFileSync(SPEC_PATH, 'utf8'));
    }
  });

  it('answers 400 invalid_choice with attr format for a format other than yaml and json', async () => {
    const res = await anonymous('/api/schema/?format=xml');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_choice',
      detail: '"xml" is not a valid choice.',
      attr: 'format',
    });
  });
});

describe('GET /', () => {
  it('in a browser (Accept prefers text/html), answers 302 to /docs, with Vary: Accept; HEAD likewise', async () => {
    for (const accept of [BROWSER_ACCEPT, FIREFOX_ACCEPT, 'text/html']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(`${t.url}/`, { method, headers: { Accept: accept }, redirect: 'manual' });
        expect(res.status, `${method} ${accept}`).toBe(302);
        expect(res.headers.get('location')).toBe('/docs');
        expect(res.headers.get('vary')).toMatch(/Accept/);
        const body = await res.text();
        if (method === 'HEAD') expect(body).toBe('');
      }
    }
    // followed, it is the reference page
    const followed = await anonymous('/', { Accept: BROWSER_ACCEPT });
    expect(followed.url).toBe(`${t.url}/docs`);
    expect(followed.headers.get('content-type')).toBe('text/html; charset=utf-8');
    await followed.text();
  });

  it("for an API client (no Accept, */*, application/json, or JSON named before HTML), answers PostHog's JSON 404 as before", async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html']) {
      for (const query of ['', '?x=1']) {
        const res = await fetch(`${t.url}/${query}`, { headers: accept === undefined ? {} : { Accept: accept }, redirect: 'manual' });
        expect(res.status, String(accept)).toBe(404);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(res.headers.get('location')).toBeNull();
        expect(await res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
      }
    }
    // a method other than GET is not led anywhere
    const post = await fetch(`${t.url}/`, { method: 'POST', headers: { Accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect(post.headers.get('location')).toBeNull();
    expect((await post.json()) as unknown).toMatchObject({ type: 'invalid_request' });
  });
});

describe('the start banner', () => {
  it('prints the API reference URL on the line after the listening line, which keeps its format', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-banner-'));
    const lines: string[] = [];
    const config = readConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dir, EVENTS_READ_THREADS: '0', LOG_LEVEL: 'silent' });
    const running = await startServer(config, (line) => lines.push(line));
    try {
      const at = lines.findIndex((l) => l.startsWith('envapi listening on '));
      expect(at, lines.join('\n')).toBeGreaterThanOrEqual(0);
      // the pattern test/helpers/process.ts and scripts/contract-proxy.ts read the URL with
      expect(/envapi listening on (http:\/\/\S+)/.exec(lines[at]!)?.[1]).toBe(running.url);
      expect(lines[at + 1]).toBe(`API reference: ${running.url}/docs`);
      const page = await fetch(`${running.url}/docs`);
      expect(page.status).toBe(200);
      await page.text();
    } finally {
      await running.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The document embedded in the built reference page (Redoc's `const __redoc_definition = {…};` line). */
function pageDocument(): OpenApiDocument {
  const marker = 'const __redoc_definition = ';
  const line = fs
    .readFileSync(DOCS_HTML_PATH, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith(marker));
  if (!line) throw new Error(`${DOCS_HTML_PATH} embeds no ${marker.trim()}: revisit this test for the @redocly/cli version`);
  return JSON.parse(line.slice(marker.length).replace(/;$/, '')) as OpenApiDocument;
}

describe("the reference page's document (generated/api-docs.html)", () => {
  type Op = { operationId: string; summary?: string; description?: string; tags?: string[] };
  const contract = loadSpec();
  const shown = pageDocument();
  const opOf = (doc: OpenApiDocument, o: { path: string; method: string }) => (doc.paths[o.path] as Record<string, Op>)[o.method]!;
  const all = (doc: OpenApiDocument) => [...listOperations(doc), ...listCaptureOperations(doc)];

  it('lists each operation once: the /api/projects/ twin, naming its /api/environments/ alias; an operation without a twin as it is', () => {
    const aliases = projectsCopies.map((copy) => ({ copy, alias: environmentsTwin(copy)! }));
    expect(aliases.length).toBeGreaterThan(20);
    for (const { copy, alias } of aliases) {
      expect(shown.paths[alias.path], `${alias.path} is not listed`).toBeUndefined();
      const op = opOf(shown, copy);
      expect(op.operationId).toBe(copy.operationId);
      expect(op.description, copy.operationId).toContain(
        `**Also served at** \`${alias.method.toUpperCase()} ${alias.path}\` (operationId \`${alias.operationId}\`)`,
      );
      // the rest of the operation is the contract's
      expect({ ...op, description: undefined }).toEqual({ ...opOf(contract, copy), description: undefined });
      expect(op.description!.startsWith(opOf(contract, copy).description!.trimEnd())).toBe(true);
    }
    const aliased = new Set(aliases.map((a) => a.alias.operationId));
    const twins = new Set(aliases.map((a) => a.copy.operationId));
    for (const o of all(contract)) {
      if (aliased.has(o.operationId) || twins.has(o.operationId)) continue;
      expect(opOf(shown, o), o.operationId).toEqual(opOf(contract, o));
    }
    const listed = all(shown).map((o) => o.operationId);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed.sort()).toEqual(
      all(contract)
        .map((o) => o.operationId)
        .filter((id) => !aliased.has(id))
        .sort(),
    );
    // components, tags and servers as in the contract; the intro says how the page lists operations
    expect(shown.components).toEqual(contract.components);
    expect(shown.tags).toEqual(contract.tags);
    expect((shown.info as { description: string }).description).toContain('## This reference');
  });

  it('gives no two operations of one tag the same summary (the sidebar label)', () => {
    const byTag = new Map<string, string[]>();
    for (const o of all(shown)) {
      const op = opOf(shown, o);
      expect(op.summary, o.operationId).toBeTruthy();
      const tag = op.tags?.[0] ?? '';
      byTag.set(tag, [...(byTag.get(tag) ?? []), op.summary!]);
    }
    for (const [tag, summaries] of byTag) expect(new Set(summaries).size, `${tag}: ${summaries.join(' | ')}`).toBe(summaries.length);
  });

  it('keeps the contract (generated/openapi.bundle.yaml), what the server loads and GET /api/schema/ with both prefixes', async () => {
    for (const { copy, alias } of projectsCopies.map((c) => ({ copy: c, alias: environmentsTwin(c)! }))) {
      expect(contract.paths[alias.path], alias.path).toBeDefined();
      expect(contract.paths[copy.path], copy.path).toBeDefined();
    }
    const served = (await (await anonymous('/api/schema/?format=json')).json()) as OpenApiDocument;
    expect(served).toEqual(contract);
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
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }),
        );
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
  const paths = () => [
    `/api/environments/${pid()}/events/`,
    `/api/projects/${pid()}/events/values/?key=$browser`,
    `/api/environments/${pid()}/events/${EVENT_ID}/`,
  ];

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
    const op = (
      spec.paths['/api/environments/{project_id}/events/values/'] as Record<string, { parameters: Array<Record<string, unknown>> }>
    ).get!;
    const key = op.parameters.find((p) => p.name === 'key')!;
    Object.assign(key, { required: true, 'x-required-detail': 'You must provide a key' });
    const server = http.createServer(createApp({ store: t.store, spec, rateLimit: false, logger: silentLogger() }));
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

describe('prefersHtml (a browser, in DRF terms)', () => {
  it.each([
    [BROWSER_ACCEPT, true],
    [FIREFOX_ACCEPT, true],
    ['text/html', true],
    ['TEXT/HTML;q=0.5', true],
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/html', false],
    // of the offered types only text/html is a text/*; with text/plain offered before it, text/plain
    ['text/*', true],
  ])('Accept %j: %j', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });

  it('prefers a data type offered before text/html that the client names as well', () => {
    expect(prefersHtml('text/*', ['application/yaml', 'text/plain'])).toBe(false);
    expect(prefersHtml(BROWSER_ACCEPT, ['application/yaml', 'text/plain'])).toBe(true);
    expect(prefersHtml('application/yaml, text/html', ['application/yaml'])).toBe(false);
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
