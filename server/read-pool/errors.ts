/**
 * The read pool's own failures, as domain errors: `http/errors.ts` answers them in PostHog's shape
 * (`QueryTimeoutError` 504, `ReadPoolBusyError` 503 with `Retry-After`).
 */

/** A read that ran past the time budget (`QUERY_TIMEOUT_MS`), queue wait included: the store's error, which ClickHouse throws too. */
export { QueryTimeoutError } from '../storage/errors.js';

/** More reads waiting for a thread than the pool's queue holds. */
export class ReadPoolBusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many queries are waiting to run; retry shortly.');
    this.name = 'ReadPoolBusyError';
  }
}
