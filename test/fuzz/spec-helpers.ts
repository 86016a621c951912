/**
 * Reading openapi.yaml for the fuzzers (`contract.fuzz.test.ts`, `control-chars.fuzz.test.ts`): the
 * parsed spec and its operations (from `listOperations`), `$ref` resolution, and per operation its
 * parameters, its JSON request body schema and the statuses it declares.
 */
import { listOperations, loadSpec, type OpenApiDocument, type SpecOperation } from '../../server/http/spec.js';

/** The parsed contract. */
export const spec: OpenApiDocument = loadSpec();
/** Every operation of the contract: the fuzzers cover each. */
export const operations = listOperations(spec);

/** A JSON schema (or any spec node) as read from the parsed spec. */
export type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Follows `$ref`s (within the spec) until the node is not a reference. */
export function deref<T = Schema>(node: unknown): T {
  let n = node as Schema;
  while (n && typeof n === 'object' && typeof n.$ref === 'string') {
    const parts = (n.$ref as string).replace(/^#\//, '').split('/');
    n = parts.reduce<Schema>((acc, k) => acc[k] as Schema, spec as unknown as Schema);
  }
  return n as T;
}

/** A parameter object of the spec, resolved. */
export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  style?: string;
  explode?: boolean;
}

/** The operation object of `op` in the spec. */
export function opObject(op: SpecOperation): Schema {
  return (spec.paths[op.path] as Record<string, Schema>)[op.method] as Schema;
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

/** The statuses `op` declares, as the spec's keys (`'200'`, `'400'`…). */
export function declaredStatuses(op: SpecOperation): string[] {
  return Object.keys(opObject(op).responses as Schema);
}

/** The types a schema allows (`type` as a list; an untyped schema with properties is an object, else a string). */
export function typesOf(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return [s.type];
  if (s.properties) return ['object'];
  return ['string'];
}
