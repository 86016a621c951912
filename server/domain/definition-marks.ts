/**
 * What a project says about an event or property definition beyond what its events show:
 * description, tags, verification and hidden (PostHog's Enterprise taxonomy,
 * ee/api/ee_event_definition.py `EnterpriseEventDefinitionSerializer.update` and
 * ee/api/ee_property_definition.py; PostHog's open-source build answers 402 for these edits, envapi
 * serves them). The rules, as PostHog's:
 * - `verified: true` records who verified and when, unless it was verified already, and un-hides;
 * - `verified: false` clears who and when;
 * - `hidden: true` un-verifies (clearing who and when);
 * - both true at once: 400 "An event cannot be both hidden and verified" (or "A property …");
 * - every edit records the caller and the time as `updated_by` / `updated_at`.
 * Tags keep their order, each once. Timestamps are ISO 8601 UTC.
 */
import { AccountsRepository, type User } from '../storage/repositories/accounts.js';
import type { DefinitionMarks } from '../storage/repositories/definitions.js';
import type { Store } from '../storage/db.js';
import { validationError } from './errors.js';
import { userBasic, type UserBasicWire } from './user-basic.js';

/** The editable marks of a request body (absent: unchanged; a null description: empty). */
export interface MarksPatch {
  description?: string | null | undefined;
  tags?: string[] | undefined;
  verified?: boolean | undefined;
  hidden?: boolean | undefined;
}

/** Marks as stored, or those of a definition never edited (`updated_at` null). */
export type Marks = Omit<DefinitionMarks, 'updated_at'> & { updated_at: string | null };

/** The marks of a definition nothing was said about. */
export const NO_MARKS: Readonly<Marks> = {
  description: '',
  tags: [],
  verified: false,
  verified_at: null,
  verified_by_id: null,
  hidden: false,
  updated_at: null,
  updated_by_id: null,
};

/**
 * The marks after `patch` by user `userId` at `now` (module doc), from `prev` (`NO_MARKS` for a
 * definition never edited). Throws 400 when the patch asks hidden and verified at once; `noun` is
 * `event` or `property`, for the message.
 */
export function applyMarks(
  prev: Readonly<Marks>,
  patch: MarksPatch,
  userId: number,
  now: string,
  noun: 'event' | 'property',
): DefinitionMarks {
  if (patch.verified === true && patch.hidden === true)
    throw validationError(`${noun === 'event' ? 'An event' : 'A property'} cannot be both hidden and verified`);
  const next: DefinitionMarks = { ...prev, tags: [...prev.tags], updated_at: now, updated_by_id: userId };
  if (patch.description !== undefined) next.description = patch.description ?? '';
  if (patch.tags !== undefined) next.tags = [...new Set(patch.tags)];
  if (patch.verified === true) {
    if (!prev.verified) Object.assign(next, { verified: true, verified_at: now, verified_by_id: userId });
    next.hidden = false;
  } else if (patch.verified === false) Object.assign(next, { verified: false, verified_at: null, verified_by_id: null });
  if (patch.hidden === true) Object.assign(next, { hidden: true, verified: false, verified_at: null, verified_by_id: null });
  else if (patch.hidden === false) next.hidden = false;
  return next;
}

/** Users by id as `UserBasic`, each read once per instance (one per request). */
export class UserBasics {
  private readonly users = new Map<number, Promise<User | undefined>>();
  private readonly accounts: AccountsRepository;

  constructor(store: Store) {
    this.accounts = new AccountsRepository(store.db);
  }

  /** The user with this id as `UserBasic`; null for none (no id, or a user since removed). */
  async of(id: number | null): Promise<UserBasicWire | null> {
    if (id === null) return null;
    let found = this.users.get(id);
    if (!found) this.users.set(id, (found = this.accounts.findUserById(id)));
    const user = await found;
    return user ? userBasic(user) : null;
  }
}

/** The marks' wire fields: PostHog's Enterprise serializers' `description` … `updated_by` (`updated_at` null: never edited). */
export async function marksWire(m: Readonly<Marks>, users: UserBasics) {
  return {
    description: m.description,
    tags: m.tags,
    verified: m.verified,
    verified_at: m.verified_at,
    verified_by: await users.of(m.verified_by_id),
    hidden: m.hidden,
    updated_at: m.updated_at,
    updated_by: await users.of(m.updated_by_id),
  };
}
