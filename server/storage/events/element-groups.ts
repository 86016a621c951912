/**
 * Elements chains stored once per project (migration 0010): an `$autocapture` event's chain
 * (~100–2,000 bytes of text) repeats for every click on the same element, so `events` keeps the
 * id of a row of `element_groups` instead of the text. The rule is PostHog's `ElementGroup` of
 * its PostgreSQL events era (posthog/models/element_group.py): a team's elements unique by their
 * hash. Here the hash is SHA-256 of the chain text (lowercase hex; PostHog took MD5 of the
 * elements as JSON), unique per `(team_id, hash)`.
 *
 * - Write: `elementGroupIds` gives the id of each distinct chain of a batch, creating the groups it
 *   lacks (`insert … on conflict do nothing`, then a read; a concurrent writer of the same chain
 *   on PostgreSQL waits for the other's commit, then reads its row). The event is stored with the
 *   id and `elements_chain` `''`.
 * - Read: `elementsChainOf` is the chain of an event row, whichever way it was stored: through the
 *   group, or inline for rows written before migration 0010 (`element_group_id` NULL).
 *
 * Groups are never deleted (nor are events). What they save is measured in docs/performance.md
 * ("Elements chains stored once").
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { internedIds } from './interned.js';
import type { Database } from '../schema.js';

/**
 * The group id of each distinct non-empty chain of `chains` in project `teamId`: chain → id. Reads
 * the groups first; the ones missing are created (`insert … on conflict do nothing`) and read
 * again, so a batch whose chains are all known costs one query (storage/events/interned.ts). Call it
 * inside the transaction that writes the events, so that a failed batch leaves no group behind.
 * Throws the driver's error.
 */
export async function elementGroupIds(db: Kysely<Database>, teamId: number, chains: Iterable<string>): Promise<Map<string, number>> {
  const nonEmpty = [...chains].map((c) => (c === '' ? undefined : c));
  return internedIds(db, 'element_groups', teamId, nonEmpty);
}

/**
 * The elements chain of the query's `events` row: the group's chain when `element_group_id` is
 * set, else the inline `elements_chain` (`''` without a chain). The group is read by its primary
 * key, and only for rows that have one.
 */
export function elementsChainOf(): RawBuilder<string> {
  return sql<string>`case when events.element_group_id is null then events.elements_chain else (select g.elements_chain from element_groups g where g.id = events.element_group_id) end`;
}
