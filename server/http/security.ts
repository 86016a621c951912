/**
 * The `PersonalAPIKeyAuth` security handler given to express-openapi-validator. The validator
 * passes the scopes the operation declares in `openapi.yaml` (there is no second table of scopes in
 * code); this handler authenticates the bearer key, checks those scopes, and resolves the project.
 *
 * Order of checks (PostHog: authentication, then APIScopePermission, then team access):
 * 401 no/invalid key → 403 missing scope → 400/413 unparsable body → 404 malformed project id →
 * 403 key limited to other projects → 404 no such project → 403 no access to the project (except
 * on explicit members, which answer PostHog's own permission message in their handlers).
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
import { ApiError, authenticationFailed, notAuthenticated, notFound, storeBusy } from '../domain/errors.js';
import { isTransientStoreError } from '../storage/errors.js';
import { openapiOf } from './openapi-pipeline.js';

/** A request after authentication; `auth` is set by the security handler. */
export interface AuthedRequest extends Request {
  auth?: AuthContext;
  /** the PostHog error the security handler refused with (the validator keeps only a message) */
  securityError?: ApiError;
  /** a body parse error (malformed JSON, too large), raised after the key and scope checks pass */
  deferredBodyError?: ApiError;
}

/** Reads `Authorization: Bearer <key>`; undefined when absent or not a bearer header. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** The last bearer token of each connection (UTF-8) and its hash, dropped with the connection. */
const lastTokenOf = new WeakMap<object, { token: Buffer; hash: string }>();

/**
 * `authentication.hashKey(token)`, computed once per keep-alive connection while the connection keeps
 * sending the same token (SHA-256 was ~2 % of a keyed GET's CPU; docs/performance.md). Only the
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

/** Whether the request's operation (from the spec) checks project access itself. */
function checksOwnAccess(req: Request): boolean {
  const tags = openapiOf(req)?.schema.tags ?? [];
  return tags.some((t) => TAGS_CHECKING_OWN_ACCESS.has(t));
}

/**
 * Builds the handler over the app's authentication service (domain/authentication.ts, which keeps
 * keys and project access on SQLite). It resolves to `true` with `req.auth` set, or throws an
 * `ApiError` (also kept on `req.securityError` so the error handler can send PostHog's exact body).
 */
export function personalApiKeyHandler(authentication: AuthenticationService) {
  // the hash is needed only where keys are kept by it (SQLite)
  const keepsKeys = authentication.keepsKeys;
  return async (request: Request, scopes: string[]): Promise<true> => {
    const req = request as AuthedRequest;
    try {
      const token = bearerToken(req);
      if (!token) throw notAuthenticated();
      const found = await authentication.authenticate(token, keepsKeys ? hashOnConnection(req, token, authentication) : undefined);
      if (!found) throw authenticationFailed();
      assertScopes(found.key.scopes, scopes);
      if (req.deferredBodyError) throw req.deferredBodyError;
      const rawProjectId = openapiOf(req)?.pathParams.project_id as string | undefined;
      if (rawProjectId === undefined) {
        req.auth = { user: found.user, key: found.key, project: null };
        return true;
      }
      const teamId = parseProjectId(String(rawProjectId), found.user);
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
        req.auth = { user: found.user, key: found.key, project: { team, organization, membership: membership ?? null, level: null } };
        return true;
      }
      req.auth = { user: found.user, key: found.key, project: { team, organization, membership, level } };
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
 * key is served. Other operations are left to the validator's security step. Mount after the
 * validator, before the dispatch.
 */
export function keyOnPublicOperations(authentication: AuthenticationService): (req: Request, res: unknown, next: (err?: unknown) => void) => void {
  const check = personalApiKeyHandler(authentication);
  return (req, _res, next) => {
    const security = openapiOf(req)?.schema.security;
    if (!Array.isArray(security) || security.length !== 0 || bearerToken(req) === undefined) return next();
    check(req, []).then(
      () => next(),
      (err: unknown) => next(err),
    );
  };
}
