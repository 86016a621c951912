/**
 * The `events` operations (13–15: list, retrieve, values) through the real HTTP stack: a server on
 * port 0 with response validation on, driven by the typed client for JSON and by raw fetch for CSV
 * and for query strings sent as PostHog users write them (`event=$pageview` unencoded). Each
 * assertion follows the operation's description in openapi.yaml and issue 3.
 *
 * Events and persons are seeded straight into the store (test/helpers/events-store.ts), each data set in
 * its own project of the bootstrap organization so the cases do not see each other's rows;
 * project 1 holds only the events of the isolation cases. Timestamps are relative to now (the
 * list's default upper bound is now + 5 s) unless a case needs fixed instants.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterBulkSeed, applyPersonUpdates, insertEvents } from '../helpers/events-store.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type ErrorBody, missingScope, projectNotAllowed } from '../helpers/errors.js';
import { paginate, type components, type operations } from '../../client/index.js';
import { EventsWriteRepository, type EventInput, type PersonUpdate } from '../../server/storage/events/write.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';

type ClickhouseEvent = components['schemas']['ClickhouseEvent'];
type EventsPage = components['schemas']['PaginatedClickhouseEventList'];
type ListQuery = NonNullable<operations['environments_events_list']['parameters']['query']>;
type ValuesQuery = NonNullable<operations['environments_events_values_retrieve']['parameters']['query']>;

const EVENTS = '/api/environments/{project_id}/events/';
const EVENT = '/api/environments/{project_id}/events/{id}/';
const VALUES = '/api/environments/{project_id}/events/values/';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestServer;

/** label of a seeded event by uuid, so that results read as names in assertions */
const labels = new Map<string, string>();

interface SeedEvent {
  /** a label for assertions (not stored) */
  name?: string;
  uuid?: string;
  event?: string;
  distinct_id?: string;
  properties?: Record<string, unknown>;
  timestamp: string;
  elements_chain?: string;
}

/** Inserts events into a project in one transaction; returns the stored rows. */
async function seed(teamId: number, rows: SeedEvent[]): Promise<EventInput[]> {
  const inputs: EventInput[] = rows.map((r) => ({
    uuid: r.uuid ?? randomUUID(),
    event: r.event ?? '$pageview',
    distinct_id: r.distinct_id ?? 'anonymous',
    properties: r.properties ?? {},
    timestamp: r.timestamp,
    elements_chain: r.elements_chain ?? '',
  }));
  await insertEvents(t.store, teamId, inputs);
  // as `envapi import` does after a bulk write (and autovacuum would, later)
  await afterBulkSeed(t.store);
  rows.forEach((r, i) => {
    const input = inputs[i];
    if (r.name && input) labels.set(input.uuid, r.name);
  });
  return inputs;
}

async function persons(teamId: number, updates: PersonUpdate[]): Promise<void> {
  await applyPersonUpdates(t.store, teamId, updates);
}

/** The person (id, uuid) behind a distinct id. */
async function personOf(teamId: number, distinctId: string): Promise<{ id: number; uuid: string }> {
  return t.store.db
    .selectFrom('person_distinct_ids as pdi')
    .innerJoin('persons as p', 'p.id', 'pdi.person_id')
    .select(['p.id', 'p.uuid'])
    .where('pdi.team_id', '=', teamId)
    .where('pdi.distinct_id', '=', distinctId)
    .executeTakeFirstOrThrow();
}

/** A new project of the bootstrap organization (the bootstrap key reaches it). */
async function project(name: string, timezone?: string): Promise<number> {
  const team = await t.accounts.createTeam({ organization_id: t.boot.organization.id, name, ...(timezone ? { timezone } : {}) });
  return team.id;
}

/** The stored form of now + `ms` (negative: in the past). */
function at(ms: number): string {
  return formatTimestamp(new Date(Date.now() + ms));
}
const ago = (ms: number): string => at(-ms);

/** The list's order: timestamp desc, then uuid desc. */
function newestFirst<T extends { timestamp: string; uuid: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) =>
    a.timestamp === b.timestamp ? (a.uuid < b.uuid ? 1 : a.uuid > b.uuid ? -1 : 0) : a.timestamp < b.timestamp ? 1 : -1,
  );
}

/** Labels of results, in answer order. */
function names(results: readonly ClickhouseEvent[]): string[] {
  return results.map((e) => labels.get(e.id) ?? `?${e.id}`);
}

async function list(projectId: number, query: ListQuery = {}, client = t.client) {
  return client.GET(EVENTS, { params: { path: { project_id: String(projectId) }, query } });
}

/** A 200 page of the list (fails the test otherwise). */
async function listOk(projectId: number, query: ListQuery = {}): Promise<EventsPage> {
  const { data, error, response } = await list(projectId, query);
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data as EventsPage;
}

/** The labels of the (single) page answered for these filters. */
async function labelsOf(projectId: number, query: ListQuery = {}): Promise<string[]> {
  return names((await listOk(projectId, query)).results);
}

/** Raw GET of the list with a literal query string. */
async function listRaw(projectId: number, qs: string, key?: string): Promise<Response> {
  return t.fetch(`/api/environments/${projectId}/events/?${qs}`, key === undefined ? {} : { key });
}

async function expectError(res: Response, status: number, expected: Partial<ErrorBody>): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as ErrorBody;
  expect(body).toMatchObject(expected);
  return body;
}

/** A 400 validation error naming `attr` (whatever the wording). */
async function expect400(res: Response, attr: string, detail?: string): Promise<ErrorBody> {
  const body = await expectError(res, 400, { type: 'validation_error', attr, ...(detail ? { detail } : {}) });
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  return body;
}

function listPath(projectId: number, query: Record<string, string | number>): string {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return `/api/environments/${projectId}/events/?${qs}`;
}

/** CSV text → lines (without the final empty one after the last CRLF). */
function csvLines(text: string): string[] {
  expect(text.endsWith('\r\n')).toBe(true);
  expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  return text.slice(0, -2).split('\r\n');
}

function csvRecords(text: string): Record<string, string>[] {
  return parseCsv(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  await t?.close();
});

// -------------------------------------------------------------------------------------------------
// List: order, limit, offset
// -------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/ — order and limit', () => {
  let pid: number;
  let rows: EventInput[];

  beforeAll(async () => {
    pid = await project('Events order');
    const tie = ago(2 * HOUR);
    const seeds: SeedEvent[] = [];
    // 120 events at distinct times, 6 sharing one timestamp
    for (let i = 0; i < 120; i += 1) seeds.push({ name: `e${i}`, timestamp: ago(3 * HOUR + i * 1000) });
    for (let i = 0; i < 6; i += 1) seeds.push({ name: `tie${i}`, timestamp: tie });
    rows = await seed(pid, seeds);
  });

  it('answers newest first, ties broken by id (uuid), descending', async () => {
    const page = await listOk(pid, { limit: 200 });
    expect(page.results.map((e) => e.id)).toEqual(newestFirst(rows).map((r) => r.uuid));
    const ties = page.results.filter((e) => labels.get(e.id)?.startsWith('tie'));
    expect(ties).toHaveLength(6);
    expect(page.results.slice(0, 6).map((e) => e.id)).toEqual(ties.map((e) => e.id));
    expect(ties.map((e) => e.id)).toEqual([...ties.map((e) => e.id)].sort().reverse());
  });

  it('orderBy ["timestamp"] lists oldest first, ties by id ascending, and next goes on ascending (PostHog’s test_event.py)', async () => {
    const oldest = [...newestFirst(rows)].reverse().map((r) => r.uuid);
    const seen: string[] = [];
    let path: string | null = listPath(pid, { orderBy: '["timestamp"]', limit: 7 });
    while (path !== null) {
      const res = await t.fetch(path);
      expect(res.status).toBe(200);
      const page = (await res.json()) as EventsPage;
      seen.push(...page.results.map((e) => e.id));
      path = page.next === null ? null : page.next.slice(t.url.length);
      if (path !== null) expect(new URL(page.next!).searchParams.get('orderBy')).toBe('["timestamp"]');
    }
    expect(seen).toEqual(oldest);
    // exactly ["-timestamp"] is the default order; a bad value is a 400
    const desc = await listOk(pid, { orderBy: '["-timestamp"]', limit: 200 });
    expect(desc.results.map((e) => e.id)).toEqual(newestFirst(rows).map((r) => r.uuid));
    await expect400(await listRaw(pid, 'orderBy=timestamp'), 'orderBy');
  });

  it('answers 100 events by default, with a next link', async () => {
    const page = await listOk(pid);
    expect(page.results).toHaveLength(100);
    expect(page.results.map((e) => e.id)).toEqual(
      newestFirst(rows)
        .slice(0, 100)
        .map((r) => r.uuid),
    );
    expect(page.next).toEqual(expect.any(String));
  });

  it('accepts a limit above 10,000 (clamped) and answers every event with next null', async () => {
    const page = await listOk(pid, { limit: 50_000 });
    expect(page.results).toHaveLength(126);
    expect(page.next).toBeNull();
  });

  it('answers next null when the page holds exactly the remaining events', async () => {
    const page = await listOk(pid, { limit: 126 });
    expect(page.results).toHaveLength(126);
    expect(page.next).toBeNull();
  });

  it('skips `offset` events', async () => {
    const page = await listOk(pid, { offset: 5, limit: 10 });
    expect(page.results.map((e) => e.id)).toEqual(
      newestFirst(rows)
        .slice(5, 15)
        .map((r) => r.uuid),
    );
  });

  it('with an offset past the end, answers an empty page with next null', async () => {
    const page = await listOk(pid, { offset: 1000 });
    expect(page).toEqual({ next: null, results: [] });
  });

  it.each(['0', '-1', 'abc', '1.5'])('limit=%s answers 400 with attr limit, never 500', async (limit) => {
    await expect400(await listRaw(pid, `limit=${limit}`), 'limit');
  });

  it('offset=-1 answers 400 with attr offset', async () => {
    await expect400(await listRaw(pid, 'offset=-1'), 'offset');
  });

  it('format=xml answers 400', async () => {
    await expectError(await listRaw(pid, 'format=xml'), 400, { type: 'validation_error' });
  });

  it('select answers HogQL columns (EventsQuery); where alone filters the ordinary list (test/hogql/events-list.test.ts has the rest)', async () => {
    const res = await listRaw(pid, `limit=20&select=${encodeURIComponent('["event","count()"]')}&where=${encodeURIComponent('["1 = 0"]')}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ columns: ['event', 'count()'], results: [] });
    const filtered = await listRaw(pid, `limit=20&where=${encodeURIComponent('["1 = 0"]')}`);
    expect(((await filtered.json()) as EventsPage).results).toEqual([]);
  });

  it('accepts select and where unencoded in the query string', async () => {
    const res = await listRaw(pid, 'limit=3&select=["event"]&where=["event = \'$pageview\'"]');
    expect(res.status).toBe(200);
    expect(((await res.json()) as EventsPage).results).toHaveLength(3);
  });
});

// -------------------------------------------------------------------------------------------------
// List: after / before
// -------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/ — after and before', () => {
  describe('ISO 8601 bounds', () => {
    let pid: number;

    beforeAll(async () => {
      pid = await project('Events ISO bounds');
      await seed(pid, [
        { name: 'before-midnight', timestamp: '2023-04-30T23:59:59.999999Z' },
        { name: 'midnight', timestamp: '2023-05-01T00:00:00.000000Z' },
        { name: 'midnight+1us', timestamp: '2023-05-01T00:00:00.000001Z' },
        { name: 'midnight+1s', timestamp: '2023-05-01T00:00:01.000000Z' },
        { name: 'noon', timestamp: '2023-05-01T12:00:00.000000Z' },
      ]);
    });

    it('after is exclusive: an event exactly at the bound is left out', async () => {
      expect(await labelsOf(pid, { after: '2023-05-01T00:00:00Z' })).toEqual(['noon', 'midnight+1s', 'midnight+1us']);
    });

    it('before is exclusive: an event exactly at the bound is left out', async () => {
      expect(await labelsOf(pid, { before: '2023-05-01T00:00:00Z' })).toEqual(['before-midnight']);
    });

    it('after and before together bound both ends, exclusively', async () => {
      expect(await labelsOf(pid, { after: '2023-05-01T00:00:00Z', before: '2023-05-01T12:00:00Z' })).toEqual([
        'midnight+1s',
        'midnight+1us',
      ]);
    });

    it('reads fractions and offsets (+02:00 is two hours ahead of UTC)', async () => {
      expect(await labelsOf(pid, { after: '2023-05-01T02:00:00.000+02:00' })).toEqual(['noon', 'midnight+1s', 'midnight+1us']);
      expect(await labelsOf(pid, { before: '2023-05-01T00:00:01.000000Z' })).toEqual(['midnight+1us', 'midnight', 'before-midnight']);
    });

    it('reads a date alone as midnight (project timezone UTC)', async () => {
      expect(await labelsOf(pid, { after: '2023-05-01' })).toEqual(['noon', 'midnight+1s', 'midnight+1us']);
      expect(await labelsOf(pid, { before: '2023-05-01' })).toEqual(['before-midnight']);
    });

    it('reads an ISO date-time without offset in the project timezone', async () => {
      const ny = await project('Events New York', 'America/New_York');
      await seed(ny, [
        { name: 'ny-0359Z', timestamp: '2023-05-01T03:59:59.000000Z' },
        { name: 'ny-0400Z', timestamp: '2023-05-01T04:00:00.000000Z' },
        { name: 'ny-0401Z', timestamp: '2023-05-01T04:01:00.000000Z' },
      ]);
      // midnight in New York on 2023-05-01 (EDT, UTC-4) is 04:00Z
      expect(await labelsOf(ny, { after: '2023-05-01T00:00:00' })).toEqual(['ny-0401Z']);
      expect(await labelsOf(ny, { before: '2023-05-01T00:00:00' })).toEqual(['ny-0359Z']);
      expect(await labelsOf(ny, { after: '2023-05-01T00:00:00Z', before: '2023-05-01T04:00:00Z' })).toEqual(['ny-0359Z']);
    });

    it('accepts an ISO bound sent unencoded in the query string (Z form)', async () => {
      const res = await listRaw(pid, 'after=2023-05-01T00:00:00.000000Z&before=2023-05-01T12:00:00Z');
      expect(res.status).toBe(200);
      expect(names(((await res.json()) as EventsPage).results)).toEqual(['midnight+1s', 'midnight+1us']);
    });
  });

  describe('relative bounds', () => {
    let pid: number;

    beforeAll(async () => {
      pid = await project('Events relative bounds');
      await seed(pid, [
        { name: '40d', timestamp: ago(40 * DAY) },
        { name: '2d', timestamp: ago(2 * DAY) },
        { name: '20h', timestamp: ago(20 * HOUR) },
        { name: '40M', timestamp: ago(40 * MINUTE) },
        { name: '10M', timestamp: ago(10 * MINUTE) },
        { name: 'future', timestamp: at(HOUR) },
      ]);
    });

    it('without before, includes events up to now + 5 s only (an event 1 hour ahead is left out)', async () => {
      expect(await labelsOf(pid)).toEqual(['10M', '40M', '20h', '2d', '40d']);
      expect(await labelsOf(pid, { before: at(2 * HOUR) })).toEqual(['future', '10M', '40M', '20h', '2d', '40d']);
    });

    it.each([
      ['-1d', ['10M', '40M', '20h']],
      ['-24h', ['10M', '40M', '20h']],
      ['24h', ['10M', '40M', '20h']],
      ['-30M', ['10M']],
      ['-60M', ['10M', '40M']],
      ['-1m', ['10M', '40M', '20h', '2d']],
      ['-2w', ['10M', '40M', '20h', '2d']],
      ['-1y', ['10M', '40M', '20h', '2d', '40d']],
      ['-3600s', ['10M', '40M']],
      ['-1dStart', ['10M', '40M', '20h']],
    ])('after=%s answers the events after that moment', async (after, expected) => {
      expect(await labelsOf(pid, { after })).toEqual(expected);
    });

    it.each([
      ['-1d', ['2d', '40d']],
      ['-24h', ['2d', '40d']],
      ['-30M', ['40M', '20h', '2d', '40d']],
      ['-1m', ['40d']],
    ])('before=%s answers the events before that moment', async (before, expected) => {
      expect(await labelsOf(pid, { before })).toEqual(expected);
    });

    it('after=-1d sent unencoded in the query string', async () => {
      const res = await listRaw(pid, 'after=-1d&before=-30M');
      expect(res.status).toBe(200);
      expect(names(((await res.json()) as EventsPage).results)).toEqual(['40M', '20h']);
    });

    it('dStart is the start of today (UTC project): exclusive on both sides', async () => {
      const dp = await project('Events dStart');
      const now = Date.now();
      const dayStart = now - (now % DAY);
      const seeds: SeedEvent[] = [
        { name: 'day-start', timestamp: formatTimestamp(new Date(dayStart)) },
        { name: 'yesterday-late', timestamp: formatTimestamp(new Date(dayStart - MINUTE)) },
        { name: 'yesterday-start', timestamp: formatTimestamp(new Date(dayStart - DAY)) },
      ];
      const hasToday = now - dayStart > 10_000;
      if (hasToday) seeds.push({ name: 'today', timestamp: formatTimestamp(new Date(dayStart + Math.floor((now - dayStart) / 2))) });
      await seed(dp, seeds);
      expect(await labelsOf(dp, { after: 'dStart' })).toEqual(hasToday ? ['today'] : []);
      expect(await labelsOf(dp, { before: 'dStart' })).toEqual(['yesterday-late', 'yesterday-start']);
      expect(await labelsOf(dp, { after: '-1dStart' })).toEqual([...(hasToday ? ['today'] : []), 'day-start', 'yesterday-late']);
      expect(await labelsOf(dp, { after: '-1dStart', before: 'dStart' })).toEqual(['yesterday-late']);
    });
  });

  it.each(['yesterday', '2024-13-01', '2024-02-30T00:00:00Z', '-1x', 'dStartt', '1d2h'])(
    'after=%s answers 400 with attr after',
    async (value) => {
      const pid = 1;
      const { error, response } = await list(pid, { after: value });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ type: 'validation_error', attr: 'after' });
    },
  );

  it.each(['yesterday', '2024-13-01', 'not a date'])('before=%s answers 400 with attr before', async (value) => {
    const { error, response } = await list(1, { before: value });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ type: 'validation_error', attr: 'before' });
  });
});

// -------------------------------------------------------------------------------------------------
// List: event, distinct_id, person_id; row shape; retrieve; CSV (one project with persons)
// -------------------------------------------------------------------------------------------------

const CHAIN =
  'button.btn.btn-primary:attr__class="btn btn-primary"attr__id="upload-button"attr_id="upload-button"nth-child="2"nth-of-type="1"text="Upload";' +
  'a.nav:attr__class="nav"attr__href="/files"href="/files"nth-child="1"nth-of-type="3";' +
  'div.hero:attr__class="hero"nth-child="1"nth-of-type="1";' +
  'body:nth-child="1"nth-of-type="1"';

const CHAIN_ELEMENTS = [
  {
    event: null,
    text: 'Upload',
    tag_name: 'button',
    attr_class: ['btn', 'btn-primary'],
    href: null,
    attr_id: 'upload-button',
    nth_child: 2,
    nth_of_type: 1,
    attributes: { attr__class: 'btn btn-primary', attr__id: 'upload-button' },
    order: 0,
  },
  {
    event: null,
    text: null,
    tag_name: 'a',
    attr_class: ['nav'],
    href: '/files',
    attr_id: null,
    nth_child: 1,
    nth_of_type: 3,
    attributes: { attr__class: 'nav', attr__href: '/files' },
    order: 1,
  },
  {
    event: null,
    text: null,
    tag_name: 'div',
    attr_class: ['hero'],
    href: null,
    attr_id: null,
    nth_child: 1,
    nth_of_type: 1,
    attributes: { attr__class: 'hero' },
    order: 2,
  },
  {
    event: null,
    text: null,
    tag_name: 'body',
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: 1,
    nth_of_type: 1,
    attributes: {},
    order: 3,
  },
];

describe('GET /api/environments/{project_id}/events/ — event, distinct_id, person_id', () => {
  let pid: number;
  let ev: Record<string, EventInput>;
  let ada: { id: number; uuid: string };

  beforeAll(async () => {
    pid = await project('Events people');
    await persons(pid, [
      {
        distinct_id: 'user@example.com',
        identify: { anon_distinct_id: 'anon-123' },
        set: { email: 'ada@hedgebox.net', name: 'Ada Lovelace', username: 'ada', plan: 'pro' },
      },
      { distinct_id: 'bob', set: { email: 'bob@example.com', plan: 'free' } },
    ]);
    const rows = await seed(pid, [
      {
        name: 'p1',
        distinct_id: 'user@example.com',
        properties: {
          $browser: 'Chrome',
          $current_url: 'https://hedgebox.net/files/',
          count: 3,
          ok: true,
          none: null,
          nested: { a: 1, list: ['x', 'y'] },
        },
        timestamp: ago(50 * MINUTE),
      },
      { name: 'p2', distinct_id: 'anon-123', properties: { $browser: 'Safari' }, timestamp: ago(40 * MINUTE) },
      { name: 'p3', distinct_id: 'bob', properties: { $browser: 'Firefox' }, timestamp: ago(30 * MINUTE) },
      { name: 'p4', distinct_id: 'nobody', timestamp: ago(20 * MINUTE) },
      {
        name: 'p5',
        event: '$autocapture',
        distinct_id: 'user@example.com',
        properties: { $browser: 'Chrome', $event_type: 'click' },
        timestamp: ago(10 * MINUTE),
        elements_chain: CHAIN,
      },
      { name: 'p6', event: 'signed_up', distinct_id: 'bob', properties: { plan: 'free' }, timestamp: ago(5 * MINUTE) },
      { name: 'old', distinct_id: 'bob', timestamp: ago(400 * DAY) },
    ]);
    ev = Object.fromEntries(rows.map((r) => [labels.get(r.uuid) ?? '', r]));
    ada = await personOf(pid, 'user@example.com');
  });

  it('event=$pageview (unencoded) answers only that event name', async () => {
    const res = await listRaw(pid, 'event=$pageview');
    expect(res.status).toBe(200);
    expect(names(((await res.json()) as EventsPage).results)).toEqual(['p4', 'p3', 'p2', 'p1', 'old']);
  });

  it('event through the client, combined with distinct_id', async () => {
    expect(await labelsOf(pid, { event: '$autocapture' })).toEqual(['p5']);
    expect(await labelsOf(pid, { event: 'signed_up', distinct_id: 'bob' })).toEqual(['p6']);
    expect(await labelsOf(pid, { event: '$pageview', distinct_id: 'bob' })).toEqual(['p3', 'old']);
    expect(await labelsOf(pid, { event: 'no_such_event' })).toEqual([]);
  });

  it('event is an exact, case-sensitive match', async () => {
    expect(await labelsOf(pid, { event: '$PAGEVIEW' })).toEqual([]);
    expect(await labelsOf(pid, { event: '$page' })).toEqual([]);
  });

  it('distinct_id is any string (user@example.com), matched exactly', async () => {
    expect(await labelsOf(pid, { distinct_id: 'user@example.com' })).toEqual(['p5', 'p1']);
    const raw = await listRaw(pid, 'distinct_id=user@example.com');
    expect(names(((await raw.json()) as EventsPage).results)).toEqual(['p5', 'p1']);
    expect(await labelsOf(pid, { distinct_id: 'USER@example.com' })).toEqual([]);
    expect(await labelsOf(pid, { distinct_id: 'anon-123' })).toEqual(['p2']);
  });

  it('person_id as the integer id answers the events of all the person’s distinct ids', async () => {
    expect(await labelsOf(pid, { person_id: String(ada.id) })).toEqual(['p5', 'p2', 'p1']);
  });

  it('person_id as the UUID, with dashes, without dashes and in uppercase', async () => {
    expect(await labelsOf(pid, { person_id: ada.uuid })).toEqual(['p5', 'p2', 'p1']);
    expect(await labelsOf(pid, { person_id: ada.uuid.replace(/-/g, '') })).toEqual(['p5', 'p2', 'p1']);
    expect(await labelsOf(pid, { person_id: ada.uuid.toUpperCase() })).toEqual(['p5', 'p2', 'p1']);
  });

  it('person_id combines with the other filters', async () => {
    expect(await labelsOf(pid, { person_id: String(ada.id), event: '$pageview' })).toEqual(['p2', 'p1']);
    const bob = await personOf(pid, 'bob');
    expect(await labelsOf(pid, { person_id: String(bob.id), after: '-1d' })).toEqual(['p6', 'p3']);
  });

  it('an unknown person (integer or UUID) answers an empty page', async () => {
    expect(await listOk(pid, { person_id: '999999' })).toEqual({ next: null, results: [] });
    expect(await listOk(pid, { person_id: randomUUID() })).toEqual({ next: null, results: [] });
    expect(await listOk(pid, { person_id: '99999999999999999999' })).toEqual({ next: null, results: [] });
  });

  it('a person of another project answers an empty page', async () => {
    const other = await project('Events people elsewhere');
    expect(await labelsOf(other, { person_id: String(ada.id) })).toEqual([]);
    expect(await labelsOf(other, { person_id: ada.uuid })).toEqual([]);
  });

  it.each(['abc', '12abc', '1.5', '-1', 'xyz-uuid'])('person_id=%s answers 400 with attr person_id', async (value) => {
    await expect400(await listRaw(pid, `person_id=${encodeURIComponent(value)}`), 'person_id');
  });

  describe('row shape', () => {
    it('properties as an object, timestamps in UTC ending in Z, ids as UUIDs', async () => {
      const page = await listOk(pid, { distinct_id: 'user@example.com', event: '$pageview' });
      const [e] = page.results;
      const p1 = ev.p1!;
      expect(e).toBeDefined();
      expect(e!.id).toBe(p1.uuid);
      expect(e!.id).toMatch(UUID);
      expect(e!.event).toBe('$pageview');
      expect(e!.distinct_id).toBe('user@example.com');
      expect(e!.properties).toEqual(p1.properties);
      expect(e!.timestamp).toMatch(ISO_UTC);
      expect(e!.timestamp.slice(0, 23)).toBe(p1.timestamp.slice(0, 23));
      expect(Date.parse(e!.timestamp)).toBe(Date.parse(p1.timestamp));
      expect(e!.elements).toEqual([]);
      expect(e!.elements_chain).toBe('');
    });

    it('person: {is_identified, distinct_ids: [the event’s distinct id], properties: only email, name, username}', async () => {
      const page = await listOk(pid, { person_id: String(ada.id), include_person: 'true' });
      const byName = Object.fromEntries(page.results.map((e) => [labels.get(e.id), e]));
      const props = { email: 'ada@hedgebox.net', name: 'Ada Lovelace', username: 'ada' };
      expect(byName.p1?.person).toEqual({ is_identified: true, distinct_ids: ['user@example.com'], properties: props });
      expect(byName.p2?.person).toEqual({ is_identified: true, distinct_ids: ['anon-123'], properties: props });
      expect(byName.p5?.person).toEqual({ is_identified: true, distinct_ids: ['user@example.com'], properties: props });
    });

    it('an unidentified person shows is_identified false and only the properties it has', async () => {
      const [e] = (await listOk(pid, { event: '$pageview', distinct_id: 'bob', after: '-1d', include_person: '1' })).results;
      expect(e?.person).toEqual({ is_identified: false, distinct_ids: ['bob'], properties: { email: 'bob@example.com' } });
    });

    it('top-level string properties are stripped of surrounding double quotes', async () => {
      const qp = await project('Events quoted');
      const [row] = await seed(qp, [{ timestamp: ago(MINUTE), properties: { q: '"quoted"', plain: 'say "hi" now', n: 1 } }]);
      const [e] = (await listOk(qp)).results;
      expect(e?.properties).toMatchObject({ q: 'quoted', plain: 'say "hi" now', n: 1 });
      const one = await t.client.GET(EVENT, { params: { path: { project_id: String(qp), id: row!.uuid } } });
      expect((one.data as ClickhouseEvent).properties.q).toBe('quoted');
    });

    it('person is null without include_person (PostHog since 2026), in the list and the retrieve', async () => {
      const page = await listOk(pid, { person_id: String(ada.id) });
      expect(page.results.length).toBeGreaterThan(0);
      for (const e of page.results) expect(e.person).toBeNull();
      for (const flag of ['false', 'yes', '']) {
        const other = await listOk(pid, { person_id: String(ada.id), include_person: flag });
        expect(other.results.map((e) => e.person)).toEqual(page.results.map(() => null));
      }
      const upper = await listOk(pid, { person_id: String(ada.id), include_person: 'TRUE' });
      expect(upper.results.every((e) => e.person !== null)).toBe(true);
      const one = await t.fetch(`/api/environments/${pid}/events/${page.results[0]!.id}/`);
      expect(((await one.json()) as ClickhouseEvent).person).toBeNull();
    });

    it('person is null when the distinct id has no person', async () => {
      const [e] = (await listOk(pid, { distinct_id: 'nobody' })).results;
      expect(e).toBeDefined();
      expect(e!.person).toBeNull();
    });

    it('elements are parsed from elements_chain, the clicked element first', async () => {
      const [e] = (await listOk(pid, { event: '$autocapture' })).results;
      expect(e).toBeDefined();
      expect(e!.elements_chain).toBe(CHAIN);
      expect(e!.elements).toEqual(CHAIN_ELEMENTS);
    });
  });

  describe('format=csv', () => {
    it('answers text/csv with a sorted header, CRLF line endings and flattened columns', async () => {
      const res = await t.fetch(listPath(pid, { format: 'csv', distinct_id: 'user@example.com', include_person: 'true' }));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      const text = await res.text();
      const lines = csvLines(text);
      expect(lines).toHaveLength(3);
      const header = lines[0]!.split(',');
      expect(header).toEqual([...header].sort());
      expect(new Set(header).size).toBe(header.length);
      for (const column of [
        'id',
        'event',
        'distinct_id',
        'timestamp',
        'elements_chain',
        'properties.$browser',
        'properties.$current_url',
        'properties.count',
        'properties.ok',
        'properties.nested.a',
        'properties.nested.list.0',
        'properties.nested.list.1',
        'person.is_identified',
        'person.distinct_ids.0',
        'person.properties.email',
        'person.properties.name',
        'person.properties.username',
        'elements.0.tag_name',
        'elements.0.text',
        'elements.0.attr_class.0',
        'elements.0.attr_class.1',
        'elements.0.attributes.attr__class',
        'elements.1.href',
        'elements.3.tag_name',
      ]) {
        expect(header, column).toContain(column);
      }
      expect(header).not.toContain('next');
      expect(header).not.toContain('results');
      expect(header.some((h) => h.startsWith('results.'))).toBe(false);
      expect(header).not.toContain('properties');
      expect(header).not.toContain('elements');
      expect(header).not.toContain('person.properties.plan');

      const [p5, p1] = csvRecords(text);
      expect(p5).toMatchObject({
        id: ev.p5!.uuid,
        event: '$autocapture',
        distinct_id: 'user@example.com',
        'properties.$browser': 'Chrome',
        'person.properties.email': 'ada@hedgebox.net',
        'person.is_identified': 'true',
        'person.distinct_ids.0': 'user@example.com',
        'elements.0.tag_name': 'button',
        'elements.0.text': 'Upload',
        'elements.0.attr_class.0': 'btn',
        'elements.0.attr_class.1': 'btn-primary',
        'elements.0.nth_child': '2',
        'elements.1.href': '/files',
        'elements.3.tag_name': 'body',
        elements_chain: CHAIN,
        'properties.count': '',
      });
      expect(p5!.timestamp).toMatch(ISO_UTC);
      expect(p1).toMatchObject({
        id: ev.p1!.uuid,
        event: '$pageview',
        'properties.$browser': 'Chrome',
        'properties.count': '3',
        'properties.ok': 'true',
        'properties.nested.a': '1',
        'properties.nested.list.1': 'y',
        'elements.0.tag_name': '',
        elements_chain: '',
      });
      // JSON null is a column with an empty cell
      expect(header).toContain('properties.none');
      expect(p1!['properties.none']).toBe('');
    });

    it('writes a null person as an empty cell and no column for empty objects and arrays', async () => {
      const res = await t.fetch(listPath(pid, { format: 'csv', distinct_id: 'nobody' }));
      expect(res.status).toBe(200);
      const text = await res.text();
      const lines = csvLines(text);
      expect(lines).toHaveLength(2);
      const header = lines[0]!.split(',');
      expect(header).toEqual([...header].sort());
      expect(header.some((h) => h === 'elements' || h.startsWith('elements.'))).toBe(false);
      expect(header.some((h) => h === 'properties' || h.startsWith('properties.'))).toBe(false);
      expect(header.some((h) => h.startsWith('person.'))).toBe(false);
      const [row] = csvRecords(text);
      expect(row).toMatchObject({ id: ev.p4!.uuid, distinct_id: 'nobody', event: '$pageview', elements_chain: '' });
      // a null person is one `person` column with an empty cell
      expect(header).toContain('person');
      expect(row!.person).toBe('');
    });

    it('honours limit and offset, and has no next', async () => {
      const res = await t.fetch(listPath(pid, { format: 'csv', limit: 2, offset: 1 }));
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toMatch(/cursor=|next/);
      const records = csvRecords(text);
      expect(records.map((r) => labels.get(r.id ?? ''))).toEqual(['p5', 'p4']);
    });

    it('an empty page is an empty body', async () => {
      const res = await t.fetch(listPath(pid, { format: 'csv', event: 'no_such_event' }));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(await res.text()).toBe('');
    });
  });

  describe('GET /api/environments/{project_id}/events/{id}/', () => {
    const get = async (projectId: number, id: string, client = t.client, includePerson?: string) => {
      const query = includePerson === undefined ? {} : { include_person: includePerson };
      const { data, error, response } = await client.GET(EVENT, { params: { path: { project_id: String(projectId), id }, query } });
      return { data: data as ClickhouseEvent | undefined, error, response };
    };

    it('answers the event by uuid, with its person (include_person=true) and elements', async () => {
      const p5 = ev.p5!;
      const { data, response } = await get(pid, p5.uuid, t.client, 'true');
      expect(response.status).toBe(200);
      expect(data).toEqual({
        id: p5.uuid,
        distinct_id: 'user@example.com',
        properties: { $browser: 'Chrome', $event_type: 'click' },
        event: '$autocapture',
        timestamp: expect.stringMatching(ISO_UTC),
        person: {
          is_identified: true,
          distinct_ids: ['user@example.com'],
          properties: { email: 'ada@hedgebox.net', name: 'Ada Lovelace', username: 'ada' },
        },
        elements: CHAIN_ELEMENTS,
        elements_chain: CHAIN,
      });
      expect(Date.parse(data!.timestamp)).toBe(Date.parse(p5.timestamp));
    });

    it('answers the same event for the uuid without dashes and in uppercase', async () => {
      const p1 = ev.p1!;
      for (const id of [p1.uuid.replace(/-/g, ''), p1.uuid.toUpperCase(), p1.uuid.replace(/-/g, '').toUpperCase()]) {
        const { data, response } = await get(pid, id);
        expect(response.status, id).toBe(200);
        expect(data?.id).toBe(p1.uuid);
      }
    });

    it('answers an event whatever its age (400 days old)', async () => {
      const { data, response } = await get(pid, ev.old!.uuid);
      expect(response.status).toBe(200);
      expect(data?.id).toBe(ev.old!.uuid);
    });

    it('answers an event in the future (beyond the list’s default bound)', async () => {
      const [future] = await seed(pid, [{ name: 'future', event: 'scheduled', timestamp: at(3 * DAY) }]);
      const { data, response } = await get(pid, future!.uuid);
      expect(response.status).toBe(200);
      expect(data?.event).toBe('scheduled');
      expect(await labelsOf(pid, { event: 'scheduled' })).toEqual([]);
    });

    it('a person-less event has person null', async () => {
      const { data } = await get(pid, ev.p4!.uuid);
      expect(data?.person).toBeNull();
    });

    it.each(['not-a-uuid', '123', '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6', 'zzzzzzzz-4b7e-7c21-8e5f-3a9b1c2d4e6f'])(
      'id %s answers 400 {validation_error, invalid_input, "Invalid UUID", attr id}',
      async (id) => {
        const res = await t.fetch(`/api/environments/${pid}/events/${id}/`);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({ type: 'validation_error', code: 'invalid_input', detail: 'Invalid UUID', attr: 'id' });
      },
    );

    it('an unknown uuid answers 404 "No events exist for event UUID <id>"', async () => {
      const id = randomUUID();
      const { error, response } = await get(pid, id);
      expect(response.status).toBe(404);
      expect(error).toEqual({ type: 'invalid_request', code: 'not_found', detail: `No events exist for event UUID ${id}`, attr: null });
    });

    it('format=csv answers one header line and one row', async () => {
      const p5 = ev.p5!;
      const res = await t.fetch(`/api/environments/${pid}/events/${p5.uuid}/?format=csv&include_person=true`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      const text = await res.text();
      const lines = csvLines(text);
      expect(lines).toHaveLength(2);
      const header = lines[0]!.split(',');
      expect(header).toEqual([...header].sort());
      expect(header).toEqual(expect.arrayContaining(['id', 'properties.$browser', 'person.properties.email', 'elements.0.tag_name']));
      const [row] = csvRecords(text);
      expect(row).toMatchObject({ id: p5.uuid, 'elements.0.tag_name': 'button', 'person.properties.email': 'ada@hedgebox.net' });
    });

    it('without the trailing slash answers the same', async () => {
      const res = await t.fetch(`/api/environments/${pid}/events/${ev.p1!.uuid}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as ClickhouseEvent).id).toBe(ev.p1!.uuid);
    });
  });
});

// -------------------------------------------------------------------------------------------------
// List: property filters
// -------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/ — properties', () => {
  let pid: number;
  const recent = new Date(Date.now() - 2 * HOUR).toISOString();

  beforeAll(async () => {
    pid = await project('Events properties');
    await persons(pid, [
      { distinct_id: 'ada', set: { email: 'ada@hedgebox.net', name: 'Ada' } },
      { distinct_id: 'bob', set: { email: 'bob@example.com', name: 'Bob' } },
      { distinct_id: 'dee', set: { name: 'Dee' } },
    ]);
    await seed(pid, [
      {
        name: 'A',
        distinct_id: 'ada',
        timestamp: ago(5 * MINUTE),
        properties: {
          $browser: 'Chrome',
          $os: 'Mac OS X',
          n: 5,
          s: '10',
          flag: true,
          tags: ['a', 'b'],
          when: '2024-03-10T12:00:00Z',
          nul: null,
          path: "/it's",
          'quo"te': 'yes',
          'back\\slash': 'bs',
          city: 'MÜNCHEN',
        },
      },
      {
        name: 'B',
        distinct_id: 'bob',
        timestamp: ago(4 * MINUTE),
        properties: {
          $browser: 'Firefox',
          $os: 'Windows',
          n: 15,
          s: '9',
          flag: false,
          when: '2024-03-11T08:30:00Z',
          path: '100%_off',
          'dotted.key': 'dot',
          city: 'Zürich',
        },
      },
      {
        name: 'C',
        distinct_id: 'anon-c',
        timestamp: ago(3 * MINUTE),
        properties: { $browser: 'Safari', $os: 'iOS', n: 10.5, s: 'abc', when: '2024-03-10', path: 'C:\\dir\\file' },
      },
      {
        name: 'D',
        distinct_id: 'dee',
        timestamp: ago(2 * MINUTE),
        properties: { $browser: 'Chrome Mobile', $os: 'Android', n: '7', s: '20', when: recent, path: 'x;-- drop table events' },
      },
      { name: 'E', distinct_id: 'anon-e', timestamp: ago(1 * MINUTE), properties: {} },
    ]);
  });

  /** Labels (sorted) of the events matching `properties` (a JSON value). */
  async function match(properties: unknown): Promise<string[]> {
    const { data, error, response } = await list(pid, { properties: JSON.stringify(properties) });
    expect(response.status, JSON.stringify(error)).toBe(200);
    return names((data as EventsPage).results).sort();
  }

  const f = (key: string, operator: string, value?: unknown, type?: string) => ({
    key,
    operator,
    ...(value === undefined ? {} : { value }),
    ...(type ? { type } : {}),
  });

  describe('exact and is_not', () => {
    it.each<[string, unknown, string[]]>([
      ['$browser', 'Chrome', ['A']],
      ['$browser', 'chrome', []],
      ['$browser', ['Chrome', 'Safari'], ['A', 'C']],
      ['n', 5, ['A']],
      ['n', '5', ['A']],
      ['n', 10.5, ['C']],
      ['n', 7, ['D']],
      ['n', [5, 15], ['A', 'B']],
      ['s', '10', ['A']],
      ['s', 10, ['A']],
      ['flag', true, ['A']],
      ['flag', 'true', ['A']],
      ['flag', false, ['B']],
      ['missing', 'x', []],
    ])('exact %s = %j', async (key, value, expected) => {
      expect(await match([f(key, 'exact', value)])).toEqual(expected);
    });

    it('exact is the default operator and event the default type', async () => {
      expect(await match([{ key: '$browser', value: 'Chrome' }])).toEqual(['A']);
    });

    it.each<[string, unknown, string[]]>([
      ['$browser', 'Chrome', ['B', 'C', 'D', 'E']],
      ['$browser', ['Chrome', 'Safari'], ['B', 'D', 'E']],
      ['flag', true, ['B', 'C', 'D', 'E']],
      ['n', 5, ['B', 'C', 'D', 'E']],
    ])('is_not %s %j (a missing property matches)', async (key, value, expected) => {
      expect(await match([f(key, 'is_not', value)])).toEqual(expected);
    });
  });

  describe('icontains, not_icontains, regex, not_regex', () => {
    it('icontains is a case-insensitive substring match', async () => {
      expect(await match([f('$browser', 'icontains', 'chrome')])).toEqual(['A', 'D']);
      expect(await match([f('$browser', 'icontains', 'FIRE')])).toEqual(['B']);
      expect(await match([f('n', 'icontains', '.5')])).toEqual(['C']);
    });

    it('icontains and not_icontains ignore case beyond ASCII (MÜNCHEN contains münchen)', async () => {
      expect(await match([f('city', 'icontains', 'münchen')])).toEqual(['A']);
      expect(await match([f('city', 'icontains', 'ZÜRICH')])).toEqual(['B']);
      expect(await match([f('city', 'not_icontains', 'münchen')])).toEqual(['B', 'C', 'D', 'E']);
    });

    it('not_icontains answers the others, a missing property included', async () => {
      expect(await match([f('$browser', 'not_icontains', 'chrome')])).toEqual(['B', 'C', 'E']);
    });

    it('regex matches the property text', async () => {
      expect(await match([f('$browser', 'regex', '^Chrome( Mobile)?$')])).toEqual(['A', 'D']);
      expect(await match([f('$browser', 'regex', '^S')])).toEqual(['C']);
      expect(await match([f('n', 'regex', '^1')])).toEqual(['B', 'C']);
    });

    it('not_regex answers the others, a missing property included', async () => {
      expect(await match([f('$browser', 'not_regex', '^Chrome')])).toEqual(['B', 'C', 'E']);
    });
  });

  describe('gt, lt, gte, lte', () => {
    it.each<[string, string, unknown, string[]]>([
      ['n', 'gt', 7, ['B', 'C']],
      ['n', 'gte', 7, ['B', 'C', 'D']],
      ['n', 'lt', 7, ['A']],
      ['n', 'lte', 7, ['A', 'D']],
      ['n', 'gt', '6.5', ['B', 'C', 'D']],
      ['n', 'lt', 10.5, ['A', 'D']],
      ['n', 'lte', 10.5, ['A', 'C', 'D']],
      ['n', 'gt', -100, ['A', 'B', 'C', 'D']],
      // numeric strings compare as numbers ('10' > '9'), non-numeric text never matches
      ['s', 'gt', 9, ['A', 'D']],
      ['s', 'lt', 10, ['B']],
      ['s', 'gte', '9', ['A', 'B', 'D']],
      ['s', 'lte', 20, ['A', 'B', 'D']],
    ])('%s %s %j', async (key, op, value, expected) => {
      expect(await match([f(key, op, value)])).toEqual(expected);
    });

    it('a non-numeric value answers 400 with attr properties', async () => {
      const res = await listRaw(pid, `properties=${encodeURIComponent(JSON.stringify([f('n', 'gt', 'abc')]))}`);
      await expect400(res, 'properties');
    });
  });

  describe('is_set, is_not_set', () => {
    it('is_set: the key is present (JSON null counts as set)', async () => {
      expect(await match([f('nul', 'is_set')])).toEqual(['A']);
      expect(await match([f('$browser', 'is_set')])).toEqual(['A', 'B', 'C', 'D']);
      expect(await match([f('flag', 'is_set')])).toEqual(['A', 'B']);
    });

    it('is_not_set: the key is absent', async () => {
      expect(await match([f('nul', 'is_not_set')])).toEqual(['B', 'C', 'D', 'E']);
      expect(await match([f('$browser', 'is_not_set')])).toEqual(['E']);
    });

    it('ignores a value given with is_set / is_not_set', async () => {
      expect(await match([f('nul', 'is_set', 'whatever')])).toEqual(['A']);
    });
  });

  describe('is_date_exact, is_date_after, is_date_before', () => {
    it.each<[string, string, string[]]>([
      ['is_date_exact', '2024-03-10', ['A', 'C']],
      ['is_date_exact', '2024-03-11', ['B']],
      ['is_date_exact', '2024-03-10T12:00:00Z', ['A']],
      ['is_date_exact', '2024-03-12', []],
      ['is_date_after', '2024-03-10', ['A', 'B', 'D']],
      ['is_date_after', '2024-03-10T12:00:00Z', ['B', 'D']],
      ['is_date_before', '2024-03-11', ['A', 'C']],
      ['is_date_before', '2024-03-10T12:00:00Z', ['C']],
      ['is_date_after', '-1d', ['D']],
      ['is_date_before', '-1d', ['A', 'B', 'C']],
      ['is_date_after', '-1h', []],
      ['is_date_before', '-1h', ['A', 'B', 'C', 'D']],
    ])('%s %s', async (op, value, expected) => {
      expect(await match([f('when', op, value)])).toEqual(expected);
    });

    it('a unix timestamp in seconds (a number or its text) reads as that instant, as PostHog’s parseDateTimeBestEffort reads it (test_event.py)', async () => {
      const up = await project('Events unix dates');
      await seed(up, [
        { name: 'U1', timestamp: ago(MINUTE), properties: { paid_at: 1_700_000_000 } }, // 2023-11-14T22:13:20Z
        { name: 'U2', timestamp: ago(MINUTE), properties: { paid_at: '1710000000.5' } }, // 2024-03-09T16:00:00.5Z
        { name: 'U3', timestamp: ago(MINUTE), properties: { paid_at: 42 } },
      ]);
      const unix = async (properties: unknown) => {
        const { data, error, response } = await list(up, { properties: JSON.stringify(properties) });
        expect(response.status, JSON.stringify(error)).toBe(200);
        return names((data as EventsPage).results).sort();
      };
      expect(await unix([f('paid_at', 'is_date_after', '2023-11-01')])).toEqual(['U1', 'U2']);
      expect(await unix([f('paid_at', 'is_date_after', '2024-01-01')])).toEqual(['U2']);
      expect(await unix([f('paid_at', 'is_date_before', '2023-11-15')])).toEqual(['U1']);
      expect(await unix([f('paid_at', 'is_date_exact', '2023-11-14')])).toEqual(['U1']);
    });

    it('a property that is not a date never matches', async () => {
      expect(await match([f('$browser', 'is_date_after', '2000-01-01')])).toEqual([]);
      expect(await match([f('$browser', 'is_date_before', '2100-01-01')])).toEqual([]);
    });

    it('an unreadable date value answers 400 with attr properties', async () => {
      await expect400(
        await listRaw(pid, `properties=${encodeURIComponent(JSON.stringify([f('when', 'is_date_after', 'last tuesday')]))}`),
        'properties',
      );
    });
  });

  describe('person properties', () => {
    it('type person filters on the properties of the event’s person', async () => {
      expect(await match([f('email', 'icontains', 'HEDGEBOX', 'person')])).toEqual(['A']);
      expect(await match([f('email', 'exact', 'bob@example.com', 'person')])).toEqual(['B']);
      expect(await match([f('name', 'exact', ['Ada', 'Dee'], 'person')])).toEqual(['A', 'D']);
    });

    it('is_set / is_not_set / not_icontains on person properties (no person counts as not set)', async () => {
      expect(await match([f('email', 'is_set', undefined, 'person')])).toEqual(['A', 'B']);
      expect(await match([f('email', 'is_not_set', undefined, 'person')])).toEqual(['C', 'D', 'E']);
      expect(await match([f('email', 'not_icontains', 'hedgebox', 'person')])).toEqual(['B', 'C', 'D', 'E']);
    });

    it('event and person filters combine', async () => {
      expect(await match([f('$browser', 'icontains', 'chrome'), f('name', 'exact', 'Dee', 'person')])).toEqual(['D']);
      // an event property of the same name is not a person property
      expect(await match([f('email', 'is_set')])).toEqual([]);
    });
  });

  describe('groups', () => {
    it('a flat array means AND', async () => {
      expect(await match([f('$browser', 'icontains', 'chrome'), f('$os', 'exact', 'Mac OS X')])).toEqual(['A']);
    });

    it('an AND group', async () => {
      expect(await match({ type: 'AND', values: [f('$browser', 'icontains', 'chrome'), f('n', 'gt', 6)] })).toEqual(['D']);
    });

    it('an OR group', async () => {
      expect(await match({ type: 'OR', values: [f('$browser', 'exact', ['Safari', 'Firefox']), f('$os', 'exact', 'iOS')] })).toEqual([
        'B',
        'C',
      ]);
    });

    it('nested groups: OR of ANDs', async () => {
      expect(
        await match({
          type: 'OR',
          values: [
            { type: 'AND', values: [f('$browser', 'icontains', 'chrome'), f('n', 'gt', 6)] },
            { type: 'AND', values: [f('$os', 'exact', 'iOS'), f('flag', 'is_not_set')] },
          ],
        }),
      ).toEqual(['C', 'D']);
    });

    it('nested groups: AND of ORs, with person filters inside', async () => {
      expect(
        await match({
          type: 'AND',
          values: [
            { type: 'OR', values: [f('email', 'icontains', 'example', 'person'), f('email', 'icontains', 'hedgebox', 'person')] },
            { type: 'OR', values: [f('n', 'lt', 6), f('flag', 'exact', false)] },
          ],
        }),
      ).toEqual(['A', 'B']);
    });

    it('an empty array or empty group filters nothing', async () => {
      expect(await match([])).toEqual(['A', 'B', 'C', 'D', 'E']);
      expect(await match({ type: 'AND', values: [] })).toEqual(['A', 'B', 'C', 'D', 'E']);
    });

    it('properties combine with event and the other filters', async () => {
      expect(await labelsOf(pid, { properties: JSON.stringify([f('$browser', 'is_set')]), distinct_id: 'bob' })).toEqual(['B']);
    });
  });

  describe('keys and values with special characters', () => {
    it('keys with $ and with " work', async () => {
      expect(await match([f('quo"te', 'exact', 'yes')])).toEqual(['A']);
      expect(await match([f('quo"te', 'is_set')])).toEqual(['A']);
      expect(await match([f('quo"te', 'is_not_set')])).toEqual(['B', 'C', 'D', 'E']);
      expect(await match([f('back\\slash', 'exact', 'bs')])).toEqual(['A']);
      expect(await match([f('dotted.key', 'exact', 'dot')])).toEqual(['B']);
      expect(await match([f('$os', 'icontains', 'WIN')])).toEqual(['B']);
    });

    it.each<[string, unknown, string[]]>([
      ['exact', "/it's", ['A']],
      ['icontains', "'", ['A']],
      ['icontains', '%', ['B']],
      ['icontains', '_', ['B']],
      ['icontains', '%_', ['B']],
      ['exact', '100%_off', ['B']],
      ['exact', '100%', []],
      ['exact', '100__off', []],
      ['icontains', '\\', ['C']],
      ['icontains', '\\d', ['C']],
      ['exact', 'C:\\dir\\file', ['C']],
      ['icontains', ';--', ['D']],
      ['exact', 'x;-- drop table events', ['D']],
      ['exact', "' OR '1'='1", []],
      ['icontains', "'; DROP TABLE events; --", []],
      ['not_icontains', '%', ['A', 'C', 'D', 'E']],
      ['regex', '\\\\dir', ['C']],
      ['regex', "^/it's$", ['A']],
    ])('path %s %j is matched literally', async (op, value, expected) => {
      expect(await match([f('path', op, value)])).toEqual(expected);
    });

    it('the events are all still there after the injection attempts', async () => {
      expect(await match([])).toEqual(['A', 'B', 'C', 'D', 'E']);
    });

    it('properties sent unencoded in the query string', async () => {
      const res = await listRaw(pid, 'properties=[{"key":"$browser","value":"Chrome","operator":"exact","type":"event"}]');
      expect(res.status).toBe(200);
      expect(names(((await res.json()) as EventsPage).results)).toEqual(['A']);
    });
  });

  describe('errors', () => {
    it.each(['[{', 'not json', '{"key":', '[{"key":"a",}]'])(
      'invalid JSON %j answers 400 "Properties are unparsable!" (attr null, as PostHog)',
      async (raw) => {
        const res = await listRaw(pid, `properties=${encodeURIComponent(raw)}`);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({
          type: 'validation_error',
          code: 'invalid_input',
          detail: 'Properties are unparsable!',
          attr: null,
        });
      },
    );

    it.each<[string, unknown]>([
      ['an unknown operator', [{ key: '$browser', value: 'Chrome', operator: 'contains_maybe' }]],
      ['type cohort', [{ key: 'id', value: 3, type: 'cohort' }]],
      ['type element', [{ key: 'tag_name', value: 'a', type: 'element' }]],
      ['a missing key', [{ value: 'Chrome' }]],
      ['an empty key', [{ key: '', value: 'Chrome' }]],
      ['a missing value', [{ key: '$browser', operator: 'exact' }]],
      ['a bad regex', [{ key: '$browser', value: '(unclosed', operator: 'regex' }]],
      ['a bad not_regex', [{ key: '$browser', value: '[a-', operator: 'not_regex' }]],
      ['an object value', [{ key: '$browser', value: { a: 1 } }]],
      ['a JSON string', 'Chrome'],
      ['a JSON number', 42],
      ['a list of strings', ['Chrome']],
      ['a group with non-list values', { type: 'OR', values: 'x' }],
    ])('%s answers 400 with attr properties', async (_what, value) => {
      await expect400(await listRaw(pid, `properties=${encodeURIComponent(JSON.stringify(value))}`), 'properties');
    });
  });
});

// -------------------------------------------------------------------------------------------------
// Pagination
// -------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/ — pagination', () => {
  let pid: number;
  let expected: string[];
  const TIE = 10_000;

  beforeAll(async () => {
    pid = await project('Events 10k');
    const ts = ago(HOUR);
    const older = ago(HOUR + 1000);
    const seeds: SeedEvent[] = [];
    for (let i = 0; i < TIE; i += 1) seeds.push({ timestamp: ts, distinct_id: `d${i % 37}`, properties: { batch: 'big', i } });
    for (let i = 0; i < 5; i += 1) seeds.push({ timestamp: older, distinct_id: 'old', properties: { batch: 'big', i: TIE + i } });
    const rows = await seed(pid, seeds);
    expected = newestFirst(rows).map((r) => r.uuid);
  });

  it(`${TIE} events sharing one timestamp, paged with limit 7 by following next: each exactly once, in order`, async () => {
    const seen: string[] = [];
    let pages = 0;
    let url: string | null = `${t.url}${listPath(pid, { limit: 7 })}`;
    while (url) {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${t.boot.key}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as EventsPage;
      pages += 1;
      expect(page.results.length).toBeLessThanOrEqual(7);
      if (page.next) expect(page.results).toHaveLength(7);
      for (const e of page.results) seen.push(e.id);
      url = page.next;
    }
    expect(seen).toHaveLength(TIE + 5);
    expect(new Set(seen).size).toBe(TIE + 5);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil((TIE + 5) / 7));
  }, 120_000); // ~1,430 sequential pages: a hang guard sized for a loaded machine, not a speed check

  it('a limit above 10,000 is clamped to 10,000; next then holds the rest', async () => {
    const first = await listOk(pid, { limit: 50_000 });
    expect(first.results).toHaveLength(10_000);
    expect(first.next).toEqual(expect.any(String));
    expect(new URL(first.next!).searchParams.get('limit')).toBe('50000');
    const res = await fetch(first.next!, { headers: { Authorization: `Bearer ${t.boot.key}` } });
    const second = (await res.json()) as EventsPage;
    expect(second.next).toBeNull();
    expect([...first.results, ...second.results].map((e) => e.id)).toEqual(expected);
  });

  it('next is an absolute URL of the same path that keeps every other parameter and drops offset', async () => {
    const properties = JSON.stringify([{ key: 'batch', value: 'big', operator: 'exact', type: 'event' }]);
    const page = await listOk(pid, { event: '$pageview', properties, limit: 7, offset: 3, after: '-1y', where: '["1 = 1"]' } as ListQuery);
    expect(page.results.map((e) => e.id)).toEqual(expected.slice(3, 10));
    expect(page.next).toEqual(expect.any(String));
    const next = new URL(page.next!);
    expect(`${next.protocol}//${next.host}`).toBe(t.url);
    expect(next.pathname).toBe(`/api/environments/${pid}/events/`);
    expect(next.searchParams.get('event')).toBe('$pageview');
    expect(next.searchParams.get('properties')).toBe(properties);
    expect(next.searchParams.get('limit')).toBe('7');
    expect(next.searchParams.get('after')).toBe('-1y');
    expect(next.searchParams.get('where')).toBe('["1 = 1"]');
    expect(next.searchParams.has('offset')).toBe(false);
    expect(next.searchParams.getAll('cursor')).toHaveLength(1);

    // following next continues right after the first page: no skip, no repeat
    const res = await fetch(page.next!, { headers: { Authorization: `Bearer ${t.boot.key}` } });
    expect(res.status).toBe(200);
    const second = (await res.json()) as EventsPage;
    expect(second.results.map((e) => e.id)).toEqual(expected.slice(10, 17));
    const again = new URL(second.next!);
    expect(again.searchParams.getAll('cursor')).toHaveLength(1);
    expect(again.searchParams.get('cursor')).not.toBe(next.searchParams.get('cursor'));
    expect(again.searchParams.has('offset')).toBe(false);
  });

  it('next of a filtered list keeps the filter on every page', async () => {
    const properties = JSON.stringify([{ key: 'i', value: 9_990, operator: 'gte' }]);
    const seen: ClickhouseEvent[] = [];
    let page = await listOk(pid, { properties, limit: 4 });
    for (;;) {
      seen.push(...page.results);
      if (!page.next) break;
      page = (await (await fetch(page.next, { headers: { Authorization: `Bearer ${t.boot.key}` } })).json()) as EventsPage;
    }
    expect(seen.map((e) => e.properties.i).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 15 }, (_, k) => 9_990 + k));
  });

  it.each([
    ['garbage', 'garbage'],
    ['not base64url', '!!!***'],
    ['base64url of text', Buffer.from('hello').toString('base64url')],
    ['a timestamp without uuid', Buffer.from('2024-11-20T14:03:10.871000Z').toString('base64url')],
    ['a bad uuid', Buffer.from('2024-11-20T14:03:10.871000Z|not-a-uuid').toString('base64url')],
    ['a bad timestamp', Buffer.from(`yesterday|${randomUUID()}`).toString('base64url')],
    ['three parts', Buffer.from(`2024-11-20T14:03:10.871000Z|${randomUUID()}|x`).toString('base64url')],
  ])('a forged cursor (%s) answers 400 with attr cursor', async (_what, cursor) => {
    await expect400(await listRaw(pid, `cursor=${encodeURIComponent(cursor)}`), 'cursor');
  });

  describe('on a small project', () => {
    let sp: number;
    let rows: EventInput[];

    beforeAll(async () => {
      sp = await project('Events small pages');
      const ts = ago(30 * MINUTE);
      const seeds: SeedEvent[] = [];
      for (let i = 0; i < 30; i += 1)
        seeds.push({ timestamp: i < 20 ? ts : ago(40 * MINUTE + i * 1000), event: i % 3 === 0 ? 'signed_up' : '$pageview' });
      rows = await seed(sp, seeds);
    });

    it('paging with offset (limit 7, offsets 0, 7, 14, …) also answers each event exactly once', async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < 40; offset += 7) seen.push(...(await listOk(sp, { limit: 7, offset })).results.map((e) => e.id));
      expect(seen).toEqual(newestFirst(rows).map((r) => r.uuid));
    });

    it('first page with offset, then following next: continues without skipping to the end', async () => {
      const first = await listOk(sp, { limit: 4, offset: 6 });
      const seen = first.results.map((e) => e.id);
      let next = first.next;
      while (next) {
        const page = (await (await fetch(next, { headers: { Authorization: `Bearer ${t.boot.key}` } })).json()) as EventsPage;
        seen.push(...page.results.map((e) => e.id));
        next = page.next;
      }
      expect(seen).toEqual(
        newestFirst(rows)
          .slice(6)
          .map((r) => r.uuid),
      );
    });

    it('offset given with a cursor skips events after the cursor', async () => {
      const first = await listOk(sp, { limit: 4 });
      const res = await fetch(`${first.next!}&offset=2`, { headers: { Authorization: `Bearer ${t.boot.key}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as EventsPage;
      expect(page.results.map((e) => e.id)).toEqual(
        newestFirst(rows)
          .slice(6, 10)
          .map((r) => r.uuid),
      );
    });

    it('next with event=$pageview sent unencoded keeps the filter', async () => {
      const res = await listRaw(sp, 'event=$pageview&limit=5');
      const first = (await res.json()) as EventsPage;
      const seen = first.results.map((e) => e.id);
      let next = first.next;
      while (next) {
        expect(new URL(next).searchParams.get('event')).toBe('$pageview');
        const page = (await (await fetch(next, { headers: { Authorization: `Bearer ${t.boot.key}` } })).json()) as EventsPage;
        seen.push(...page.results.map((e) => e.id));
        next = page.next;
      }
      expect(seen).toEqual(newestFirst(rows.filter((r) => r.event === '$pageview')).map((r) => r.uuid));
    });

    it('events captured after the first page (newer) do not shift the following pages', async () => {
      const p = await project('Events live pages');
      const base = await seed(
        p,
        Array.from({ length: 10 }, () => ({ timestamp: ago(20 * MINUTE) })),
      );
      const first = await listOk(p, { limit: 4 });
      await seed(
        p,
        Array.from({ length: 3 }, () => ({ timestamp: ago(MINUTE) })),
      );
      const seen = first.results.map((e) => e.id);
      let next = first.next;
      while (next) {
        const page = (await (await fetch(next, { headers: { Authorization: `Bearer ${t.boot.key}` } })).json()) as EventsPage;
        seen.push(...page.results.map((e) => e.id));
        next = page.next;
      }
      expect(seen).toEqual(newestFirst(base).map((r) => r.uuid));
    });

    it('the client’s paginate() follows next to the end', async () => {
      const first = await listOk(sp, { limit: 3 });
      const ids: string[] = [];
      for await (const e of paginate(t.client, first)) ids.push(e.id);
      expect(ids).toEqual(newestFirst(rows).map((r) => r.uuid));
    });
  });
});

// -------------------------------------------------------------------------------------------------
// Values
// -------------------------------------------------------------------------------------------------

describe('GET /api/environments/{project_id}/events/values/', () => {
  let pid: number;

  const values = (projectId: number, query: ValuesQuery, client = t.client) =>
    client.GET(VALUES, { params: { path: { project_id: String(projectId) }, query } });

  async function valueNames(query: ValuesQuery, projectId = pid): Promise<string[]> {
    const { data, error, response } = await values(projectId, query);
    expect(response.status, JSON.stringify(error)).toBe(200);
    return ((data ?? []) as { name: string }[]).map((v) => v.name);
  }

  beforeAll(async () => {
    pid = await project('Events values');
    const seeds: SeedEvent[] = [];
    const add = (n: number, event: string, properties: Record<string, unknown>, msAgo = HOUR, distinct_id = 'u1') => {
      for (let i = 0; i < n; i += 1) seeds.push({ event, properties, timestamp: ago(msAgo + i * 1000), distinct_id });
    };
    add(6, '$pageview', { $browser: 'Chrome' });
    add(5, '$pageview', { $browser: 'Safari' }, HOUR, 'u2');
    add(4, '$pageview', { $browser: 'Firefox' }, 2 * DAY, 'u3');
    add(3, '$pageview', { $browser: 'Microsoft Edge' }, 6 * DAY);
    for (let i = 1; i <= 12; i += 1) add(1, '$pageview', { $browser: `Rare${String(i).padStart(2, '0')}` });
    add(2, '$pageview', { $browser: null });
    add(20, '$pageview', { $browser: 'Ancient', tags: ['zzz'] }, 8 * DAY + HOUR);
    add(2, '$autocapture', { $browser: 'AutoOnly' });
    add(2, 'signed_up', { $browser: 'SignupOnly', plan: 'pro' }, HOUR, 'u4');
    add(1, 'upgraded_plan', { plan: 'enterprise', seats: 42, trial: true });
    add(1, 'added_file', { tags: ['a', 'b'] });
    add(1, 'added_file', { tags: ['b', 'c'] });
    add(1, 'added_file', { city: 'Zürich' });
    add(1, 'ancient_event', {}, 8 * DAY + HOUR);
    await seed(pid, seeds);
  });

  it('answers the values of a property, most frequent first, at most 10', async () => {
    const res = await t.fetch(`/api/environments/${pid}/events/values/?key=$browser`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('max-age=10');
    const body = (await res.json()) as { name: string }[];
    expect(body).toHaveLength(10);
    expect(body.slice(0, 4)).toEqual([{ name: 'Chrome' }, { name: 'Safari' }, { name: 'Firefox' }, { name: 'Microsoft Edge' }]);
    for (const v of body) expect(Object.keys(v)).toEqual(['name']);
  });

  it('properties_<key> filters the events the values come from: a JSON array is any of them, several all hold, booleans in any case (PostHog’s test_event.py)', async () => {
    const names = async (qs: string): Promise<string[]> => {
      const res = await t.fetch(`/api/environments/${pid}/events/values/?${qs}`);
      expect(res.status, qs).toBe(200);
      return ((await res.json()) as { name: string }[]).map((v) => v.name);
    };
    expect(await names('key=$browser&properties_plan=pro')).toEqual(['SignupOnly']);
    expect(await names(`key=plan&properties_plan=${encodeURIComponent('["pro","enterprise"]')}`)).toEqual(['pro', 'enterprise']);
    expect(await names('key=plan&properties_plan=enterprise&properties_seats=42')).toEqual(['enterprise']);
    expect(await names('key=plan&properties_plan=enterprise&properties_seats=43')).toEqual([]);
    expect(await names('key=plan&properties_trial=True')).toEqual(['enterprise']);
    expect(await names('key=plan&properties_trial=false')).toEqual([]);
  });

  it('keeps the key order of the JSON sent, at every depth, in values and in the events (PostHog’s test_event.py; jsonb sorted them)', async () => {
    const own = await project('Events key order');
    await seed(own, [
      {
        event: 'profile',
        properties: { random_prop: { first_name: 'Mary', last_name: 'Smith' }, zeta: 1, ab: { z: [1, { y: 2, b: 3 }], a: true } },
        timestamp: ago(HOUR),
        distinct_id: 'u1',
      },
    ]);
    const res = await t.fetch(`/api/environments/${own}/events/values/?key=random_prop`);
    expect(await res.json()).toEqual([{ name: '{"first_name":"Mary","last_name":"Smith"}' }]);
    const list = await t.fetch(`/api/environments/${own}/events/`);
    const text = await list.text();
    // the properties as sent, key for key (JSON.parse keeps the order it reads)
    const props = (JSON.parse(text) as { results: { properties: Record<string, unknown> }[] }).results[0]!.properties;
    expect(JSON.stringify(props)).toBe(
      '{"random_prop":{"first_name":"Mary","last_name":"Smith"},"zeta":1,"ab":{"z":[1,{"y":2,"b":3}],"a":true}}',
    );
  });

  it('only looks at the last 7 days (an event 8 days ago is not counted)', async () => {
    const all = await valueNames({ key: '$browser', value: 'anc' });
    expect(all).toEqual([]);
    expect(await valueNames({ key: 'tags', value: 'zzz' })).toEqual([]);
  });

  it('value keeps values containing it, case-insensitively, shortest first', async () => {
    expect(await valueNames({ key: '$browser', value: 'FIRE' })).toEqual(['Firefox']);
    const withR = await valueNames({ key: '$browser', value: 'r' });
    expect(withR.length).toBeGreaterThan(0);
    expect(withR.length).toBeLessThanOrEqual(10);
    for (const v of withR) expect(v.toLowerCase()).toContain('r');
    const lengths = withR.map((v) => v.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
  });

  it('value ignores case beyond ASCII (ZÜR finds Zürich)', async () => {
    expect(await valueNames({ key: 'city', value: 'zür' })).toEqual(['Zürich']);
    expect(await valueNames({ key: 'city', value: 'ZÜR' })).toEqual(['Zürich']);
  });

  it('value matches % and _ literally', async () => {
    expect(await valueNames({ key: '$browser', value: '%' })).toEqual([]);
    expect(await valueNames({ key: '$browser', value: '_' })).toEqual([]);
  });

  it('leaves null values out (2 events with $browser null would rank fifth)', async () => {
    const all = await valueNames({ key: '$browser' });
    expect(all).not.toContain('null');
    expect(all).not.toContain('');
    expect(all.slice(0, 6)).toEqual(['Chrome', 'Safari', 'Firefox', 'Microsoft Edge', 'AutoOnly', 'SignupOnly']);
    expect(await valueNames({ key: '$browser', value: 'null' })).toEqual([]);
  });

  it('event_name keeps only events of those names (repeatable, unencoded)', async () => {
    expect(await valueNames({ key: '$browser', event_name: ['$autocapture'] })).toEqual(['AutoOnly']);
    expect((await valueNames({ key: '$browser', event_name: ['$autocapture', 'signed_up'] })).sort()).toEqual(['AutoOnly', 'SignupOnly']);
    const res = await t.fetch(`/api/environments/${pid}/events/values/?key=$browser&event_name=$autocapture&event_name=signed_up`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }[]).map((v) => v.name).sort()).toEqual(['AutoOnly', 'SignupOnly']);
    const pageviews = await valueNames({ key: '$browser', event_name: ['$pageview'] });
    expect(pageviews).not.toContain('AutoOnly');
    expect(pageviews).not.toContain('SignupOnly');
  });

  it('is_column=true with key event answers event names', async () => {
    const names_ = await valueNames({ key: 'event', is_column: true });
    expect(names_[0]).toBe('$pageview');
    expect([...names_].sort()).toEqual(['$autocapture', '$pageview', 'added_file', 'signed_up', 'upgraded_plan']);
  });

  it('is_column=true with key distinct_id answers distinct ids', async () => {
    const ids = await valueNames({ key: 'distinct_id', is_column: true });
    expect([...ids].sort()).toEqual(['u1', 'u2', 'u3', 'u4']);
    expect(ids[0]).toBe('u1');
    expect(await valueNames({ key: 'distinct_id', is_column: true, value: 'U4' })).toEqual(['u4']);
  });

  it('is_column=true with key person_id answers the uuids of the events’ persons, most events first (PostHog’s test_event.py)', async () => {
    await persons(pid, [
      { distinct_id: 'u1', set: { email: 'u1@example.com' } },
      { distinct_id: 'u2', set: { email: 'u2@example.com' } },
    ]);
    const [u1, u2] = [await personOf(pid, 'u1'), await personOf(pid, 'u2')];
    // u1 has the most events in the window, u2 the next; u3 and u4 have no person
    expect(await valueNames({ key: 'person_id', is_column: true })).toEqual([u1.uuid, u2.uuid]);
    expect(await valueNames({ key: 'person_id', is_column: true, value: u2.uuid.slice(0, 8).toUpperCase() })).toEqual([u2.uuid]);
  });

  it('without is_column, key event is a property (none here)', async () => {
    expect(await valueNames({ key: 'event' })).toEqual([]);
  });

  it.each(['timestamp', 'properties', 'uuid', 'team_id', '$browser'])(
    'is_column=true with key %s answers 400 with attr key',
    async (key) => {
      const res = await t.fetch(`/api/environments/${pid}/events/values/?key=${encodeURIComponent(key)}&is_column=true`);
      await expect400(res, 'key');
    },
  );

  it('key=custom_event answers the names of non-$ events of the window, in name order', async () => {
    expect(await valueNames({ key: 'custom_event' })).toEqual(['added_file', 'signed_up', 'upgraded_plan']);
  });

  it('numbers and booleans answer as their JSON text', async () => {
    expect(await valueNames({ key: 'seats' })).toEqual(['42']);
    expect(await valueNames({ key: 'trial' })).toEqual(['true']);
    expect((await valueNames({ key: 'plan' })).sort()).toEqual(['enterprise', 'pro']);
  });

  it('array-valued properties contribute each element', async () => {
    expect((await valueNames({ key: 'tags' })).sort()).toEqual(['a', 'b', 'c']);
  });

  it('an unknown key answers an empty list', async () => {
    const res = await t.fetch(`/api/environments/${pid}/events/values/?key=no_such_property`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('max-age=10');
    expect(await res.json()).toEqual([]);
  });

  it('format=csv answers text/csv with one name column', async () => {
    const res = await t.fetch(`/api/environments/${pid}/events/values/?key=$browser&value=fox&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('cache-control')).toBe('max-age=10');
    expect(await res.text()).toBe('name\r\nFirefox\r\n');
  });

  it('without key answers 400 "You must provide a key" (code required, attr key)', async () => {
    const { error, response } = await values(pid, {} as { key: string });
    expect(response.status).toBe(400);
    expect(error).toEqual({ type: 'validation_error', code: 'required', detail: 'You must provide a key', attr: 'key' });
  });

  it('an empty key answers 400 with attr key', async () => {
    await expect400(await t.fetch(`/api/environments/${pid}/events/values/?key=`), 'key');
  });
});

// -------------------------------------------------------------------------------------------------
// Isolation and access
// -------------------------------------------------------------------------------------------------

describe('events — isolation between projects and organizations, scopes', () => {
  let secret: EventInput;
  let sibling: number;

  beforeAll(async () => {
    [secret] = (await seed(1, [
      {
        name: 'secret',
        event: 'secret_event',
        distinct_id: 'secret-user',
        properties: { $browser: 'SecretBrowser' },
        timestamp: ago(10 * MINUTE),
      },
    ])) as [EventInput];
    await persons(1, [{ distinct_id: 'secret-user', set: { email: 'secret@example.com' } }]);
    sibling = await project('Events sibling');
    await seed(sibling, [
      { name: 'sibling', event: 'sibling_event', properties: { $browser: 'SiblingBrowser' }, timestamp: ago(5 * MINUTE) },
    ]);
  });

  it('project 1 answers its own event', async () => {
    expect(await labelsOf(1, { event: 'secret_event' })).toEqual(['secret']);
    const { response } = await t.client.GET(EVENT, { params: { path: { project_id: '1', id: secret.uuid } } });
    expect(response.status).toBe(200);
  });

  it('another project of the same organization does not show project 1’s events', async () => {
    expect(await labelsOf(sibling)).toEqual(['sibling']);
    expect(await labelsOf(sibling, { distinct_id: 'secret-user' })).toEqual([]);
    const person = await personOf(1, 'secret-user');
    expect(await labelsOf(sibling, { person_id: String(person.id) })).toEqual([]);
    const { error, response } = await t.client.GET(EVENT, { params: { path: { project_id: String(sibling), id: secret.uuid } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ code: 'not_found', detail: `No events exist for event UUID ${secret.uuid}` });
    const { data } = await t.client.GET(VALUES, { params: { path: { project_id: String(sibling) }, query: { key: '$browser' } } });
    expect(data).toEqual([{ name: 'SiblingBrowser' }]);
    const custom = await t.client.GET(VALUES, { params: { path: { project_id: String(sibling) }, query: { key: 'custom_event' } } });
    expect(custom.data).toEqual([{ name: 'sibling_event' }]);
    // and project 1 does not show the sibling's
    expect(await labelsOf(1, { event: 'sibling_event' })).toEqual([]);
  });

  it('another organization’s key sees none of project 1’s events in its own project', async () => {
    const other = await t.otherOrganization();
    const client = t.clientFor(other.key);
    const { data, response } = await list(other.team.id, {}, client);
    expect(response.status).toBe(200);
    expect(data).toEqual({ next: null, results: [] });
    const one = await client.GET(EVENT, { params: { path: { project_id: String(other.team.id), id: secret.uuid } } });
    expect(one.response.status).toBe(404);
    const vals = await client.GET(VALUES, { params: { path: { project_id: String(other.team.id) }, query: { key: '$browser' } } });
    expect(vals.response.status).toBe(200);
    expect(vals.data).toEqual([]);
    const custom = await client.GET(VALUES, { params: { path: { project_id: String(other.team.id) }, query: { key: 'custom_event' } } });
    expect(custom.data).toEqual([]);
  });

  it('another organization’s key on project 1 answers 403', async () => {
    const other = await t.otherOrganization();
    const expected: Partial<ErrorBody> = { type: 'authentication_error', code: 'permission_denied', attr: null };
    await expectError(await t.fetch('/api/environments/1/events/', { key: other.key }), 403, expected);
    await expectError(await t.fetch(`/api/environments/1/events/${secret.uuid}/`, { key: other.key }), 403, expected);
    await expectError(await t.fetch('/api/environments/1/events/values/?key=$browser', { key: other.key }), 403, expected);
  });

  it('a key limited to another project answers 403 on project 1', async () => {
    const key = await t.key(['query:read'], { projects: [sibling] });
    const expected: ErrorBody = projectNotAllowed(1);
    await expectError(await t.fetch('/api/environments/1/events/', { key }), 403, expected);
    await expectError(await t.fetch(`/api/environments/1/events/${secret.uuid}/`, { key }), 403, expected);
    await expectError(await t.fetch('/api/environments/1/events/values/?key=$browser', { key }), 403, expected);
    // and it reaches its own project
    expect((await t.fetch(`/api/environments/${sibling}/events/`, { key })).status).toBe(200);
  });

  it('a key without query:read (plugin:read) answers 403 on all three operations', async () => {
    const key = await t.key(['plugin:read']);
    await expectError(await t.fetch('/api/environments/1/events/', { key }), 403, missingScope('query:read'));
    await expectError(await t.fetch(`/api/environments/1/events/${secret.uuid}/`, { key }), 403, missingScope('query:read'));
    await expectError(await t.fetch('/api/environments/1/events/values/?key=$browser', { key }), 403, missingScope('query:read'));
  });

  it('a key with query:read reaches all three operations', async () => {
    const key = await t.key(['query:read']);
    expect((await t.fetch('/api/environments/1/events/?event=secret_event', { key })).status).toBe(200);
    expect((await t.fetch(`/api/environments/1/events/${secret.uuid}/`, { key })).status).toBe(200);
    expect((await t.fetch('/api/environments/1/events/values/?key=$browser', { key })).status).toBe(200);
  });

  it('without a key answers 401', async () => {
    await expectError(await t.fetch('/api/environments/1/events/', { key: null }), 401, {
      type: 'authentication_error',
      code: 'not_authenticated',
    });
  });

  it('an unknown project answers 404 "Project not found."', async () => {
    await expectError(await t.fetch('/api/environments/99999/events/'), 404, { code: 'not_found', detail: 'Project not found.' });
  });
});

describe('GET /api/environments/{project_id}/events/ — production mode (the page is sent as the bytes it was built as)', () => {
  it('answers the same UTF-8 JSON as the validated development server, non-ASCII text included', async () => {
    const prod = await startTestServer({ validateResponses: false });
    try {
      const inputs: EventInput[] = [
        {
          uuid: randomUUID(),
          event: 'café ☕',
          distinct_id: 'zoë',
          properties: { city: 'Zürich', mood: '😀', kana: 'かな', quoted: '"x"' },
          timestamp: ago(HOUR),
          elements_chain: '',
        },
        {
          uuid: randomUUID(),
          event: '$pageview',
          distinct_id: 'plain',
          properties: { $browser: 'Chrome' },
          timestamp: ago(2 * HOUR),
          elements_chain: '',
        },
      ];
      const devProject = await project('Events bytes');
      const pages: EventsPage[] = [];
      for (const [server, teamId] of [
        [prod, prod.boot.team.id],
        [t, devProject],
      ] as const) {
        await insertEvents(server.store, teamId, inputs);
        await applyPersonUpdates(server.store, teamId, [{ distinct_id: 'zoë', set: { name: 'Zoë Ñuñez' }, identify: {} }]);
        const res = await server.fetch(`/api/environments/${teamId}/events/?include_person=true`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
        pages.push(JSON.parse(bytes.toString('utf8')) as EventsPage);
      }
      const [fromProd, fromDev] = pages as [EventsPage, EventsPage];
      expect(fromProd.results.map((e) => [e.event, e.distinct_id, e.properties, e.person?.properties])).toEqual([
        ['café ☕', 'zoë', { city: 'Zürich', mood: '😀', kana: 'かな', quoted: 'x' }, { name: 'Zoë Ñuñez' }],
        ['$pageview', 'plain', { $browser: 'Chrome' }, undefined],
      ]);
      expect(fromProd).toEqual(fromDev);
    } finally {
      await prod.close();
    }
  });
});

// Through HTTP the request also waits on the key and project lookups, which the transaction's
// write has made re-read; the page reader's own guard (no array read while a transaction is open)
// is tested directly in test/storage/read-rows.test.ts.
describe('GET /api/environments/{project_id}/events/ — while another write is in flight', () => {
  it('never shows the rows of a transaction that is still open and then rolled back', async () => {
    const pid = await project('Events dirty read');
    await seed(pid, [{ name: 'kept', timestamp: ago(HOUR) }]);
    const phantom = randomUUID();
    let page: EventsPage | undefined;
    await expect(
      t.store.db.transaction().execute(async (trx) => {
        await new EventsWriteRepository(trx).insertEvents(pid, [
          { uuid: phantom, event: 'phantom', distinct_id: 'x', properties: {}, timestamp: ago(1000), elements_chain: '' },
        ]);
        // the request is answered while the transaction is open (it may wait for it on SQLite)
        const pending = listOk(pid).then((p) => (page = p));
        await new Promise((r) => setTimeout(r, 100));
        void pending;
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expect.poll(() => page, { timeout: 120_000 }).toBeDefined();
    expect(page!.results.map((e) => e.id)).not.toContain(phantom);
    expect(names(page!.results)).toEqual(['kept']);
  });
});
