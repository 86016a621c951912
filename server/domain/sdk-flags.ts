/**
 * What the SDKs' feature-flag and survey calls under the API answer for envapi, which has no
 * feature flags and no surveys (server/handlers/sdk.ts serves them):
 *
 * - the local-evaluation definitions (`GET /flags/definitions`, `GET /api/feature_flag/local_evaluation/`):
 *   PostHog's blob for a project without flags, cohorts or group types
 *   (products/feature_flags/backend/local_evaluation.py), with its ETag as PostHog's hypercache
 *   computes it (posthog/storage/hypercache.py `_compute_etag`: the first 16 hex digits of the
 *   SHA-256 of `json.dumps(payload, sort_keys=True)`), sent weak (`W/"…"`) as PostHog's flags
 *   service sends it (rust/feature-flags/src/api/flag_definitions.rs);
 * - the surveys (`GET /api/surveys/`): `{surveys: [], survey_config: null}` for a known project
 *   token, PostHog's 401s otherwise (posthog/api/survey.py `surveys`).
 */
import { createHash } from 'node:crypto';
import { ApiError } from './errors.js';

/** The local-evaluation definitions of a project with no flags (the same for every project). */
export const NO_FLAG_DEFINITIONS = Object.freeze({
  flags: [] as never[],
  group_type_mapping: {},
  cohorts: {},
  minimal_flag_called_events: false,
  property_matching_version: 1 as const,
});

/** Python's `json.dumps(value, sort_keys=True)` for JSON values (its `", "` and `": "` separators). */
function pythonSortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonSortedJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${pythonSortedJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** The weak ETag of a definitions answer (module doc): `W/"<16 hex>"`. */
export function definitionsEtag(payload: unknown): string {
  return `W/"${createHash('sha256').update(pythonSortedJson(payload)).digest('hex').slice(0, 16)}"`;
}

/**
 * Whether an `If-None-Match` header names `etag`: any of its comma-separated values, each with or
 * without `W/` and quotes (PostHog's flags service strips both), or `*`.
 */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const bare = (v: string) =>
    v
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
  const want = bare(etag);
  return ifNoneMatch.split(',').some((v) => v.trim() === '*' || bare(v) === want);
}

/** PostHog's 401 for a surveys request without a token. */
export function missingApiKey(): ApiError {
  return new ApiError(401, {
    type: 'authentication_error',
    code: 'missing_api_key',
    detail: 'API key not provided. You can find your project API key in your PostHog project settings.',
    attr: null,
  });
}

/** PostHog's 401 for a surveys request with a token no project has. */
export function invalidApiKey(): ApiError {
  return new ApiError(401, {
    type: 'authentication_error',
    code: 'invalid_api_key',
    detail: 'Project API key invalid. You can find your project API key in your PostHog project settings.',
    attr: null,
  });
}
