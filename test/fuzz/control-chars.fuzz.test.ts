/**
 * The control-character sweep (issue 16, `controlSweep`), deterministic: every control character
 * (U+0000–U+001F, U+007F) and unpaired surrogate, alone or within text, in every string each
 * operation reads — path parameters, declared query parameters (surrogates also as raw invalid
 * UTF-8), the key and value of events `properties` filters through every operator and both types,
 * every string of a body with all its declared fields, and a key added to each free-form map
 * (`config`, `filters`…) — sent to one real server of its own (response validation on).
 *
 * Every answer gets the checks of the contract fuzzer (`contract.fuzz.test.ts`, `check-answer.ts`);
 * in particular text no store can hold (U+0000, unpaired surrogates) where the operation reads it
 * answers a 4xx, never a 2xx. ~4,000 requests whatever `FUZZ_RUNS`.
 */
import { describe, expect, it } from 'vitest';
import { CONTROL_CHARS } from './arbitraries.js';
import { newTally, send, stillUp, useFuzzServer, violationReport } from './check-answer.js';
import { controlSweep } from './control-sweep.js';
import { bodySchemaOf, declaredStatuses, deref, operations, paramsOf, typesOf } from '../helpers/spec.js';

const tally = newTally();
const fixture = useFuzzServer(tally);

describe('fuzzing the contract: control characters', () => {
  it('every operation that reads a body or a string query parameter declares 400 (NUL and surrogates answer it)', () => {
    const missing = operations.filter((op) => {
      const readsText =
        bodySchemaOf(op) !== undefined ||
        paramsOf(op).some((p) => p.in === 'query' && ['string', 'array'].includes(typesOf(deref(p.schema ?? {}))[0] as string));
      return readsText && !declaredStatuses(op).includes('400');
    });
    expect(missing.map((op) => op.operationId)).toEqual([]);
  });

  for (const op of operations) {
    it(`control characters in every string: ${op.method.toUpperCase()} ${op.path} (${op.operationId})`, { timeout: 600_000 }, async () => {
      const f = fixture();
      const before = tally.violations.length;
      const requests = controlSweep(op, f);
      expect(requests.length).toBeGreaterThanOrEqual(CONTROL_CHARS.length);
      for (const r of requests) await send(r, f, tally);
      await stillUp(f.t);
      tally.sweepSent += requests.length;
      const mine = tally.violations.slice(before);
      expect(mine.length, `${mine.length} violation(s) for ${op.operationId}:\n${violationReport(mine)}`).toBe(0);
    });
  }
});
