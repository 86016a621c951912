/**
 * The error bodies tests expect, built with the server's own factories (`server/domain/errors.ts`,
 * `.body`) so that `type` and `code` come from one place, with PostHog's `detail` texts written
 * here once. `test/server/error-bodies.test.ts` pins each of them to PostHog's wire body to the
 * letter, so a factory that drifted from PostHog fails there, not silently everywhere. Also
 * `answer`, which reads a typed-client call as its status and body, data or error.
 */
import type { components } from '../../client/index.js';
import { authenticationFailed, notAuthenticated, notFound, permissionDenied, validationError } from '../../server/domain/errors.js';

/** PostHog's error body `{type, code, detail, attr}` (the contract's `Error` schema). */
export type ErrorBody = components['schemas']['Error'];

/** 404 "Not found." (DRF's NotFound). */
export const NOT_FOUND: ErrorBody = notFound('Not found.').body;
/** 404 "Project not found." (posthog/api/routing.py: no such project, or not a number). */
export const PROJECT_NOT_FOUND: ErrorBody = notFound('Project not found.').body;
/** 401 not_authenticated: no `Authorization` header. */
export const NOT_AUTHENTICATED: ErrorBody = notAuthenticated().body;
/** 401 authentication_failed: a key that is not valid (PersonalAPIKeyAuthentication). */
export const INVALID_KEY: ErrorBody = authenticationFailed('Personal API key found in request Authorization header is invalid.').body;

/** 403 permission_denied with `detail`. */
export function forbidden(detail: string): ErrorBody {
  return permissionDenied(detail).body;
}

/** 403 "You don't have access to the project." (TeamMemberAccessPermission). */
export const NO_PROJECT_ACCESS: ErrorBody = forbidden("You don't have access to the project.");

/** 403 "API key missing required scope '<scope>'" (APIScopePermission). */
export function missingScope(scope: string): ErrorBody {
  return forbidden(`API key missing required scope '${scope}'`);
}

/** 403 for a key limited to other projects, on project `id` (APIScopePermission, scoped_teams). */
export function projectNotAllowed(id: number | string): ErrorBody {
  return forbidden(`API key does not have access to the requested project: ID ${id}.`);
}

/**
 * 405 method_not_allowed "Method "<METHOD>" not allowed." (DRF's MethodNotAllowed). The server
 * builds it inside its error mapping (no factory of its own), so it is written out here.
 */
export function methodNotAllowed(method: string): ErrorBody {
  return { type: 'invalid_request', code: 'method_not_allowed', detail: `Method "${method}" not allowed.`, attr: null };
}

/** 400 validation_error with `detail` on `attr` (null: the whole request), `code` invalid_input unless told. */
export function invalid(detail: string, attr: string | null = null, code = 'invalid_input'): ErrorBody {
  return validationError(detail, attr, code).body;
}

/** 400 required "This field is required." on `attr` (DRF's required field). */
export function required(attr: string): ErrorBody {
  return invalid('This field is required.', attr, 'required');
}

/** What an operation answered: the status and the parsed body (data or PostHog's error). */
export interface Answer<T> {
  status: number;
  data: T | undefined;
  error: ErrorBody | undefined;
}

/** Awaits a typed-client call (`api.GET(…)`…) and answers its status with its data or error body. */
export async function answer<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Answer<T>> {
  const { data, error, response } = await call;
  return { status: response.status, data, error: error as ErrorBody | undefined };
}
