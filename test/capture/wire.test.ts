/**
 * The capture endpoints' wire behaviour, through the real HTTP stack (server/capture/): paths and
 * methods, body forms, token places, encodings (gzip by header, by hint and by magic bytes,
 * base64, the form `data=`, `GET ?data=`), PostHog's answers and error texts, CORS.
 */
import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture, listEvents, uuid } from './helpers.js';

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = t.boot.team.api_token;
});
afterAll(async () => {
  await t.close();
});

/** One event named `name` for distinct id `d`, with a fresh uuid (returned in `.uuid`). */
function ev(name: string, d = 'wire-user', extra: Record<string, unknown> = {}) {
  return { event: name, distinct_id: d, uuid: uuid(), properties: {}, ...extra };
}

async function storedNames(): Promise<string[]> {
  return (await listEvents(t)).map((e) => e.event);
}

describe('POST /batch/, /capture/, /e/, /i/v0/e/, /track/ (and without the slash)', () => {
  for (const path of ['/batch/', '/batch', '/capture/', '/capture', '/e/', '/e', '/i/v0/e/', '/i/v0/e', '/track/', '/track']) {
    it(`${path}: a {batch} is stored and answered 200 {"status":"Ok"}`, async () => {
      const name = `wire ${path}`;
      const res = await capture(t, path, { api_key: token, batch: [ev(name)] });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ status: 'Ok' });
      expect(await storedNames()).toContain(name);
    });
  }

  it('reads one event, a bare array, and the token in the event, its properties or the batch', async () => {
    const names = ['form one', 'form array a', 'form array b', 'form props token', 'form $token'];
    expect((await capture(t, '/e/', { ...ev(names[0]!), api_key: token })).status).toBe(200);
    expect(
      (
        await capture(t, '/e/', [
          { ...ev(names[1]!), token },
          { ...ev(names[2]!), token },
        ])
      ).status,
    ).toBe(200);
    expect((await capture(t, '/i/v0/e/', { ...ev(names[3]!), properties: { token } })).status).toBe(200);
    expect((await capture(t, '/track/', { ...ev(names[4]!), $token: token })).status).toBe(200);
    const stored = await storedNames();
    for (const n of names) expect(stored).toContain(n);
  });

  it('reads distinct_id from properties, and stringifies numbers', async () => {
    expect(
      (await capture(t, '/capture/', { api_key: token, event: 'props distinct', uuid: uuid(), properties: { distinct_id: 'from-props' } }))
        .status,
    ).toBe(200);
    expect((await capture(t, '/capture/', { api_key: token, event: 'numeric distinct', uuid: uuid(), distinct_id: 42 })).status).toBe(200);
    const stored = await listEvents(t);
    expect(stored.find((e) => e.event === 'props distinct')?.distinct_id).toBe('from-props');
    expect(stored.find((e) => e.event === 'numeric distinct')?.distinct_id).toBe('42');
  });

  it('answers ?beacon=1 with 204 and no body', async () => {
    const res = await capture(t, '/e/?beacon=1', { api_key: token, batch: [ev('beacon')] });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await storedNames()).toContain('beacon');
  });
});

describe('encodings', () => {
  it('gunzips with Content-Encoding: gzip (posthog-node)', async () => {
    expect((await capture(t, '/batch/', { api_key: token, batch: [ev('gzip header')] }, { gzip: true })).status).toBe(200);
    expect(await storedNames()).toContain('gzip header');
  });

  it('gunzips by the magic bytes alone, sent as text/plain (posthog-js)', async () => {
    const body = gzipSync(JSON.stringify({ api_key: token, batch: [ev('gzip magic')] }));
    expect((await capture(t, '/e/', body, { headers: { 'Content-Type': 'text/plain' } })).status).toBe(200);
    expect(await storedNames()).toContain('gzip magic');
  });

  it('gunzips with ?compression=gzip-js', async () => {
    const body = gzipSync(JSON.stringify([{ ...ev('gzip-js query'), token }]));
    expect((await capture(t, '/e/?compression=gzip-js', body, { headers: { 'Content-Type': 'text/plain' } })).status).toBe(200);
    expect(await storedNames()).toContain('gzip-js query');
  });

  it('reads the form data=<base64> (older posthog-js), a + turned into a space included', async () => {
    // a payload whose base64 holds a "+" (the ">" characters make one)
    const json = JSON.stringify({ ...ev('form base64'), api_key: token, properties: { note: '>>>?' } });
    const b64 = Buffer.from(json).toString('base64');
    const body = `data=${b64.replace(/\+/g, ' ')}&compression=base64`;
    const res = await capture(t, '/e/', body, { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(200);
    expect((await listEvents(t)).find((e) => e.event === 'form base64')?.properties).toMatchObject({ note: '>>>?' });
  });

  it('decompresses lz-string (?compression=lz64, older posthog-js): a body, a form and GET ?data=', async () => {
    const lz = (name: string) =>
      LZString.compressToBase64(JSON.stringify({ ...ev(name), api_key: token, properties: { note: 'é ✓ >>>?' } }));
    expect((await capture(t, '/e/?compression=lz64', lz('lz body'), { headers: { 'Content-Type': 'text/plain' } })).status).toBe(200);
    const form = `data=${encodeURIComponent(lz('lz form'))}&compression=lz64`;
    expect((await capture(t, '/e/', form, { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })).status).toBe(200);
    expect((await fetch(`${t.url}/e/?compression=lz-string&data=${encodeURIComponent(lz('lz get'))}`)).status).toBe(200);
    const events = await listEvents(t);
    for (const name of ['lz body', 'lz form', 'lz get'])
      expect(events.find((e) => e.event === name)?.properties, name).toMatchObject({ note: 'é ✓ >>>?' });
    const bad = await capture(t, '/e/?compression=lz64', '!!!not lz!!!', { headers: { 'Content-Type': 'text/plain' } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('failed to decode request: invalid lz-string data');
  });

  it('reads a base64 body, and GET /e/?data=<base64>', async () => {
    const b64 = (name: string) => Buffer.from(JSON.stringify({ ...ev(name), api_key: token })).toString('base64');
    expect((await capture(t, '/batch/', b64('base64 body'), { headers: { 'Content-Type': 'text/plain' } })).status).toBe(200);
    const res = await fetch(`${t.url}/e/?data=${encodeURIComponent(b64('get data'))}`);
    expect(res.status).toBe(200);
    const stored = await storedNames();
    expect(stored).toContain('base64 body');
    expect(stored).toContain('get data');
  });
});

describe('errors: PostHog capture texts, text/plain, nothing stored', () => {
  const cases: Array<[string, number, () => Promise<Response>, string]> = [
    ['an empty body', 400, () => capture(t, '/batch/', ''), 'request missing data payload'],
    ['no event in the batch', 400, () => capture(t, '/batch/', { api_key: 'phc_x', batch: [] }), 'request holds no event'],
    [
      'an empty event name',
      400,
      () => capture(t, '/e/', { api_key: 'phc_x', event: '', distinct_id: 'a' }),
      'event submitted with an empty event name',
    ],
    ['no distinct_id', 400, () => capture(t, '/e/', { api_key: 'phc_x', event: 'x' }), 'event submitted without a distinct_id'],
    ['JSON that does not parse', 400, () => capture(t, '/e/', '{"event":'), 'failed to parse request: '],
    [
      'bad gzip',
      400,
      () => capture(t, '/batch/', Buffer.from([0x1f, 0x8b, 1, 2, 3]), { headers: { 'Content-Type': 'text/plain' } }),
      'failed to decode request: invalid GZIP data',
    ],
    [
      'an invalid uuid',
      400,
      () => capture(t, '/e/', { api_key: 'phc_x', event: 'x', distinct_id: 'a', uuid: 'nope' }),
      'failed to parse request: ',
    ],
    ['no token', 401, () => capture(t, '/batch/', { batch: [{ event: 'x', distinct_id: 'a' }] }), 'event submitted without an api_key'],
    [
      'two tokens',
      401,
      () =>
        capture(t, '/batch/', [
          { event: 'x', distinct_id: 'a', token: 'phc_a' },
          { event: 'x', distinct_id: 'a', token: 'phc_b' },
        ]),
      'batch submitted with inconsistent api_key values',
    ],
    [
      'a personal API key',
      401,
      () => capture(t, '/batch/', { api_key: 'phx_abc', batch: [{ event: 'x', distinct_id: 'a' }] }),
      'API key is not valid: personal_api_key',
    ],
    [
      'an unknown project token',
      401,
      () => capture(t, '/batch/', { api_key: 'phc_unknown', batch: [{ event: 'x', distinct_id: 'a' }] }),
      'API key is not valid: no project has this project API key',
    ],
  ];
  for (const [what, status, send, text] of cases) {
    it(`${what}: ${status} "${text}"`, async () => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toContain(text);
    });
  }

  it('one bad event fails the whole request: nothing of it is stored', async () => {
    const res = await capture(t, '/batch/', { api_key: token, batch: [ev('all or nothing'), { event: 'no distinct id' }] });
    expect(res.status).toBe(400);
    expect(await storedNames()).not.toContain('all or nothing');
  });

  it('413 past the body limit (2 MiB on /e/), and past it once decompressed', async () => {
    const big = JSON.stringify({ ...ev('big'), api_key: token, properties: { pad: 'x'.repeat(2.1 * 1024 * 1024) } });
    const res = await capture(t, '/e/', big);
    expect(res.status).toBe(413);
    expect(await res.text()).toBe('length limit exceeded');
    const zipped = await capture(t, '/e/', big, { gzip: true });
    expect(zipped.status).toBe(413);
    expect(await zipped.text()).toMatch(/^maximum event size exceeded: Decompressed payload would exceed 2097152 bytes/);
    expect(await storedNames()).not.toContain('big');
  });

  it('400 for one event over 1,000,000 bytes (PostHog’s Kafka message limit), the whole batch refused', async () => {
    const pad = 'x'.repeat(1_000_001);
    const res = await capture(t, '/batch/', { api_key: token, batch: [ev('small beside'), { ...ev('too big'), properties: { pad } }] });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^maximum event size exceeded: Event payload too large for Kafka: \d+ bytes$/);
    expect(await storedNames()).not.toContain('small beside');
    // just under the limit is stored
    const fits = await capture(t, '/e/', { ...ev('fits'), api_key: token, properties: { pad: 'x'.repeat(990_000) } });
    expect(fits.status).toBe(200);
  });

  it('405 for another method', async () => {
    const res = await fetch(`${t.url}/batch/`, { method: 'PUT', body: '{}' });
    expect(res.status).toBe(405);
  });
});

describe('CORS, as PostHog capture', () => {
  it('echoes the Origin with credentials on a capture', async () => {
    const res = await capture(t, '/e/', { ...ev('cors'), api_key: token }, { headers: { Origin: 'https://hedgebox.net' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://hedgebox.net');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('answers a preflight 200 with GET,POST,OPTIONS and the requested headers mirrored', async () => {
    const res = await fetch(`${t.url}/i/v0/e/`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://hedgebox.net',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-custom',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://hedgebox.net');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type,x-custom');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('answers a plain OPTIONS with {"status":"Ok"}', async () => {
    const res = await fetch(`${t.url}/batch`, { method: 'OPTIONS' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'Ok' });
  });
});
