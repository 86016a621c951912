/**
 * The person writes of the persons API (domain/person-actions.ts `PersonWrites`), over the store:
 *
 * - `capture`: events made by the API on a person's behalf (`$set` for `update_property`,
 *   `$delete_person_property` for `delete_property`, as PostHog's `PersonViewSet` captures them)
 *   stored through the shared write path (write-events.ts), so the person rules of
 *   person-rules.ts apply them as they apply an SDK's: one transaction, the ClickHouse mirror kept.
 * - `deletePersons`: persons and their distinct ids removed from the relational store, the
 *   ClickHouse mirror told (deleted rows), and, when asked, the persons' events deleted where the
 *   events live.
 */
import { v7 } from 'uuid';
import type { PersonEvent, PersonWrites } from '../domain/person-actions.js';
import type { Store } from '../storage/db.js';
import { clickhouseEventsOf, EventsWriteRepository } from '../storage/events/index.js';
import { formatTimestamp } from '../storage/timestamps.js';
import { personUpdateOf } from './person-rules.js';
import { writeEventRows, type NormalizedEventRow } from './write-events.js';

/** `PersonWrites` over `store` (module doc). */
export function personWrites(store: Store): PersonWrites {
  return {
    async capture(teamId: number, events: readonly PersonEvent[]): Promise<void> {
      const now = new Date();
      const rows: NormalizedEventRow[] = events.map((e) => ({
        event: {
          uuid: v7({ msecs: now.getTime() }),
          event: e.event,
          distinct_id: e.distinct_id,
          properties: e.properties,
          timestamp: formatTimestamp(now),
          elements_chain: '',
        },
        person: personUpdateOf(e.event, e.distinct_id, e.properties),
      }));
      await store.db.transaction().execute((trx) => writeEventRows(trx, teamId, rows, true, clickhouseEventsOf(store)?.writer));
    },

    async deletePersons(teamId, persons, opts): Promise<void> {
      const distinctIds = persons.flatMap((p) => p.distinct_ids);
      const clickhouse = clickhouseEventsOf(store)?.writer;
      await store.db.transaction().execute(async (trx) => {
        const repo = new EventsWriteRepository(trx);
        const before = clickhouse ? await clickhouse.personsOf(trx, teamId, distinctIds) : undefined;
        if (opts.persons)
          await repo.deletePersons(
            teamId,
            persons.map((p) => p.id),
            distinctIds,
            opts.events && !clickhouse,
          );
        else if (opts.events && !clickhouse) await repo.deleteEventsOf(teamId, distinctIds);
        if (clickhouse && before) {
          if (opts.persons) await clickhouse.deletePersons(teamId, before, opts.events);
          else if (opts.events) await clickhouse.deleteEventsOf(teamId, distinctIds);
        }
      });
    },
  };
}
