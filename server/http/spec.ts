/**
 * The contract, loaded once at start-up: `openapi.yaml` parsed into an object that the validator,
 * the router and the scope checks all read. Nothing here is per request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** Absolute path of `openapi.yaml` at the project root. */
export const SPEC_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi.yaml');

/** The parts of an OpenAPI document the server reads. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
  [k: string]: unknown;
}

/** One operation of the spec: its method, path template and operationId. */
export interface SpecOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  operationId: string;
}

let cached: OpenApiDocument | undefined;

/** Reads and parses `openapi.yaml` (once per process). Throws if the file is missing or invalid YAML. */
export function loadSpec(file = SPEC_PATH): OpenApiDocument {
  if (file === SPEC_PATH && cached) return structuredClone(cached);
  const doc = parse(fs.readFileSync(file, 'utf8')) as OpenApiDocument;
  if (file === SPEC_PATH) cached = doc;
  return structuredClone(doc);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of the document, static paths before templated ones (so `rearrange/` wins over `{id}/`). */
export function listOperations(doc: OpenApiDocument): SpecOperation[] {
  const ops: SpecOperation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as { operationId?: string } | undefined;
      if (op?.operationId) ops.push({ method, path: p, operationId: op.operationId });
    }
  }
  const params = (p: string) => (p.match(/\{/g) ?? []).length;
  return ops.sort((a, b) => params(a.path) - params(b.path));
}
