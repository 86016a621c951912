/**
 * Reading the contract in tests, one copy for every suite that walks it (the fuzzers, the scope
 * matrix, the static contract checks, the mock checks): the parsed spec and its operations (from
 * the server's own `loadSpec` / `listOperations`: generated/openapi.bundle.yaml, the hand-written
 * openapi.yaml with its `/api/projects/{project_id}/` copies), local `$ref` resolution, and per
 * operation its object, parameters, JSON request body schema, declared statuses and scopes.
 */
import { listOperations, loadSpec, type OpenApiDocument, type SpecOperation } from '../../server/http/spec.js';

/** The parsed contract (one load per test file; tests that change it clone it first). */
export const spec: OpenApiDocument = loadSpec();
/** Every operation of the contract, in the spec's order. */
export const operations: SpecOperation[] = listOperations(spec);

/** A JSON schema (or any spec node) as read from the parsed spec. */
export type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Follows local `$ref`s (`#/components/…`, JSON-pointer escapes `~0` `~1` honoured) until the node
 * is not a reference. Throws on a reference that resolves to nothing or that loops.
 */
export function deref<T = Schema>(node: unknown): T {
  let cur = node as Schema;
  const seen = new Set<string>();
  while (cur && typeof cur === 'object' && typeof cur.$ref === 'string') {
    const ref = cur.$ref as string;
    if (seen.has(ref)) throw new Error(`circular $ref ${ref}`);
    seen.add(ref);
    let target: unknown = spec;
    for (const part of ref.replace(/^#\//, '').split('/')) target = (target as Schema)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
    cur = target as Schema;
  }
  return cur as T;
}

/** A parameter object of the spec, resolved. */
export interface Param {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
  style?: string;
  explode?: boolean;
}

/** The operation object of `op` (or of the operation with this operationId) in the spec. */
export function opObject(op: SpecOperation | string): Schema {
  const found = typeof op === 'string' ? operations.find((o) => o.operationId === op) : op;
  if (!found) throw new Error(`no operation ${String(op)} in the spec`);
  return (spec.paths[found.path] as Record<string, Schema>)[found.method] as Schema;
}

/** The parameters of `op`: those of its path item, then its own, resolved. */
export function paramsOf(op: SpecOperation): Param[] {
  const item = spec.paths[op.path] as { parameters?: unknown[] };
  return [...(item.parameters ?? []), ...((opObject(op).parameters as unknown[]) ?? [])].map((p) => deref<Param>(p));
}

/** The (resolved) `application/json` request body schema of `op`, if it declares a body. */
export function bodySchemaOf(op: SpecOperation): Schema | undefined {
  const rb = opObject(op).requestBody;
  if (!rb) return undefined;
  return deref<Schema>(deref<Schema>(rb).content?.['application/json']?.schema);
}

/** True when `op` declares a request body with `required: true`. */
export function bodyRequired(op: SpecOperation): boolean {
  const rb = opObject(op).requestBody;
  return rb ? deref<{ required?: boolean }>(rb).required === true : false;
}

/** The statuses `op` declares, as the spec's keys (`'200'`, `'400'`…). */
export function declaredStatuses(op: SpecOperation): string[] {
  return Object.keys(opObject(op).responses as Schema);
}

/** The scopes `op`'s `security` requires (PersonalAPIKeyAuth), e.g. `['plugin:write']`. */
export function requiredScopes(op: SpecOperation): string[] {
  const security = (opObject(op).security ?? []) as Array<Record<string, string[]>>;
  return security.flatMap((s) => s.PersonalAPIKeyAuth ?? []);
}

/** The types a schema allows (`type` as a list; an untyped schema with properties is an object, else a string). */
export function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  return ['string'];
}

/** The prefix of the hand-written environment-scoped paths, and of their generated copies. */
export const ENVIRONMENTS_PREFIX = '/api/environments/{project_id}/';
export const PROJECTS_PREFIX = '/api/projects/{project_id}/';

/**
 * For a generated `/api/projects/{project_id}/…` copy (scripts/gen-projects-paths.mjs), the
 * environments operation it copies; undefined for a hand-written operation (including one that
 * PostHog has under `/api/projects/{project_id}/` only, such as the event definitions list).
 */
export function environmentsTwin(op: SpecOperation): SpecOperation | undefined {
  if (!op.path.startsWith(PROJECTS_PREFIX)) return undefined;
  const path = ENVIRONMENTS_PREFIX + op.path.slice(PROJECTS_PREFIX.length);
  return operations.find((o) => o.path === path && o.method === op.method);
}

/** The hand-written operations (those of openapi.yaml): every operation but the `/api/projects/{project_id}/` copies. */
export const handWrittenOperations: SpecOperation[] = operations.filter((o) => !environmentsTwin(o));
/** The generated `/api/projects/{project_id}/` copies. */
export const projectsCopies: SpecOperation[] = operations.filter((o) => environmentsTwin(o));

/**
 * Operations that need no scope, as in PostHog: a personal API key may always read its own record
 * (posthog/api/personal_api_key.py, 2025: the `@current` retrieve has no `scope_object` check).
 */
export const UNSCOPED_OPERATIONS: readonly string[] = ['personal_api_keys_retrieve', 'schema_retrieve', 'surveys_retrieve'];

/**
 * Operations that need no key at all (`security: []`), as in PostHog: the contract itself
 * (`/api/schema/`, drf-spectacular's `SpectacularAPIView`, served to anyone). They declare no 403;
 * their 401 is for a key that is sent and invalid (server/http/security.ts `publicOperationKeyCheck`).
 * And the SDKs' surveys (`/api/surveys/`, PostHog's `surveys` view), authenticated by the project
 * token in the query: their 401 is also for a missing or unknown token.
 */
export const PUBLIC_OPERATIONS: readonly string[] = ['schema_retrieve', 'surveys_retrieve'];

/**
 * Errors PostHog answers without a body, and so does envapi, as declared in the contract: a flag's
 * remote config for a key no flag has (`Response(status=404)`; the SDKs read that answer as a
 * failed call, which a JSON error body would turn into a payload).
 */
export const BODYLESS_ERRORS: Readonly<Record<string, readonly string[]>> = {
  feature_flags_remote_config_retrieve: ['404'],
};

/** Successes PostHog answers without a body besides 204, by hand-written operationId: a person's `update_property` (202). */
const BODYLESS_SUCCESSES_OF: Readonly<Record<string, readonly string[]>> = {
  environments_persons_update_property_create: ['202'],
};

/**
 * Successes PostHog answers without a body besides 204, and so does envapi, as declared: those of
 * `BODYLESS_SUCCESSES_OF` and of their `/api/projects/{project_id}/` copies, by operationId.
 */
export const BODYLESS_SUCCESSES: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  operations.flatMap((op) => {
    const statuses = BODYLESS_SUCCESSES_OF[(environmentsTwin(op) ?? op).operationId];
    return statuses ? [[op.operationId, statuses]] : [];
  }),
);

/** Operations answered by server/http/ itself, not by server/handlers/ (server/http/handler-types.ts `HttpOperationId`). */
export const HTTP_OPERATIONS: readonly string[] = ['schema_retrieve'];
