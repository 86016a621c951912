/**
 * The projects a key may act on (`GET /api/projects/`), so a user can find a `project_id`: the
 * teams of the user's organizations, limited to the key's `scoped_teams` when set (PostHog's
 * ProjectViewSet for a personal API key, scoped to the key's teams).
 */
import type { Store } from '../storage/db.js';
import { AccountsRepository, type Team } from '../storage/repositories/accounts.js';

/** One page of the projects a key may act on, and how many there are in all. */
export interface ProjectsPage {
  count: number;
  results: Team[];
}

/** Lists the projects a key may act on; one per app. */
export class ProjectsService {
  private readonly accounts: AccountsRepository;

  constructor(store: Store) {
    this.accounts = new AccountsRepository(store.db);
  }

  /**
   * One page (`limit`, `offset`) of the teams in `userId`'s organizations, ordered by id, limited to
   * `scopedTeams` when not null (an empty list gives none), with the total count.
   */
  listForKey(userId: number, page: { limit: number; offset: number }, scopedTeams: number[] | null): Promise<ProjectsPage> {
    return this.accounts.listTeamsForUser(userId, page, scopedTeams);
  }
}
