/**
 * The mapping of every failure onto PostHog's error shape (the shape and its factories are domain
 * rules: server/domain/errors.ts).
 *
 * `toApiError` turns anything a request can throw into an `ApiError`: domain errors as they are,
 * express-openapi-validator's, body-parser's and Express's errors by status, the read pool's time
 * budget and queue bound, and transient storage failures. The latter (the SQLite write lock held
 * past `StorageConfig.lockTimeoutMs`, PostgreSQL's lock, deadlock, serialization and
 * connection-capacity errors) answer 503 with `Retry-After` and `type: server_error`, as PostHog's
 * exception wrapper answers transient database errors; nothing was written by the request, so
 * sending it again is safe.
 */
import { isTransientStoreError } from '../storage/errors.js';
import {
  ApiError,
  notAuthenticated,
  notFound,
  permissionDenied,
  schemaProblemBody,
  serverError,
  storeBusy,
  type RequestInput,
  type ValidatorItem,
} from '../domain/errors.js';
import { QueryTimeoutError, ReadPoolBusyError } from '../read-pool/errors.js';

/** Shape of errors thrown by express-openapi-validator, body-parser and Express. */
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: ValidatorItem[];
  path?: string;
}

/**
 * Turns anything thrown into `ApiError`; `input` lets messages quote the offending value
 * (DRF's `"15" is not a valid choice.`). Known: ApiError (as is); express-openapi-validator errors
 * (400 → first problem, but a malformed path parameter → 404 not_found; 401 → not_authenticated; 404 → not_found; 405 → method_not_allowed;
 * 415 → unsupported_media_type); body-parser errors (malformed JSON → 400 parse_error, too large → 413);
 * transient storage errors (`isTransientStoreError`) → 503 service_unavailable with `Retry-After`.
 * Anything else → 500 server_error with PostHog's generic message (the caller logs the cause).
 */
export function toApiError(err: unknown, input: RequestInput = {}): ApiError {
  const method = input.method ?? 'GET';
  const contentType = input.contentType;
  if (err instanceof ApiError) return err;
  if (isTransientStoreError(err)) return storeBusy();
  if (err instanceof QueryTimeoutError) {
    // PostHog answers a ClickHouse timeout 504 (posthog/errors.py ClickHouseQueryTimeOut) with code "error"
    const seconds = Math.round(err.budgetMs / 100) / 10;
    return new ApiError(504, {
      type: 'server_error',
      code: 'query_timeout',
      detail: `Query has hit the max execution time (${seconds} s) before completing and was cancelled. Narrow it: a shorter time range (after/before), an event name, fewer or simpler property filters.`,
      attr: null,
    });
  }
  if (err instanceof ReadPoolBusyError) {
    return new ApiError(
      503,
      {
        type: 'server_error',
        code: 'service_unavailable',
        detail: 'Too many queries are waiting to run right now. Please try again later.',
        attr: null,
      },
      { 'Retry-After': String(err.retryAfterSeconds) },
    );
  }
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  if (e.type === 'entity.parse.failed') {
    return new ApiError(400, {
      type: 'invalid_request',
      code: 'parse_error',
      detail: `JSON parse error - ${e.message ?? 'invalid JSON'}`,
      attr: null,
    });
  }
  if (e.type === 'entity.too.large' || status === 413) {
    return new ApiError(413, { type: 'invalid_request', code: 'request_too_large', detail: 'Request body is too large.', attr: null });
  }
  switch (status) {
    case 400: {
      const first = e.errors?.[0];
      // A path parameter of the wrong shape names no object: 404, as DRF's get_object_or_404.
      if (first?.path && /^[./]params[./]/.test(first.path)) return notFound();
      // A path segment that is not UTF-8 once percent-decoded (`%ED%A0%80`): the validator's
      // "malformed uri'"; the segment names nothing, so 404 as for any unknown id.
      if (first?.message === "malformed uri'") return notFound();
      return new ApiError(
        400,
        first
          ? schemaProblemBody(first, input)
          : { type: 'validation_error', code: 'invalid_input', detail: e.message ?? 'Invalid input.', attr: null },
      );
    }
    case 401:
      return notAuthenticated();
    case 403:
      return permissionDenied();
    case 404:
      return notFound();
    case 405:
      return new ApiError(405, {
        type: 'invalid_request',
        code: 'method_not_allowed',
        detail: `Method "${method}" not allowed.`,
        attr: null,
      });
    case 415:
      return new ApiError(415, {
        type: 'invalid_request',
        code: 'unsupported_media_type',
        detail: `Unsupported media type "${(contentType ?? '').split(';')[0] || 'none'}" in request.`,
        attr: null,
      });
    default:
      return serverError();
  }
}
