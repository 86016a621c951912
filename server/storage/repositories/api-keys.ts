/**
 * Personal API keys. A key is shown once, at creation; only `sha256$<hex>` of it is stored
 * (posthog/models/personal_api_key.py: `hash_key_value`, no salt) with a `phx_...abcd` mask.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { fromJson, jsonValue, nowIso, toIso } from '../values.js';
import { cachedLoad } from '../cached-loads.js';
import { toUser, type User } from './accounts.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A new personal API key: `phx_` + 47 base62 characters (~280 bits of randomness). */
export function generatePersonalApiKey(): string {
  const bytes = randomBytes(47);
  let out = 'phx_';
  for (const b of bytes) out += BASE62[b % 62];
  return out;
}

/** `sha256$<hex>` of a key, the only form in which keys are stored. */
export function hashKeyValue(key: string): string {
  return 'sha256$' + createHash('sha256').update(key, 'utf8').digest('hex');
}

/** `phx_...abcd`: the first 4 and last 4 characters, as PostHog's mask_key_value. */
export function maskKeyValue(key: string): string {
  return `${key.slice(0, 4)}...${key.slice(-4)}`;
}

/** A personal API key as read, without its value or hash; timestamps ISO 8601 UTC strings. */
export interface PersonalApiKey {
  id: string;
  user_id: number;
  label: string;
  mask_value: string;
  scopes: string[];
  /** team ids the key may act on, or null for every project its user can access */
  scoped_teams: number[] | null;
  created_at: string;
  last_used_at: string | null;
}

/** How often `last_used_at` is refreshed at most (PostHog: hourly), in ms. */
const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;

/** Whether using `key` at `now` (ms since epoch) should refresh its `last_used_at` (hourly, as PostHog). */
export function lastUsedIsStale(key: Pick<PersonalApiKey, 'last_used_at'>, now: number = Date.now()): boolean {
  return !key.last_used_at || now - Date.parse(key.last_used_at) > LAST_USED_RESOLUTION_MS;
}

/** A personal_api_keys row without its secure value. */
interface KeyRow {
  id: string;
  user_id: number;
  label: string;
  mask_value: string;
  scopes: unknown;
  scoped_teams: unknown;
  created_at: string | Date;
  last_used_at: string | Date | null;
}

function toKey(r: KeyRow): PersonalApiKey {
  return {
    id: r.id,
    user_id: r.user_id,
    label: r.label,
    mask_value: r.mask_value,
    scopes: fromJson<string[]>(r.scopes),
    scoped_teams: r.scoped_teams == null ? null : fromJson<number[]>(r.scoped_teams),
    created_at: toIso(r.created_at),
    last_used_at: r.last_used_at == null ? null : toIso(r.last_used_at),
  };
}

/** Repository of personal API keys; every method runs on the given Kysely instance (or transaction). */
export class ApiKeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates a key and returns it with its plain value, which is never retrievable again. */
  async create(input: {
    user_id: number;
    label: string;
    scopes: string[];
    scoped_teams: number[] | null;
  }): Promise<{ key: string; record: PersonalApiKey }> {
    const key = generatePersonalApiKey();
    const record: PersonalApiKey = {
      id: randomUUID(),
      user_id: input.user_id,
      label: input.label,
      mask_value: maskKeyValue(key),
      scopes: input.scopes,
      scoped_teams: input.scoped_teams,
      created_at: nowIso(),
      last_used_at: null,
    };
    await this.db
      .insertInto('personal_api_keys')
      .values({
        ...record,
        secure_value: hashKeyValue(key),
        scopes: jsonValue(record.scopes),
        scoped_teams: record.scoped_teams === null ? null : jsonValue(record.scoped_teams),
      })
      .execute();
    return { key, record };
  }

  /**
   * The key matching a plain value, with its user, when the user is active; undefined otherwise.
   * Refreshes `last_used_at` at most once an hour.
   */
  async authenticate(plain: string): Promise<{ key: PersonalApiKey; user: User } | undefined> {
    const row = await this.db
      .selectFrom('personal_api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .selectAll('u')
      .select([
        'k.id as key_id',
        'k.label as key_label',
        'k.mask_value as key_mask_value',
        'k.scopes as key_scopes',
        'k.scoped_teams as key_scoped_teams',
        'k.created_at as key_created_at',
        'k.last_used_at as key_last_used_at',
      ])
      .where('k.secure_value', '=', hashKeyValue(plain))
      .executeTakeFirst();
    if (!row) return undefined;
    const user = toUser(row);
    if (!user.is_active) return undefined;
    const key = toKey({
      id: row.key_id,
      user_id: user.id,
      label: row.key_label,
      mask_value: row.key_mask_value,
      scopes: row.key_scopes,
      scoped_teams: row.key_scoped_teams,
      created_at: row.key_created_at,
      last_used_at: row.key_last_used_at,
    });
    const now = Date.now();
    if (lastUsedIsStale(key, now)) {
      key.last_used_at = new Date(now).toISOString();
      await this.db.updateTable('personal_api_keys').set({ last_used_at: key.last_used_at }).where('id', '=', key.id).execute();
    }
    return { key, user };
  }

  /** Keys of one user (or all keys), newest first, without secrets. */
  async list(userId?: number): Promise<PersonalApiKey[]> {
    let q = this.db.selectFrom('personal_api_keys').selectAll();
    if (userId !== undefined) q = q.where('user_id', '=', userId);
    const rows = await q.orderBy('created_at', 'desc').execute();
    return rows.map(toKey);
  }

  /** The key `id` of user `userId` without its secrets, or undefined when the user has no such key. */
  async findOfUser(id: string, userId: number): Promise<PersonalApiKey | undefined> {
    const r = await this.db
      .selectFrom('personal_api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return r && toKey(r);
  }

  /** Deletes a key (PostHog deletes revoked keys). Returns whether a key was removed. */
  async revoke(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('personal_api_keys').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/**
 * `authenticate` as the security handler keeps it (`UnchangedStoreCache`, kept by the key's hash):
 * the key with its user, read from `personal_api_keys` and `users`. A kept key is answered until
 * its `last_used_at` is due for its hourly refresh, which goes to the store.
 */
export const KEY_BY_VALUE = cachedLoad({
  name: 'personal API key by value',
  reads: ['personal_api_keys', 'users'],
  load: (keys: ApiKeysRepository, plain: string) => keys.authenticate(plain),
  usable: (found) => !lastUsedIsStale(found.key),
});
