/**
 * The contract, loaded once at start-up: `generated/openapi.bundle.yaml` (the hand-written
 * `openapi.yaml` plus its `/api/projects/{project_id}/` copies, written by `npm run gen`:
 * scripts/gen-projects-paths.mjs) parsed into an object that the validator, the router and the
 * scope checks all read; `GET /api/schema/` answers the same file. Nothing here is per request.
 * The parse is taken from `generated/openapi.json` (scripts/gen-spec-json.mjs) when that file was
 * generated from the very bytes of the bundle (sha256), which keeps YAML parsing (~250–550 ms) out
 * of the cold start.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Yaml from 'yaml';

/** The contract the server loads, relative to the project root (module doc). */
const BUNDLE = path.join('generated', 'openapi.bundle.yaml');

/**
 * The project root: the nearest folder above this module that holds `generated/openapi.bundle.yaml`
 * (the same whether the server runs from `server/` with tsx or from the compiled `dist/server/`).
 */
function findProjectRoot(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, BUNDLE))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`${BUNDLE} not found in ${start} or any folder above it: run \`npm run gen\``);
  }
}

/** Absolute path of the project root (the folder of `openapi.yaml`, `generated/` and `package.json`). */
export const PROJECT_ROOT = findProjectRoot();

/**
 * Absolute path of the contract the server loads and serves: `generated/openapi.bundle.yaml`, not
 * the hand-written `openapi.yaml`, which lacks the `/api/projects/{project_id}/` copies.
 */
export const SPEC_PATH = path.join(PROJECT_ROOT, BUNDLE);

/** `generated/openapi.json`: `{source_sha256, document}`, written by `npm run gen`. */
export const SPEC_JSON_PATH = path.join(PROJECT_ROOT, 'generated', 'openapi.json');

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

/** YAML parsing, loaded only when `generated/openapi.json` is stale or another file is read (~40 ms of start-up otherwise). */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml.parse(text);
}

/** The document of `generated/openapi.json` when it was generated from exactly `yamlBytes`. */
function generatedParse(yamlBytes: Buffer): OpenApiDocument | undefined {
  try {
    const generated = JSON.parse(fs.readFileSync(SPEC_JSON_PATH, 'utf8')) as { source_sha256?: string; document?: OpenApiDocument };
    return generated.source_sha256 === createHash('sha256').update(yamlBytes).digest('hex') ? generated.document : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads and parses the contract, `SPEC_PATH` by default (once per process; from
 * `generated/openapi.json` when it matches the YAML's bytes), or another YAML file. Returns a fresh
 * copy on every call. Throws if the file is missing or invalid YAML.
 */
export function loadSpec(file = SPEC_PATH): OpenApiDocument {
  if (file === SPEC_PATH && cached) return structuredClone(cached);
  const bytes = fs.readFileSync(file);
  const doc = (file === SPEC_PATH ? generatedParse(bytes) : undefined) ?? (parseYaml(bytes.toString('utf8')) as OpenApiDocument);
  if (file === SPEC_PATH) cached = doc;
  return structuredClone(doc);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The extension marking an operation served by a stage before the validator instead of the handler
 * map: `x-served-by: capture` (the capture endpoints, server/capture/).
 */
export const SERVED_BY_EXTENSION = 'x-served-by';

function operationsOf(doc: OpenApiDocument, capture: boolean): SpecOperation[] {
  const ops: SpecOperation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as { operationId?: string; [SERVED_BY_EXTENSION]?: string } | undefined;
      if (op?.operationId && (op[SERVED_BY_EXTENSION] === 'capture') === capture)
        ops.push({ method, path: p, operationId: op.operationId });
    }
  }
  return ops;
}

/** The capture endpoints' operations (`x-served-by: capture`), in the spec's order. */
export function listCaptureOperations(doc: OpenApiDocument): SpecOperation[] {
  return operationsOf(doc, true);
}

/**
 * Every operation of the document that the validator and the handler map serve (those with
 * `x-served-by: capture` are not: see `listCaptureOperations`), static paths before templated ones
 * (so `rearrange/` wins over `{id}/`).
 */
export function listOperations(doc: OpenApiDocument): SpecOperation[] {
  const ops = operationsOf(doc, false);
  const params = (p: string) => (p.match(/\{/g) ?? []).length;
  return ops.sort((a, b) => params(a.path) - params(b.path));
}

/**
 * A copy of `doc` without the paths whose every operation is served before the validator
 * (`x-served-by`), and without the components only they use: what express-openapi-validator is
 * given (it never sees those requests). `doc` is not changed.
 */
export function withoutPreValidatorPaths(doc: OpenApiDocument): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const [p, item] of Object.entries(doc.paths)) {
    const ops = METHODS.map((m) => item[m] as Record<string, unknown> | undefined).filter((o) => o !== undefined);
    if (ops.length && ops.every((o) => o[SERVED_BY_EXTENSION] !== undefined)) continue;
    paths[p] = item;
  }
  return onlyReferencedComponents({ ...doc, paths });
}

/**
 * A copy of `doc` for a request-only validator: every operation keeps its status codes and their
 * descriptions but not their bodies' schemas, and `components` keep only what the rest still
 * references (transitively; `securitySchemes` are kept whole). express-openapi-validator compiles
 * every response schema at start-up even when responses are not validated (~80 ms of cold start),
 * and compiles every component schema with ajv just to resolve `$ref`s (`SchemaPreprocessor`,
 * ~150 ms of cold start); with response validation off (production) nothing reads the schemas only
 * responses use. `doc` is not changed.
 */
export function withoutResponseSchemas(doc: OpenApiDocument): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const [p, item] of Object.entries(doc.paths)) {
    const copy: Record<string, unknown> = { ...item };
    for (const method of METHODS) {
      const op = item[method] as { responses?: Record<string, { description?: string }> } | undefined;
      if (!op?.responses) continue;
      const responses: Record<string, { description: string }> = {};
      for (const [status, r] of Object.entries(op.responses)) responses[status] = { description: r?.description ?? status };
      copy[method] = { ...op, responses };
    }
    paths[p] = copy;
  }
  return onlyReferencedComponents({ ...doc, paths });
}

/** The local `$ref`s (`#/components/<section>/<name>`) found anywhere in `value`. */
function collectRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, into);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/')) into.add(v);
      else collectRefs(v, into);
    }
  }
}

/** `doc` with each `components` section reduced to the entries referenced from outside it, transitively. */
function onlyReferencedComponents(doc: OpenApiDocument): OpenApiDocument {
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const { components: _omit, ...rest } = doc as OpenApiDocument & { components?: unknown };
  const pending = new Set<string>();
  collectRefs(rest, pending);
  // kept entries as `section/name` (JSON-pointer escapes undone); a deeper pointer keeps its whole entry
  const kept = new Set<string>();
  for (const ref of pending) {
    const [section, name] = ref
      .slice('#/components/'.length)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (section === undefined || name === undefined || kept.has(`${section}/${name}`)) continue;
    kept.add(`${section}/${name}`);
    const entry = components[section]?.[name];
    if (entry !== undefined) collectRefs(entry, pending);
  }
  const reduced: Record<string, Record<string, unknown>> = {};
  for (const [section, entries] of Object.entries(components)) {
    if (!entries) continue;
    const names =
      section === 'securitySchemes' ? Object.keys(entries) : Object.keys(entries).filter((name) => kept.has(`${section}/${name}`));
    if (names.length) reduced[section] = Object.fromEntries(names.map((n) => [n, entries[n]]));
  }
  return { ...doc, components: reduced } as OpenApiDocument;
}
