/**
 * Handlers typed from the contract. `generated/api.d.ts` (openapi-typescript output of
 * `openapi.yaml`) gives each operation's parameters, request body and responses; a handler map keyed
 * by operationId must hold every operation, and each handler may only answer a success status its
 * operation declares, with that status's body — otherwise the project does not compile.
 * Error statuses are answered by throwing `ApiError` (see `errors.ts`); the response validator checks
 * them against the spec in tests and development.
 */
import type { operations } from '../../generated/api.js';
import type { AuthContext } from '../domain/access.js';
import type { Services } from '../domain/services.js';
import type { JsonText } from '../domain/json-text.js';

/**
 * The capture endpoints' operationIds (tag `capture`, `x-served-by: capture`): served by the capture
 * stage (server/capture/) before the validator, not by the handler map.
 */
export type CaptureOperationId = Extract<keyof operations, `capture_${string}`>;

/** Every operationId of the contract answered through the validator (all but the capture endpoints). */
export type OperationId = Exclude<keyof operations, CaptureOperationId>;

/**
 * Operations answered through the validator by server/http/ itself rather than by a tag's handler
 * object: `schema_retrieve` (the contract, server/http/schema.ts). `createApp` adds their handlers
 * to the handler map it is given.
 */
export type HttpOperationId = 'schema_retrieve';

type Op<K extends OperationId> = operations[K];
type Responses<K extends OperationId> = Op<K>['responses'];
// the statuses an operation declares without a body
type BodylessStatus<K extends OperationId> = {
  [S in keyof Responses<K>]: Responses<K>[S] extends { content?: never } ? S : never;
}[keyof Responses<K>];
// what a handler may answer itself: a 2xx; 304, a conditional GET answered from the client's copy;
// and 404 only where the operation declares it bodyless, as PostHog's own is (a flag's remote
// config) — every other error is thrown as an ApiError and answered by server/http/
type SuccessStatus<K extends OperationId> = 200 | 201 | 202 | 204 | 304 | (404 & BodylessStatus<K>);

/** Path parameters of an operation (strings and numbers as the spec declares, coerced by the validator). */
export type PathParams<K extends OperationId> = Op<K>['parameters'] extends { path: infer P } ? P : Record<string, never>;
/** Query parameters of an operation, coerced to their declared types by the validator. */
export type QueryParams<K extends OperationId> = Op<K>['parameters'] extends { query?: infer Q } ? NonNullable<Q> : Record<string, never>;
/** The JSON request body, or undefined for operations without one. */
export type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody?: infer B } ? (B extends { content: { 'application/json': infer J } } ? J : undefined) : undefined;

type ReplyFor<R, S> = R extends { content: infer C }
  ? {
      [M in keyof C & string]: {
        status: S;
        contentType: M;
        body: M extends 'application/json' | `application/${string}+json` ? C[M] | JsonText<C[M]> : C[M];
        headers?: Record<string, string>;
      };
    }[keyof C & string]
  : { status: S; body?: undefined; headers?: Record<string, string> };

/** What a handler returns: one of its operation's declared success statuses with its body. */
export type Reply<K extends OperationId> = {
  [S in keyof Responses<K> & SuccessStatus<K>]: ReplyFor<Responses<K>[S], S>;
}[keyof Responses<K> & SuccessStatus<K>];

/** Everything a handler gets: validated input, the caller, the services, and the request URL. */
export interface HandlerContext<K extends OperationId> {
  /** the operation matched: `K`, or its copy under the other prefix (`dashboards_list` for `environments_dashboards_list`) */
  operationId: OperationId;
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
  auth: AuthContext;
  services: Services;
  /** the absolute URL of this request (for `next`/`previous` links) */
  url: URL;
  /** the request's `Accept` header, if any (content negotiation: server/http/negotiate.ts) */
  accept: string | undefined;
  /** a request header by its lower-case name (the first value when repeated), undefined when absent */
  header(name: string): string | undefined;
}

/** A handler of one operation. */
export type Handler<K extends OperationId> = (ctx: HandlerContext<K>) => Promise<Reply<K>>;

/** One handler per operationId (but `HttpOperationId`s, which `createApp` adds): a missing one is a compile error. */
export type HandlerMap = { [K in Exclude<OperationId, HttpOperationId>]: Handler<K> };

/** A handler for a subset of operations (one tag's object). */
export type HandlersFor<K extends OperationId> = { [P in K]: Handler<P> };
