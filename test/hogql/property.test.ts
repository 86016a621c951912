/**
 * Property-based test of the HogQL compiler (fast-check): random expressions built from the
 * subset's grammar (fields, constants, operators, functions, aggregates) never answer 5xx through
 * the real HTTP stack; and, when TEST_DATABASE_URL is set (either pass), each one gives the same
 * answer on a SQLite store and a PostgreSQL store holding the same dataset: the same rows, or a
 * 400 on both. Known differences are kept out of the grammar and listed here: `toString` of a
 * float that is not an integer (SQLite writes 15 significant digits, PostgreSQL the shortest
 * exact form), a whole JSON object read as a property (PostgreSQL writes `{"a": 1}`), integer
 * overflow (SQLite turns the value into a float, PostgreSQL refuses: 400).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHogQLQuery } from '../../server/hogql/index.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { AccountsRepository } from '../../server/storage/repositories/accounts.js';
import { createTestPgSchema, type TestPgSchema } from '../helpers/pg.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedDataset } from './dataset.js';

const FIELDS = ['event', 'distinct_id', 'timestamp', 'uuid', 'properties.$browser', 'properties.price', 'properties.plan', 'properties.flag', 'properties.$current_url', 'person.properties.email', '(person_id is null)', 'elements_chain'];
// person_id itself is left out: each store gives its persons their own random uuids
const STRINGS = ["'Chrome'", "''", "'pro'", "'12'", "'2024-11-02'", "'2024-11-02 09:00:00'", "'-3'", "'Zürich'", "'$pageview'"];
const PATTERNS = ["'%'", "'Chr%'", "'%e%'", "'_'", "'%\\\\%%'"];
const REGEXES = ["'^C'", "'hedgebox\\\\.net'", "'[0-9]+'", "'(?i)chrome'", "''"];

/** A random HogQL expression of the subset (non-aggregate). */
const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...FIELDS),
    fc.constantFrom(...STRINGS),
    fc.integer({ min: -100, max: 100 }).map(String),
    fc.constantFrom('0.5', '2.25', '-1.5', 'null', 'true', 'false', 'now()', 'today()'),
    fc.tuple(tie('e'), fc.constantFrom('=', '!=', '<', '>', '<=', '>=', 'and', 'or', '+', '-', '*', '/', '%'), tie('e')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(tie('e'), fc.constantFrom('like', 'ilike', 'not like', 'not ilike'), fc.constantFrom(...PATTERNS)).map(([a, op, p]) => `(${a} ${op} ${p})`),
    fc.tuple(tie('e'), fc.constantFrom('=~', '!~', '=~*'), fc.constantFrom(...REGEXES)).map(([a, op, p]) => `(${a} ${op} ${p})`),
    fc.tuple(tie('e'), fc.constantFrom('in', 'not in'), fc.array(fc.constantFrom(...STRINGS, '12', '-3', 'null'), { minLength: 1, maxLength: 3 })).map(([a, op, xs]) => `(${a} ${op} (${xs.join(', ')}))`),
    fc.tuple(fc.constantFrom('not', 'lower', 'upper', 'length', 'toInt', 'toFloat', 'toDate', 'toDateTime', 'toStartOfDay', 'toStartOfHour', 'toStartOfWeek', 'toStartOfMonth', '-', 'isNull'), tie('e')).map(([f, a]) =>
      f === '-' ? `(-${a})` : f === 'isNull' ? `(${a} is null)` : `${f}(${a})`,
    ),
    fc.tuple(fc.constantFrom('coalesce', 'ifNull', 'concat'), tie('e'), tie('e')).map(([f, a, b]) => `${f}(${a}, ${b})`),
    fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `if(${c}, ${a}, ${b})`),
    fc.tuple(tie('e'), fc.integer({ min: -3, max: 3 }), fc.constantFrom('hour', 'day', 'week', 'month')).map(([a, n, u]) => `(${a} + interval ${n} ${u})`),
  ),
})).e;

/** A random query: a column and a condition over the events, or an aggregate grouped by an expression. */
const query: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(expr, expr).map(([s, w]) => `select ${s} from events where ${w} order by uuid`),
  fc.tuple(fc.constantFrom('count()', 'uniq', 'min', 'max', 'countIf', 'sum', 'avg'), expr, expr).map(([agg, a, g]) =>
    agg === 'count()' ? `select ${g} as g, count() from events group by g order by g` : `select ${g} as g, ${agg}(${a}) from events group by g order by g`,
  ),
);

/** The SQLite/PostgreSQL comparison runs whenever a PostgreSQL is given (TEST_DATABASE_URL), in either pass. */
const comparePg = Boolean(process.env.TEST_DATABASE_URL);

let t: TestServer;
let P: number;
let pair: { sqlite: Store; pg: Store; schema: TestPgSchema; teams: [number, number] } | undefined;

async function seeded(store: Store): Promise<number> {
  await migrateToLatest(store);
  const accounts = new AccountsRepository(store.db);
  const org = await accounts.createOrganization({ name: 'HogQL property test' });
  const p = await accounts.createTeam({ organization_id: org.id, name: 'P' });
  const q = await accounts.createTeam({ organization_id: org.id, name: 'Q' });
  await seedDataset(store, p.id, q.id);
  return p.id;
}

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  const Q = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'HogQL property other project' })).id;
  await seedDataset(t.store, P, Q);
  if (comparePg) {
    const schema = await createTestPgSchema();
    const sqlite = openStore({ inMemory: true });
    const pg = openStore({ databaseUrl: schema.url, poolSize: 2 });
    pair = { sqlite, pg, schema, teams: [await seeded(sqlite), await seeded(pg)] };
  }
}, 120_000);

afterAll(async () => {
  await t.close();
  if (pair) {
    await pair.sqlite.close();
    await pair.pg.close();
    await pair.schema.drop();
  }
});

/** The answer of one store: its rows, or the status of the error it threw. */
async function answerOf(store: Store, team: number, q: string, now: Date): Promise<unknown> {
  try {
    return (await runHogQLQuery(store.db, store.dialect, team, q, now)).results;
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (status === 400) return 'HTTP 400';
    throw err;
  }
}

describe('HogQL compiler properties', () => {
  it('a random query of the subset never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const res = await t.fetch(`/api/environments/${P}/query/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query: { kind: 'HogQLQuery', query: q } }) });
        const text = await res.text();
        expect(res.status, `${q} → ${text}`).toBeLessThan(500);
        expect([200, 400], `${q} → ${text}`).toContain(res.status);
      }),
      { numRuns: 300 },
    );
  }, 300_000);

  it.runIf(comparePg)('a random query gives the same answer on SQLite and PostgreSQL', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const [a, b] = await Promise.all([answerOf(pair!.sqlite, pair!.teams[0], q, now), answerOf(pair!.pg, pair!.teams[1], q, now)]);
        if (a !== 'HTTP 400') accepted++;
        expect(b, q).toEqual(a);
      }),
      { numRuns: 400 },
    );
    // the grammar is not all type errors: a good part of the queries run
    expect(accepted).toBeGreaterThan(40);
  }, 300_000);
});
