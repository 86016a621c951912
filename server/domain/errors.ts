/**
 * PostHog's error shape, a rule of the domain: every failure a request can meet leaves the server as
 * `{type, code, detail, attr}` (drf-exceptions-hog, exceptions_hog/handler.py). `type` is one of
 * validation_error, authentication_error, invalid_request, throttled_error, server_error; `code`
 * is DRF's or PostHog's machine-readable code; `attr` is the offending field (nested names joined
 * with `__`) or null. Only the first problem is reported, as PostHog does.
 *
 * Domain code, handlers, storage and the read pool throw `ApiError` (made by the factories below:
 * `validationError`, `notFound`, `permissionDenied`, `notAuthenticated`, `authenticationFailed`,
 * `serverError`, `storeBusy`); `schemaProblemBody` words one JSON-schema problem as DRF would.
 * HogQL (../hogql/) throws its own `HogQLError`, which knows no HTTP: the domain code that calls
 * it turns it into an `ApiError` (`withHogQLErrors`, `fromHogQLError`) before anything else sees
 * it, so the read pool's workers and http/ only ever meet `ApiError`.
 * Mapping anything else that is thrown (the validator's, body-parser's and the store's errors) onto
 * this shape is `http/errors.ts`'s job (`toApiError`).
 */
import type { components } from '../../generated/api.js';
import { HogQLError } from '../hogql/errors.js';
import { InsightQueryError } from '../insights/errors.js';
import { clip } from './echo.js';

/** PostHog's error `type` values (schema `ErrorTypeEnum`). */
export type ErrorType = components['schemas']['ErrorTypeEnum'];

/** The wire shape of an error (schema `Error`): `{type, code, detail, attr}`. */
export type ErrorBody = components['schemas']['Error'];

/** An error with its HTTP status and PostHog body; thrown by domain code and handlers. */
export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  /** extra response headers (e.g. `WWW-Authenticate`) */
  readonly headers: Record<string, string>;

  constructor(status: number, body: ErrorBody, headers: Record<string, string> = {}) {
    super(body.detail);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/**
 * A HogQL error (../hogql/errors.ts) as PostHog answers it: kind `invalid` → 400
 * `validation_error` (code `invalid_input`), kind `timeout` → 504 `server_error` (code
 * `query_timeout`, `attr` null: it names no field); `detail` as it is; an invalid query's `attr`
 * its own, or `attrIfNone` when it has none (an EventsQuery's expressions are fields of `query`).
 */
export function fromHogQLError(err: HogQLError, attrIfNone: string | null = null): ApiError {
  if (err.kind === 'timeout') return new ApiError(504, { type: 'server_error', code: err.code, detail: err.detail, attr: err.attr });
  return new ApiError(400, { type: 'validation_error', code: err.code, detail: err.detail, attr: err.attr ?? attrIfNone });
}

/**
 * Runs `call` (a call into ../hogql/) and throws what it throws, but a `HogQLError` as the
 * `ApiError` of `fromHogQLError(err, attrIfNone)`.
 */
export async function withHogQLErrors<T>(call: () => Promise<T>, attrIfNone: string | null = null): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof InsightQueryError) throw validationError(err.detail, err.attr);
    throw err instanceof HogQLError ? fromHogQLError(err, attrIfNone) : err;
  }
}

/** 400 validation_error; code defaults to PostHog's `invalid_input`. */
export function validationError(detail: string, attr: string | null = null, code = 'invalid_input'): ApiError {
  return new ApiError(400, { type: 'validation_error', code, detail, attr });
}

/** 401 not_authenticated: no credentials. */
export function notAuthenticated(): ApiError {
  return new ApiError(401, {
    type: 'authentication_error',
    code: 'not_authenticated',
    detail: 'Authentication credentials were not provided.',
    attr: null,
  });
}

/** 401 authentication_failed: a key was given but is not valid (posthog/auth.py PersonalAPIKeyAuthentication). */
export function authenticationFailed(detail = 'Personal API key found in request Authorization header is invalid.'): ApiError {
  return new ApiError(401, { type: 'authentication_error', code: 'authentication_failed', detail, attr: null });
}

/** 403 permission_denied with PostHog's message for the rule that refused. */
export function permissionDenied(detail = 'You do not have permission to perform this action.'): ApiError {
  return new ApiError(403, { type: 'authentication_error', code: 'permission_denied', detail, attr: null });
}

/** 404 not_found; `detail` defaults to DRF's "Not found.". */
export function notFound(detail = 'Not found.'): ApiError {
  return new ApiError(404, { type: 'invalid_request', code: 'not_found', detail, attr: null });
}

/** 500 with PostHog's generic body; never carries internals. */
export function serverError(): ApiError {
  return new ApiError(500, { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null });
}

/** Seconds a client is told to wait (`Retry-After`) after a transient storage failure. */
export const STORE_BUSY_RETRY_AFTER_S = 1;

/**
 * 503 `service_unavailable` with `Retry-After: STORE_BUSY_RETRY_AFTER_S`: the store could not take
 * the request's write in time (another writer, e.g. an import, held it). Nothing was changed.
 */
export function storeBusy(): ApiError {
  return new ApiError(
    503,
    {
      type: 'server_error',
      code: 'service_unavailable',
      detail: 'The database is busy with other writes. Please try again shortly.',
      attr: null,
    },
    { 'Retry-After': String(STORE_BUSY_RETRY_AFTER_S) },
  );
}

/**
 * One JSON-schema problem, as an item of express-openapi-validator's `errors` array: `path` is where
 * (`/body/<field>/…`), `errorCode` the ajv keyword (`<keyword>.openapi.validation`).
 */
export interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

/** `/body/config/foo` → `config__foo`; `/query/limit` → `limit`; `/body` → null. */
export function attrFromPath(path: string | undefined): string | null {
  if (!path) return null;
  const parts = path.replace(/^\./, '/').split(/[/.]/).filter(Boolean);
  const [where, ...rest] = parts;
  if (!where || !['body', 'query', 'params', 'path', 'headers'].includes(where)) return rest.length ? rest.join('__') : null;
  if (rest.length === 0) return null;
  return rest.map((p) => p.replace(/\[(\d+)\]/g, '__$1')).join('__');
}

/** DRF's wording for a value of the wrong type. */
function typeMessage(message: string): string {
  if (/integer/.test(message)) return 'A valid integer is required.';
  if (/number/.test(message)) return 'A valid number is required.';
  if (/boolean/.test(message)) return 'Must be a valid boolean.';
  if (/null/.test(message) && !/,/.test(message)) return 'This field may not be null.';
  if (/string/.test(message)) return 'Not a valid string.';
  if (/array/.test(message)) return 'Expected a list of items.';
  if (/object/.test(message)) return 'Expected a dictionary of items.';
  return `Invalid input: ${message}.`;
}

/**
 * Maps one JSON-schema problem to PostHog's code and DRF's message. `errorCode` is
 * `<ajv keyword>.openapi.validation` (express-openapi-validator 5's form; other ajv users build the
 * same), `path` is `/body/<field>/…`. Returns a 400 body with `attr` the field path joined by `__`.
 */
export function schemaProblemBody(item: ValidatorItem, input: RequestInput): ErrorBody {
  const keyword = (item.errorCode ?? '').split('.')[0] ?? '';
  const message = item.message ?? 'invalid';
  let attr = attrFromPath(item.path);
  const num = /(-?\d+(?:\.\d+)?)/.exec(message)?.[1];
  switch (keyword) {
    case 'required': {
      const missing = /required property '([^']+)'/.exec(message)?.[1];
      if (missing && (!attr || !attr.endsWith(missing))) attr = attr ? `${attr}__${missing}` : missing;
      return { type: 'validation_error', code: 'required', detail: 'This field is required.', attr };
    }
    case 'type':
      return {
        type: 'validation_error',
        code: /null/.test(message) && !/,/.test(message) ? 'null' : 'invalid_input',
        detail: typeMessage(message),
        attr,
      };
    case 'enum': {
      const value = valueAt(input, item.path);
      const shown =
        typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
      return { type: 'validation_error', code: 'invalid_choice', detail: `"${clip(shown)}" is not a valid choice.`, attr };
    }
    case 'minimum':
    case 'exclusiveMinimum':
      return { type: 'validation_error', code: 'min_value', detail: `Ensure this value is greater than or equal to ${num}.`, attr };
    case 'maximum':
    case 'exclusiveMaximum':
      return { type: 'validation_error', code: 'max_value', detail: `Ensure this value is less than or equal to ${num}.`, attr };
    case 'maxLength':
      return { type: 'validation_error', code: 'max_length', detail: `Ensure this field has no more than ${num} characters.`, attr };
    case 'minLength':
      return Number(num) === 1
        ? { type: 'validation_error', code: 'blank', detail: 'This field may not be blank.', attr }
        : { type: 'validation_error', code: 'min_length', detail: `Ensure this field has at least ${num} characters.`, attr };
    case 'minItems':
      return { type: 'validation_error', code: 'min_length', detail: `Ensure this field has at least ${num} elements.`, attr };
    case 'maxItems':
      return { type: 'validation_error', code: 'max_length', detail: `Ensure this field has no more than ${num} elements.`, attr };
    case 'format':
      // DRF's code is `invalid`; PostHog's handler renames it `invalid_input` (exceptions_hog).
      if (/uuid/.test(message)) return { type: 'validation_error', code: 'invalid_input', detail: 'Must be a valid UUID.', attr };
      if (/date-time/.test(message))
        return {
          type: 'validation_error',
          code: 'invalid_input',
          detail: 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
          attr,
        };
      return { type: 'validation_error', code: 'invalid_input', detail: `Invalid format: ${message}.`, attr };
    case 'discriminator': {
      // a query's `kind` outside the served union: PostHog's answer for a kind it has no runner for
      // (posthog/api/services/query.py `process_query_model`), the same inside a wrapper's `source`
      const kind = valueAt(input, `${item.path ?? ''}/kind`);
      if (typeof kind === 'string')
        return { type: 'validation_error', code: 'invalid_input', detail: `Unsupported query kind: ${clip(kind)}`, attr: null };
      return { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: attr ? `${attr}__kind` : 'kind' };
    }
    case 'pattern':
    case 'propertyNames':
      return { type: 'validation_error', code: 'invalid_input', detail: `Invalid value: ${message}.`, attr };
    default:
      return { type: 'validation_error', code: 'invalid_input', detail: message.charAt(0).toUpperCase() + message.slice(1) + '.', attr };
  }
}

/** The parts of a request an error message may quote. */
export interface RequestInput {
  method?: string;
  contentType?: string | undefined;
  body?: unknown;
  query?: unknown;
  params?: unknown;
}

/** The value a validator path (`/body/level`, `/query/format`, `/body/tile/id`) points at. */
function valueAt(input: RequestInput, path: string | undefined): unknown {
  const parts = (path ?? '').replace(/^\./, '/').split(/[/.]/).filter(Boolean);
  const [where, ...rest] = parts;
  let node: unknown =
    where === 'body' ? input.body : where === 'query' ? input.query : where === 'params' || where === 'path' ? input.params : undefined;
  for (const key of rest) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
