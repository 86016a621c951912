/**
 * `GET /api/environments/{project_id}/events/` with `select` and `where` (PostHog's 2023 events
 * list semantics, run as HogQL) through the real HTTP stack, response validation on, on both
 * stores: columns and aggregates, `where` before and after grouping, the list's other filters,
 * paging, `where` alone filtering the ordinary list, and the 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ev, seedDataset } from './dataset.js';

let t: TestServer;
let P: number;

async function list(params: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.fetch(`/api/environments/${P}/events/?${new URLSearchParams(params).toString()}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const j = (v: unknown) => JSON.stringify(v);

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'HogQL list other project' })).id;
  await seedDataset(t.store, P, Q);
});

afterAll(async () => {
  await t.close();
});

describe('GET /api/environments/{project_id}/events/ with select and where', () => {
  it('with select of columns, answers {columns, types, results, hasMore}, newest first', async () => {
    const res = await list({ select: j(['uuid', 'event', 'properties.$browser']), limit: '2' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      columns: ['uuid', 'event', 'properties.$browser'],
      types: ['UUID', 'String', 'Nullable(String)'],
      results: [
        [ev(12), 'signup', null],
        [ev(11), '$pageview', 'chrome'],
      ],
      hasMore: true,
    });
  });

  it('with select of aggregates, groups the other columns and orders by count() desc', async () => {
    const res = await list({ select: j(['event', 'count()', 'uniq(distinct_id)']) });
    expect(res.body.results).toEqual([
      ['$pageview', 6, 5],
      ['purchase', 2, 2],
      ['signup', 2, 2],
      ['$autocapture', 1, 1],
      ['$pageleave', 1, 1],
    ]);
  });

  it('applies where before grouping and, with an aggregate, after it', async () => {
    const res = await list({ select: j(['distinct_id', 'count()']), where: j(["event != '$pageleave'", 'count() >= 2']) });
    // ties in the grouped columns' order
    expect(res.body.results).toEqual([
      ['alice', 3],
      ['bob', 3],
      ['carol', 2],
      ['erin', 2],
    ]);
  });

  it('applies the other filters first (event, after, before, properties, person_id)', async () => {
    const res = await list({
      select: j(['count()']),
      event: '$pageview',
      after: '2024-11-01T10:00:00Z',
      before: '2024-12-01T00:00:00Z',
      properties: j([{ key: '$browser', value: 'is_set', operator: 'is_set' }]),
    });
    expect(res.body.results).toEqual([[3]]); // e2 Chrome, e3 Firefox, e6 Safari
  });

  it('pages with limit and offset', async () => {
    const res = await list({ select: j(['uuid']), limit: '2', offset: '10' });
    expect(res.body).toMatchObject({ results: [[ev(2)], [ev(1)]], hasMore: false });
  });

  it('with where alone, filters the ordinary list of events', async () => {
    const res = await list({
      where: j(["properties.$browser ilike 'chrome'", 'toFloat(properties.price) > 1 or properties.price is null']),
    });
    expect(res.status).toBe(200);
    expect((res.body.results as { id: string }[]).map((e) => e.id)).toEqual([ev(11), ev(10), ev(2), ev(1)]);
    expect(res.body.next).toBeNull();
  });

  it.each([
    [{ select: 'not json' }, 'select', /JSON array/],
    [{ select: j([]) }, 'select', /at least one/],
    [{ select: j(['arrayJoin(x)']) }, 'select', /arrayJoin\(\) is not supported/],
    [{ where: j(['count() > 1']) }, 'where', /aggregate count\(\) is not allowed here/],
    [{ where: j(['event =']) }, 'where', /^Syntax error/],
    [{ select: j(['event']), format: 'csv' }, 'format', /csv/],
  ])('with %j, answers 400 naming %s', async (params, attr, detail) => {
    const res = await list(params as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr });
    expect(res.body.detail).toMatch(detail);
  });
});
