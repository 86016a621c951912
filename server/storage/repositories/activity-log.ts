/**
 * The activity log (PostHog posthog/models/activity_logging/activity_log.py): who changed what,
 * scoped by (team, scope, item_id), read newest first.
 */
import { v7 as uuid7 } from 'uuid';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { boolValue, fromJson, jsonValue, nowIso, toBool, toInt, toIso } from '../values.js';

/** One change inside `detail.changes` (PostHog's `Change`). */
export interface ActivityChange {
  type: string;
  action: 'changed' | 'created' | 'deleted' | 'merged' | 'split' | 'exported';
  field?: string | null;
  before?: unknown;
  after?: unknown;
}

/** PostHog's `Detail`: what the entry is about. */
export interface ActivityDetail {
  id?: string | null;
  changes?: ActivityChange[] | null;
  merge?: unknown;
  trigger?: { job_type: string; job_id: string; payload: Record<string, unknown> } | null;
  name?: string | null;
  short_id?: string | null;
  type?: string | null;
}

/**
 * An activity log entry as read: its user's id, first_name and email (or null), `detail` decoded,
 * `created_at` an ISO 8601 UTC string.
 */
export interface ActivityEntry {
  id: string;
  team_id: number;
  organization_id: string;
  /** null for system activity */
  user: { id: number; first_name: string; email: string } | null;
  is_system: boolean;
  scope: string;
  item_id: string;
  activity: string;
  detail: ActivityDetail;
  created_at: string;
}

/** Repository of the activity log; every method runs on the given Kysely instance (or transaction). */
export class ActivityLogRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records one entry. `created_at` defaults to now; entries of one call keep their order. */
  async log(input: {
    team_id: number;
    organization_id: string;
    user_id: number | null;
    scope: string;
    item_id: string;
    activity: string;
    detail: ActivityDetail;
  }): Promise<void> {
    await this.db
      .insertInto('activity_log')
      .values({
        id: uuid7(),
        team_id: input.team_id,
        organization_id: input.organization_id,
        user_id: input.user_id,
        is_system: boolValue(input.user_id === null),
        scope: input.scope,
        item_id: input.item_id,
        activity: input.activity,
        detail: jsonValue(input.detail),
        created_at: nowIso(),
      })
      .execute();
  }

  /** One page (1-based) of an item's entries, newest first (ids are time-ordered), with the total count. */
  async page(
    teamId: number,
    scope: string,
    itemId: string,
    page: { limit: number; page: number },
  ): Promise<{ total: number; results: ActivityEntry[] }> {
    const q = this.db
      .selectFrom('activity_log as a')
      .where('a.team_id', '=', teamId)
      .where('a.scope', '=', scope)
      .where('a.item_id', '=', itemId);
    const total = await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const rows = await q
      .leftJoin('users as u', 'u.id', 'a.user_id')
      .selectAll('a')
      .select(['u.first_name as user_first_name', 'u.email as user_email'])
      .orderBy('a.id', 'desc')
      .limit(page.limit)
      .offset((page.page - 1) * page.limit)
      .execute();
    return {
      total: toInt(total.n as number | string),
      results: rows.map((r) => ({
        id: r.id,
        team_id: r.team_id,
        organization_id: r.organization_id,
        user: r.user_id === null ? null : { id: r.user_id, first_name: r.user_first_name ?? '', email: r.user_email ?? '' },
        is_system: toBool(r.is_system),
        scope: r.scope,
        item_id: r.item_id,
        activity: r.activity,
        detail: fromJson<ActivityDetail>(r.detail),
        created_at: toIso(r.created_at),
      })),
    };
  }
}
