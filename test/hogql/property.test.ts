/**
 * Property-based test of the HogQL compiler (fast-check): random expressions built from the
 * subset's grammar (fields, constants, operators, functions, aggregates) never answer 5xx through
 * the real HTTP stack; and, when TEST_DATABASE_URL is set (either pass), each one gives the same
 * answer on a SQLite store and a PostgreSQL store holding the same dataset: the same rows, or a
 * 400 on both. The grammar reaches what once differed: `toString` of any Float (0.1, 1/3, 1e-7),
 * whole JSON objects and arrays read as properties, JSON numbers written with an exponent, Int64
 * overflow (large constants: both answer 400), intervals of months, quarters and years from
 * month ends; sum() and avg() of Floats that are not binary fractions (both add exactly), Floats
 * beyond the doubles (1e300 * 1e300: both answer 400), text that is no number or date a store's
 * cast would refuse (`1e400`, `2024-02-30`, year 0000, offsets without a colon: NULL on both),
 * dates moved past year 9999 or before year 1 (NULL on both), and grouping, ordering and
 * DISTINCT by the whole `properties` object (both compare its canonical text).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHogQLQuery } from '../../server/hogql/index.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { AccountsRepository } from '../../server/storage/repositories/accounts.js';
import { createTestPgSchema, type TestPgSchema } from '../helpers/pg.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedDataset } from './dataset.js';

const FIELDS = [
  'event', 'distinct_id', 'timestamp', 'uuid', 'properties.$browser', 'properties.price', 'properties.plan', 'properties.flag', 'properties.$current_url', 'person.properties.email', '(person_id is null)', 'elements_chain',
  // an object, an array, the whole object as text
  'properties.nested', 'properties.tags', 'toString(properties)', 'properties',
  // month ends (2024-10-31, 2024-11-30), as a Date and a DateTime
  '(toStartOfMonth(timestamp) - interval 1 day)', '(toDateTime(toStartOfMonth(timestamp)) - interval 1 second)',
];
// person_id itself is left out: each store gives its persons their own random uuids
const STRINGS = ["'Chrome'", "''", "'pro'", "'12'", "'2024-11-02'", "'2024-11-02 09:00:00'", "'-3'", "'Zürich'", "'$pageview'", "'2024-01-31'"];
/** Numbers JSON writes as 1.5e-7 and 0.3333333333333333, and text of a Float that is not an exact binary fraction. */
const OTHER_NUMBER_TEXTS = ['properties.tiny', 'properties.ratio', "'0.1'"];
/** Text of a row (not a constant, which the compiler reads itself) that no store's cast can read. */
const ODD_TEXTS = ["'1e400'", "'-1e400'", "'1e-400'", "'2024-02-30'", "'2023-02-29 10:00:00'", "'0000-03-01'", "'9999-12-31T23:30:00-01:00'", "'2024-01-01T10:00:00+0200'", "'2024-01-01T24:00:00'", "'12345'"].map(
  (t) => `if(event = '', '', ${t})`,
);
const PATTERNS = ["'%'", "'Chr%'", "'%e%'", "'_'", "'%\\\\%%'"];
const REGEXES = ["'^C'", "'hedgebox\\\\.net'", "'[0-9]+'", "'(?i)chrome'", "''"];
/** Floats that are exact binary fractions. */
const EXACT_FLOATS = ['0.5', '2.25', '-1.5'];
/** Floats whose text needs up to 17 digits, and one in exponent form (`toString` of them, and of what they make). */
const OTHER_FLOATS = ['0.1', '0.3', '1.1', '-2.7', '123.456', '1e-7', '0.000015'];
/** Floats at the doubles' ends: their products overflow or underflow (both stores answer 400). */
const EDGE_FLOATS = ['1e300', '-1e300', '1e-300', '1.7976931348623157e308', '5e-324'];
/** Int64's edge: their products and sums overflow (both stores answer 400). */
const LARGE_INTS = ['9007199254740991', '-9007199254740991', '3037000500', '4294967296'];

/** A random HogQL expression of the subset (non-aggregate). */
function expression(): fc.Arbitrary<string> {
  return fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...FIELDS, ...OTHER_NUMBER_TEXTS),
      fc.constantFrom(...STRINGS, ...ODD_TEXTS),
      fc.integer({ min: -100, max: 100 }).map(String),
      fc.constantFrom(...EXACT_FLOATS, ...OTHER_FLOATS, ...EDGE_FLOATS, ...LARGE_INTS, 'null', 'true', 'false', 'now()', 'today()'),
      fc.tuple(tie('e'), fc.constantFrom('=', '!=', '<', '>', '<=', '>=', 'and', 'or', '+', '-', '*', '/', '%'), tie('e')).map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc.tuple(tie('e'), fc.constantFrom('like', 'ilike', 'not like', 'not ilike'), fc.constantFrom(...PATTERNS)).map(([a, op, p]) => `(${a} ${op} ${p})`),
      fc.tuple(tie('e'), fc.constantFrom('=~', '!~', '=~*'), fc.constantFrom(...REGEXES)).map(([a, op, p]) => `(${a} ${op} ${p})`),
      fc.tuple(tie('e'), fc.constantFrom('in', 'not in'), fc.array(fc.constantFrom(...STRINGS, '12', '-3', 'null'), { minLength: 1, maxLength: 3 })).map(([a, op, xs]) => `(${a} ${op} (${xs.join(', ')}))`),
      fc.tuple(fc.constantFrom('not', 'lower', 'upper', 'length', 'toInt', 'toFloat', 'toString', 'toDate', 'toDateTime', 'toStartOfDay', 'toStartOfHour', 'toStartOfWeek', 'toStartOfMonth', '-', 'isNull'), tie('e')).map(([f, a]) =>
        f === '-' ? `(-${a})` : f === 'isNull' ? `(${a} is null)` : `${f}(${a})`,
      ),
      // `toString` of a Float made of the above (the unary functions reach Floats rarely)
      fc.tuple(tie('e'), fc.constantFrom('*', '/', '+'), fc.constantFrom(...OTHER_FLOATS, ...EDGE_FLOATS)).map(([a, op, f]) => `toString(toFloat(${a}) ${op} ${f})`),
      fc.tuple(fc.constantFrom('coalesce', 'ifNull', 'concat'), tie('e'), tie('e')).map(([f, a, b]) => `${f}(${a}, ${b})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `if(${c}, ${a}, ${b})`),
      fc.tuple(tie('e'), fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-8000, 8000)), fc.constantFrom('hour', 'day', 'week', 'month', 'quarter', 'year')).map(([a, n, u]) => `(${a} + interval ${n} ${u})`),
    ),
  })).e;
}

const expr = expression();

/** A random query: a column and a condition over the events, or an aggregate grouped by an expression. */
const query: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(expr, expr).map(([s, w]) => `select ${s} from events where ${w} order by uuid`),
  fc.tuple(fc.constantFrom('count()', 'uniq', 'min', 'max', 'countIf'), expr, expr).map(([agg, a, g]) =>
    agg === 'count()' ? `select ${g} as g, count() from events group by g order by g` : `select ${g} as g, ${agg}(${a}) from events group by g order by g`,
  ),
  fc.tuple(fc.constantFrom('sum', 'avg'), expr, expr).map(([agg, a, g]) => `select ${g} as g, ${agg}(${a}) from events group by g order by g`),
  expr.map((g) => `select distinct ${g} as g from events order by g`),
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
  }, 900_000);

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
  }, 900_000);
});
