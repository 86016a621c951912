/**
 * server/domain/errors.ts `fromHogQLError` / `withHogQLErrors`: HogQL's own error (which knows no
 * HTTP, server/hogql/errors.ts) turned into the `ApiError` PostHog answers, its body unchanged.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, fromHogQLError, withHogQLErrors } from '../../server/domain/errors.js';
import { HogQLError } from '../../server/hogql/errors.js';

describe('fromHogQLError', () => {
  it('answers an invalid query 400 validation_error invalid_input, with its detail (position included) and attr', () => {
    const err = fromHogQLError(new HogQLError('The function nosuch() is not supported', 'select nosuch()', 7, 'query'));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'The function nosuch() is not supported (line 1, column 8)',
      attr: 'query',
    });
    expect(err.message).toBe(err.body.detail);
  });

  it('names attrIfNone when the error names no field, and keeps the field it names', () => {
    expect(fromHogQLError(new HogQLError('bad', undefined, undefined, null), 'query').body.attr).toBe('query');
    expect(fromHogQLError(new HogQLError('bad', undefined, undefined, 'where'), 'query').body.attr).toBe('where');
  });

  it('answers a timeout 504 server_error query_timeout, attr null even with attrIfNone', () => {
    const err = fromHogQLError(new HogQLError('Query has hit the max execution time.', undefined, undefined, null, 'timeout'), 'query');
    expect(err.status).toBe(504);
    expect(err.body).toEqual({ type: 'server_error', code: 'query_timeout', detail: 'Query has hit the max execution time.', attr: null });
  });
});

describe('withHogQLErrors', () => {
  it('passes the answer through, turns a HogQLError into an ApiError and rethrows anything else as it is', async () => {
    await expect(withHogQLErrors(async () => 42)).resolves.toBe(42);
    await expect(
      withHogQLErrors(async () => Promise.reject(new HogQLError('bad', undefined, undefined, null)), 'select'),
    ).rejects.toMatchObject({ status: 400, body: { attr: 'select' } });
    const other = new Error('connection lost');
    await expect(withHogQLErrors(async () => Promise.reject(other))).rejects.toBe(other);
  });
});
