/**
 * Positional GROUP BY and ORDER BY (`order by 2 desc`), as ClickHouse reads them with
 * `enable_positional_arguments` (PostHog's default, and its printer writes integer constants
 * inline): through `POST …/query/` with the real HTTP stack, response validation on, over the
 * dataset of ./dataset.ts. An integer literal names a SELECT column (1-based, negative from the
 * last); a float or an expression stays a constant; a position out of range is a 400
 * `bad_arguments` in PostHog's error shape. Runs on SQLite, and in the PostgreSQL and ClickHouse
 * passes: the same answers on every events store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedDataset } from './dataset.js';

let t: TestServer;
let P: number;

interface Answer {
  results: unknown[][];
  columns: string[];
  type?: string;
  code?: string;
  detail?: string;
  attr?: string | null;
}

async function query(q: Record<string, unknown>, prefix = '/api/environments'): Promise<{ status: number; body: Answer }> {
  const res = await t.fetch(`${prefix}/${P}/query/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: q }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const hogql = (text: string, prefix?: string) => query({ kind: 'HogQLQuery', query: text }, prefix);

async function rows(text: string): Promise<unknown[][]> {
  const res = await hogql(text);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results;
}

/** The events of P per name, by count descending then name (hand-counted from ./dataset.ts). */
const BY_COUNT = [
  ['$pageview', 6],
  ['purchase', 2],
  ['signup', 2],
  ['$autocapture', 1],
  ['$pageleave', 1],
];

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Positional other project' })).id;
  await seedDataset(t.store, P, Q);
});

afterAll(async () => {
  await t.close();
});

describe('POST /api/environments/{project_id}/query/ with positional arguments', () => {
  it.each(['/api/environments', '/api/projects'])('via %s, ORDER BY 2 DESC sorts by the second column', async (prefix) => {
    const res = await hogql('select event, count() from events group by event order by 2 desc, 1', prefix);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toEqual(BY_COUNT);
    expect(res.body.columns).toEqual(['event', 'count()']);
  });

  it('reads GROUP BY 1 as the first column, and ORDER BY positions both ways', async () => {
    expect(await rows('select event, count() from events group by 1 order by 2 desc, 1')).toEqual(BY_COUNT);
    expect(await rows('select event, count() as c from events group by 1 order by 2, 1 desc')).toEqual([...BY_COUNT].reverse());
  });

  it('reads a negative position from the last column', async () => {
    expect(await rows('select event, count() from events group by event order by -1 desc, -2')).toEqual(BY_COUNT);
  });

  it('names the column behind an alias and a computed column', async () => {
    expect(await rows('select upper(event) as e, count() from events group by 1 order by 2 desc, 1 limit 2')).toEqual([
      ['$PAGEVIEW', 6],
      ['PURCHASE', 2],
    ]);
    expect(await rows('select distinct event from events order by 1 desc limit 3')).toEqual([['signup'], ['purchase'], ['$pageview']]);
  });

  it('orders by position without aggregates, text byte by byte, NULLs last', async () => {
    expect(await rows("select event, properties.$browser from events where event = '$pageview' order by 2, 1 limit 7")).toEqual([
      ['$pageview', 'Chrome'],
      ['$pageview', 'Chrome'],
      ['$pageview', 'Firefox'],
      ['$pageview', 'Safari'],
      ['$pageview', 'chrome'],
      ['$pageview', null],
    ]);
  });

  it('keeps an expression or a float as a constant, as ClickHouse does', async () => {
    // `1 + 1` and `2.0` order nothing: the next item decides
    expect(await rows('select event, count() from events group by event order by 1 + 1, 1 desc')).toEqual([
      ['signup', 2],
      ['purchase', 2],
      ['$pageview', 6],
      ['$pageleave', 1],
      ['$autocapture', 1],
    ]);
    expect(await rows('select event, count() from events group by event order by 2.0, 1 limit 1')).toEqual([['$autocapture', 1]]);
  });

  it.each([
    [
      'select event, count() from events group by event order by 5',
      'Positional argument number 5 is out of bounds in ORDER BY. Expected in range [1, 2]',
      59,
    ],
    [
      'select event, count() from events group by event order by 0',
      'Positional argument number 0 is out of bounds in ORDER BY. Expected in range [1, 2]',
      59,
    ],
    [
      'select event, count() from events group by event order by -3',
      'Negative positional argument number -3 is out of bounds in ORDER BY. Expected in range [-2, -1]',
      59,
    ],
    [
      'select event, count() from events group by 3',
      'Positional argument number 3 is out of bounds in GROUP BY. Expected in range [1, 2]',
      44,
    ],
  ])('answers 400 bad_arguments for a position out of range: %s', async (text, detail, column) => {
    const res = await hogql(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      type: 'validation_error',
      code: 'bad_arguments',
      detail: `${detail} (line 1, column ${column})`,
      attr: 'query',
    });
  });

  it('answers 400 illegal_aggregation for GROUP BY the position of an aggregate', async () => {
    const res = await hogql('select event, count() from events group by 2');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'illegal_aggregation', attr: 'query' });
    expect(res.body.detail).toContain('Aggregate function count() is found in GROUP BY');
  });
});

describe('POST /api/environments/{project_id}/query/ EventsQuery orderBy by position', () => {
  const events = (q: Record<string, unknown>) => query({ kind: 'EventsQuery', after: 'all', ...q });

  it('orders by the select column that a position names', async () => {
    const res = await events({ select: ['event', 'count()'], orderBy: ['2 DESC', '1'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toEqual(BY_COUNT);
  });

  it('counts `*` as one column, and groups a selected integer constant as a value, not a position', async () => {
    const star = await events({ select: ['*', 'event'], orderBy: ['2', '1'], where: ["event = 'signup'"] });
    expect(star.status, JSON.stringify(star.body)).toBe(200);
    expect(star.body.results.map((r) => r[1])).toEqual(['signup', 'signup']);
    const constant = await events({ select: ['5', 'count()'] });
    expect(constant.status, JSON.stringify(constant.body)).toBe(200);
    expect(constant.body.results).toEqual([[5, 12]]);
  });

  it('answers 400 bad_arguments for a position past the select list, attr orderBy', async () => {
    const res = await events({ select: ['event', 'count()'], orderBy: ['3 DESC'] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'bad_arguments', attr: 'orderBy' });
    expect(res.body.detail).toContain('Positional argument number 3 is out of bounds in orderBy. Expected in range [1, 2]');
  });
});
