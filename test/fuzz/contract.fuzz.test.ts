/**
 * Fuzzing the contract (issue 6): for every operation of openapi.yaml (the list comes from the spec
 * via `listOperations`), fast-check generates requests from the spec — valid ones (path ids of
 * seeded objects, bodies and queries built from the schemas) and mutated ones (wrong types, missing
 * and extra fields, boundary and huge numbers, 100 KB strings, unicode, `__proto__` / `constructor`
 * keys, SQL and regex metacharacters in every string, in `properties` filters and in percent-encoded
 * path segments) — and sends them with raw fetch to one real server (response validation on, so a
 * response outside the spec is a 500).
 *
 * The deterministic control-character sweep (issue 16) is `control-chars.fuzz.test.ts`, on its own
 * server. The pieces both share: `../helpers/spec.ts` (reading the spec), `arbitraries.ts` (nasty
 * values, schema → arbitrary), `fixture.ts` (the seeded objects), `requests.ts` (this file's
 * requests), `control-sweep.ts` (the sweep's requests), `check-answer.ts` (the checks).
 *
 * For every answer: no 5xx; a status the operation declares; 4xx bodies are PostHog's error shape
 * `{type, code, detail, attr}`; 2xx bodies are JSON objects/arrays (or text/csv,
 * application/javascript, or empty for 204); nothing of project B (configs, events, distinct ids,
 * dashboards, explicit members) in an answer to a request on project 1 or made with a key limited
 * to project 1; an answer comes within `HANG_TIMEOUT_MS` (a hang check, not a speed check); after
 * each batch `/api/projects/` still answers; the harness reports no logged 500 on close. Violations
 * are collected per operation and reported together, each with its request.
 *
 * Fixed seed; `FUZZ_RUNS` (total random requests, default 3,000) scales the run.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEED } from './arbitraries.js';
import { newTally, send, stillUp, useFuzzServer, violationReport } from './check-answer.js';
import { requestArb } from './requests.js';
import { operations } from '../helpers/spec.js';

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const RUNS_PER_OP = Math.ceil(TOTAL_RUNS / operations.length);

const tally = newTally();
const fixture = useFuzzServer(tally);

describe('fuzzing the contract', () => {
  for (const [index, op] of operations.entries()) {
    it(`${op.method.toUpperCase()} ${op.path} (${op.operationId})`, { timeout: 600_000 }, async () => {
      const f = fixture();
      const before = tally.violations.length;
      await fc.assert(
        fc.asyncProperty(requestArb(op, f), async (r) => {
          await send(r, f, tally);
        }),
        { seed: SEED + index, numRuns: RUNS_PER_OP, endOnFailure: true },
      );
      await stillUp(f.t);
      const mine = tally.violations.slice(before);
      expect(mine.length, `${mine.length} violation(s) for ${op.operationId}:\n${violationReport(mine)}`).toBe(0);
    });
  }

  // runs after the operations' tests (a file's tests run in order): what was actually sent
  it('sent requests to every operation of openapi.yaml', () => {
    const unreached = operations.filter((op) => !tally.sentPerOperation.get(op.operationId)).map((op) => op.operationId);
    expect(operations.length).toBeGreaterThan(0);
    expect(unreached, `requests sent per operation: ${JSON.stringify(Object.fromEntries(tally.sentPerOperation))}`).toEqual([]);
  });
});
