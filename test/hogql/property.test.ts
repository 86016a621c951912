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
import { HogQLError, runHogQLQuery } from '../../server/hogql/index.js';
import { migrateToLatest, openStore, type Store } from '../../server/storage/db.js';
import { eventsStore } from '../../server/storage/events/index.js';
import { AccountsRepository } from '../../server/storage/repositories/accounts.js';
import { createTestPgSchema, type TestPgSchema } from '../helpers/pg.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { seedDataset } from './dataset.js';

/** The seed of the SQLite-and-PostgreSQL comparison (see the test). */
const COMPARE_SEED = 20261203;
import { query } from './helpers/grammar.js';

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

/** The answer of one store: its rows, or 'HTTP 400' for a query it refuses (a `HogQLError` of kind `invalid`). */
async function answerOf(store: Store, team: number, q: string, now: Date): Promise<unknown> {
  try {
    const events = eventsStore(store.db);
    return (await runHogQLQuery(store.db, events.table(await events.materializedColumns()), team, q, now)).results;
  } catch (err) {
    if (err instanceof HogQLError && err.kind === 'invalid') return 'HTTP 400';
    throw err;
  }
}

describe('HogQL compiler properties', () => {
  it('a random query of the subset never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const res = await t.fetch(`/api/environments/${P}/query/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: { kind: 'HogQLQuery', query: q } }),
        });
        const text = await res.text();
        expect(res.status, `${q} → ${text}`).toBeLessThan(500);
        expect([200, 400], `${q} → ${text}`).toContain(res.status);
      }),
      { numRuns: 300 },
    );
  }, 900_000);

  it.runIf(comparePg)(
    'a random query gives the same answer on SQLite and PostgreSQL',
    async () => {
      const now = new Date('2026-01-01T00:00:00Z');
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const [a, b] = await Promise.all([answerOf(pair!.sqlite, pair!.teams[0], q, now), answerOf(pair!.pg, pair!.teams[1], q, now)]);
          if (a !== 'HTTP 400') accepted++;
          expect(b, q).toEqual(a);
        }),
        // a fixed seed by default, so that every run (CI's too) checks the same 400 queries;
        // FC_SEED=<n> explores others
        { numRuns: 400, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : COMPARE_SEED },
      );
      // the grammar is not all type errors: a good part of the queries run
      expect(accepted).toBeGreaterThan(40);
    },
    900_000,
  );

  // A known difference, found by the property above (seed 1331250126): inside `in (…) = event`
  // with GROUP BY, SQLite does not raise the Float underflow of `toFloat(…) * 5e-324` (the same
  // product alone answers 400 on both stores), PostgreSQL does. `it.fails` until the compiler
  // raises it on SQLite too; then this fails, and becomes a plain test.
  it.runIf(comparePg).fails('a Float underflow inside IN … = event answers 400 on SQLite as on PostgreSQL', async () => {
    const q =
      "select ((toString(toFloat(properties.ratio) * 5e-324) in ('Chrome')) = event) as g, count() from events group by g order by g";
    const now = new Date('2026-01-01T00:00:00Z');
    const [a, b] = await Promise.all([answerOf(pair!.sqlite, pair!.teams[0], q, now), answerOf(pair!.pg, pair!.teams[1], q, now)]);
    expect(a).toEqual(b);
  });
});
