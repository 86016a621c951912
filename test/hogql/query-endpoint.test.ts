/**
 * `POST /api/environments/{project_id}/query/` (and its /api/projects/ copy) through the real HTTP
 * stack, response validation on: HogQLQuery and EventsQuery answers in PostHog's shape, limits,
 * the team filter, the `query:read` scope, and 400s in PostHog's error shape naming the construct
 * and its line/column. Runs on SQLite, and on PostgreSQL in the PostgreSQL pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missingScope } from '../helpers/errors.js';
import { ev, seedDataset } from './dataset.js';

let t: TestServer;
let P: number;
let Q: number;

const PREFIXES = ['/api/environments', '/api/projects'] as const;

/** A query answer or an error body, as the tests read them. */
interface Answer {
  results: unknown[][];
  columns: string[];
  detail: string;
  [key: string]: unknown;
}

async function post(path: string, body: unknown, key?: string): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    ...(key ? { key } : {}),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const hogql = (query: string, prefix = '/api/environments', team = P, key?: string) =>
  post(`${prefix}/${team}/query/`, { query: { kind: 'HogQLQuery', query } }, key);
const events = (q: Record<string, unknown>, team = P) =>
  post(`/api/environments/${team}/query/`, { query: { kind: 'EventsQuery', after: 'all', ...q } });

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'HogQL other project' })).id;
  await seedDataset(t.store, P, Q);
});

afterAll(async () => {
  await t.close();
});

describe.each(PREFIXES)('POST %s/{project_id}/query/', (prefix) => {
  it('with a HogQLQuery, answers results, columns, types, hasMore, limit, offset and hogql', async () => {
    const query = "select event, count() as c from events where timestamp < '2024-11-06' group by event order by c desc, event";
    const res = await hogql(query, prefix);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      results: [
        ['$pageview', 5],
        ['$autocapture', 1],
        ['purchase', 1],
        ['signup', 1],
      ],
      columns: ['event', 'c'],
      types: ['String', 'UInt64'],
      hasMore: false,
      limit: 100,
      offset: 0,
      hogql: query,
    });
  });
});

describe('POST /api/environments/{project_id}/query/', () => {
  it('when the query names no LIMIT, returns 100 rows at most; hasMore says more follow', async () => {
    const res = await hogql('select uuid from events order by uuid limit 3 offset 1');
    expect(res.body).toMatchObject({ results: [[ev(2)], [ev(3)], [ev(4)]], hasMore: true, limit: 3, offset: 1 });
    const all = await hogql('select uuid from events');
    expect(all.body).toMatchObject({ hasMore: false, limit: 100 });
    expect(all.body.results).toHaveLength(12);
  });

  it('when LIMIT is above 50,000, lowers it to 50,000', async () => {
    const res = await hogql('select count() from events limit 100000');
    expect(res.body).toMatchObject({ results: [[12]], limit: 50000 });
  });

  it('reads only the project of the path, whatever the query says', async () => {
    expect((await hogql("select count() from events where properties.secret = 'q-only'")).body.results).toEqual([[0]]);
    expect((await hogql('select count() from events where team_id = ' + String(Q))).body.results).toEqual([[0]]);
    expect((await hogql('select count() from events', '/api/environments', Q)).body.results).toEqual([[2]]);
    expect((await hogql('select count() from persons')).body.results).toEqual([[5]]);
  });

  it('when the key lacks query:read, answers 403 permission_denied', async () => {
    const key = await t.key(['event:read']);
    const res = await hogql('select 1', '/api/environments', P, key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(missingScope('query:read'));
  });

  it('when the query joins, answers 400 naming JOIN and its line and column', async () => {
    const res = await hogql('select event\nfrom events e join persons p on 1');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      attr: 'query',
      detail: expect.stringMatching(/^JOIN is not supported.*\(line 2, column 20\)$/),
    });
  });

  it.each([
    ['select event from events where', /^Syntax error: .*\(line 1, column \d+\)$/],
    ['select * from (select 1)', /subquery in FROM is not supported/],
    ['select event from events union all select event from events', /UNION/],
    ['select sleep(3)', /^The function sleep\(\) is not supported.*\(line 1, column 8\)$/],
    ['select event from raw_events', /^Unknown table "raw_events"/],
    ['select event from events settings max_execution_time=1', /SETTINGS|Syntax error/],
    ['select secret from events', /^Unknown field "secret" of events/],
    ['select event, count() from events', /"event" is neither aggregated nor in GROUP BY/],
    ['select count() from events where count() > 1', /aggregate count\(\) is not allowed here/],
    ["select event from events where event =~ '(a)\\\\1'", /Invalid regular expression/],
    ['select 9223372036854775807 * 9223372036854775807', /out of range|could not run/],
    ['select event from events limit -1', /LIMIT|Syntax error/],
    ['select {x}', /placeholder|Placeholder|not supported/i],
  ])("when the query is %j, answers 400 in PostHog's error shape", async (query, detail) => {
    const res = await hogql(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input' });
    expect(res.body.detail).toMatch(detail);
  });

  it.each([
    ['select properties.price + 1 from events', /Arithmetic \(\+\) needs numbers, not String and Int/, 'illegal_type_of_argument'],
    ['select sum(event) from events', /sum\(\) needs a number, not String/, 'illegal_type_of_argument'],
    ['select lower(1)', /lower\(\) needs a String, not Int/, 'illegal_type_of_argument'],
    ["select event from events where timestamp =~ 'a'", /Pattern matching needs a String/, 'illegal_type_of_argument'],
    ["select if(1, 'a', 2)", /no common type \(String, Int\)/, 'no_common_type'],
  ])('a type error (%j) answers 400 with the code ClickHouse names it by, as PostHog does', async (query, detail, code) => {
    const res = await hogql(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code, attr: 'query' });
    expect(res.body.detail).toMatch(detail);
  });

  it('when the body has no query, answers 400 required', async () => {
    const res = await post(`/api/environments/${P}/query/`, {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'required', attr: 'query' });
  });

  it('with an EventsQuery of columns with timestamp, answers the newest events first; without it, by the first column ascending (PostHog’s default)', async () => {
    const first = await events({ select: ['event', 'uuid'], limit: 3 });
    // event names ascending, each name's newest first
    expect(first.body.results).toEqual([
      ['$autocapture', ev(4)],
      ['$pageleave', ev(10)],
      ['$pageview', ev(11)],
    ]);
    const star = await events({ select: ['*'], limit: 2 });
    expect((star.body.results as { uuid: string }[][]).map((r) => r[0]!.uuid)).toEqual([ev(1), ev(2)]);
    const res = await events({ select: ['uuid', 'event', 'properties.$browser', 'timestamp'], limit: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      results: [
        [ev(12), 'signup', null, expect.any(String)],
        [ev(11), '$pageview', 'chrome', expect.any(String)],
      ],
      columns: ['uuid', 'event', 'properties.$browser', 'timestamp'],
      types: ['UUID', 'String', 'Nullable(String)', "DateTime64(6, 'UTC')"],
      hasMore: true,
      limit: 2,
      offset: 0,
    });
  });

  it('with an EventsQuery of aggregates, groups the other columns, applies an aggregate where after grouping, orders by count() desc', async () => {
    const res = await events({ select: ['event', 'count()'], where: ["event != 'signup'", 'count() > 1'] });
    expect(res.body.results).toEqual([
      ['$pageview', 6],
      ['purchase', 2],
    ]);
  });

  it('with an EventsQuery, applies after, before, event and properties before the expressions', async () => {
    const res = await events({
      select: ['uuid'],
      after: '2024-11-01T10:00:00Z',
      before: '2024-11-05T12:00:00Z',
      event: '$pageview',
      properties: [{ key: '$browser', value: ['Chrome', 'Firefox'], operator: 'exact', type: 'event' }],
    });
    expect(res.body.results).toEqual([[ev(2)], [ev(3)]]);
    const byPerson = await events({ select: ['count()'], properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] });
    expect(byPerson.body.results).toEqual([[6]]); // alice 4, carol 2
  });

  it('with an EventsQuery, a {"type": "hogql"} property filter is a HogQL condition (PostHog’s test_query.py), in a list or an AND group', async () => {
    const plain = await events({
      select: ['uuid'],
      after: '2024-11-01T10:00:00Z',
      before: '2024-11-05T12:00:00Z',
      event: '$pageview',
      properties: [{ key: '$browser', value: ['Chrome', 'Firefox'], operator: 'exact', type: 'event' }],
    });
    const viaHogQL = await events({
      select: ['uuid'],
      after: '2024-11-01T10:00:00Z',
      before: '2024-11-05T12:00:00Z',
      event: '$pageview',
      properties: [{ type: 'hogql', key: "properties.$browser in ('Chrome', 'Firefox')" }],
    });
    expect(viaHogQL.status).toBe(200);
    expect(viaHogQL.body.results).toEqual(plain.body.results);
    const grouped = await events({
      select: ['count()'],
      properties: {
        type: 'AND',
        values: [
          { type: 'hogql', key: "properties.$browser = 'Chrome'" },
          { key: 'plan', value: 'pro', type: 'person' },
        ],
      },
    });
    expect(grouped.status).toBe(200);
    const both = await events({
      select: ['count()'],
      where: ["properties.$browser = 'Chrome'"],
      properties: [{ key: 'plan', value: 'pro', type: 'person' }],
    });
    expect(grouped.body.results).toEqual(both.body.results);
    const bad = await events({ select: ['uuid'], properties: [{ type: 'hogql', key: 'properties.$browser =' }] });
    expect(bad.status).toBe(400);
    const nested = await events({ select: ['uuid'], properties: { type: 'OR', values: [{ type: 'hogql', key: '1 = 1' }] } });
    expect(nested.status).toBe(400);
    expect(nested.body).toMatchObject({ attr: 'query__properties' });
  });

  it('with an EventsQuery selecting "person", answers the event’s person as PostHog’s runner does', async () => {
    const res = await events({ select: ['person', 'event', 'timestamp'], orderBy: ['timestamp ASC'], limit: 1 });
    expect(res.status).toBe(200);
    expect(res.body.columns).toEqual(['person', 'event', 'timestamp']);
    const person = res.body.results[0]![0] as Record<string, unknown>;
    expect(Object.keys(person).sort()).toEqual(['created_at', 'distinct_id', 'properties', 'uuid']);
    expect(person).toMatchObject({ distinct_id: 'alice', properties: expect.objectContaining({ plan: 'pro' }) });
    expect(person['uuid']).toMatch(/^[0-9a-f]{8}-/);
  });

  it('with an EventsQuery selecting "*", answers each event as one object', async () => {
    const res = await events({ select: ['*', 'event'], orderBy: ['timestamp ASC'], limit: 1 });
    expect(res.body.columns).toEqual(['*', 'event']);
    // typed as PostHog types it: the tuple of the fields' types
    expect(res.body.types).toEqual([
      "Tuple(UUID, String, String, DateTime64(6, 'UTC'), Int64, String, String, DateTime64(6, 'UTC'))",
      'String',
    ]);
    expect(res.body.results[0]![0]).toMatchObject({
      uuid: ev(1),
      event: '$pageview',
      distinct_id: 'alice',
      timestamp: '2024-11-01T10:00:00.000000Z',
      team_id: P,
      elements_chain: '',
      properties: { $browser: 'Chrome', price: 1440, plan: 'pro' },
    });
  });

  it('with an EventsQuery whose expression cannot be parsed, answers 400 naming it', async () => {
    const res = await events({ select: ['event', 'count('] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'select' });
    expect(res.body.detail).toMatch(/^Syntax error.*in "count\("/);
  });

  it('with an EventsQuery whose after is not a date, answers 400', async () => {
    const res = await events({ select: ['event'], after: 'yesterday' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ attr: 'query__after' });
  });
});
