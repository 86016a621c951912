/**
 * Accounts: organizations, users, organization memberships and teams (projects).
 * Plain objects in and out; timestamps are ISO 8601 UTC strings.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { BoolColumn, Database, TeamTable, UserTable } from '../schema.js';
import { cachedLoad } from '../cached-loads.js';
import { boolValue, fromJson, nowIso, toBool, toBoolOrNull, toInt, toIso } from '../values.js';

/** Organization membership levels (posthog/models/organization.py OrganizationMembership.Level). */
export const OrganizationLevel = { MEMBER: 1, ADMIN: 8, OWNER: 15 } as const;
/** One of the `OrganizationLevel` values: 1, 8 or 15. */
export type OrganizationLevelValue = (typeof OrganizationLevel)[keyof typeof OrganizationLevel];

/** An organization as read; `plugins_access_level` NONE 0, CONFIG 3, INSTALL 6, ROOT 9; `created_at` an ISO 8601 UTC string. */
export interface Organization {
  id: string;
  name: string;
  plugins_access_level: number;
  created_at: string;
}

/** A user as read: booleans and `hedgehog_config` decoded, email lowercase, `created_at` an ISO 8601 UTC string. */
export interface User {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: boolean | null;
  is_active: boolean;
  is_staff: boolean;
  hedgehog_config: Record<string, unknown> | null;
  current_team_id: number | null;
  created_at: string;
}

/** A team (project) as read: `api_token` is its `phc_` project token, `created_at` an ISO 8601 UTC string. */
export interface Team {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  access_control: boolean;
  created_at: string;
}

/** An organization membership as read: `level` an `OrganizationLevel` value, timestamps ISO 8601 UTC strings. */
export interface Membership {
  id: string;
  organization_id: string;
  user_id: number;
  level: number;
  joined_at: string;
  updated_at: string;
}

/** Maps a users row to a User. */
export function toUser(r: Selectable<UserTable>): User {
  return {
    id: r.id,
    uuid: r.uuid,
    distinct_id: r.distinct_id,
    first_name: r.first_name,
    last_name: r.last_name,
    email: r.email,
    is_email_verified: toBoolOrNull(r.is_email_verified),
    is_active: toBool(r.is_active),
    is_staff: toBool(r.is_staff),
    hedgehog_config: r.hedgehog_config == null ? null : fromJson<Record<string, unknown>>(r.hedgehog_config),
    current_team_id: r.current_team_id,
    created_at: toIso(r.created_at),
  };
}

function toTeam(r: Selectable<TeamTable>): Team {
  return {
    id: r.id,
    uuid: r.uuid,
    organization_id: r.organization_id,
    name: r.name,
    api_token: r.api_token,
    timezone: r.timezone,
    access_control: toBool(r.access_control),
    created_at: toIso(r.created_at),
  };
}

/** A project token as PostHog issues them: `phc_` + 43 base62-like characters. */
function newProjectToken(): string {
  return 'phc_' + randomBytes(32).toString('base64url').replace(/[-_]/g, '').slice(0, 43);
}

/** Repository of accounts; every method runs on the given Kysely instance (or transaction). */
export class AccountsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates an organization with a random UUID id; `plugins_access_level` defaults to 9 (ROOT). */
  async createOrganization(input: { name: string; plugins_access_level?: number }): Promise<Organization> {
    const row = {
      id: randomUUID(),
      name: input.name,
      plugins_access_level: input.plugins_access_level ?? 9,
      created_at: nowIso(),
    };
    await this.db.insertInto('organizations').values(row).execute();
    return row;
  }

  /** The organization with this id, or undefined. */
  async findOrganization(id: string): Promise<Organization | undefined> {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, name: r.name, plugins_access_level: r.plugins_access_level, created_at: toIso(r.created_at) };
  }

  /** Every organization, oldest first (by `created_at`). */
  async listOrganizations(): Promise<Organization[]> {
    const rows = await this.db.selectFrom('organizations').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({ id: r.id, name: r.name, plugins_access_level: r.plugins_access_level, created_at: toIso(r.created_at) }));
  }

  /** Creates a user. Throws when the email is taken (unique constraint). */
  async createUser(input: { email: string; first_name?: string; last_name?: string; is_staff?: boolean }): Promise<User> {
    const row = {
      uuid: randomUUID(),
      distinct_id: randomBytes(24).toString('base64url'),
      first_name: input.first_name ?? '',
      last_name: input.last_name ?? '',
      email: input.email.toLowerCase(),
      is_email_verified: null,
      is_active: boolValue(true),
      is_staff: boolValue(input.is_staff ?? false),
      hedgehog_config: null,
      current_team_id: null,
      created_at: nowIso(),
    };
    const r = await this.db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
    return toUser(r);
  }

  /** The user with this id (inactive users included), or undefined. */
  async findUserById(id: number): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toUser(r);
  }

  /** The user with this email, compared lowercase, or undefined. */
  async findUserByEmail(email: string): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
    return r && toUser(r);
  }

  /** Every user, by id. */
  async listUsers(): Promise<User[]> {
    const rows = await this.db.selectFrom('users').selectAll().orderBy('id').execute();
    return rows.map(toUser);
  }

  /**
   * Sets the user's `current_team_id` to a team or to none (null). Checks nothing: an unknown user
   * is a no-op, and the column has no foreign key.
   */
  async setCurrentTeam(userId: number, teamId: number | null): Promise<void> {
    await this.db.updateTable('users').set({ current_team_id: teamId }).where('id', '=', userId).execute();
  }

  /**
   * Changes a user's names and email (only the fields given; `email` stored lowercase, as
   * `findUserByEmail` compares it). Throws the driver's unique-constraint error for an email
   * another user has.
   */
  async updateUser(userId: number, fields: { first_name?: string; last_name?: string; email?: string }): Promise<void> {
    const set = { ...fields, ...(fields.email !== undefined ? { email: fields.email.toLowerCase() } : {}) };
    if (Object.keys(set).length === 0) return;
    await this.db.updateTable('users').set(set).where('id', '=', userId).execute();
  }

  /** Changes a team's name and time zone (only the fields given). */
  async updateTeam(teamId: number, fields: { name?: string; timezone?: string }): Promise<void> {
    if (Object.keys(fields).length === 0) return;
    await this.db.updateTable('teams').set(fields).where('id', '=', teamId).execute();
  }

  /**
   * The active members of an organization with their users, newest first (`oldestFirst` for
   * joined order), ties by membership id.
   */
  async membersOf(organizationId: string, oldestFirst: boolean): Promise<Array<{ membership: Membership; user: User }>> {
    const rows = await this.db
      .selectFrom('organization_memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .selectAll('u')
      .select(['m.id as m_id', 'm.level as m_level', 'm.joined_at as m_joined_at', 'm.updated_at as m_updated_at'])
      .where('m.organization_id', '=', organizationId)
      .where('u.is_active', '=', boolValue(true))
      .orderBy('m.joined_at', oldestFirst ? 'asc' : 'desc')
      .orderBy('m.id')
      .execute();
    return rows.map((r) => {
      const { m_id, m_level, m_joined_at, m_updated_at, ...user } = r;
      return {
        membership: {
          id: m_id,
          organization_id: organizationId,
          user_id: user.id,
          level: m_level,
          joined_at: toIso(m_joined_at),
          updated_at: toIso(m_updated_at),
        },
        user: toUser(user),
      };
    });
  }

  /** Adds (or re-levels) a user's membership of an organization. */
  async upsertMembership(organizationId: string, userId: number, level: number): Promise<Membership> {
    const existing = await this.findMembership(organizationId, userId);
    const now = nowIso();
    if (existing) {
      await this.db.updateTable('organization_memberships').set({ level, updated_at: now }).where('id', '=', existing.id).execute();
      return { ...existing, level, updated_at: now };
    }
    const row = { id: randomUUID(), organization_id: organizationId, user_id: userId, level, joined_at: now, updated_at: now };
    await this.db.insertInto('organization_memberships').values(row).execute();
    return row;
  }

  /** The user's membership of the organization, or undefined. */
  async findMembership(organizationId: string, userId: number): Promise<Membership | undefined> {
    const r = await this.db
      .selectFrom('organization_memberships')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return r && { ...r, joined_at: toIso(r.joined_at), updated_at: toIso(r.updated_at) };
  }

  /**
   * Creates a team with a new `phc_` api_token; `timezone` defaults to 'UTC', `access_control` to false.
   * Throws the driver's foreign-key error when the organization does not exist.
   */
  async createTeam(input: { organization_id: string; name: string; timezone?: string; access_control?: boolean }): Promise<Team> {
    const r = await this.db
      .insertInto('teams')
      .values({
        uuid: randomUUID(),
        organization_id: input.organization_id,
        name: input.name,
        api_token: newProjectToken(),
        timezone: input.timezone ?? 'UTC',
        access_control: boolValue(input.access_control ?? false),
        created_at: nowIso(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toTeam(r);
  }

  /** The team with this id, or undefined. */
  async findTeam(id: number): Promise<Team | undefined> {
    const r = await this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toTeam(r);
  }

  /**
   * The id of the team whose project API token (`api_token`, `phc_…`) is `token`, or undefined (the
   * capture endpoints' token check; cached as `TEAM_ID_BY_API_TOKEN`).
   */
  async findTeamIdByApiToken(token: string): Promise<number | undefined> {
    const r = await this.db.selectFrom('teams').select('id').where('api_token', '=', token).executeTakeFirst();
    return r?.id;
  }

  /**
   * What the security handler needs to decide a user's access to a project, in one query (it was
   * four: team, membership, explicit level, organization): the team, its organization, the
   * user's membership of that organization (undefined when none) and the user's explicit level in
   * the project (null when none). Undefined when the team does not exist.
   */
  async projectAccessOf(
    teamId: number,
    userId: number,
  ): Promise<
    { team: Team; organization: Organization | undefined; membership: Membership | undefined; explicitLevel: number | null } | undefined
  > {
    const r = await this.db
      .selectFrom('teams as t')
      .leftJoin('organizations as o', 'o.id', 't.organization_id')
      .leftJoin('organization_memberships as m', (j) => j.onRef('m.organization_id', '=', 't.organization_id').on('m.user_id', '=', userId))
      .leftJoin('explicit_team_memberships as e', (j) => j.onRef('e.team_id', '=', 't.id').onRef('e.parent_membership_id', '=', 'm.id'))
      .selectAll('t')
      .select([
        'o.id as o_id',
        'o.name as o_name',
        'o.plugins_access_level as o_plugins_access_level',
        'o.created_at as o_created_at',
        'm.id as m_id',
        'm.level as m_level',
        'm.joined_at as m_joined_at',
        'm.updated_at as m_updated_at',
        'e.level as e_level',
      ])
      .where('t.id', '=', teamId)
      .executeTakeFirst();
    if (!r) return undefined;
    const { o_id, o_name, o_plugins_access_level, o_created_at, m_id, m_level, m_joined_at, m_updated_at, e_level, ...team } = r;
    return {
      team: toTeam(team),
      organization:
        o_id === null || o_name === null || o_plugins_access_level === null || o_created_at === null
          ? undefined
          : { id: o_id, name: o_name, plugins_access_level: o_plugins_access_level, created_at: toIso(o_created_at) },
      membership:
        m_id === null || m_level === null || m_joined_at === null || m_updated_at === null
          ? undefined
          : {
              id: m_id,
              organization_id: team.organization_id,
              user_id: userId,
              level: m_level,
              joined_at: toIso(m_joined_at),
              updated_at: toIso(m_updated_at),
            },
      explicitLevel: e_level ?? null,
    };
  }

  /** The number of teams in the store, all organizations together. */
  async countTeams(): Promise<number> {
    const r = await this.db
      .selectFrom('teams')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return toInt(r.n as number | string);
  }

  /**
   * Teams in the organizations the user belongs to, ordered by id, optionally limited to `teamIds`
   * (a key's scoped teams). Returns one page and the total count.
   */
  async listTeamsForUser(
    userId: number,
    page: { limit: number; offset: number },
    teamIds: number[] | null,
  ): Promise<{ count: number; results: Team[] }> {
    let q = this.db
      .selectFrom('teams')
      .innerJoin('organization_memberships as m', 'm.organization_id', 'teams.organization_id')
      .where('m.user_id', '=', userId);
    if (teamIds) q = teamIds.length ? q.where('teams.id', 'in', teamIds) : q.where((eb) => eb.val(1), '=', 0);
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const rows = await q.selectAll('teams').orderBy('teams.id').limit(page.limit).offset(page.offset).execute();
    return { count: toInt(total.n as number | string), results: rows.map(toTeam) };
  }
}

/** An organization with the reader's membership level in it (1, 8 or 15) and when they joined (ISO 8601 UTC). */
export interface OrganizationWithLevel extends Organization {
  membership_level: number;
  joined_at: string;
}

/**
 * A team as one user sees it: the team, the user's organization membership level (null when the
 * user is not a member of its organization), the user's explicit level in it (null when none), and
 * whether any event of the team is stored (`ingested_event`).
 */
export interface TeamForUser {
  team: Team;
  membership_level: number | null;
  explicit_level: number | null;
  ingested_event: boolean;
}

/** Reads of organizations and teams as one user sees them (the identity and discovery endpoints). */
export class AccountsReads {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The organizations `userId` is a member of, with the membership level, ordered by `created_at`
   * then id; limited to `organizationIds` when not null (an empty list gives none). One page and the
   * total count.
   */
  async listOrganizationsOfUser(
    userId: number,
    page: { limit: number; offset: number } | null,
    organizationIds: string[] | null,
  ): Promise<{ count: number; results: OrganizationWithLevel[] }> {
    let q = this.db
      .selectFrom('organizations as o')
      .innerJoin('organization_memberships as m', 'm.organization_id', 'o.id')
      .where('m.user_id', '=', userId);
    if (organizationIds) q = organizationIds.length ? q.where('o.id', 'in', organizationIds) : q.where((eb) => eb.val(1), '=', 0);
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    let rows = q.selectAll('o').select(['m.level as membership_level', 'm.joined_at as joined_at']).orderBy('o.created_at').orderBy('o.id');
    if (page) rows = rows.limit(page.limit).offset(page.offset);
    const found = await rows.execute();
    return {
      count: toInt(total.n as number | string),
      results: found.map((r) => ({
        id: r.id,
        name: r.name,
        plugins_access_level: r.plugins_access_level,
        created_at: toIso(r.created_at),
        membership_level: r.membership_level,
        joined_at: toIso(r.joined_at),
      })),
    };
  }

  /** The organization `organizationId` with `userId`'s membership level, or undefined when it does not exist or the user is not a member. */
  async findOrganizationOfUser(organizationId: string, userId: number): Promise<OrganizationWithLevel | undefined> {
    const r = await this.db
      .selectFrom('organizations as o')
      .innerJoin('organization_memberships as m', 'm.organization_id', 'o.id')
      .where('m.user_id', '=', userId)
      .where('o.id', '=', organizationId)
      .selectAll('o')
      .select(['m.level as membership_level', 'm.joined_at as joined_at'])
      .executeTakeFirst();
    return (
      r && {
        id: r.id,
        name: r.name,
        plugins_access_level: r.plugins_access_level,
        created_at: toIso(r.created_at),
        membership_level: r.membership_level,
        joined_at: toIso(r.joined_at),
      }
    );
  }

  /** Whether an organization with this id exists. */
  async organizationExists(organizationId: string): Promise<boolean> {
    const r = await this.db.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
    return r !== undefined;
  }

  /** The active user with this uuid (lowercase with dashes), or undefined. */
  async findActiveUserByUuid(uuid: string): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    const user = r && toUser(r);
    return user?.is_active ? user : undefined;
  }

  /** The number of members of an organization. */
  async countMembers(organizationId: string): Promise<number> {
    const r = await this.db
      .selectFrom('organization_memberships')
      .where('organization_id', '=', organizationId)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return toInt(r.n as number | string);
  }

  /**
   * Teams as `userId` sees them, ordered by id: those of the organizations in `organizationIds`
   * (every organization when null), or only the team `teamId` when given. Each with the user's
   * organization membership level and explicit level (null when none) and whether the team has
   * stored events. Visibility is the domain's to decide (domain/access.ts `effectiveProjectLevel`).
   */
  async teamsForUser(userId: number, where: { organizationIds?: string[]; teamId?: number }): Promise<TeamForUser[]> {
    let q = this.db
      .selectFrom('teams as t')
      .leftJoin('organization_memberships as m', (j) => j.onRef('m.organization_id', '=', 't.organization_id').on('m.user_id', '=', userId))
      .leftJoin('explicit_team_memberships as e', (j) => j.onRef('e.team_id', '=', 't.id').onRef('e.parent_membership_id', '=', 'm.id'))
      .selectAll('t')
      .select((eb) => [
        'm.level as m_level',
        'e.level as e_level',
        eb
          .or([
            eb('t.ingested_event', '=', boolValue(true)),
            eb.exists(eb.selectFrom('events as ev').select('ev.team_id').whereRef('ev.team_id', '=', 't.id')),
          ])
          .as('has_events'),
      ]);
    if (where.organizationIds)
      q = where.organizationIds.length ? q.where('t.organization_id', 'in', where.organizationIds) : q.where((eb) => eb.val(1), '=', 0);
    if (where.teamId !== undefined) q = q.where('t.id', '=', where.teamId);
    const rows = await q.orderBy('t.id').execute();
    return rows.map(({ m_level, e_level, has_events, ...team }) => ({
      team: toTeam(team),
      membership_level: m_level ?? null,
      explicit_level: e_level ?? null,
      ingested_event: toBool(has_events as BoolColumn),
    }));
  }
}

/**
 * `projectAccessOf(teamId, userId)` as the security handler keeps it (`UnchangedStoreCache`, by
 * `teamId:userId`): the team, its organization, the user's membership and explicit level.
 */
export const PROJECT_ACCESS = cachedLoad({
  name: 'project access',
  reads: ['teams', 'organizations', 'organization_memberships', 'explicit_team_memberships'],
  load: (accounts: AccountsRepository, teamId: number, userId: number) => accounts.projectAccessOf(teamId, userId),
});

/**
 * The capture endpoints' token look-up, kept while `teams` is unchanged (SQLite): a capture request
 * then needs no query before it joins the group-commit queue, so it is not held behind the
 * connection's open transaction (server/capture/index.ts).
 */
export const TEAM_ID_BY_API_TOKEN = cachedLoad<AccountsRepository, string, void, number>({
  name: 'team id by project API token',
  reads: ['teams'],
  load: (repo, token) => repo.findTeamIdByApiToken(token),
});
