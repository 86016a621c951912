/**
 * Sending a fuzzed request and judging its answer (`send`), the checks both fuzzers make on every
 * answer: no 5xx (nor 429); a status the operation declares; 4xx bodies in PostHog's error shape
 * `{type, code, detail, attr}`; 2xx bodies JSON objects/arrays (or text/csv,
 * application/javascript, or empty for 204); a `strict` request (text no store can hold) answered
 * with a 4xx; nothing of project B in an answer to project 1 or to a project-1 key; an answer within
 * `HANG_TIMEOUT_MS`. Violations and counts go to a `Tally`, one per test file, which `summaryLine`
 * and `violationReport` print. `useFuzzServer` gives a test file its own seeded server.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestServer, usesPostgres, type TestServer } from '../helpers/server.js';
import { SEED } from './arbitraries.js';
import { seed, type Fixture } from './fixture.js';
import { keyValue, type FuzzRequest } from './requests.js';
import { BODYLESS_ERRORS, BODYLESS_SUCCESSES, declaredStatuses, operations } from '../helpers/spec.js';

/**
 * A request not answered within this long is reported as a hang (a stalled event loop, a lost
 * answer). Not a speed check: the machine running the suite may be loaded, so the bound is far
 * above any answer's normal time and only an answer that never comes reaches it.
 */
const HANG_TIMEOUT_MS = 30_000;

/** One broken rule: which, on which operation, the request that showed it and the answer's start. */
export interface Violation {
  op: string;
  what: string;
  request: string;
  status: number;
  answer: string;
}

/** What one test file's requests showed: violations, requests answered, answers per status. */
export interface Tally {
  violations: Violation[];
  requestsSent: number;
  /** requests of the control-character sweep (part of `requestsSent`) */
  sweepSent: number;
  /** requests sent per operationId (answered or not): shows that every operation was reached */
  sentPerOperation: Map<string, number>;
  /** answers per status (the summary line's `statuses`) */
  statusCounts: Map<number, number>;
}

/** An empty tally. */
export function newTally(): Tally {
  return {
    violations: [],
    requestsSent: 0,
    sweepSent: 0,
    sentPerOperation: new Map<string, number>(),
    statusCounts: new Map<number, number>(),
  };
}

function describeRequest(r: FuzzRequest): string {
  const short = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);
  return `${r.method} ${short(r.path + (r.query ? `?${r.query}` : ''))} key=${r.key}${r.contentType ? ` content-type=${r.contentType}` : ''}${r.body !== undefined ? ` body=${short(r.body)}` : ''}`;
}

/** Every project-B id/marker appearing in `text` that the request itself did not carry. */
function leaks(r: FuzzRequest, text: string, parsed: unknown, f: Fixture): string[] {
  const sent = `${decodeSafe(r.path)} ${decodeSafe(r.query)} ${r.body ?? ''}`;
  const found: string[] = [];
  for (const s of [...f.b.events, ...f.b.distinctIds, ...f.b.memberUuids, ...f.b.markers, 'B-secret', 'other-org-secret']) {
    if (text.includes(s) && !sent.includes(s)) found.push(s);
  }
  // numeric ids of B's configs / dashboards / tiles, where the answer carries such ids
  const top = r.op.path.includes('/dashboards/')
    ? new Set(f.b.dashboards)
    : r.op.path.includes('pipeline_')
      ? new Set(f.b.configs)
      : new Set<number>();
  const tiles = new Set(f.b.tiles);
  const check = (id: unknown, set: Set<number>, what: string) => {
    if (typeof id === 'number' && set.has(id) && !sent.includes(String(id))) found.push(`${what} id=${id}`);
  };
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    if (Array.isArray(v)) return v.forEach((x) => check((x as { id?: unknown })?.id, top, 'row'));
    check(o.id, top, 'object');
    if (Array.isArray(o.results)) o.results.forEach((x) => check((x as { id?: unknown })?.id, top, 'row'));
    if (Array.isArray(o.tiles)) o.tiles.forEach((x) => check((x as { id?: unknown })?.id, tiles, 'tile'));
  };
  walk(parsed);
  return found;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const ERROR_TYPES = new Set(['validation_error', 'authentication_error', 'invalid_request', 'throttled_error', 'server_error']);

/** Sends `r` to `f`'s server and adds to `tally` every rule its answer breaks (see the module's docstring). */
export async function send(r: FuzzRequest, f: Fixture, tally: Tally): Promise<void> {
  const headers: Record<string, string> = {};
  if (r.contentType) headers['Content-Type'] = r.contentType;
  tally.sentPerOperation.set(r.op.operationId, (tally.sentPerOperation.get(r.op.operationId) ?? 0) + 1);
  let res: Response;
  try {
    res = await f.t.fetch(r.path + (r.query ? `?${r.query}` : ''), {
      method: r.method,
      headers,
      ...(r.body !== undefined && r.method !== 'GET' ? { body: r.body } : {}),
      key: keyValue(r.key, f),
      signal: AbortSignal.timeout(HANG_TIMEOUT_MS),
    });
  } catch (err) {
    const what =
      err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${HANG_TIMEOUT_MS} ms (hang)`
        : `request failed: ${String(err)}`;
    tally.violations.push({ op: r.op.operationId, what, request: describeRequest(r), status: 0, answer: '' });
    return;
  }
  const text = await res.text();
  tally.requestsSent += 1;
  tally.statusCounts.set(res.status, (tally.statusCounts.get(res.status) ?? 0) + 1);
  // Node's HTTP parser answers 431 (no body) to a request line + headers over 16 KB, before the
  // app: a transport limit, not the contract's (PostHog's nginx answers 414 there)
  if (res.status === 431 && r.path.length + r.query.length > 14_000) return;
  const add = (what: string): void =>
    void tally.violations.push({ op: r.op.operationId, what, request: describeRequest(r), status: res.status, answer: text.slice(0, 400) });
  if (res.status >= 500) return add('5xx');
  if (res.status === 429) return add('429 (rate limit should be off in tests)');
  const type = res.headers.get('content-type') ?? '';
  let parsed: unknown;
  if (res.status >= 400) {
    // declared without a body, as PostHog answers it
    if (text === '' && BODYLESS_ERRORS[r.op.operationId]?.includes(String(res.status))) return;
    try {
      parsed = JSON.parse(text);
    } catch {
      return add('4xx body is not JSON');
    }
    const e = parsed as Record<string, unknown>;
    const shapeOk =
      e !== null &&
      typeof e === 'object' &&
      !Array.isArray(e) &&
      Object.keys(e).sort().join(',') === 'attr,code,detail,type' &&
      ERROR_TYPES.has(e.type as string) &&
      typeof e.code === 'string' &&
      typeof e.detail === 'string' &&
      (e.attr === null || typeof e.attr === 'string');
    if (!shapeOk) add('4xx body is not PostHog error shape {type, code, detail, attr}');
  } else if (res.status === 204 || BODYLESS_SUCCESSES[r.op.operationId]?.includes(String(res.status))) {
    if (text !== '') add(`${res.status} with a body`);
  } else if (type.startsWith('application/json') || /^application\/[a-z0-9.+-]+\+json/.test(type)) {
    try {
      parsed = JSON.parse(text);
      if (parsed === null || typeof parsed !== 'object') add('2xx JSON body is not an object/array');
    } catch {
      add('2xx body is not valid JSON');
    }
  } else if (
    !type.startsWith('text/csv') &&
    !type.startsWith('application/javascript') &&
    !(r.op.operationId === 'schema_retrieve' && /^application\/(vnd\.oai\.openapi|yaml)(;|$)/.test(type))
  ) {
    // (the schema's YAML: application/vnd.oai.openapi or application/yaml, server/http/schema.ts)
    add(`2xx with unexpected content-type ${type}`);
  }
  if (r.strict && res.status < 400) add(`${r.strict}: answered ${res.status}, a 4xx was due`);
  // the status is one the operation declares (unmatched routes answer 404, 405 is never declared)
  if (!declaredStatuses(r.op).includes(String(res.status)) && res.status !== 404 && !r.emptySegment) add(`undeclared status ${res.status}`);
  // isolation: nothing of project B / the other organization for project 1 requests or a project-1 key
  const projectOne = r.project === '1' || r.project === '@current' || r.key === 'p1';
  if (projectOne && res.status < 300) {
    const l = leaks(r, text, parsed, f);
    if (l.length) add(`project-B rows visible: ${l.slice(0, 5).join(', ')}`);
  }
}

/** Asserts that the server still answers `/api/projects/` (after each batch). */
export async function stillUp(t: TestServer): Promise<void> {
  const res = await t.fetch('/api/projects/');
  expect(res.status).toBe(200);
  await res.text();
}

/**
 * The violations `mine` of one operation as a report: one line per distinct (what, status), with
 * the first request that showed it.
 */
export function violationReport(mine: Violation[]): string {
  const distinct = new Map<string, Violation>();
  for (const v of mine) if (!distinct.has(`${v.what}|${v.status}`)) distinct.set(`${v.what}|${v.status}`, v);
  return [...distinct.values()].map((v) => `- ${v.what} [${v.status}] ${v.request}\n    → ${v.answer}`).join('\n');
}

/**
 * A test file's log line: `[fuzz] N requests (M of them the control-character sweep) over … operations
 * (seed …); store …; … s; statuses …; violations …; close … ms`. `started`: when its suite began;
 * `closeMs`: how long closing the server took.
 */
export function summaryLine(tally: Tally, started: number, closeMs: number): string {
  const summary = [...tally.statusCounts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}:${n}`)
    .join(' ');
  return `[fuzz] ${tally.requestsSent} requests (${tally.sweepSent} of them the control-character sweep) over ${operations.length} operations (seed ${SEED}); store ${usesPostgres() ? 'postgres' : 'sqlite'}; ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${summary}; violations ${tally.violations.length}; close ${closeMs} ms`;
}

/**
 * Gives the calling test file its own server: started and seeded (`seed`) before its tests, closed
 * after them, when the file's `[fuzz]` summary line (`summaryLine` of `tally`) is logged; a failure
 * to close is rethrown after the line. Call at the top level of a test file; the answer reads the
 * seeded fixture once the tests run.
 */
export function useFuzzServer(tally: Tally): () => Fixture {
  let t: TestServer | undefined;
  let f: Fixture | undefined;
  let suiteStarted = 0;
  beforeAll(async () => {
    suiteStarted = Date.now();
    t = await startTestServer();
    f = await seed(t);
  }, 180_000);

  afterAll(async () => {
    const started = Date.now();
    let closeError: unknown;
    try {
      await t?.close();
    } catch (err) {
      closeError = err;
    }
    console.info(summaryLine(tally, suiteStarted, Date.now() - started));
    if (closeError) throw closeError;
  });

  return () => {
    if (!f) throw new Error('the fuzz server is not seeded yet: read the fixture inside a test');
    return f;
  };
}
