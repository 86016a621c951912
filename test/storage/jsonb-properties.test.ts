/**
 * SQLite stores `events.properties` as its binary JSONB (`eventPropertiesIn` in
 * server/storage/events/property-sets.ts), and rows written before hold the JSON text: both kinds
 * of rows, side by side in one project, answer the same through the real HTTP stack — the events
 * list (the properties object, byte for byte as written), an event by uuid, property filters,
 * values, CSV and HogQL (`properties` whole, `properties.<key>`). Skipped in the PostgreSQL pass (jsonb there).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';
import { eventTimeIn } from '../../server/storage/events/times.js';
import { eventUuidIn, eventUuidText } from '../../server/storage/events/uuids.js';
import { EventsWriteRepository } from '../../server/storage/events/write.js';

let t: TestServer;
let pid: number;

/** The same properties for both rows: every JSON form, escapes, non-ASCII, a lone surrogate. */
const PROPS = {
  $browser: 'Opera Mini',
  n: 1e21,
  f: -1.5e-7,
  ok: true,
  none: null,
  tags: ['a', { b: [] }],
  text: 'é\u2028\u0001"\\/\t😀\ud800',
  '': {},
};
const NEW_UUID = '0190a000-0000-7000-8000-000000000001';
const OLD_UUID = '0190a000-0000-7000-8000-000000000002';

beforeAll(async () => {
  if (usesPostgres()) return;
  t = await startTestServer();
  pid = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'JSONB' })).id;
  const timestamp = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace('Z', '000Z');
  await new EventsWriteRepository(t.store.db).insertEvents(pid, [
    { uuid: NEW_UUID, event: 'e', distinct_id: 'd', properties: PROPS, timestamp: timestamp(60), elements_chain: '' },
  ]);
  // a row as a store written before JSONB holds it: the JSON text
  await sql`insert into events (uuid, team_id, event, distinct_id, properties, timestamp, elements_chain, created_at)
    values (${eventUuidIn('sqlite', OLD_UUID)}, ${pid}, 'e', 'd', ${JSON.stringify(PROPS)}, ${eventTimeIn('sqlite', timestamp(120))}, '', ${eventTimeIn('sqlite', new Date().toISOString())})`.execute(
    t.store.db,
  );
});

afterAll(async () => {
  await t?.close();
});

describe.skipIf(usesPostgres())('events.properties as JSONB on SQLite', () => {
  it('new rows are JSONB, the older row text', async () => {
    const r = await sql<{
      uuid: string;
      kind: string;
    }>`select ${eventUuidText('sqlite', sql`uuid`)} as uuid, typeof(properties) as kind from events where team_id = ${pid} order by uuid`.execute(
      t.store.db,
    );
    expect(r.rows).toEqual([
      { uuid: NEW_UUID, kind: 'blob' },
      { uuid: OLD_UUID, kind: 'text' },
    ]);
  });

  it('both rows answer the same: list, by uuid, filters, values, CSV, HogQL', async () => {
    const base = `/api/environments/${pid}/events`;
    const res = await t.fetch(`${base}/`);
    const text = await res.text();
    // the properties come back as the very text written
    expect(text.split(JSON.stringify(PROPS)).length - 1).toBe(2);
    const list = JSON.parse(text) as { results: { id: string; properties: unknown }[] };
    expect(list.results.map((e) => [e.id, e.properties])).toEqual([
      [NEW_UUID, PROPS],
      [OLD_UUID, PROPS],
    ]);
    for (const id of [NEW_UUID, OLD_UUID]) expect(((await t.json(`${base}/${id}/`)) as { properties: unknown }).properties).toEqual(PROPS);
    for (const filter of [
      [{ key: '$browser', value: 'Opera Mini' }],
      [{ key: 'n', operator: 'gt', value: 1e20 }],
      [{ key: 'text', operator: 'icontains', value: 'É' }],
      [{ key: 'tags', operator: 'is_set' }],
    ]) {
      const found = (await t.json(`${base}/?properties=${encodeURIComponent(JSON.stringify(filter))}`)) as { results: { id: string }[] };
      expect(
        found.results.map((e) => e.id),
        JSON.stringify(filter),
      ).toEqual([NEW_UUID, OLD_UUID]);
    }
    expect(await t.json(`${base}/values/?key=$browser`)).toEqual([{ name: 'Opera Mini' }]);
    const csv = await (await t.fetch(`${base}/?format=csv`)).text();
    const lines = csv.trim().split('\n');
    expect(lines).toHaveLength(3);
    const hogql = (await t.json(`/api/environments/${pid}/query/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query: { kind: 'HogQLQuery', query: 'select uuid, properties, properties.text, properties.n from events order by uuid' },
      }),
    })) as { results: unknown[][] };
    const rows = hogql.results.map((r) => [typeof r[1] === 'string' ? JSON.parse(r[1]) : r[1], r[2], r[3]]);
    expect(hogql.results.map((r) => r[0])).toEqual([NEW_UUID, OLD_UUID]);
    expect(rows[0]![0]).toEqual(PROPS);
    expect(rows[0]![2]).toBe('1000000000000000000000');
    expect(rows[1]).toEqual(rows[0]);
  });
});
