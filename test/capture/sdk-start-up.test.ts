/**
 * The SDKs' start-up calls (server/capture/sdk-config.ts), through the real HTTP stack: remote
 * config as JSON and as the script posthog-js loads, `/flags/` in its v2 and older shapes (with
 * `config=true`), the legacy `/decide/`, their token and distinct-id errors (the flags service's
 * plain-text messages), CORS and methods. The browser test (test/client/posthog-js.test.ts) shows
 * posthog-js itself starting on them.
 */
import vm from 'node:vm';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture } from './helpers.js';

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = t.boot.team.api_token;
});
afterAll(async () => {
  await t.close();
});

/** The remote config fields of a project with everything off (posthog/models/remote_config.py). */
const configFields = () => ({
  token,
  supportedCompression: ['gzip', 'gzip-js'],
  hasFeatureFlags: false,
  captureDeadClicks: false,
  capturePerformance: false,
  autocapture_opt_out: false,
  autocaptureExceptions: false,
  analytics: { endpoint: '/i/v0/e/' },
  elementsChainAsString: true,
  errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
  logs: { captureConsoleLogs: false },
  sessionRecording: false,
  heatmaps: false,
  conversations: false,
  surveys: false,
  productTours: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
});

describe('remote config, GET /array/<token>/config and config.js', () => {
  it('answers the JSON config of the project', async () => {
    const res = await fetch(`${t.url}/array/${token}/config`, { headers: { Origin: 'https://hedgebox.net' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('access-control-allow-origin')).toBe('https://hedgebox.net');
    expect(await res.json()).toEqual(configFields());
  });

  it('answers a script that sets window._POSTHOG_REMOTE_CONFIG[token] = {config, siteApps}', async () => {
    const res = await fetch(`${t.url}/array/${token}/config.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript');
    const window: Record<string, unknown> = { _POSTHOG_REMOTE_CONFIG: { other: { config: {}, siteApps: [] } } };
    vm.runInNewContext(await res.text(), { window });
    const { siteApps: _siteApps, ...config } = configFields();
    expect(window._POSTHOG_REMOTE_CONFIG).toEqual({ other: { config: {}, siteApps: [] }, [token]: { config, siteApps: [] } });
  });

  it.each(['config', 'config.js'])('answers 404 (PostHog error shape) for a token no project has: %s', async (file) => {
    for (const bad of ['phc_unknown', 'phx_x', '%E0%A4%A', 'a'.repeat(300)]) {
      const res = await fetch(`${t.url}/array/${bad}/${file}`);
      expect(res.status, bad).toBe(404);
      expect(await res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
    }
  });

  it('refuses POST with 405 and answers the CORS preflight with GET', async () => {
    const post = await fetch(`${t.url}/array/${token}/config`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, OPTIONS');
    const pre = await fetch(`${t.url}/array/${token}/config`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(pre.status).toBe(200);
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET,OPTIONS');
  });
});

describe('POST /flags/', () => {
  it('?v=2 (posthog-js, posthog-node): no flags, no error, a request id', async () => {
    const res = await capture(t, '/flags/?v=2', { token, distinct_id: 'flags-user', groups: {}, person_properties: {} });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      flags: {},
      errorsWhileComputingFlags: false,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      evaluatedAt: expect.any(Number),
    });
  });

  it('without v: the older featureFlags shape; config=true adds the remote config', async () => {
    const old = await capture(t, '/flags', { api_key: token, distinct_id: 'flags-user' });
    expect(await old.json()).toMatchObject({ featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false });
    const withConfig = await capture(t, '/flags/?v=2&config=true', { token, distinct_id: 'flags-user' });
    expect(await withConfig.json()).toEqual({
      flags: {},
      errorsWhileComputingFlags: false,
      requestId: expect.any(String),
      evaluatedAt: expect.any(Number),
      ...configFields(),
    });
  });

  it('reads gzip bodies as posthog-js sends them (text/plain, no hint) and base64 forms', async () => {
    const gz = await capture(t, '/flags/?v=2', gzipSync(JSON.stringify({ token, distinct_id: 'gz' })), {
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(gz.status).toBe(200);
    const b64 = Buffer.from(JSON.stringify({ token, distinct_id: 'b64' })).toString('base64');
    const form = await capture(t, '/flags/?v=2', `data=${encodeURIComponent(b64)}`, {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(200);
  });

  it('answers the flags service errors as plain text: token missing or unknown 401, distinct_id missing or empty 400, bad JSON 400', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [{ distinct_id: 'x' }, 401, /^No API token provided/],
      [{ token: 'phc_nobody', distinct_id: 'x' }, 401, /^The provided API key is invalid/],
      [{ token }, 400, /^The distinct_id field is missing/],
      [{ token, distinct_id: '  ' }, 400, /^The distinct_id field cannot be empty/],
      [{ token, distinct_id: { a: 1 } }, 400, /^Failed to parse request: distinct_id must be a string/],
      [[1, 2], 400, /^Failed to parse request/],
      ['{not json', 400, /^failed to parse request/],
    ];
    for (const [body, status, message] of cases) {
      const res = await capture(t, '/flags/?v=2', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toMatch(message);
    }
    expect((await fetch(`${t.url}/flags/?v=2`, { method: 'POST' })).status).toBe(400);
  });

  it('refuses GET with 405 and answers the preflight with POST', async () => {
    expect((await fetch(`${t.url}/flags/?v=2`)).status).toBe(405);
    const pre = await fetch(`${t.url}/flags/?v=2`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(pre.status).toBe(200);
    expect(pre.headers.get('access-control-allow-methods')).toBe('POST,OPTIONS');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type');
  });
});

describe('POST /decide/ (legacy SDKs)', () => {
  it.each([
    ['1', { featureFlags: [] }],
    ['3', { featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false }],
    ['4', { featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false, flags: {} }],
  ])('v=%s: the config, no flags', async (v, flags) => {
    const res = await capture(t, `/decide/?v=${v}`, { token, distinct_id: 'decide-user' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      config: { enable_collect_everything: true },
      toolbarParams: {},
      isAuthenticated: false,
      ...configFields(),
      ...flags,
    });
  });

  it('answers 401 for an unknown token', async () => {
    const res = await capture(t, '/decide/?v=3', { token: 'phc_nobody', distinct_id: 'x' });
    expect(res.status).toBe(401);
  });
});
