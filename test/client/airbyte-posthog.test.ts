/**
 * Airbyte's PostHog source (airbytehq/airbyte, airbyte-integrations/connectors/source-posthog/)
 * replayed against the test server: its `projects`, `persons` and `events` streams, request by
 * request as its declarative manifest and components send them, for a full refresh and an
 * incremental sync, over 20,000 demo events plus 2,500 events sharing one timestamp.
 *
 * What is replayed (the facts, not Airbyte's code):
 * - Requester: `GET {base}/api/<path>` with `Authorization: Bearer <key>`; records are `results`;
 *   query parameters encoded as Python's `requests` encodes them (form encoding: `:` → %3A,
 *   `+` → %2B).
 * - `projects`: path `projects` (no trailing slash), paginator OffsetIncrement page size 100:
 *   first `?limit=100`, then `offset=<records so far>&limit=100` while a page is full (the CDK
 *   puts the paginator's parameters before the slicer's, the token before the page size).
 * - `persons`: one partition per project, path `projects/{id}/persons` (no trailing slash), the
 *   same paginator.
 * - `events` (source_posthog/manifest.yaml, the `next`-URL version; components.py
 *   `EventsSimpleRetriever`, `EventsCartesianProductStreamSlicer`): per project, datetime slices
 *   of `step` P30D from `start_date` (or from the project's state) to now (to the second), each
 *   `[start, min(start + 30 days − 1 µs, now)]`, then re-chained so that each slice's start is the
 *   previous slice's end and the first one's is the saved state's timestamp as saved; `after` and
 *   `before` formatted `%Y-%m-%dT%H:%M:%S.%f%z` (`2025-01-01T00:00:00.000000+0000`); path
 *   `projects/{id}/events/`; paginator CursorPagination on `response.next` with page size 100 and
 *   the token as the request path: the first page sends `limit`, `after`, `before`; every next page
 *   is the `next` URL as it is (the slice's `after`/`before` dropped, the paginator's `limit=100`
 *   already in the URL and so not repeated); a slice ends when `next` is null. State: per project
 *   `{"<id>": {"timestamp": <greatest record timestamp, as text>}}`.
 * - Also the events paginator of the manifest-only version (manifest.yaml, CDK 4.3.2):
 *   OffsetIncrement page size 10,000 with `after`/`before` on every page; and the 2026 `next`
 *   variant (limit 1,000, `next` followed verbatim); both with `events_time_step` 60, so that a
 *   slice holds more than 10,000 events.
 * Not replayed: the 2026 keyset variant, which sends `orderBy=["timestamp","uuid"]` and a HogQL
 * `properties` filter (`{"type": "hogql", ...}`) that this server does not run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDemoEvents } from '../../server/ingest/demo.js';
import { importEvents } from '../../server/ingest/import.js';
import { sql } from 'kysely';
import { eventTimeText } from '../../server/storage/events/times.js';
import { eventUuidOut } from '../../server/storage/events/uuids.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Json = Record<string, unknown>;
type Page = { results: Json[]; next?: string | null };
type State = Record<string, { timestamp: string }>;

const DAY_US = 86_400_000_000n;
/** one event page of the manifest's events paginator */
const EVENTS_PAGE = 100;

let t: TestServer;
let second: number;
/** every request the replay made: path and query as sent */
let requests: string[] = [];

/** Python `requests`' encoding of params: form encoding, in the given order. */
function withParams(url: string, params: Record<string, string | number>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params))
    if (!u.searchParams.has(k) || u.searchParams.get(k) !== String(v)) u.searchParams.append(k, String(v));
  return u.toString();
}

async function get(url: string): Promise<Page> {
  const u = new URL(url);
  requests.push(u.pathname + u.search);
  const res = await fetch(url, { headers: { Authorization: `Bearer ${t.boot.key}` } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

/** The CDK's OffsetIncrement paginator over `path` (page size 100). */
async function offsetStream(path: string, pageSize = 100, extra: Record<string, string> = {}): Promise<Json[]> {
  const records: Json[] = [];
  for (let offset = 0; ;) {
    const params: Record<string, string | number> = { ...extra, ...(offset ? { offset } : {}), limit: pageSize };
    const page = await get(withParams(`${t.url}/api/${path}`, params));
    records.push(...page.results);
    if (page.results.length < pageSize) return records;
    offset += page.results.length;
  }
}

/** µs since the epoch → `%Y-%m-%dT%H:%M:%S.%f%z` of a UTC datetime. */
function fmt(us: bigint): string {
  const seconds = new Date(Number(us / 1_000_000n) * 1000).toISOString().slice(0, 19);
  return `${seconds}.${String(us % 1_000_000n).padStart(6, '0')}+0000`;
}

/** A timestamp (`…Z`, `…+00:00`, `…+0000`) → µs since the epoch. */
function parseUs(ts: string): bigint {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:?\d{2})$/.exec(ts);
  if (!m) throw new Error(`cannot read ${ts}`);
  return BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

/** DatetimeBasedCursor's slices re-chained by EventsCartesianProductStreamSlicer. */
function slices(startDate: string, end: bigint, saved: string | undefined, stepDays = 30): { after: string; before: string }[] {
  const step = BigInt(stepDays) * DAY_US;
  let start = parseUs(startDate);
  if (saved !== undefined && parseUs(saved) > start) start = parseUs(saved);
  const out: { after: string; before: string }[] = [];
  for (; start <= end; start += step) {
    const sliceEnd = start + step - 1n < end ? start + step - 1n : end;
    out.push({ after: fmt(start), before: fmt(sliceEnd) });
  }
  if (out[0] && saved !== undefined) out[0].after = saved;
  for (let i = 1; i < out.length; i += 1) (out[i] as { after: string }).after = (out[i - 1] as { before: string }).before;
  return out;
}

type EventsPaginator = 'next' | 'next-1000' | 'offset-10000';

/** The events stream of one sync: records per project and the new state. */
async function syncEvents(
  config: { start_date: string; events_time_step?: number },
  state: State,
  paginator: EventsPaginator = 'next',
): Promise<{ records: Map<string, Json[]>; state: State }> {
  const nowUs = BigInt(Math.floor(Date.now() / 1000)) * 1_000_000n;
  const projects = await offsetStream('projects');
  const records = new Map<string, Json[]>();
  const next: State = { ...state };
  for (const project of projects) {
    const id = String(project.id);
    const got: Json[] = [];
    let newest = next[id]?.timestamp ?? '';
    for (const slice of slices(config.start_date, nowUs, state[id]?.timestamp, config.events_time_step)) {
      const base = `${t.url}/api/projects/${id}/events/`;
      let page: Page;
      if (paginator === 'offset-10000') {
        for (let offset = 0; ; offset += 10_000) {
          page = await get(withParams(base, { ...(offset ? { offset } : {}), limit: 10_000, after: slice.after, before: slice.before }));
          got.push(...page.results);
          if (page.results.length < 10_000) break;
        }
      } else {
        const limit = paginator === 'next' ? EVENTS_PAGE : 1_000;
        page = await get(withParams(base, { limit, after: slice.after, before: slice.before }));
        got.push(...page.results);
        while (page.next) {
          // RequestPath: the next URL as it is, plus the paginator's limit unless already there
          page = await get(withParams(page.next, { limit }));
          got.push(...page.results);
        }
      }
      for (const r of got) if (String(r.timestamp) > newest) newest = String(r.timestamp);
    }
    if (newest) next[id] = { timestamp: newest };
    records.set(id, got);
  }
  return { records, state: next };
}

/** Every event uuid of a project, read off the store. */
async function storedUuids(team: number, after = ''): Promise<string[]> {
  const rows = await t.store.db
    .selectFrom('events')
    .select(['uuid', eventTimeText(t.store.dialect, sql.ref('timestamp')).as('timestamp')])
    .where('team_id', '=', team)
    .execute();
  return rows
    .filter((r) => r.timestamp > after)
    .map((r) => eventUuidOut(r.uuid))
    .sort();
}

const ids = (records: Json[] | undefined) => (records ?? []).map((r) => String(r.id)).sort();

const START_DATE = new Date(Date.now() - 100 * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00Z';
const DEMO_NOW = new Date(Date.now() - 2 * 86_400_000);
const TIE = new Date(Date.now() - 45 * 86_400_000).toISOString().slice(0, 19) + '.123456Z';
// The bounds below (600 s to seed, 300 s a sync of 22,500 events) are for a hang: under two npm test
// runs at once and more, the seeding took over 120 s and a full sync over 60 s.

beforeAll(async () => {
  t = await startTestServer();
  second = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Airbyte second project' })).id;
  await importEvents(t.store, 1, generateDemoEvents({ count: 20_000, seed: 18, now: DEMO_NOW, days: 90 }), { batchSize: 5_000 });
  const tied = Array.from({ length: 2_500 }, (_, i) => ({
    event: 'tied',
    distinct_id: `tie-${i % 50}`,
    timestamp: TIE,
    properties: { i },
  }));
  await importEvents(t.store, 1, tied, { batchSize: 5_000 });
  await importEvents(t.store, second, [{ event: '$pageview', distinct_id: 'x', timestamp: TIE, properties: {} }]);
}, 600_000);

afterAll(async () => {
  await t.close();
});

describe("Airbyte's source-posthog streams", () => {
  it('projects: GET /api/projects?limit=100, every project once', async () => {
    requests = [];
    const projects = await offsetStream('projects');
    expect(requests).toEqual(['/api/projects?limit=100']);
    expect(projects.map((p) => p.id)).toEqual([1, second]);
  });

  it('persons: GET /api/projects/{id}/persons with limit/offset, every person once', async () => {
    requests = [];
    const persons = await offsetStream('projects/1/persons');
    const stored = await t.store.db.selectFrom('persons').select('uuid').where('team_id', '=', 1).execute();
    expect(stored.length).toBeGreaterThan(100);
    expect(ids(persons)).toEqual(stored.map((p) => p.uuid).sort());
    expect(requests[0]).toBe('/api/projects/1/persons?limit=100');
    expect(requests[1]).toBe('/api/projects/1/persons?offset=100&limit=100');
    for (const p of persons)
      expect(Object.keys(p)).toEqual(expect.arrayContaining(['id', 'name', 'distinct_ids', 'properties', 'created_at', 'uuid']));
  });

  it('events, full refresh then incremental (next-URL paginator): every event exactly once, ties included', async () => {
    requests = [];
    const full = await syncEvents({ start_date: START_DATE }, {});
    const all = await storedUuids(1);
    expect(all).toHaveLength(22_500);
    expect(ids(full.records.get('1'))).toEqual(all);
    expect(ids(full.records.get(String(second)))).toEqual(await storedUuids(second));
    // the slices' first requests carry after/before in Airbyte's format; every other is a next URL
    const first = requests.find((r) => r.startsWith('/api/projects/1/events/')) as string;
    expect(first).toMatch(
      /^\/api\/projects\/1\/events\/\?limit=100&after=\d{4}-\d{2}-\d{2}T00%3A00%3A00\.000000%2B0000&before=\d{4}-\d{2}-\d{2}T23%3A59%3A59\.999999%2B0000$/,
    );
    expect(requests.filter((r) => r.includes('cursor=')).length).toBeGreaterThan(200);
    const newest = [...(full.records.get('1') ?? [])]
      .map((r) => String(r.timestamp))
      .sort()
      .at(-1);
    expect(full.state['1']).toEqual({ timestamp: newest });

    // new events after the saved state; an incremental sync reads exactly those
    const later = new Date(DEMO_NOW.getTime() + 3_600_000).toISOString();
    await importEvents(
      t.store,
      1,
      Array.from({ length: 150 }, (_, i) => ({ event: 'later', distinct_id: `l-${i}`, timestamp: later, properties: { i } })),
    );
    requests = [];
    const incremental = await syncEvents({ start_date: START_DATE }, full.state);
    expect(requests.find((r) => r.startsWith('/api/projects/1/events/'))).toContain(
      `after=${encodeURIComponent(full.state['1']?.timestamp ?? '')}`,
    );
    expect(ids(incremental.records.get('1'))).toEqual(await storedUuids(1, full.state['1']?.timestamp));
    expect(incremental.records.get('1')).toHaveLength(150);
    expect(incremental.records.get(String(second))).toEqual([]);
    expect(incremental.state['1']?.timestamp).toBe(later.replace('Z', '000Z'));
  }, 300_000);

  it.each<EventsPaginator>(['next-1000', 'offset-10000'])(
    'events, full refresh with the %s paginator: every event exactly once',
    async (paginator) => {
      requests = [];
      // 60-day slices (the manifest's `events_time_step`), so that a slice holds more than 10,000 events
      const { records } = await syncEvents({ start_date: START_DATE, events_time_step: 60 }, {}, paginator);
      expect(ids(records.get('1'))).toEqual(await storedUuids(1));
      const paged = paginator === 'offset-10000' ? 'offset=10000' : 'cursor=';
      expect(requests.some((r) => r.startsWith('/api/projects/1/events/') && r.includes(paged))).toBe(true);
    },
    300_000,
  );
});
