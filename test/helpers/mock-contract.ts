/**
 * Shared set-up of the contract ↔ mock suites (test/contract/mock-plugin-configs.test.ts,
 * mock-resources.test.ts, mock-routes.test.ts): each file calls `useMock()` once, which starts
 * its own Prism mock (`npm run mock`, test/helpers/prism.ts) before
 * its tests and stops it after them, and then reads `mock` and `api` (a typed client on the mock,
 * key `phx_mock`). Also: the declared examples as the mock serves them (`exampleOf`: the examples'
 * links to the server, `http://127.0.0.1:8000/api/…`, point at the mock, as scripts/mock.mjs
 * rewrites them), `expectStatus` that records each operationId called (`called`, one set per test
 * file: vitest loads this module anew for each file), and the shape checks shared by the files.
 *
 * ```ts
 * useMock();
 * it('…', async () => {
 *   const body = await expectStatus('projects_list', api.GET('/api/projects/', {}), 200);
 *   expect(body).toEqual(exampleOf('projects_list', '200'));
 * });
 * ```
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { createClient, type EnvApiClient } from '../../client/index.js';
import { startPrismMock, type PrismMock } from './prism.js';
import { deref, handWrittenOperations, opObject } from './spec.js';

/** A JSON object as the tests read it. */
export type Json = Record<string, unknown>;

/** How long Prism may take to say it listens (the machine may be loaded: minutes, not seconds). */
const START_TIMEOUT_MS = 120_000;

/** The running mock of the current test file (set by `useMock()`'s beforeAll). */
export let mock: PrismMock;
/** The project's typed client on `mock` (key `phx_mock`; Prism accepts any bearer key). */
export let api: EnvApiClient;

/** Starts the mock before the calling file's tests and stops it after them. */
export function useMock(): void {
  beforeAll(
    async () => {
      mock = await startPrismMock({ timeoutMs: START_TIMEOUT_MS });
      api = createClient({ baseUrl: mock.url, apiKey: 'phx_mock' });
    },
    3 * START_TIMEOUT_MS + 30_000,
  );
  afterAll(async () => {
    await mock?.close();
  }, 180_000);
}

/** The operationIds called so far by the current test file (through `expectStatus`, or added by hand). */
export const called = new Set<string>();

/** The hand-written operationIds of openapi.yaml whose tags satisfy `select`, sorted. */
export function handWrittenOperationIds(select: (tags: string[]) => boolean): string[] {
  return handWrittenOperations
    .filter((o) => select((opObject(o).tags ?? []) as string[]))
    .map((o) => o.operationId)
    .sort();
}

/** The server's origin in the examples' links, which the mock serves as its own (scripts/mock.mjs). */
const SERVER_ORIGIN = 'http://127.0.0.1:8000';

/** An example as the mock serves it: its links to `http://127.0.0.1:8000/api/…` at the mock's origin. */
function asServed(value: unknown): unknown {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value).split(`${SERVER_ORIGIN}/api/`).join(`${mock.url}/api/`)) as unknown;
}

/**
 * The value of a declared example of a response, as the mock serves it (`asServed`): the first
 * one (what Prism serves by default), or the one named `name`.
 */
export function exampleOf(operationId: string, status: string, mediaType = 'application/json', name?: string): unknown {
  return asServed(declaredExampleOf(operationId, status, mediaType, name));
}

/** The value of a declared example of a response, as the spec writes it. */
export function declaredExampleOf(operationId: string, status: string, mediaType = 'application/json', name?: string): unknown {
  const responses = opObject(operationId).responses as Record<string, unknown>;
  const response = deref<{ content?: Record<string, { example?: unknown; examples?: Record<string, unknown> }> }>(responses[status]);
  const media = response.content?.[mediaType];
  if (!media) throw new Error(`${operationId} declares no ${mediaType} content for ${status}`);
  if (media.examples) {
    const key = name ?? Object.keys(media.examples)[0];
    if (!key || !(key in media.examples)) throw new Error(`${operationId} ${status} has no example ${name ?? ''}`);
    return deref<{ value: unknown }>(media.examples[key]).value;
  }
  if ('example' in media) return media.example;
  throw new Error(`${operationId} ${status} ${mediaType} has no example`);
}

interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits a client call made for `operationId`, records it, asserts the status and returns the body. */
export async function expectStatus<T>(operationId: string, call: Promise<Result<T>>, status: number): Promise<T> {
  const { data, error, response } = await call;
  called.add(operationId);
  expect(response.status, `${operationId}: ${JSON.stringify(error ?? data)}`).toBe(status);
  return (data ?? error) as T;
}

/** Narrows a JSON-or-CSV answer to its JSON variant (the typed client asked for JSON). */
export function asJson<T>(body: T): Exclude<T, string> {
  expect(body).not.toBeTypeOf('string');
  return body as Exclude<T, string>;
}

/** An ISO 8601 timestamp in UTC. */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** A UUID, any version. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Asserts a paginated answer's frame (`count`, `results`, `next`, `previous`) and returns it. */
export function expectPage(x: unknown): Json & { results: unknown[] } {
  const p = x as Json & { results: unknown[] };
  expect(p.count).toBeTypeOf('number');
  expect(Array.isArray(p.results)).toBe(true);
  expect(p).toHaveProperty('next');
  expect(p).toHaveProperty('previous');
  return p;
}

/** Raw GET against the mock (for non-JSON answers and missing keys). */
export function rawGet(pathAndQuery: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mock.url + pathAndQuery, { headers });
}

/** The header of an authenticated raw request (any key will do for Prism). */
export const auth = { Authorization: 'Bearer phx_mock' };
/** The path parameters of project 1. */
export const project = { project_id: '1' };
