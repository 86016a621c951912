/**
 * Explicit project memberships with their organization membership and user, as the explicit
 * members API shows them (ee/api/explicit_team_member.py). Only active users are listed.
 */
import type { Kysely } from 'kysely';
import { v7 as uuid7 } from 'uuid';
import type { Database } from '../schema.js';
import { nowIso, toIso } from '../values.js';
import { toUser, type User } from './accounts.js';

/** An explicit membership joined with its parent organization membership and user. */
export interface ExplicitMembership {
  id: string;
  team_id: number;
  level: number;
  parent_membership_id: string;
  /** the organization level of the member: 1, 8 or 15 */
  parent_level: number;
  joined_at: string;
  updated_at: string;
  user: User;
}

/** Repository of explicit memberships; use inside a transaction for read-then-write rules. */
export class ExplicitMembersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private base() {
    return this.db
      .selectFrom('explicit_team_memberships as e')
      .innerJoin('organization_memberships as m', 'm.id', 'e.parent_membership_id')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .selectAll('u')
      .select([
        'e.id as e_id',
        'e.team_id as e_team_id',
        'e.level as e_level',
        'e.parent_membership_id as e_parent_membership_id',
        'e.joined_at as e_joined_at',
        'e.updated_at as e_updated_at',
        'm.level as m_level',
      ]);
  }

  private static toMembership(
    r: Awaited<ReturnType<ReturnType<ExplicitMembersRepository['base']>['executeTakeFirstOrThrow']>>,
  ): ExplicitMembership {
    return {
      id: r.e_id,
      team_id: r.e_team_id,
      level: r.e_level,
      parent_membership_id: r.e_parent_membership_id,
      parent_level: r.m_level,
      joined_at: toIso(r.e_joined_at),
      updated_at: toIso(r.e_updated_at),
      user: toUser(r),
    };
  }

  /** The project's explicit members whose users are active, oldest first (then by id). */
  async list(teamId: number): Promise<ExplicitMembership[]> {
    const rows = await this.base()
      .where('e.team_id', '=', teamId)
      .where('u.is_active', '=', 1)
      .orderBy('e.joined_at')
      .orderBy('e.id')
      .execute();
    return rows.map(ExplicitMembersRepository.toMembership);
  }

  /** The explicit membership of the user with this UUID in the project (active users only). */
  async findByUserUuid(teamId: number, userUuid: string): Promise<ExplicitMembership | undefined> {
    const r = await this.base()
      .where('e.team_id', '=', teamId)
      .where('u.uuid', '=', userUuid)
      .where('u.is_active', '=', 1)
      .executeTakeFirst();
    return r && ExplicitMembersRepository.toMembership(r);
  }

  /** The explicit level of a user (by id) in a project, or null without an explicit membership. */
  async levelOf(teamId: number, userId: number): Promise<number | null> {
    const r = await this.db
      .selectFrom('explicit_team_memberships as e')
      .innerJoin('organization_memberships as m', 'm.id', 'e.parent_membership_id')
      .select('e.level')
      .where('e.team_id', '=', teamId)
      .where('m.user_id', '=', userId)
      .executeTakeFirst();
    return r ? r.level : null;
  }

  /**
   * The id of the organization membership of the active user with this UUID in organization
   * `organizationId` (the parent of an explicit membership), or undefined when they are not an
   * active member of it.
   */
  async organizationMembershipId(organizationId: string, userUuid: string): Promise<string | undefined> {
    const r = await this.db
      .selectFrom('organization_memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.id'])
      .where('m.organization_id', '=', organizationId)
      .where('u.uuid', '=', userUuid)
      .where('u.is_active', '=', 1)
      .executeTakeFirst();
    return r?.id;
  }

  /**
   * Creates an explicit membership. Throws the driver's unique-constraint error when the
   * organization membership already has one in this project.
   */
  async create(input: { team_id: number; parent_membership_id: string; level: number }): Promise<string> {
    const now = nowIso();
    const id = uuid7();
    await this.db
      .insertInto('explicit_team_memberships')
      .values({
        id,
        team_id: input.team_id,
        parent_membership_id: input.parent_membership_id,
        level: input.level,
        joined_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }

  /** Sets the level of a membership and bumps updated_at. */
  async setLevel(id: string, level: number): Promise<void> {
    await this.db.updateTable('explicit_team_memberships').set({ level, updated_at: nowIso() }).where('id', '=', id).execute();
  }

  /** Deletes a membership; returns whether one was deleted. */
  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('explicit_team_memberships').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
