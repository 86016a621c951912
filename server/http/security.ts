/**
 * The `PersonalAPIKeyAuth` security handler given to express-openapi-validator. The validator
 * passes the scopes the operation declares in `openapi.yaml` (there is no second table of scopes in
 * code); this handler authenticates the bearer key, checks those scopes, and resolves the project.
 *
 * Order of checks (PostHog: authentication, then APIScopePermission, then team access, then the
 * throttles): 401 no/invalid key → 403 missing scope → 400/413 unparsable body → 401 unknown
 * project token → 404 malformed project id → 403 key limited to other projects → 404 no such project → 403 no access to the
 * project (except on explicit members, which answer PostHog's own permission message in their
 * handlers) → 429 over the key's rate limit (rate-limit/limiter.ts explains why it runs here).
 *
 * A GET to a project's operation with a `token` (else `api_key`) query parameter, a project API
 * token, acts on that token's project in place of the path's `project_id`, as PostHog's
 * `TeamAndOrgViewSetMixin._get_team_from_request` does (posthog/api/routing.py, `get_token` of
 * posthog/api/utils.py): a token no project has answers 401 `authentication_failed`, and the
 * token's project is then checked like any other (403 for another organization's project). An
 * operation without a `project_id` marked `x-project-from-token` in the spec (the SDKs'
 * local-evaluation calls) acts on the token's project, else on the user's current project.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import {
  assertKeyMayUseProject,
  assertScopes,
  effectiveProjectLevel,
  noProjectAccess,
  parseProjectId,
  type AuthContext,
} from '../domain/access.js';
import type { AuthenticationService } from '../domain/authentication.js';
import { ApiError, authenticationFailed, notAuthenticated, notFound, permissionDenied, storeBusy } from '../domain/errors.js';
import { isTransientStoreError } from '../storage/errors.js';
import type { DeferredBodyRequest } from './before-validator.js';
import { bearerToken } from './bearer.js';
import type { RateLimitCheck } from './rate-limit.js';
import { openapiOf } from './validator.js';

export { bearerToken };

/** A request after authentication; `auth` is set by the security handler. */
export interface AuthedRequest extends DeferredBodyRequest {
  auth?: AuthContext;
  /** the PostHog error the security handler refused with (the validator keeps only a message) */
  securityError?: ApiError;
}

/** The last bearer token of each connection (UTF-8) and its hash, dropped with the connection. */
const lastTokenOf = new WeakMap<object, { token: Buffer; hash: string }>();

/**
 * `authentication.hashKey(token)`, computed once per keep-alive connection while the connection keeps
 * sending the same token (hashing every request's key shows in a keyed GET's profile; docs/performance.md). Only the
 * connection's own last token is remembered, for as long as the connection lives: no table of
 * plain keys outlives the requests that carried them. Behind a proxy one connection may carry
 * several clients' keys, so tokens are compared in constant time (`timingSafeEqual`).
 */
function hashOnConnection(req: Request, token: string, authentication: AuthenticationService): string {
  const socket = req.socket as object | undefined;
  if (!socket) return authentication.hashKey(token);
  const bytes = Buffer.from(token, 'utf8');
  const last = lastTokenOf.get(socket);
  if (last && last.token.length === bytes.length && timingSafeEqual(last.token, bytes)) return last.hash;
  const hash = authentication.hashKey(token);
  lastTokenOf.set(socket, { token: bytes, hash });
  return hash;
}

/** Tags whose operations check project access themselves (see `ProjectAccess.level`). */
const TAGS_CHECKING_OWN_ACCESS = new Set(['explicit_members']);

/**
 * Operations without a `project_id` that a key limited to some projects may still call (PostHog's
 * `APIScopePermission`: a view with a team, or of the `user` scope object): one project or
 * environment by id, the key's user and the key itself, the schema.
 */
const PROJECT_BASED_TAGS = new Set(['users', 'personal_api_keys', 'schema']);
// surveys: PostHog's `surveys` view is no DRF view and reads no personal API key at all
const PROJECT_BASED_OPERATIONS = new Set(['projects_retrieve', 'environments_retrieve', 'surveys_retrieve']);

/** Whether the request's operation counts as project-based for a key limited to some projects. */
function projectBased(req: Request): boolean {
  const schema = openapiOf(req)?.schema;
  if (!schema) return true;
  if (schema.operationId !== undefined && PROJECT_BASED_OPERATIONS.has(schema.operationId)) return true;
  return (schema.tags ?? []).some((t) => PROJECT_BASED_TAGS.has(t));
}

/** Whether the request's operation (from the spec) checks project access itself. */
function checksOwnAccess(req: Request): boolean {
  const tags = openapiOf(req)?.schema.tags ?? [];
  return tags.some((t) => TAGS_CHECKING_OWN_ACCESS.has(t));
}

/**
 * The team a GET's `token` or `api_key` query parameter names (module doc), undefined when the
 * request has neither; throws 401 `authentication_failed` for a token no project has.
 */
async function projectOfToken(req: Request, authentication: AuthenticationService): Promise<number | undefined> {
  if (req.method !== 'GET') return undefined;
  const q = req.url.indexOf('?');
  if (q === -1) return undefined;
  const query = req.url.slice(q + 1);
  if (!query.includes('token=') && !query.includes('api_key=')) return undefined;
  const params = new URLSearchParams(query);
  const token = params.get('token') || params.get('api_key');
  if (!token) return undefined;
  const teamId = await authentication.teamIdByApiToken(token);
  // DRF's `AuthenticationFailed()`, with its default message
  if (teamId === undefined) throw authenticationFailed('Incorrect authentication credentials.');
  return teamId;
}

/**
 * Builds the handler over the app's authentication service (domain/authentication.ts, which keeps
 * keys and project access on SQLite). It resolves to `true` with `req.auth` set, or throws an
 * `ApiError` (also kept on `req.securityError` so the error handler can send PostHog's exact body).
 * `rateLimit` (rate-limit/limiter.ts), when given, runs last, once every check has passed: a
 * request over its key's limit throws the 429.
 */
export function personalApiKeyHandler(authentication: AuthenticationService, rateLimit?: RateLimitCheck) {
  // the hash is needed only where keys are kept by it (SQLite)
  const keepsKeys = authentication.keepsKeys;
  /** `req.auth` for an accepted key (the order of checks is the module doc's), or throws. */
  const authorize = async (req: AuthedRequest, scopes: string[]): Promise<AuthContext> => {
    const token = bearerToken(req);
    if (!token) throw notAuthenticated();
    const found = await authentication.authenticate(token, keepsKeys ? hashOnConnection(req, token, authentication) : undefined);
    if (!found) throw authenticationFailed();
    assertScopes(found.key.scopes, scopes);
    if (req.deferredBodyError) throw req.deferredBodyError;
    const match = openapiOf(req);
    const rawProjectId = match?.pathParams.project_id as string | undefined;
    let teamId: number;
    if (rawProjectId !== undefined) {
      teamId = (await projectOfToken(req, authentication)) ?? parseProjectId(String(rawProjectId), found.user);
    } else if (match?.schema['x-project-from-token'] === true) {
      // the SDKs' local-evaluation calls: the token's project, else the user's current one
      const fromToken = await projectOfToken(req, authentication);
      if (fromToken === undefined && found.user.current_team_id == null) throw notFound('Project not found.');
      teamId = fromToken ?? (found.user.current_team_id as number);
    } else {
      if ((found.key.scoped_teams?.length ?? 0) > 0 && !projectBased(req))
        throw permissionDenied('API keys with scoped projects are only supported on project-based endpoints.');
      return { user: found.user, key: found.key, project: null };
    }
    assertKeyMayUseProject(found.key, teamId);
    const access = await authentication.projectAccess(teamId, found.user.id);
    if (!access) throw notFound('Project not found.');
    const { team, membership, organization } = access;
    const level = effectiveProjectLevel(team, membership, membership ? access.explicitLevel : null);
    if (!organization) throw noProjectAccess();
    if (!membership || level === null) {
      // Explicit members use PostHog's TeamMemberStrictManagementPermission instead of project
      // access (ee/api/explicit_team_member.py): their handlers refuse with its message, and
      // anyone may try to leave a project.
      if (!checksOwnAccess(req)) throw noProjectAccess();
      return { user: found.user, key: found.key, project: { team, organization, membership: membership ?? null, level: null } };
    }
    return { user: found.user, key: found.key, project: { team, organization, membership, level } };
  };
  return async (request: Request, scopes: string[]): Promise<true> => {
    const req = request as AuthedRequest;
    try {
      req.auth = await authorize(req, scopes);
      if (rateLimit) await rateLimit(req, openapiOf(req)?.schema.operationId);
      return true;
    } catch (err) {
      // a store too busy to record the key's use answers 503 (retry), not 401 (the key is fine)
      if (err instanceof ApiError) req.securityError = err;
      else if (isTransientStoreError(err)) req.securityError = storeBusy();
      throw err;
    }
  };
}

/**
 * For operations that need no key (`security: []`, the schema): a request that carries a bearer
 * token anyway must carry a valid one, as DRF authenticates every request that has credentials
 * before its permission checks (`APIView.initial` → `perform_authentication`), whatever the view's
 * permissions: an unknown or revoked key answers 401 `authentication_failed`, a request without a
 * key is served. A valid key is counted by `rateLimit` as on any other operation. The returned
 * check resolves (with `req.auth` set when a key was sent) or rejects with the `ApiError`; the
 * dispatch (dispatch.ts) runs it before the handler of each such operation. Other operations are
 * left to the validator's security step.
 */
export function publicOperationKeyCheck(
  authentication: AuthenticationService,
  rateLimit?: RateLimitCheck,
): (req: Request) => Promise<void> {
  const check = personalApiKeyHandler(authentication, rateLimit);
  return async (req) => {
    if (bearerToken(req) !== undefined) await check(req, []);
  };
}
