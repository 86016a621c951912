/**
 * The key owner's user (`GET /api/users/{uuid}/`, `@me`) and the key itself
 * (`GET /api/personal_api_keys/{id}/`, `@current`): what clients such as PostHog's MCP tools read
 * before anything else.
 *
 * PostHog's rules: posthog/api/user.py `UserViewSet.get_object` (`@me` is the request's user; any
 * other value by a non-staff user → 403 "As a non-staff user you're only allowed to access the
 * `@me` user instance."; staff read any active user by uuid), `UserSerializer` (fields);
 * posthog/api/personal_api_key.py (`@current` is the authenticating key; a personal API key may
 * retrieve only itself: another key of its user → 403 "This action does not support Personal API
 * Key access", a key of no one's → 404; `value` is never shown again after creation).
 *
 * `PATCH /api/users/{uuid}/` (`UserSerializer.update`): the same `@me` rule; `first_name`,
 * `last_name` (≤150 characters), `email` (unique; no verification mail here, so it changes at
 * once), and the write-only `set_current_team` (a team the user can reach, else 400
 * `does_not_exist` "Object with id=<id> does not exist.") and `set_current_organization` (an
 * organization the user is a member of, same 400; the current team becomes `set_current_team`,
 * which must then be of it, or its first team the user can reach).
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import { AccountsReads, AccountsRepository, type User } from '../storage/repositories/accounts.js';
import { ApiKeysRepository, type PersonalApiKey } from '../storage/repositories/api-keys.js';
import { notFound, permissionDenied, validationError } from './errors.js';
import { clip } from './echo.js';
import { levelIn, teamBasic, type OrganizationsService, type Viewer } from './organizations.js';
import { normalizeUuid } from './uuids.js';

/** PostHog's `User` (UserSerializer) as envapi answers it. */
export type UserView = components['schemas']['User'];
/** PostHog's `PersonalAPIKey` (PersonalAPIKeySerializer), `value` always null. */
export type PersonalApiKeyView = components['schemas']['PersonalAPIKey'];

/**
 * The key record as PostHog shows it (its 14 fields, posthog/api/test/test_personal_api_keys.py):
 * no value, `scoped_teams` `[]` when unlimited, `scoped_organizations` `[]` (not stored), no
 * description, not legacy-hashed, no local development value.
 */
export function personalApiKeyView(key: PersonalApiKey): PersonalApiKeyView {
  return {
    id: key.id,
    label: key.label,
    description: null,
    value: null,
    mask_value: key.mask_value,
    created_at: key.created_at,
    last_used_at: key.last_used_at,
    user_id: key.user_id,
    scopes: key.scopes.length ? key.scopes : ['*'],
    scoped_teams: key.scoped_teams ?? [],
    scoped_organizations: [],
    last_rolled_at: null,
    is_legacy_hashing: false,
    local_dev_value: null,
  };
}

/** The fields of a user a PATCH may change (schema `PatchedUser`). */
export interface UserChanges {
  first_name?: string | undefined;
  last_name?: string | undefined;
  email?: string | undefined;
  set_current_team?: number | string | undefined;
  set_current_organization?: string | undefined;
}

/** PostHog's 400 for a related id that names nothing the user can use (DRF's `PrimaryKeyRelatedField`). */
function doesNotExist(id: string | number, attr: string) {
  return validationError(`Object with id=${clip(String(id))} does not exist.`, attr, 'does_not_exist');
}

/** Reads users and personal API keys for the key making the request, and changes users; one per app. */
export class UsersService {
  private readonly reads: AccountsReads;
  private readonly keys: ApiKeysRepository;
  private readonly accounts: AccountsRepository;

  constructor(
    store: Store,
    private readonly organizations: OrganizationsService,
  ) {
    this.reads = new AccountsReads(store.db);
    this.keys = new ApiKeysRepository(store.db);
    this.accounts = new AccountsRepository(store.db);
  }

  /**
   * Changes the user `rawUuid` names (module doc) and answers them as `retrieve`. Throws as
   * `retrieve` (403, 404), and 400 for an email another user has or a `set_current_team` /
   * `set_current_organization` the user cannot use. Nothing is written unless every check passes.
   */
  async update(viewer: Viewer, rawUuid: string, changes: UserChanges): Promise<UserView> {
    const user = await this.target(viewer, rawUuid);
    let currentTeam: number | null | undefined;
    if (changes.set_current_organization !== undefined) {
      const orgId = normalizeUuid(changes.set_current_organization);
      const org = orgId === undefined ? undefined : await this.reads.findOrganizationOfUser(orgId, user.id);
      if (!org) throw doesNotExist(changes.set_current_organization, 'set_current_organization');
      const reachable = (await this.reads.teamsForUser(user.id, { organizationIds: [org.id] })).filter((r) => levelIn(r) !== null);
      reachable.sort((a, b) => a.team.id - b.team.id);
      if (changes.set_current_team !== undefined) {
        const team = await this.reachableTeam(user, changes.set_current_team);
        if (team.organization_id !== org.id)
          throw validationError('Team must belong to the same organization in set_current_organization.', 'set_current_team');
        currentTeam = team.id;
      } else currentTeam = reachable[0]?.team.id ?? null;
    } else if (changes.set_current_team !== undefined) {
      currentTeam = (await this.reachableTeam(user, changes.set_current_team)).id;
    }
    if (changes.email !== undefined) {
      const other = await this.accounts.findUserByEmail(changes.email);
      if (other && other.id !== user.id) throw validationError('There is already an account with this email address.', 'email', 'unique');
    }
    await this.accounts.updateUser(user.id, {
      ...(changes.first_name !== undefined ? { first_name: changes.first_name } : {}),
      ...(changes.last_name !== undefined ? { last_name: changes.last_name } : {}),
      ...(changes.email !== undefined ? { email: changes.email } : {}),
    });
    if (currentTeam !== undefined) await this.accounts.setCurrentTeam(user.id, currentTeam);
    const changed = await this.accounts.findUserById(user.id);
    return this.view(changed ?? user, user.id === viewer.user.id && changed ? { ...viewer, user: changed } : viewer);
  }

  /** The team `raw` names (digits) that `user` can reach, or 400 `does_not_exist` on `set_current_team`. */
  private async reachableTeam(user: User, raw: number | string) {
    const id = typeof raw === 'number' ? raw : /^\d{1,10}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    const [row] = Number.isSafeInteger(id) && id > 0 && id <= 2_147_483_647 ? await this.reads.teamsForUser(user.id, { teamId: id }) : [];
    if (!row || levelIn(row) === null) throw doesNotExist(raw, 'set_current_team');
    return row.team;
  }

  /** The user a path's `uuid` names for the viewer (`retrieve`'s rule). */
  private async target(viewer: Viewer, rawUuid: string): Promise<User> {
    if (rawUuid === '@me') return viewer.user;
    if (!viewer.user.is_staff) throw permissionDenied("As a non-staff user you're only allowed to access the `@me` user instance.");
    const uuid = normalizeUuid(rawUuid);
    const other = uuid === undefined ? undefined : await this.reads.findActiveUserByUuid(uuid);
    if (!other) throw notFound();
    return other;
  }

  /**
   * The user `rawUuid` names (`@me`: the key's owner) in PostHog's `User` shape. Throws 403 when a
   * non-staff user names anything but `@me` (their own uuid included, as PostHog), 404 when a staff
   * user names no active user.
   */
  async retrieve(viewer: Viewer, rawUuid: string): Promise<UserView> {
    return this.view(await this.target(viewer, rawUuid), viewer);
  }

  /**
   * The personal API key `rawId` names (`@current`: the key making the request), without its value.
   * Throws 403 for another key of the same user, 404 for an id of no key of the user (an id that is
   * not a UUID, as key ids are, is looked up nowhere: a NUL byte in it would fail PostgreSQL's query).
   */
  async retrieveKey(viewer: Viewer, rawId: string): Promise<PersonalApiKeyView> {
    if (rawId === '@current' || rawId === viewer.key.id) return personalApiKeyView(viewer.key);
    const id = normalizeUuid(rawId);
    const other = id === undefined ? undefined : await this.keys.findOfUser(id, viewer.user.id);
    if (!other) throw notFound();
    throw permissionDenied('This action does not support Personal API Key access');
  }

  /**
   * `user` as `UserSerializer` shows them: current organization (full, its projects as the viewer's
   * key may see them), current team (basic; without one, the current organization's first project
   * the user can reach, as PostHog's `User.team`; null when there is none), organizations
   * (basic), PostHog's defaults for what is not stored.
   */
  private async view(user: User, viewer: Viewer): Promise<UserView> {
    const current = await this.organizations.currentOf(user);
    const [organization] = current ? await this.organizations.views([current], { user, key: viewer.key }) : [];
    let [team] = user.current_team_id === null ? [] : await this.reads.teamsForUser(user.id, { teamId: user.current_team_id });
    // no current project: the current organization's first project the user can reach, as
    // PostHog's `User.team` falls back (posthog/models/user.py)
    if (!team && current) {
      const reachable = await this.reads.teamsForUser(user.id, { organizationIds: [current.id] });
      team = reachable.slice().sort((a, b) => a.team.id - b.team.id)[0];
    }
    return {
      date_joined: user.created_at,
      uuid: user.uuid,
      distinct_id: user.distinct_id,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      pending_email: null,
      is_email_verified: user.is_email_verified,
      anonymize_data: false,
      toolbar_mode: 'toolbar',
      has_password: false,
      id: user.id,
      is_staff: user.is_staff,
      is_impersonated: false,
      is_impersonated_until: null,
      sensitive_session_expires_at: null,
      team: team ? teamBasic(team) : null,
      organization: organization ?? null,
      organizations: await this.organizations.basicsOf(user),
      events_column_config: { active: 'DEFAULT' },
      is_2fa_enabled: false,
      has_social_auth: false,
      has_sso_enforcement: false,
      theme_mode: null,
      hedgehog_config: user.hedgehog_config,
      role_at_organization: null,
    };
  }
}
