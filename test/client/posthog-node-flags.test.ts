/**
 * posthog-node's feature-flag, survey and log calls against the server, with the SDKs as they are
 * (devDependencies, exact versions): posthog-node 5 (local evaluation from `GET /flags/definitions`
 * with its ETag, remote `/flags/`, `getRemoteConfigPayload`, `getSurveysStateless`, OTLP logs to
 * `/i/v1/logs`) and posthog-node 4.11, which `@flags-sdk/posthog` pins (local evaluation from
 * `GET /api/feature_flag/local_evaluation`, remote `/decide/?v=4`, `remote_config/`). The SDKs
 * get the standard `fetch` through their `fetch` option, wrapped only to record each request and
 * its status. Neither SDK reports an error, nor logs one, nor asks again in a loop; every flag is
 * off (undefined), as envapi has none.
 */
import { PostHog } from 'posthog-node';
import { PostHog as PostHog4 } from 'posthog-node-4';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface Seen {
  method: string;
  path: string;
  status: number;
  ifNoneMatch: string | undefined;
  etag: string | null;
}

/** The standard fetch, recording what the SDK asked and what it got. */
function recordingFetch(seen: Seen[]) {
  return async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    const u = new URL(String(url));
    const headers = new Headers(init?.headers);
    seen.push({
      method: init?.method ?? 'GET',
      path: u.pathname + u.search,
      status: res.status,
      ifNoneMatch: headers.get('if-none-match') ?? undefined,
      etag: res.headers.get('etag'),
    });
    return res;
  };
}

/** Console output of the SDKs during a test (they report with console.error / console.warn). */
function consoleSpies() {
  return { error: vi.spyOn(console, 'error'), warn: vi.spyOn(console, 'warn') };
}

/** The options both SDK lines take, polling every 100 ms, without retries. */
interface SdkOptions {
  host: string;
  personalApiKey: string;
  featureFlagsPollingInterval: number;
  fetch: never;
  fetchRetryCount: number;
  flushAt: number;
}

/**
 * A client of `Sdk` (posthog-node 5 or 4) for the test project with `key`, polling every 100 ms,
 * with what it asks recorded (`seen`), its error events collected and the console watched.
 */
function startSdk<C extends { on(event: 'error', listener: (err: unknown) => void): unknown }>(
  Sdk: new (apiKey: string, options: SdkOptions) => C,
  key: string,
) {
  const seen: Seen[] = [];
  const errors: unknown[] = [];
  const logs = consoleSpies();
  const posthog = new Sdk(t.boot.team.api_token, {
    host: t.url,
    personalApiKey: key,
    featureFlagsPollingInterval: 100,
    fetch: recordingFetch(seen) as never,
    fetchRetryCount: 0,
    flushAt: 1,
  });
  posthog.on('error', (err) => errors.push(err));
  return { posthog, seen, errors, logs };
}

describe('posthog-node 5 (local evaluation, flags, remote config, surveys, logs)', () => {
  it('loads the empty definitions, revalidates them with If-None-Match (304), and every flag is off', async () => {
    const { posthog, seen, errors, logs } = startSdk(PostHog, await t.key(['feature_flag:read']));
    const definitions = () => seen.filter((s) => s.path.startsWith('/flags/definitions'));
    // the first load, then polls every 100 ms: wait for one answered from the client's copy
    await vi.waitFor(() => expect(definitions().some((s) => s.status === 304)).toBe(true), { timeout: 20_000, interval: 50 });
    const [first, ...later] = definitions();
    expect(first).toMatchObject({ path: `/flags/definitions?token=${t.boot.team.api_token}&send_cohorts`, status: 200 });
    expect(first!.etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    for (const s of later) expect(s).toMatchObject({ status: 304, ifNoneMatch: first!.etag });

    // the SDK's current way to ask (its getFeatureFlag / isFeatureEnabled are deprecated in 5.x)
    const flags = await posthog.evaluateFlags('ada', { flagKeys: ['new-onboarding'] });
    expect(flags.getFlag('new-onboarding')).toBeUndefined();
    expect(flags.isEnabled('new-onboarding')).toBe(false);
    expect(seen.find((s) => s.path.startsWith('/flags/?') || s.path === '/flags/')).toMatchObject({ method: 'POST', status: 200 });
    expect(await posthog.getAllFlags('ada')).toEqual({});
    // no flag has that key: PostHog's 404 without a body, which the SDK cannot read as JSON
    await expect(posthog.getRemoteConfigPayload('new-onboarding')).rejects.toThrow();
    const remote = seen.find((s) => s.path.includes('/remote_config'));
    expect(remote).toMatchObject({ status: 404 });
    expect(remote!.path).toBe(`/api/projects/@current/feature_flags/new-onboarding/remote_config?token=${t.boot.team.api_token}`);

    expect(await posthog.getSurveysStateless()).toEqual([]);
    expect(seen.find((s) => s.path.startsWith('/api/surveys/'))).toMatchObject({ status: 200 });

    posthog.logger.info('checkout failed', { attributes: { order: 'o-1' } });
    await posthog.shutdown();
    const logRequests = seen.filter((s) => s.path.startsWith('/i/v1/logs'));
    expect(logRequests.length).toBeGreaterThan(0);
    for (const s of logRequests) expect(s.status).toBe(200);

    expect(errors).toEqual([]);
    expect(logs.error).not.toHaveBeenCalled();
    expect(logs.warn).not.toHaveBeenCalled();
    // nothing but the expected calls, each answered without an error status
    for (const s of seen) expect([200, 304, 404], s.path).toContain(s.status);
  });

  it('a key without feature_flag:read is told once per poll, with the SDK’s backoff (403, an error event)', async () => {
    const key = await t.key(['query:read']);
    const seen: Seen[] = [];
    const errors: Error[] = [];
    const posthog = new PostHog(t.boot.team.api_token, {
      host: t.url,
      personalApiKey: key,
      featureFlagsPollingInterval: null as never,
      fetch: recordingFetch(seen) as never,
    });
    posthog.on('error', (err: Error) => errors.push(err));
    await vi.waitFor(() => expect(errors.length).toBe(1), { timeout: 20_000, interval: 50 });
    expect(errors[0]!.message).toMatch(/does not have permission to fetch feature flag definitions/);
    expect(seen.filter((s) => s.path.startsWith('/flags/definitions')).map((s) => s.status)).toEqual([403]);
    await posthog.shutdown();
  });
});

describe('posthog-node 4.11 (what @flags-sdk/posthog pins)', () => {
  it('loads the legacy local evaluation, asks /decide/?v=4 for a flag it does not know, and every flag is off', async () => {
    const { posthog, seen, errors, logs } = startSdk(PostHog4, await t.key(['feature_flag:read']));
    const local = () => seen.filter((s) => s.path.startsWith('/api/feature_flag/local_evaluation'));
    await vi.waitFor(() => expect(local().length).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 50 });
    expect(local()[0]).toMatchObject({
      path: `/api/feature_flag/local_evaluation?token=${t.boot.team.api_token}&send_cohorts`,
      status: 200,
    });

    expect(await posthog.getFeatureFlag('new-onboarding', 'ada')).toBeUndefined();
    expect(await posthog.isFeatureEnabled('new-onboarding', 'ada')).toBeUndefined();
    expect(await posthog.getFeatureFlagPayload('new-onboarding', 'ada')).toBeFalsy();
    const decide = seen.filter((s) => s.path.startsWith('/decide/'));
    expect(decide.length).toBeGreaterThan(0);
    for (const s of decide) expect(s).toMatchObject({ path: '/decide/?v=4', status: 200 });
    await expect(posthog.getRemoteConfigPayload('new-onboarding')).rejects.toThrow();
    expect(seen.find((s) => s.path.includes('/remote_config'))).toMatchObject({
      path: '/api/projects/@current/feature_flags/new-onboarding/remote_config/',
      status: 404,
    });
    await posthog.shutdown();
    // the $feature_flag_called events it sent were stored
    for (const s of seen.filter((x) => x.path.startsWith('/batch'))) expect(s.status).toBe(200);

    expect(errors).toEqual([]);
    expect(logs.error).not.toHaveBeenCalled();
    expect(logs.warn).not.toHaveBeenCalled();
  });
});
