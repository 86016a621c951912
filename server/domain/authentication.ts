/**
 * Authentication for the request path (server/http/security.ts): a personal API key by its plain
 * value, and a user's access to a project. PostHog's rules applied to the answers (scopes, project
 * levels) live in domain/access.ts; this service only finds what they are applied to.
 *
 * On SQLite both look-ups are kept in `UnchangedStoreCache`s of the registered loads `KEY_BY_VALUE`
 * and `PROJECT_ACCESS` (server/storage/cached-loads.ts; otherwise they are two queries on every
 * request, docs/performance.md) until a table they read is written (a write to plugin configs or
 * dashboards keeps them); PostgreSQL reads them on every request.
 */
import type { Store } from '../storage/db.js';
import { UnchangedStoreCache } from '../storage/unchanged-cache.js';
import { AccountsRepository, PROJECT_ACCESS, TEAM_ID_BY_API_TOKEN } from '../storage/repositories/accounts.js';
import { ApiKeysRepository, KEY_BY_VALUE, hashKeyValue } from '../storage/repositories/api-keys.js';

/** A key that authenticated, and its user. */
export type AuthenticatedKey = NonNullable<Awaited<ReturnType<ApiKeysRepository['authenticate']>>>;

/** A team, its organization, the user's membership of it and the user's explicit level on the team. */
export type ProjectAccessRow = NonNullable<Awaited<ReturnType<AccountsRepository['projectAccessOf']>>>;

/** The two caches of a store that counts changes (SQLite), undefined otherwise (PostgreSQL). */
function cachesOf(store: Store) {
  return (
    store.changeCounter && {
      keys: new UnchangedStoreCache(store.changeCounter, KEY_BY_VALUE),
      access: new UnchangedStoreCache(store.changeCounter, PROJECT_ACCESS),
      tokens: new UnchangedStoreCache(store.changeCounter, TEAM_ID_BY_API_TOKEN, { max: 10_000 }),
    }
  );
}

/** Finds keys and project access for the security handler; one per app. */
export class AuthenticationService {
  private readonly accounts: AccountsRepository;
  private readonly keys: ApiKeysRepository;
  private readonly caches: ReturnType<typeof cachesOf>;

  constructor(store: Store) {
    this.accounts = new AccountsRepository(store.db);
    this.keys = new ApiKeysRepository(store.db);
    this.caches = cachesOf(store);
  }

  /**
   * Whether `authenticate` keeps keys by their hash: then callers pass `hashKey(token)`, which they
   * may compute once per connection; otherwise the hash is not needed.
   */
  get keepsKeys(): boolean {
    return this.caches !== undefined;
  }

  /** The hash a key is stored under (`sha256$<hex>` of its UTF-8 bytes, as PostHog stores it). */
  hashKey(token: string): string {
    return hashKeyValue(token);
  }

  /**
   * The key whose plain value is `token` and its user, or undefined when there is none (unknown or
   * revoked). `hash` is `hashKey(token)`, required when `keepsKeys`. A kept key is used until its
   * `last_used_at` is due for its hourly refresh (`KEY_BY_VALUE.usable`). Rejects with the store's
   * error when the store cannot be read or the refresh cannot be written. A kept key is returned
   * as it is, not wrapped in a promise (this runs on every request).
   */
  authenticate(token: string, hash: string | undefined): AuthenticatedKey | Promise<AuthenticatedKey | undefined> {
    return this.caches && hash !== undefined ? this.caches.keys.get(hash, this.keys, token) : KEY_BY_VALUE.load(this.keys, token);
  }

  /**
   * The team `teamId`, its organization, the user's membership in that organization and explicit
   * level on the team; undefined when the team does not exist. Kept answers are returned as they are.
   */
  projectAccess(teamId: number, userId: number): ProjectAccessRow | Promise<ProjectAccessRow | undefined> {
    return this.caches
      ? this.caches.access.get(`${teamId}:${userId}`, this.accounts, teamId, userId)
      : PROJECT_ACCESS.load(this.accounts, teamId, userId);
  }

  /**
   * The id of the team whose project API token (`phc_…`) is `token`, undefined when none has it:
   * a GET's `token` query parameter selects the project (server/http/security.ts).
   */
  teamIdByApiToken(token: string): number | undefined | Promise<number | undefined> {
    return this.caches ? this.caches.tokens.get(token, this.accounts, token, undefined) : this.accounts.findTeamIdByApiToken(token);
  }
}
