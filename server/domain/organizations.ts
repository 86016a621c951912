/**
 * Organizations and the projects in them as a personal API key's user sees them
 * (`GET /api/organizations/`, `GET /api/organizations/{id}/`,
 * `GET /api/organizations/{organization_id}/projects/`, and the `organization`/`organizations`
 * fields of `GET /api/users/@me/`).
 *
 * PostHog's rules (posthog/api/organization.py `OrganizationViewSet`, posthog/api/project.py
 * `ProjectViewSet`, posthog/api/shared.py, posthog/user_permissions.py):
 * - a user sees the organizations they are a member of; `@current` is the current organization;
 * - a project is visible to a member of its organization unless access control is on, then only to
 *   its explicit members and the organization's admins and owners (`effectiveProjectLevel`);
 * - envapi also hides the projects a key is limited away from (`scoped_teams`), in every list.
 * Fields envapi does not store take PostHog's defaults (see the schemas in openapi.yaml).
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import {
  AccountsReads,
  AccountsRepository,
  type OrganizationWithLevel,
  type TeamForUser,
  type User,
} from '../storage/repositories/accounts.js';
import type { PersonalApiKey } from '../storage/repositories/api-keys.js';
import { effectiveProjectLevel } from './access.js';
import { notFound, permissionDenied } from './errors.js';
import { userBasic } from './user-basic.js';
import { normalizeUuid } from './uuids.js';

/** PostHog's `Organization` (OrganizationSerializer) as envapi answers it. */
export type OrganizationView = components['schemas']['Organization'];
/** PostHog's `OrganizationBasic`. */
export type OrganizationBasicView = components['schemas']['OrganizationBasic'];
/** PostHog's `TeamBasic` (also `ProjectBackwardCompatBasic`). */
export type TeamBasicView = components['schemas']['TeamBasic'];

/** The caller of a discovery read: the key's user and the key (for its `scoped_teams`). */
export interface Viewer {
  user: User;
  key: PersonalApiKey;
}

/** One limit/offset page of something, and how many there are in all. */
export interface Page<T> {
  count: number;
  results: T[];
}

/**
 * The slug PostHog would give a name (Django's `slugify`): lowercase, characters other than
 * letters, digits, `_` and `-` dropped, runs of spaces and dashes turned into one `-`, trimmed of
 * `-` and `_`. PostHog also makes slugs unique with a suffix; envapi stores none, so two
 * organizations with the same name share a slug.
 */
export function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}

/** The user's effective level in a team read with `AccountsReads.teamsForUser`, or null when the team is not visible to them. */
export function levelIn(row: TeamForUser): number | null {
  return effectiveProjectLevel(row.team, row.membership_level === null ? undefined : { level: row.membership_level }, row.explicit_level);
}

/** Whether the team is visible to the user (a level) and usable by the key (`scoped_teams`). */
export function visibleToKey(row: TeamForUser, key: PersonalApiKey): boolean {
  return levelIn(row) !== null && (key.scoped_teams === null || key.scoped_teams.includes(row.team.id));
}

/** `TeamBasic` of a team row (posthog/api/shared.py `TeamBasicSerializer`). */
export function teamBasic(row: TeamForUser): TeamBasicView {
  const t = row.team;
  return {
    id: t.id,
    uuid: t.uuid,
    organization: t.organization_id,
    project_id: t.id,
    api_token: t.api_token,
    name: t.name,
    completed_snippet_onboarding: false,
    has_completed_onboarding_for: null,
    ingested_event: row.ingested_event,
    is_demo: false,
    timezone: t.timezone,
    access_control: t.access_control,
  };
}

/** A membership level as the schema types it (1, 8 or 15). */
function levelEnum(level: number): 1 | 8 | 15 {
  return level >= 15 ? 15 : level >= 8 ? 8 : 1;
}

/** `OrganizationBasic` of an organization the user is a member of. */
export function organizationBasic(org: OrganizationWithLevel): OrganizationBasicView {
  return {
    id: org.id,
    name: org.name,
    slug: slugOf(org.name),
    logo_media_id: null,
    membership_level: levelEnum(org.membership_level),
    members_can_use_personal_api_keys: true,
    is_active: true,
    is_not_active_reason: null,
    is_pending_deletion: false,
  };
}

/** PostHog's `OrganizationMember` as envapi answers it. */
export type OrganizationMemberView = components['schemas']['OrganizationMember'];

/** Reads organizations, their projects and members for a key's user; one per app. */
export class OrganizationsService {
  private readonly reads: AccountsReads;
  private readonly accounts: AccountsRepository;

  constructor(store: Store) {
    this.reads = new AccountsReads(store.db);
    this.accounts = new AccountsRepository(store.db);
  }

  /**
   * One page of the active members of organization `rawOrganizationId` (PostHog's
   * `OrganizationMemberViewSet`, posthog/api/organization_member.py): newest first unless
   * `order` is `joined_at`, only the member whose email is `email` (any case) when given; no
   * logins are recorded, so `is_2fa_enabled`, `has_social_auth` are false and `last_login` null.
   * Throws as `memberOrganization` (404, 403).
   */
  async members(
    viewer: Viewer,
    rawOrganizationId: string,
    q: { email?: string | undefined; order?: string | undefined; limit: number; offset: number },
  ): Promise<Page<OrganizationMemberView>> {
    const organizationId = await this.memberOrganization(viewer, rawOrganizationId);
    let rows = await this.accounts.membersOf(organizationId, q.order === 'joined_at');
    if (q.email !== undefined) rows = rows.filter((r) => r.user.email.toLowerCase() === q.email!.toLowerCase());
    const results = rows.slice(q.offset, q.offset + q.limit).map(({ membership, user }) => ({
      id: membership.id,
      user: userBasic(user),
      level: membership.level >= 15 ? (15 as const) : membership.level >= 8 ? (8 as const) : (1 as const),
      joined_at: membership.joined_at,
      updated_at: membership.updated_at,
      is_2fa_enabled: false,
      has_social_auth: false,
      last_login: null,
    }));
    return { count: rows.length, results };
  }

  /** One page of the user's organizations, oldest first, in the full `Organization` shape. */
  async list(viewer: Viewer, page: { limit: number; offset: number }): Promise<Page<OrganizationView>> {
    const { count, results } = await this.reads.listOrganizationsOfUser(viewer.user.id, page, null);
    return { count, results: await this.views(results, viewer) };
  }

  /**
   * One organization of the user by id, or `@current`. Throws 404 "Current organization not
   * found." for `@current` without a current organization, 404 `Not found.` for anything else the
   * user is not a member of (PostHog's queryset is the user's organizations).
   */
  async retrieve(viewer: Viewer, rawId: string): Promise<OrganizationView> {
    let org: OrganizationWithLevel | undefined;
    if (rawId === '@current') {
      org = await this.currentOf(viewer.user);
      if (!org) throw notFound('Current organization not found.');
    } else {
      const id = normalizeUuid(rawId);
      org = id === undefined ? undefined : await this.reads.findOrganizationOfUser(id, viewer.user.id);
      if (!org) throw notFound();
    }
    const [view] = await this.views([org], viewer);
    return view!;
  }

  /**
   * One page (ordered by id) of the projects of organization `rawOrganizationId` (a UUID or
   * `@current`) visible to the user and usable by the key, as `TeamBasic`. Throws 404 when the
   * organization does not exist (or `@current` has none, or the id is not a UUID), 403 (DRF's
   * generic message, PostHog's `OrganizationMemberPermissions`) when the user is not a member.
   */
  async projectsOf(viewer: Viewer, rawOrganizationId: string, page: { limit: number; offset: number }): Promise<Page<TeamBasicView>> {
    const organizationId = await this.memberOrganization(viewer, rawOrganizationId);
    const rows = (await this.reads.teamsForUser(viewer.user.id, { organizationIds: [organizationId] })).filter((r) =>
      visibleToKey(r, viewer.key),
    );
    return { count: rows.length, results: rows.slice(page.offset, page.offset + page.limit).map(teamBasic) };
  }

  /**
   * The id of the organization a path names (a UUID, or `@current`), of which the viewer is a
   * member. Throws 404 for an unknown or malformed id (or `@current` of a user of none), 403
   * (PostHog's `OrganizationMemberPermissions`) for an organization the user is not a member of.
   */
  async memberOrganization(viewer: Viewer, rawOrganizationId: string): Promise<string> {
    let organizationId: string | undefined;
    if (rawOrganizationId === '@current') organizationId = (await this.currentOf(viewer.user))?.id;
    else organizationId = normalizeUuid(rawOrganizationId);
    if (organizationId === undefined) throw notFound();
    if (!(await this.reads.findOrganizationOfUser(organizationId, viewer.user.id))) {
      if (await this.reads.organizationExists(organizationId)) throw permissionDenied();
      throw notFound();
    }
    return organizationId;
  }

  /**
   * The user's current organization: the organization of the current project while the user is a
   * member of it, else the organization they joined first; undefined when they belong to none.
   */
  async currentOf(user: User): Promise<OrganizationWithLevel | undefined> {
    const { results } = await this.reads.listOrganizationsOfUser(user.id, null, null);
    if (user.current_team_id !== null) {
      const [current] = await this.reads.teamsForUser(user.id, { teamId: user.current_team_id });
      const org = current && results.find((o) => o.id === current.team.organization_id);
      if (org) return org;
    }
    return results.slice().sort((a, b) => a.joined_at.localeCompare(b.joined_at))[0];
  }

  /** Every organization of the user, oldest first, as `OrganizationBasic`. */
  async basicsOf(user: User): Promise<OrganizationBasicView[]> {
    const { results } = await this.reads.listOrganizationsOfUser(user.id, null, null);
    return results.map(organizationBasic);
  }

  /** Full views of organizations of the viewer's user, in order. */
  async views(orgs: OrganizationWithLevel[], viewer: Viewer): Promise<OrganizationView[]> {
    if (orgs.length === 0) return [];
    const teams = (await this.reads.teamsForUser(viewer.user.id, { organizationIds: orgs.map((o) => o.id) })).filter((r) =>
      visibleToKey(r, viewer.key),
    );
    const out: OrganizationView[] = [];
    for (const org of orgs) {
      const own = teams.filter((r) => r.team.organization_id === org.id);
      // the full serializer has no is_active / is_not_active_reason / is_pending_deletion
      const { id, name, slug, logo_media_id, membership_level, members_can_use_personal_api_keys } = organizationBasic(org);
      out.push({
        id,
        name,
        slug,
        logo_media_id,
        membership_level,
        members_can_use_personal_api_keys,
        created_at: org.created_at,
        updated_at: org.created_at,
        plugins_access_level: pluginsAccessLevel(org.plugins_access_level),
        teams: own.map(teamBasic),
        projects: own.map((r) => ({ id: r.team.id, organization_id: org.id, name: r.team.name })),
        available_product_features: [],
        is_member_join_email_enabled: true,
        metadata: {},
        customer_id: null,
        enforce_2fa: null,
        members_can_invite: true,
        allow_publicly_shared_resources: true,
        member_count: await this.reads.countMembers(org.id),
        is_ai_data_processing_approved: null,
        default_experiment_stats_method: null,
        default_role_id: null,
      });
    }
    return out;
  }
}

/** A stored plugins access level as the schema types it (0, 3, 6 or 9; anything else rounds down). */
function pluginsAccessLevel(level: number): 0 | 3 | 6 | 9 {
  return level >= 9 ? 9 : level >= 6 ? 6 : level >= 3 ? 3 : 0;
}
