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
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import { AccountsReads, type TeamForUser } from '../storage/repositories/accounts.js';
import { assertKeyMayUseProject } from './access.js';
import { clip } from './echo.js';
import { notFound, validationError } from './errors.js';
import { levelIn, type Viewer } from './organizations.js';

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

/** Reads one project or environment for a key's user; one per app. */
export class ProjectDetailsService {
  private readonly reads: AccountsReads;

  constructor(store: Store) {
    this.reads = new AccountsReads(store.db);
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
