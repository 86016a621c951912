/**
 * The SDKs' start-up calls, answered for what envapi is: a project with **no feature flags, no
 * session recordings, no surveys, no site apps, no heatmaps, no product tours**, whose events go to
 * `/i/v0/e/`. Those answers let posthog-js, posthog-node and older SDKs start and capture without
 * an error; nothing here evaluates a flag.
 *
 * - Remote config, `GET /array/<token>/config` (JSON) and `GET /array/<token>/config.js` (a script
 *   setting `window._POSTHOG_REMOTE_CONFIG[token] = {config, siteApps: []}`, which posthog-js loads
 *   first): the fields of PostHog's `RemoteConfig.build_config` (posthog/models/remote_config.py)
 *   for a team with every option off. Unknown token → 404, as PostHog's views
 *   (posthog/api/remote_config.py) raise `Http404`.
 * - Flags, `POST /flags/` (rust/feature-flags/ in PostHog/posthog): `?v=2` (posthog-js, posthog-node)
 *   answers `{"flags": {}, "errorsWhileComputingFlags": false, "requestId", "evaluatedAt"}`; without
 *   `v` (or `v=1`) the older `{"featureFlags": {}, "featureFlagPayloads": {}, …}`; `config=true`
 *   adds the remote config's fields. Errors are the flags service's plain-text messages
 *   (rust/feature-flags/src/api/errors.rs): 401 without a token or with an unknown one, 400 without
 *   a `distinct_id` or with an empty one, 400 for a body that does not decode or parse.
 * - Legacy `POST /decide/?v=N` (posthog/api/decide.py; SDKs before the flags service): the remote
 *   config's fields plus `config: {enable_collect_everything: true}`, `toolbarParams: {}`,
 *   `isAuthenticated: false`, and the flags by version (v < 2: `featureFlags: []`; v 2–3:
 *   `featureFlags: {}`, `featureFlagPayloads: {}`; v ≥ 4 also `flags: {}`).
 */
import { randomUUID } from 'node:crypto';
import { CaptureError } from './errors.js';

/**
 * The remote config of a project with every option off (module doc): PostHog's `build_config`
 * fields, the same for every project but `token`.
 */
export interface RemoteConfig {
  token: string;
  supportedCompression: string[];
  hasFeatureFlags: false;
  captureDeadClicks: false;
  capturePerformance: false;
  autocapture_opt_out: false;
  autocaptureExceptions: false;
  analytics: { endpoint: string };
  elementsChainAsString: true;
  errorTracking: { autocaptureExceptions: false; suppressionRules: never[] };
  logs: { captureConsoleLogs: false };
  sessionRecording: false;
  heatmaps: false;
  conversations: false;
  surveys: false;
  productTours: false;
  defaultIdentifiedOnly: true;
  siteApps: never[];
}

/** The remote config of the project whose API token is `token` (module doc). */
export function remoteConfig(token: string): RemoteConfig {
  return {
    token,
    // gzip-js: posthog-js then gzips its capture bodies (decode.ts reads them by their magic bytes)
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
  };
}

/**
 * The script of `/array/<token>/config.js`: sets `window._POSTHOG_REMOTE_CONFIG[token]` to
 * `{config, siteApps: []}` (`config` without its own `siteApps`, as PostHog's
 * `get_config_js_via_token`). The token is written as a JSON string literal.
 */
export function remoteConfigScript(token: string): string {
  const { siteApps: _siteApps, ...config } = remoteConfig(token);
  const key = JSON.stringify(token);
  return [
    '(function() {',
    '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};',
    `  window._POSTHOG_REMOTE_CONFIG[${key}] = {`,
    `    config: ${JSON.stringify(config)},`,
    '    siteApps: []',
    '  };',
    '})();',
  ].join('\n');
}

/** What a flags or decide request says: the project token and the distinct id. */
export interface FlagsRequest {
  token: string;
  distinctId: string;
}

/**
 * Reads a flags or decide request's JSON: the token from `token` or `api_key` (else the query's
 * `token`), `distinct_id` as a string (a number is taken as its text). Throws `CaptureError` 401
 * (no token) or 400 (not an object, no or empty `distinct_id`) with the flags service's messages.
 */
export function parseFlagsRequest(value: unknown, queryToken: string | null): FlagsRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CaptureError(
      400,
      'Failed to parse request: the body must be a JSON object. Please ensure your request is properly formatted and all required fields are present.',
    );
  }
  const body = value as Record<string, unknown>;
  const token = [body.token, body.api_key, queryToken].find((t): t is string => typeof t === 'string' && t.trim() !== '');
  if (token === undefined) throw new CaptureError(401, 'No API token provided. Please include a valid API token in your request.');
  const raw = body.distinct_id;
  if (raw === undefined || raw === null)
    throw new CaptureError(400, 'The distinct_id field is missing from the request. Please include a valid identifier.');
  const distinctId = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : undefined;
  if (distinctId === undefined)
    throw new CaptureError(
      400,
      'Failed to parse request: distinct_id must be a string. Please ensure your request is properly formatted and all required fields are present.',
    );
  if (distinctId.trim() === '') throw new CaptureError(400, 'The distinct_id field cannot be empty. Please provide a valid identifier.');
  return { token: token.trim(), distinctId };
}

/** The flags service's 401 for a token no project has. */
export function unknownFlagsToken(): CaptureError {
  return new CaptureError(401, 'The provided API key is invalid or has expired. Please check your API key and try again.');
}

/** The API version a request asks for: the query's `v` as an integer, 1 when absent or not a number. */
export function apiVersionOf(query: URLSearchParams): number {
  const v = Number.parseInt(query.get('v') ?? '', 10);
  return Number.isFinite(v) && v > 0 ? v : 1;
}

/**
 * The answer of `/flags/` (module doc): no flag is evaluated, so none is returned; `nowMs` gives
 * `evaluatedAt` (ms since the epoch, UTC).
 */
export function flagsAnswer(token: string, query: URLSearchParams, nowMs: number): Record<string, unknown> {
  const flags = apiVersionOf(query) >= 2 ? { flags: {} } : { featureFlags: {}, featureFlagPayloads: {} };
  const answer: Record<string, unknown> = { ...flags, errorsWhileComputingFlags: false, requestId: randomUUID(), evaluatedAt: nowMs };
  if (query.get('config') === 'true') Object.assign(answer, remoteConfig(token));
  return answer;
}

/** The answer of the legacy `/decide/` (module doc), by the query's `v`. */
export function decideAnswer(token: string, query: URLSearchParams): Record<string, unknown> {
  const v = apiVersionOf(query);
  const flags: Record<string, unknown> =
    v < 2
      ? { featureFlags: [] }
      : { featureFlags: {}, featureFlagPayloads: {}, errorsWhileComputingFlags: false, ...(v >= 4 ? { flags: {} } : {}) };
  return { config: { enable_collect_everything: true }, toolbarParams: {}, isAuthenticated: false, ...remoteConfig(token), ...flags };
}
