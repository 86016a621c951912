/**
 * The SDKs' flag, survey and log calls over plain HTTP, on every store: the local-evaluation
 * definitions (`/flags/definitions`, `/api/feature_flag/local_evaluation/`) with their ETag, 304
 * and errors; a flag's remote config (404 without a body); the surveys (PostHog's 401s); the OTLP
 * logs (accepted, not stored; capture-logs' JSON errors). The SDKs themselves are run in
 * test/client/posthog-node-flags.test.ts.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope, NO_PROJECT_ACCESS, NOT_AUTHENTICATED } from '../helpers/errors.js';

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = t.boot.team.api_token;
});
afterAll(async () => {
  await t.close();
});

const NONE = { flags: [], group_type_mapping: {}, cohorts: {}, minimal_flag_called_events: false, property_matching_version: 1 };
const BAD_TOKEN = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail: 'Incorrect authentication credentials.',
  attr: null,
};

describe.each(['/flags/definitions', '/api/feature_flag/local_evaluation/'])('GET %s', (path) => {
  it('answers the empty definitions with a weak ETag; the same ETag in If-None-Match is 304 without a body', async () => {
    const res = await t.fetch(`${path}?token=${token}&send_cohorts`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(NONE);
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    expect(res.headers.get('cache-control')).toBe('private, must-revalidate');
    for (const sent of [etag, etag.slice(2), etag.slice(3, -1), `"other", ${etag}`, '*']) {
      const again = await t.fetch(`${path}?token=${token}&send_cohorts`, { headers: { 'If-None-Match': sent } });
      expect(again.status, sent).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
    }
    const changed = await t.fetch(`${path}?token=${token}`, { headers: { 'If-None-Match': 'W/"0000000000000000"' } });
    expect(changed.status).toBe(200);
  });

  it('the token names the project: unknown 401, another organization’s 403; the key must allow feature_flag:read', async () => {
    await expect(t.fetch(`${path}?token=phc_NoSuchProject`)).resolves.toMatchObject({ status: 401 });
    expect(await (await t.fetch(`${path}?token=phc_NoSuchProject`)).json()).toEqual(BAD_TOKEN);
    const other = await t.otherOrganization();
    const res = await t.fetch(`${path}?token=${other.team.api_token}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(NO_PROJECT_ACCESS);
    const noScope = await t.fetch(`${path}?token=${token}`, { key: await t.key(['query:read']) });
    expect(noScope.status).toBe(403);
    expect(await noScope.json()).toEqual(missingScope('feature_flag:read'));
    const noKey = await t.fetch(`${path}?token=${token}`, { key: null });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual(NOT_AUTHENTICATED);
    const limited = await t.key(['*'], { projects: [other.team.id + 1000] });
    expect((await t.fetch(`${path}?token=${token}`, { key: limited })).status).toBe(403);
  });
});

describe('the definitions without a token', () => {
  it('/flags/definitions needs one (400); the legacy path uses the user’s current project', async () => {
    const res = await t.fetch('/flags/definitions');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'validation_error', attr: 'token' });
    const legacy = await t.fetch('/api/feature_flag/local_evaluation/');
    expect(legacy.status).toBe(200);
    expect(await legacy.json()).toEqual(NONE);
  });
});

describe('GET /api/projects/{project_id}/feature_flags/{key}/remote_config/', () => {
  it('answers 404 without a body for any key (no flag exists), with or without the slash and ?token=', async () => {
    for (const p of [
      '/api/projects/@current/feature_flags/new-onboarding/remote_config/',
      `/api/projects/@current/feature_flags/new-onboarding/remote_config?token=${token}`,
      '/api/projects/1/feature_flags/42/remote_config/',
    ]) {
      const res = await t.fetch(p);
      expect(res.status, p).toBe(404);
      expect(await res.text(), p).toBe('');
    }
  });

  it('authenticates first: no key 401, no scope 403, another organization’s project 403, no project 404 (JSON)', async () => {
    const p = '/api/projects/1/feature_flags/x/remote_config/';
    expect((await t.fetch(p, { key: null })).status).toBe(401);
    expect(await (await t.fetch(p, { key: await t.key(['query:read']) })).json()).toEqual(missingScope('feature_flag:read'));
    const other = await t.otherOrganization();
    expect((await t.fetch(`/api/projects/${other.team.id}/feature_flags/x/remote_config/`)).status).toBe(403);
    const missing = await t.fetch('/api/projects/999999/feature_flags/x/remote_config/');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found' });
  });
});

describe('GET /api/surveys/', () => {
  it('answers no surveys for a project token, PostHog’s 401s without one or for an unknown one; no key needed', async () => {
    const ok = await t.fetch(`/api/surveys/?token=${token}`, { key: null });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ surveys: [], survey_config: null });
    const missing = await t.fetch('/api/surveys/', { key: null });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ type: 'authentication_error', code: 'missing_api_key', attr: null });
    const unknown = await t.fetch('/api/surveys/?token=phc_NoSuchProject', { key: null });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key', attr: null });
  });
});

describe('POST /i/v1/logs', () => {
  const otlp = { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ logRecords: [{ body: { stringValue: 'hello' } }] }] }] };
  const post = (query: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/i/v1/logs${query}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });

  it('accepts OTLP JSON, plain or gzipped, with the token in the query or as a Bearer: 200 {}', async () => {
    for (const res of [
      await post(`?token=${token}`, JSON.stringify(otlp)),
      await post(`?token=${encodeURIComponent(token)}`, gzipSync(JSON.stringify(otlp)), { 'Content-Encoding': 'gzip' }),
      await post('', JSON.stringify(otlp), { Authorization: `Bearer ${token}` }),
    ]) {
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
  });

  it('answers capture-logs’ JSON errors: 401 without a token or with an unknown one, 400 for a body that is not an object', async () => {
    const none = await post('', JSON.stringify(otlp));
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'No token provided' });
    const unknown = await post('?token=phc_NoSuchProject', JSON.stringify(otlp));
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual({ error: 'Invalid token' });
    for (const body of ['not json', '[1,2]', '']) {
      const res = await post(`?token=${token}`, body);
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^Failed to decode JSON/);
    }
    const get = await fetch(`${t.url}/i/v1/logs?token=${token}`);
    expect(get.status).toBe(405);
  });
});
