/**
 * The one write path of events and persons, whatever brought them in (`envapi import`,
 * server/ingest/import/write.ts; the capture endpoints, server/capture/): normalised rows of one
 * project written inside the caller's transaction, through `EventsWriteRepository` — events
 * inserted idempotently on uuid, then the person updates of the rows actually inserted
 * (person-updates.ts: `$set` / `$set_once` / `$unset`, `$identify` / `$create_alias` merges). A
 * row whose uuid is stored already, or repeated earlier in the rows, is skipped with its person
 * update: sending the same event twice changes nothing.
 *
 * With the events on ClickHouse (`clickhouse`, storage/events/clickhouse/write.ts) the stored
 * uuids are always looked up first (ClickHouse cannot skip them at insert), the person updates are
 * applied to the relational persons in the transaction, and then the events (with their persons)
 * and what changed of the persons go to ClickHouse, before the caller commits: a failed ClickHouse
 * write fails the transaction, and nothing of the persons lands. The project's `ingested_event` is
 * set in the same transaction (the relational store, which answers it, holds no event then).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.js';
import { boolValue } from '../storage/values.js';
import { EventsWriteRepository, type ClickHouseEventsWriter, type EventInput, type PersonUpdate } from '../storage/events/index.js';

/** A row the write path can store: the event and what it does to its person (none: PostHog's `$process_person_profile: false`). */
export interface NormalizedEventRow {
  event: EventInput;
  person: PersonUpdate | undefined;
}

/** Why a row was not written: its uuid is stored (or repeated in the rows), or another project holds it. */
export const REASON_DUPLICATE = 'duplicate uuid';
export const REASON_OTHER_PROJECT = 'uuid used by another project';

/** What `writeEventRows` did. */
export interface WriteOutcome {
  /** events inserted */
  inserted: number;
  /** persons created */
  personsCreated: number;
  /** rows skipped, by reason (`REASON_DUPLICATE`, `REASON_OTHER_PROJECT`) */
  skipped: Record<string, number>;
  /** true when the insert met a uuid that was stored already */
  metStored: boolean;
  /** true when `lookUp` was false and a stored uuid was met: nothing of the persons was applied; roll back */
  aborted: boolean;
}

function countSkip(totals: Record<string, number>, reason: string, n = 1): void {
  if (n > 0) totals[reason] = (totals[reason] ?? 0) + n;
}

/**
 * The person updates of a batch, in order, ready for `applyPersonUpdates`: an update that only
 * makes sure a person exists is dropped when the batch already named that distinct id (it would
 * change nothing).
 */
export function planPersonUpdates(updates: readonly (PersonUpdate | undefined)[]): PersonUpdate[] {
  const seen = new Set<string>();
  const planned: PersonUpdate[] = [];
  for (const u of updates) {
    if (!u) continue;
    if (!u.set && !u.set_once && !u.unset && !u.identify && !u.alias && seen.has(u.distinct_id)) continue;
    seen.add(u.distinct_id);
    if (u.identify?.anon_distinct_id) seen.add(u.identify.anon_distinct_id);
    if (u.alias) seen.add(u.alias);
    planned.push(u);
  }
  return planned;
}

/**
 * Writes `rows` of project `teamId` with `trx` (a transaction: call it inside one). Rows repeating
 * an earlier uuid of `rows` are skipped. With `lookUp`, stored uuids are looked up first and their
 * rows skipped by reason; without (a first import: nothing stored yet, the fast way), the rows are
 * inserted straight away and, if the insert skipped any stored uuid, the outcome says `aborted`
 * before any person is touched (the caller rolls back and writes again with `lookUp`).
 */
export async function writeEventRows(
  trx: Kysely<Database>,
  teamId: number,
  rows: readonly NormalizedEventRow[],
  lookUp: boolean,
  clickhouse?: ClickHouseEventsWriter,
): Promise<WriteOutcome> {
  const skipped: Record<string, number> = {};
  const inBatch = new Set<string>();
  let unique: NormalizedEventRow[] = [];
  for (const r of rows) {
    if (inBatch.has(r.event.uuid)) countSkip(skipped, REASON_DUPLICATE);
    else {
      inBatch.add(r.event.uuid);
      unique.push(r);
    }
  }
  const repo = new EventsWriteRepository(trx);
  if (clickhouse) return writeToClickHouse(trx, repo, clickhouse, teamId, unique, skipped);
  const candidates = unique.length;
  if (lookUp && unique.length) {
    const stored = await repo.storedUuids(unique.map((r) => r.event.uuid));
    if (stored.size) {
      const fresh: NormalizedEventRow[] = [];
      for (const r of unique) {
        const owner = stored.get(r.event.uuid);
        if (owner === undefined) fresh.push(r);
        else countSkip(skipped, owner === teamId ? REASON_DUPLICATE : REASON_OTHER_PROJECT);
      }
      unique = fresh;
    }
  }
  const inserted = unique.length
    ? await repo.insertEvents(
        teamId,
        unique.map((r) => r.event),
      )
    : 0;
  if (inserted !== unique.length) {
    if (!lookUp) return { inserted, personsCreated: 0, skipped, metStored: true, aborted: true };
    // Stored by another writer between the look-up and the insert: still a duplicate. Which rows
    // were skipped is not known here, so the person updates of every row are applied (in this
    // rare race only, a duplicate's `$set` may be applied a second time).
    countSkip(skipped, REASON_DUPLICATE, unique.length - inserted);
  }
  const planned = planPersonUpdates(unique.map((r) => r.person));
  const personsCreated = planned.length ? await repo.applyPersonUpdates(teamId, planned) : 0;
  return { inserted, personsCreated, skipped, metStored: inserted !== candidates, aborted: false };
}

/** `writeEventRows` with the events on ClickHouse (see the module doc); `unique`: no uuid twice. */
async function writeToClickHouse(
  trx: Kysely<Database>,
  repo: EventsWriteRepository,
  clickhouse: ClickHouseEventsWriter,
  teamId: number,
  unique: NormalizedEventRow[],
  skipped: Record<string, number>,
): Promise<WriteOutcome> {
  const stored = await clickhouse.storedUuids(
    teamId,
    unique.map((r) => r.event),
  );
  const fresh = stored.size ? unique.filter((r) => !stored.has(r.event.uuid)) : unique;
  countSkip(skipped, REASON_DUPLICATE, unique.length - fresh.length);
  const planned = planPersonUpdates(fresh.map((r) => r.person));
  const ids = new Set(fresh.map((r) => r.event.distinct_id));
  for (const u of planned) {
    if (u.identify?.anon_distinct_id) ids.add(u.identify.anon_distinct_id);
    if (u.alias) ids.add(u.alias);
  }
  const before = planned.length ? await clickhouse.personsOf(trx, teamId, [...ids]) : undefined;
  const personsCreated = planned.length ? await repo.applyPersonUpdates(teamId, planned) : 0;
  const after = await clickhouse.personsOf(trx, teamId, [...ids]);
  await clickhouse.insertEvents(
    teamId,
    fresh.map((r) => r.event),
    after,
  );
  if (before) await clickhouse.mirrorPersons(trx, teamId, before, after);
  // the relational store holds no event of the team: `ingested_event` is its record (migration 0014)
  if (fresh.length)
    await trx
      .updateTable('teams')
      .set({ ingested_event: boolValue(true) })
      .where('id', '=', teamId)
      .where('ingested_event', '=', boolValue(false))
      .execute();
  return { inserted: fresh.length, personsCreated, skipped, metStored: stored.size > 0, aborted: false };
}
