/**
 * The events list asked first of one day (PostgreSQL; `RowEventsStore.list` and
 * `listWindowStart` in server/storage/events/read.ts): pages through the real HTTP
 * stack are the pages of the whole range, whether the newest day holds a full page, part of one or
 * nothing, with `before`, `after`, `offset` and the cursor (both stores: SQLite asks once, and must
 * answer the same). On PostgreSQL the repository is also run with a query counter, to check that a
 * page the day fills takes one query, a page it does not fill two, and a filtered page one.
 *
 * The events are fixed instants over four days of March 2026, with ties on one timestamp and rows
 * on the first and last microsecond of a day, so that every boundary of the window is crossed.
 */
import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';
import { RowEventsStore, listWindowStart } from '../../server/storage/events/row-store.js';
import type { EventInput } from '../../server/storage/events/write.js';
import { insertEvents } from '../helpers/events-store.js';

const TIMES = [
  // 2026-03-10: 5 events, two on the day's first microsecond
  '2026-03-10T18:00:00.000000Z',
  '2026-03-10T12:00:00.000000Z',
  '2026-03-10T12:00:00.000000Z',
  '2026-03-10T00:00:00.000000Z',
  '2026-03-10T00:00:00.000000Z',
  // 2026-03-09: 4, one on the day's last microsecond
  '2026-03-09T23:59:59.999999Z',
  '2026-03-09T10:00:00.000000Z',
  '2026-03-09T10:00:00.000000Z',
  '2026-03-09T01:00:00.000000Z',
  // none on 2026-03-08; 2026-03-07: 3
  '2026-03-07T20:00:00.000000Z',
  '2026-03-07T05:00:00.000000Z',
  '2026-03-07T00:00:00.000001Z',
];

let t: TestServer;
let team: number;
/** every seeded event in the list's order (timestamp desc, uuid desc) */
let all: EventInput[];

function order(rows: EventInput[]): EventInput[] {
  return [...rows].sort((a, b) => (a.timestamp === b.timestamp ? (a.uuid < b.uuid ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1));
}

/** The uuids of one page through HTTP, and its `next`. */
async function page(query: string): Promise<{ uuids: string[]; next: string | null }> {
  const body = (await t.json(`/api/environments/${team}/events/?${query}`)) as { results: { id: string }[]; next: string | null };
  return { uuids: body.results.map((r) => r.id), next: body.next };
}

/** What the page must be: the rows of `all` within the bounds, after `offset`, at most `limit`. */
function expected(opts: { before: string; after?: string; event?: string; offset?: number; limit: number }): string[] {
  return all
    .filter(
      (e) =>
        e.timestamp < opts.before &&
        (opts.after === undefined || e.timestamp > opts.after) &&
        (opts.event === undefined || e.event === opts.event),
    )
    .slice(opts.offset ?? 0, (opts.offset ?? 0) + opts.limit)
    .map((e) => e.uuid);
}

beforeAll(async () => {
  t = await startTestServer();
  team = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'List window' })).id;
  const rows: EventInput[] = TIMES.map((timestamp, i) => ({
    uuid: randomUUID(),
    event: i % 3 === 0 ? 'signup' : '$pageview',
    distinct_id: `d${i % 2}`,
    properties: { i },
    timestamp,
    elements_chain: '',
  }));
  await insertEvents(t.store, team, rows);
  all = order(rows);
});

afterAll(async () => {
  await t?.close();
});

describe('the events list asked first of one day', () => {
  it('gives the page of the whole range, whether the day fills it or not', async () => {
    const cases: { before: string; after?: string; event?: string; offset?: number; limit: number }[] = [
      // the day of `before` holds more than the page
      { before: '2026-03-10T23:00:00.000000Z', limit: 3 },
      // exactly the page (limit + 1 rows asked: the day's 5 rows, one short)
      { before: '2026-03-10T23:00:00.000000Z', limit: 4 },
      { before: '2026-03-10T23:00:00.000000Z', limit: 5 },
      // fewer than the page: the rest comes from the days before, across an empty day
      { before: '2026-03-10T23:00:00.000000Z', limit: 10 },
      { before: '2026-03-10T23:00:00.000000Z', limit: 100 },
      // `before` on the day's first rows: only those before it count
      { before: '2026-03-10T12:00:00.000000Z', limit: 2 },
      { before: '2026-03-10T00:00:00.000000Z', limit: 2 },
      // nothing on the day of `before`
      { before: '2026-03-08T12:00:00.000000Z', limit: 2 },
      { before: '2027-01-01T00:00:00.000000Z', limit: 3 },
      // offsets inside the day and across its start
      { before: '2026-03-10T23:00:00.000000Z', offset: 2, limit: 2 },
      { before: '2026-03-10T23:00:00.000000Z', offset: 4, limit: 3 },
      // `after` within the day, before the day, at its start
      { before: '2026-03-10T23:00:00.000000Z', after: '2026-03-10T06:00:00.000000Z', limit: 10 },
      { before: '2026-03-10T23:00:00.000000Z', after: '2026-03-09T06:00:00.000000Z', limit: 10 },
      { before: '2026-03-10T23:00:00.000000Z', after: '2026-03-10T00:00:00.000000Z', limit: 10 },
      // an event filter
      { before: '2026-03-10T23:00:00.000000Z', event: 'signup', limit: 2 },
      { before: '2026-03-10T23:00:00.000000Z', event: 'signup', limit: 3 },
    ];
    for (const c of cases) {
      const q = new URLSearchParams({ before: c.before, limit: String(c.limit) });
      if (c.after !== undefined) q.set('after', c.after);
      if (c.event !== undefined) q.set('event', c.event);
      if (c.offset !== undefined) q.set('offset', String(c.offset));
      expect((await page(q.toString())).uuids, JSON.stringify(c)).toEqual(expected(c));
    }
  });

  it('pages through every event with the cursor, across days, ties and the empty day', async () => {
    for (const limit of [1, 2, 3, 5]) {
      const seen: string[] = [];
      let next: string | null = `/api/environments/${team}/events/?before=2026-03-11T00:00:00.000000Z&limit=${limit}`;
      for (let i = 0; next !== null && i <= all.length; i++) {
        const u = new URL(next, t.url);
        const p = await page(u.searchParams.toString());
        seen.push(...p.uuids);
        next = p.next;
      }
      expect(next, `limit ${limit}`).toBeNull();
      expect(seen, `limit ${limit}`).toEqual(all.map((e) => e.uuid));
    }
  });

  it('listWindowStart: the day of the newest possible row, none when `after` is within it', () => {
    expect(listWindowStart({ before: '2026-03-10T23:00:00.000000Z' })).toBe('2026-03-10');
    expect(
      listWindowStart({ before: '2026-03-10T23:00:00.000000Z', cursor: { timestamp: '2026-03-09T01:00:00.000000Z', uuid: 'x' } }),
    ).toBe('2026-03-09');
    // a cursor later than `before` does not raise the bound
    expect(
      listWindowStart({ before: '2026-03-10T23:00:00.000000Z', cursor: { timestamp: '2026-03-11T01:00:00.000000Z', uuid: 'x' } }),
    ).toBe('2026-03-10');
    expect(listWindowStart({ before: '2026-03-10T23:00:00.000000Z', after: '2026-03-09T23:00:00.000000Z' })).toBe('2026-03-10');
    expect(listWindowStart({ before: '2026-03-10T23:00:00.000000Z', after: '2026-03-10T00:00:00.000000Z' })).toBeUndefined();
  });

  it.skipIf(!usesPostgres())(
    'PostgreSQL: one query when the day fills the page, two when it does not, one for a filtered page',
    async () => {
      let selects = 0;
      const counter: KyselyPlugin = {
        transformQuery: (args) => {
          if (args.node.kind === 'SelectQueryNode') selects += 1;
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      const repo = new RowEventsStore(t.store.db.withPlugin(counter));
      const base = { teamId: team, before: '2026-03-10T23:00:00.000000Z', offset: 0 };
      const count = async (q: Parameters<RowEventsStore['list']>[0]) => {
        selects = 0;
        const rows = await repo.list(q);
        return { selects, uuids: rows.map((r) => r.uuid) };
      };
      expect(await count({ ...base, limit: 4 })).toEqual({ selects: 1, uuids: expected({ ...base, limit: 4 }) });
      expect(await count({ ...base, limit: 6 })).toEqual({ selects: 2, uuids: expected({ ...base, limit: 6 }) });
      expect(await count({ ...base, after: '2026-03-10T01:00:00.000000Z', limit: 6 })).toEqual({
        selects: 1,
        uuids: expected({ ...base, after: '2026-03-10T01:00:00.000000Z', limit: 6 }),
      });
      const d0 = all
        .filter((e) => e.distinct_id === 'd0' && e.timestamp < base.before)
        .slice(0, 2)
        .map((e) => e.uuid);
      expect(await count({ ...base, distinctId: 'd0', limit: 2 })).toEqual({ selects: 1, uuids: d0 });
    },
  );
});
