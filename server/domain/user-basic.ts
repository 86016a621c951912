/**
 * A user as PostHog's UserBasicSerializer shows them (posthog/api/shared.py): schema `UserBasic`.
 */
import type { components } from '../../generated/api.js';
import type { User } from '../storage/repositories/accounts.js';

/** The wire form of a user. */
export type UserBasicWire = components['schemas']['UserBasic'];

/** PostHog's UserBasicSerializer fields of a user. */
export function userBasic(u: User): UserBasicWire {
  return {
    id: u.id,
    uuid: u.uuid,
    distinct_id: u.distinct_id,
    first_name: u.first_name,
    last_name: u.last_name,
    email: u.email,
    is_email_verified: u.is_email_verified,
    hedgehog_config: u.hedgehog_config,
  };
}
