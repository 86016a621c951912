/**
 * One project or environment by id (`GET /api/projects/{id}/`, `GET /api/environments/{id}/`),
 * `@current` accepted, in PostHog's `ProjectBackwardCompat` and `Team` shapes.
 *
 * PostHog's rules (posthog/api/project.py `ProjectViewSet`, posthog/api/team.py `TeamViewSet`,
 * posthog/user_permissions.py): `@current` is the user's current team (none → 404); an id that is
 * not an integer → 400 with Python's `int()` message; the queryset is the teams visible to the
 * user, so anything else → 404 `Not found.`. A key limited to other projects answers 403, as every
 * project-scoped operation of envapi (domain/access.ts `assertKeyMayUseProject`). In envapi a
 * project is its own single environment: both views read the same team.
 *
 * Also one project of an organization (`GET`/`PATCH /api/organizations/{organization_id}/projects/{id}/`,
 * PostHog's `ProjectViewSet`): the organization checked first (OrganizationsService
 * `memberOrganization`), then the project as above, which must be of that organization (404
 * otherwise). A PATCH stores `name` (1–200 characters, trimmed, as DRF's `CharField`) and
 * `timezone` (an IANA zone, else DRF's `invalid_choice`); any member who sees the project may
 * (PostHog's `TeamMemberLightManagementPermission`).
 */
import type { components } from '../../generated/api.js';
import { IANAZone } from 'luxon';
import type { Store } from '../storage/db.js';
import { AccountsReads, AccountsRepository, type TeamForUser } from '../storage/repositories/accounts.js';
import { assertKeyMayUseProject } from './access.js';
import { clip } from './echo.js';
import { notFound, validationError } from './errors.js';
import { levelIn, type OrganizationsService, type Viewer } from './organizations.js';

/** PostHog's `ProjectBackwardCompat` as envapi answers it. */
export type ProjectView = components['schemas']['ProjectBackwardCompat'];
/** PostHog's `Team` (TeamSerializer) as envapi answers it. */
export type TeamView = components['schemas']['Team'];

/** The largest id a team can have (a 32-bit integer column). */
const MAX_ID = 2_147_483_647;

/** A level as the schema types it (1, 8 or 15). */
function levelEnum(level: number): 1 | 8 | 15 {
  return level >= 15 ? 15 : level >= 8 ? 8 : 1;
}

/** The fields of a project a PATCH may change (schema `PatchedProjectBackwardCompat`). */
export interface ProjectChanges {
  name?: string | undefined;
  timezone?: string | undefined;
}

/** Reads one project or environment for a key's user, and changes a project; one per app. */
export class ProjectDetailsService {
  private readonly reads: AccountsReads;
  private readonly accounts: AccountsRepository;

  constructor(
    store: Store,
    private readonly organizations: OrganizationsService,
  ) {
    this.reads = new AccountsReads(store.db);
    this.accounts = new AccountsRepository(store.db);
  }

  /**
   * The project `rawId` of organization `rawOrganizationId` (module doc) as `ProjectBackwardCompat`.
   * Throws 404 (no such organization, or no such project in it), 403 (not a member, or a key
   * limited to other projects) or 400 (an id neither digits nor `@current`).
   */
  async organizationProject(viewer: Viewer, rawOrganizationId: string, rawId: string): Promise<ProjectView> {
    const organizationId = await this.organizations.memberOrganization(viewer, rawOrganizationId);
    const { row } = await this.find(viewer, rawId);
    if (row.team.organization_id !== organizationId) throw notFound();
    return this.project(viewer, String(row.team.id));
  }

  /**
   * Changes the project as the module doc says, then answers it as `organizationProject`. Throws
   * what `organizationProject` throws, and 400 for a blank or too long `name` or an unknown
   * `timezone`.
   */
  async updateOrganizationProject(viewer: Viewer, rawOrganizationId: string, rawId: string, changes: ProjectChanges): Promise<ProjectView> {
    const current = await this.organizationProject(viewer, rawOrganizationId, rawId);
    const fields: { name?: string; timezone?: string } = {};
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name === '') throw validationError('This field may not be blank.', 'name', 'blank');
      if (name.length > 200) throw validationError('Ensure this field has no more than 200 characters.', 'name', 'max_length');
      fields.name = name;
    }
    if (changes.timezone !== undefined) {
      if (!IANAZone.isValidZone(changes.timezone))
        throw validationError(`"${clip(changes.timezone)}" is not a valid choice.`, 'timezone', 'invalid_choice');
      fields.timezone = changes.timezone;
    }
    await this.accounts.updateTeam(current.id, fields);
    return this.project(viewer, String(current.id));
  }

  /** The project `rawId` names (digits or `@current`) as `ProjectBackwardCompat`. Throws 400, 403 or 404 (see the module doc). */
  async project(viewer: Viewer, rawId: string): Promise<ProjectView> {
    const { row, level } = await this.find(viewer, rawId);
    const t = row.team;
    return {
      id: t.id,
      uuid: t.uuid,
      organization: t.organization_id,
      name: t.name,
      api_token: t.api_token,
      created_at: t.created_at,
      updated_at: t.created_at,
      effective_membership_level: levelEnum(level),
      has_group_types: false,
      live_events_token: null,
      app_urls: [],
      slack_incoming_webhook: null,
      anonymize_ips: false,
      completed_snippet_onboarding: false,
      ingested_event: row.ingested_event,
      test_account_filters: [],
      is_demo: false,
      timezone: t.timezone,
      data_attributes: ['data-attr'],
      session_recording_opt_in: false,
      access_control: t.access_control,
      week_start_day: null,
      primary_dashboard: null,
      person_on_events_querying_enabled: true,
      has_completed_onboarding_for: null,
    };
  }

  /**
   * The environment `rawId` names as `Team`: the project's fields plus `project_id` (= id),
   * `user_access_level` (`admin` for levels 8 and 15, else `member`) and null secret tokens.
   */
  async environment(viewer: Viewer, rawId: string): Promise<TeamView> {
    const project = await this.project(viewer, rawId);
    return {
      ...project,
      project_id: project.id,
      secret_api_token: null,
      secret_api_token_backup: null,
      user_access_level: (project.effective_membership_level ?? 0) >= 8 ? 'admin' : 'member',
    };
  }

  /** The team `rawId` names, visible to the viewer's user and usable by the key, with the user's level. */
  private async find(viewer: Viewer, rawId: string): Promise<{ row: TeamForUser; level: number }> {
    let teamId: number;
    if (rawId === '@current') {
      if (viewer.user.current_team_id === null) throw notFound();
      teamId = viewer.user.current_team_id;
    } else if (/^\s*[+-]?\d+\s*$/.test(rawId)) {
      teamId = Number(rawId);
    } else {
      throw validationError(`invalid literal for int() with base 10: '${clip(rawId)}'`, null, 'invalid');
    }
    assertKeyMayUseProject(viewer.key, teamId);
    // ids are 32-bit in both stores: anything outside names no team (and PostgreSQL would refuse the comparison)
    if (!Number.isInteger(teamId) || teamId < 1 || teamId > MAX_ID) throw notFound();
    const [row] = await this.reads.teamsForUser(viewer.user.id, { teamId });
    const level = row ? levelIn(row) : null;
    if (!row || level === null) throw notFound();
    return { row, level };
  }
}
