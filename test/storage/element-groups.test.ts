/**
 * Elements chains stored once per project (migration 0010, server/storage/events/element-groups.ts), on
 * both stores: what the tables hold after capture and import, and that every read answers the
 * chain as sent through the real HTTP stack — the events list (`elements_chain` and the parsed
 * `elements`), an event by uuid, CSV and HogQL — for rows written through a group and for a row
 * written before migration 0010 (chain inline, no group). Also: a rolled-back batch leaves no
 * group, two writers of one new chain at once get one group, and the statement docs/deploy.md
 * gives for rolling the code back puts every chain back inline.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture } from '../capture/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventTimeIn } from '../../server/storage/events/times.js';
import { eventUuidIn, eventUuidOut } from '../../server/storage/events/uuids.js';
import { internHash } from '../../server/storage/events/interned.js';
import { EventsWriteRepository, type EventInput } from '../../server/storage/events/write.js';

let t: TestServer;
let pid: number;
let otherPid: number;

const CHAIN_A = 'button.btn.primary:attr__class="btn primary"nth-child="2"nth-of-type="1"text="Sign up";form:nth-child="1"nth-of-type="1"';
const CHAIN_B = 'a.nav-link:href="/pricing"nth-child="1"nth-of-type="1"text="Prix é 😀"';
const CHAIN_OLD = 'span:nth-child="3"nth-of-type="1"text="Before 0010"';

/** uuid n of this file (UUIDv7-shaped, in order). */
const id = (n: number) => `0190b000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace('Z', '000Z');

function event(n: number, chain: string, secondsAgo: number): EventInput {
  return {
    uuid: id(n),
    event: chain ? '$autocapture' : '$pageview',
    distinct_id: 'd',
    properties: { n },
    timestamp: ago(secondsAgo),
    elements_chain: chain,
  };
}

/** Each event's chain as written: uuid → chain. */
const WRITTEN = new Map<string, string>();

beforeAll(async () => {
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Chains' })).id;
  otherPid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Other chains' })).id;
  const batch = [event(1, CHAIN_A, 600), event(2, CHAIN_A, 500), event(3, CHAIN_B, 400), event(4, '', 300), event(5, CHAIN_A, 200)];
  await t.store.db.transaction().execute((trx) => new EventsWriteRepository(trx).insertEvents(pid, batch));
  for (const e of batch) WRITTEN.set(e.uuid, e.elements_chain);
  // the same chain in another project: a group of its own
  await new EventsWriteRepository(t.store.db).insertEvents(otherPid, [event(20, CHAIN_A, 100)]);
  // a row as a store written before migration 0010 holds it: the chain inline, no group
  const old = event(6, CHAIN_OLD, 700);
  await sql`insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)
    values (${eventUuidIn(t.store.dialect, old.uuid)}, ${pid}, ${old.event}, 'd', ${JSON.stringify(old.properties)}, ${eventTimeIn(t.store.dialect, old.timestamp)}, ${CHAIN_OLD}, ${eventTimeIn(t.store.dialect, new Date().toISOString())})`.execute(
    t.store.db,
  );
  WRITTEN.set(old.uuid, CHAIN_OLD);
});

afterAll(async () => {
  await t?.close();
});

async function groups(teamId: number) {
  return await t.store.db
    .selectFrom('element_groups')
    .select(['hash', 'elements_chain'])
    .where('team_id', '=', teamId)
    .orderBy('elements_chain')
    .execute();
}

describe('elements chains stored once per project', () => {
  it('holds each distinct chain of a project once, keyed by its SHA-256; the events hold the group id and no text', async () => {
    expect(await groups(pid)).toEqual([
      { hash: internHash(CHAIN_B), elements_chain: CHAIN_B },
      { hash: internHash(CHAIN_A), elements_chain: CHAIN_A },
    ]);
    expect(await groups(otherPid)).toEqual([{ hash: internHash(CHAIN_A), elements_chain: CHAIN_A }]);
    const rows = await t.store.db
      .selectFrom('events')
      .select(['uuid', 'elements_chain', 'element_group_id'])
      .where('team_id', '=', pid)
      .orderBy('uuid')
      .execute();
    expect(rows.map((r) => [eventUuidOut(r.uuid), r.elements_chain, r.element_group_id === null ? 'none' : 'group'])).toEqual([
      [id(1), '', 'group'],
      [id(2), '', 'group'],
      [id(3), '', 'group'],
      [id(4), '', 'none'],
      [id(5), '', 'group'],
      [id(6), CHAIN_OLD, 'none'],
    ]);
    expect(new Set([rows[0]!.element_group_id, rows[1]!.element_group_id, rows[4]!.element_group_id]).size).toBe(1);
  });

  it('answers every chain as written: the events list, by uuid, CSV and HogQL', async () => {
    const base = `/api/environments/${pid}/events`;
    const list = (await t.json(`${base}/`)) as {
      results: { id: string; elements_chain: string; elements: { tag_name: string; text?: string }[] }[];
    };
    expect(new Map(list.results.map((e) => [e.id, e.elements_chain]))).toEqual(WRITTEN);
    const b = list.results.find((e) => e.id === id(3))!;
    expect(b.elements).toEqual([expect.objectContaining({ tag_name: 'a', text: 'Prix é 😀' })]);
    for (const [uuid, chain] of WRITTEN)
      expect(((await t.json(`${base}/${uuid}/`)) as { elements_chain: string }).elements_chain).toBe(chain);
    const csv = await (await t.fetch(`${base}/?format=csv`)).text();
    expect(csv).toContain(CHAIN_B.replace(/"/g, '""'));
    expect(csv).toContain(CHAIN_OLD.replace(/"/g, '""'));
    expect(await t.hogql(pid, 'select uuid, elements_chain from events order by uuid')).toEqual([...WRITTEN].sort());
    expect(await t.hogql(pid, `select count() from events where elements_chain = '${CHAIN_A.replace(/'/g, "\\'")}'`)).toEqual([[3]]);
    expect(await t.hogql(pid, "select count() from events where elements_chain != ''")).toEqual([[5]]);
  });

  it('stores a captured chain through its group', async () => {
    const res = await capture(t, '/batch/', {
      api_key: t.boot.team.api_token,
      batch: [
        { event: '$autocapture', distinct_id: 'clicker', uuid: id(30), properties: { $event_type: 'click', $elements_chain: CHAIN_B } },
      ],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const row = await t.store.db
      .selectFrom('events')
      .select(['elements_chain', 'element_group_id'])
      .where('uuid', '=', eventUuidIn(t.store.dialect, id(30)))
      .executeTakeFirstOrThrow();
    expect(row.elements_chain).toBe('');
    expect((await groups(t.boot.team.id)).map((g) => g.elements_chain)).toEqual([CHAIN_B]);
    expect(((await t.json(`/api/environments/${t.boot.team.id}/events/${id(30)}/`)) as { elements_chain: string }).elements_chain).toBe(
      CHAIN_B,
    );
  });

  it('leaves no group behind when the batch that wrote it rolls back', async () => {
    const chain = 'div.rolled-back:nth-child="1"nth-of-type="1"';
    await expect(
      t.store.db.transaction().execute(async (trx) => {
        await new EventsWriteRepository(trx).insertEvents(pid, [event(40, chain, 50)]);
        throw new Error('the batch fails after the insert');
      }),
    ).rejects.toThrow('the batch fails after the insert');
    expect((await groups(pid)).map((g) => g.elements_chain)).not.toContain(chain);
    expect(
      await t.store.db
        .selectFrom('events')
        .select('uuid')
        .where('uuid', '=', eventUuidIn(t.store.dialect, id(40)))
        .execute(),
    ).toEqual([]);
  });

  it('gives two writers of one new chain at once the same group', async () => {
    const chain = 'button.concurrent:nth-child="1"nth-of-type="1"text="Both"';
    const write = (n: number) =>
      t.store.db.transaction().execute((trx) => new EventsWriteRepository(trx).insertEvents(pid, [event(n, chain, 40)]));
    expect(await Promise.all([write(50), write(51)])).toEqual([1, 1]);
    expect((await groups(pid)).filter((g) => g.elements_chain === chain)).toHaveLength(1);
    const rows = await t.store.db
      .selectFrom('events')
      .select('element_group_id')
      .where(
        'uuid',
        'in',
        [id(50), id(51)].map((u) => eventUuidIn(t.store.dialect, u)),
      )
      .execute();
    expect(rows).toHaveLength(2);
    expect(rows[0]!.element_group_id).not.toBeNull();
    expect(rows[0]!.element_group_id).toBe(rows[1]!.element_group_id);
  });

  // last: it puts every chain back inline
  it("docs/deploy.md's statement for rolling the code back puts the chains back inline, reading the same", async () => {
    await sql`UPDATE events SET elements_chain = g.elements_chain, element_group_id = NULL FROM element_groups g WHERE g.id = events.element_group_id`.execute(
      t.store.db,
    );
    const rows = await t.store.db
      .selectFrom('events')
      .select(['uuid', 'elements_chain'])
      .where('team_id', '=', pid)
      .where(
        'uuid',
        'in',
        [...WRITTEN.keys()].map((u) => eventUuidIn(t.store.dialect, u)),
      )
      .execute();
    expect(new Map(rows.map((r) => [eventUuidOut(r.uuid), r.elements_chain]))).toEqual(WRITTEN);
    expect(await t.store.db.selectFrom('events').select('uuid').where('element_group_id', 'is not', null).execute()).toEqual([]);
    expect(await t.hogql(pid, "select uuid, elements_chain from events where uuid < '" + id(7) + "' order by uuid")).toEqual(
      [...WRITTEN].sort(),
    );
  });
});
