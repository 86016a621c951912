/**
 * What the capture endpoints do to events and persons before answering (server/capture/process.ts,
 * server/ingest/person-rules.ts, the shared write path), read back through the events and persons
 * APIs: uuid given or made and stored once, clock skew, `$set` / `$set_once` / `$unset`,
 * `$identify` and `$create_alias` merges with PostHog's refusals, `$process_person_profile: false`,
 * `elements_chain` from `$elements_chain` or `$elements`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture, listEvents, personOf, uuid } from './helpers.js';

let t: TestServer;
let token: string;

beforeAll(async () => {
  t = await startTestServer();
  token = t.boot.team.api_token;
});
afterAll(async () => {
  await t.close();
});

async function send(events: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await capture(t, '/batch/', { api_key: token, batch: events, ...extra });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function stored(name: string) {
  return (await listEvents(t, `&event=${encodeURIComponent(name)}`))[0];
}

describe('uuid', () => {
  it('keeps a given uuid, stores the same uuid once, and its $set is not replayed', async () => {
    const id = uuid();
    await send([{ event: 'dedup', distinct_id: 'dedup-user', uuid: id, properties: { $set: { n: 1 } } }]);
    await send([{ event: 'dedup', distinct_id: 'dedup-user', uuid: id.toUpperCase(), properties: { $set: { n: 2 } } }]);
    await send([
      { event: 'dedup', distinct_id: 'dedup-user', uuid: id },
      { event: 'dedup', distinct_id: 'dedup-user', uuid: id },
    ]);
    const rows = await listEvents(t, '&event=dedup');
    expect(rows.map((r) => r.id)).toEqual([id]);
    expect((await personOf(t, 'dedup-user'))?.properties).toEqual({ n: 1 });
  });

  it('makes a UUIDv7 when none is given', async () => {
    await send([{ event: 'no uuid', distinct_id: 'u' }]);
    expect((await stored('no uuid'))?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('timestamp', () => {
  it('corrects clock skew from sent_at: now + (timestamp - sent_at)', async () => {
    // the client's clock is 10 days ahead; the event happened 5 s before it was sent
    const skew = 10 * 86_400_000;
    const clientNow = Date.now() + skew;
    const before = Date.now();
    await send([{ event: 'skewed', distinct_id: 'u', timestamp: new Date(clientNow - 5_000).toISOString() }], {
      sent_at: new Date(clientNow).toISOString(),
    });
    const after = Date.now();
    const ts = Date.parse((await stored('skewed'))!.timestamp);
    expect(ts).toBeGreaterThanOrEqual(before - 5_000 - 1);
    expect(ts).toBeLessThanOrEqual(after - 5_000 + 1);
  });

  it('takes the timestamp as is without sent_at, or with $ignore_sent_at', async () => {
    await send([{ event: 'as is', distinct_id: 'u', timestamp: '2024-11-20T14:03:10.871123Z' }]);
    expect((await stored('as is'))?.timestamp).toBe('2024-11-20T14:03:10.871123Z');
    await send([{ event: 'ignored sent_at', distinct_id: 'u', timestamp: '2024-11-20T14:03:10Z', properties: { $ignore_sent_at: true } }], {
      sent_at: '2030-01-01T00:00:00Z',
    });
    expect((await stored('ignored sent_at'))?.timestamp).toBe('2024-11-20T14:03:10.000000Z');
  });

  it('offset (ms before now) wins; a timestamp more than 23 h ahead becomes now', async () => {
    const before = Date.now();
    await send([{ event: 'offset', distinct_id: 'u', timestamp: '2020-01-01T00:00:00Z', offset: 60_000 }]);
    await send([{ event: 'future', distinct_id: 'u', timestamp: new Date(Date.now() + 3 * 86_400_000).toISOString() }]);
    const after = Date.now();
    const offsetTs = Date.parse((await stored('offset'))!.timestamp);
    expect(offsetTs).toBeGreaterThanOrEqual(before - 60_000 - 1);
    expect(offsetTs).toBeLessThanOrEqual(after - 60_000 + 1);
    const futureTs = Date.parse((await stored('future'))!.timestamp);
    expect(futureTs).toBeGreaterThanOrEqual(before - 1);
    expect(futureTs).toBeLessThanOrEqual(after + 1);
  });
});

describe('persons', () => {
  it('applies $set_once, $set (top level and in properties) and $unset in order', async () => {
    await send([
      { event: 'signed_up', distinct_id: 'props-user', $set: { plan: 'free', role: 'dev' }, $set_once: { first: 'a' } },
      { event: 'upgraded', distinct_id: 'props-user', properties: { $set: { plan: 'pro' }, $set_once: { first: 'b' } } },
      { event: '$set', distinct_id: 'props-user', properties: { $unset: ['role'] } },
    ]);
    const person = await personOf(t, 'props-user');
    expect(person?.properties).toEqual({ plan: 'pro', first: 'a' });
    expect((await stored('signed_up'))?.properties.$set).toEqual({ plan: 'free', role: 'dev' });
  });

  it('$identify merges the anonymous id into the identified person (both with persons already)', async () => {
    await send([{ event: '$pageview', distinct_id: 'anon-1', properties: { $set: { seen: true, plan: 'anon' } } }]);
    await send([{ event: 'login', distinct_id: 'ada', properties: { $set: { plan: 'pro' } } }]);
    await send([
      { event: '$identify', distinct_id: 'ada', properties: { $anon_distinct_id: 'anon-1', $set: { email: 'ada@hedgebox.net' } } },
    ]);
    const person = await personOf(t, 'ada');
    expect(person?.distinct_ids.sort()).toEqual(['ada', 'anon-1']);
    expect(person?.is_identified).toBe(true);
    // the identified side wins on conflicts
    expect(person?.properties).toEqual({ seen: true, plan: 'pro', email: 'ada@hedgebox.net' });
    expect((await personOf(t, 'anon-1'))?.id).toBe(person?.id);
  });

  it('a $identify without $anon_distinct_id (or with the same id) is a plain person update: not identified', async () => {
    await send([{ event: '$identify', distinct_id: 'plain-id', properties: { $set: { plan: 'free' } } }]);
    await send([{ event: '$identify', distinct_id: 'self-id', properties: { $anon_distinct_id: 'self-id' } }]);
    expect(await personOf(t, 'plain-id')).toMatchObject({ distinct_ids: ['plain-id'], is_identified: false, properties: { plan: 'free' } });
    expect(await personOf(t, 'self-id')).toMatchObject({ distinct_ids: ['self-id'], is_identified: false });
  });

  it('refuses to merge a person that is already identified into another', async () => {
    await send([{ event: '$identify', distinct_id: 'bob', properties: { $anon_distinct_id: 'anon-bob' } }]);
    await send([{ event: '$identify', distinct_id: 'carol', properties: { $anon_distinct_id: 'anon-carol' } }]);
    await send([{ event: '$identify', distinct_id: 'carol', properties: { $anon_distinct_id: 'bob' } }]);
    expect((await personOf(t, 'bob'))?.id).not.toBe((await personOf(t, 'carol'))?.id);
  });

  it('$create_alias joins alias to the person of distinct_id; illegal ids are never merged', async () => {
    await send([
      { event: 'x', distinct_id: 'dora' },
      { event: '$create_alias', distinct_id: 'dora', properties: { alias: 'dora@work' } },
    ]);
    expect((await personOf(t, 'dora@work'))?.distinct_ids.sort()).toEqual(['dora', 'dora@work']);
    await send([
      { event: '$create_alias', distinct_id: 'erin', properties: { alias: 'undefined' } },
      { event: '$identify', distinct_id: 'erin', properties: { $anon_distinct_id: '"null"' } },
    ]);
    expect((await personOf(t, 'erin'))?.distinct_ids).toEqual(['erin']);
    expect(await personOf(t, 'undefined')).toBeUndefined();
  });

  it('$process_person_profile: false leaves persons alone and drops person-only events', async () => {
    await send([
      { event: 'personless', distinct_id: 'ghost', properties: { $process_person_profile: false, $set: { a: 1 } } },
      { event: '$identify', distinct_id: 'ghost', properties: { $process_person_profile: false, $anon_distinct_id: 'ghost-anon' } },
    ]);
    expect(await personOf(t, 'ghost')).toBeUndefined();
    const row = await stored('personless');
    expect(row?.properties).toEqual({ $process_person_profile: false });
    expect((await listEvents(t, '&distinct_id=ghost')).map((e) => e.event)).toEqual(['personless']);
  });
});

describe('elements_chain', () => {
  it('takes $elements_chain as is, or builds it from $elements; both leave the properties', async () => {
    const chain = 'a.nav:href="/pricing"nth-child="1"nth-of-type="1"text="Pricing"';
    await send([
      { event: '$autocapture', distinct_id: 'clicker', uuid: uuid(), properties: { $event_type: 'click', $elements_chain: chain } },
      {
        event: '$autocapture',
        distinct_id: 'clicker2',
        properties: {
          $event_type: 'click',
          $elements: [
            { tag_name: 'button', $el_text: 'Sign up', attr__class: 'btn primary', attr__id: 'go', nth_child: 2, nth_of_type: 1 },
            { tag_name: 'form', nth_child: 1, nth_of_type: 1 },
          ],
        },
      },
    ]);
    const rows = await listEvents(t, '&event=%24autocapture');
    const first = rows.find((r) => r.distinct_id === 'clicker')!;
    expect(first.elements_chain).toBe(chain);
    expect(first.properties).toEqual({ $event_type: 'click' });
    const built = rows.find((r) => r.distinct_id === 'clicker2')!;
    expect(built.elements_chain).toBe(
      'button.btn.primary:attr__class="btn primary"attr__id="go"attr_id="go"nth-child="2"nth-of-type="1"text="Sign up";form:nth-child="1"nth-of-type="1"',
    );
    expect(built.properties).toEqual({ $event_type: 'click' });
    expect(built.elements[0]).toMatchObject({
      tag_name: 'button',
      text: 'Sign up',
      attr_id: 'go',
      nth_child: 2,
      attr_class: ['btn', 'primary'],
    });
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('stores NUL and lone surrogates as U+FFFD, on both stores alike', async () => {
    await send([{ event: 'nul\u0000name', distinct_id: 'nul\u0000id', properties: { 'k\u0000': 'v\ud800' } }]);
    const row = (await listEvents(t, '&distinct_id=' + encodeURIComponent('nul\uFFFDid')))[0];
    expect(row?.event).toBe('nul\uFFFDname');
    expect(row?.properties).toEqual({ 'k\uFFFD': 'v\uFFFD' });
  });
});
