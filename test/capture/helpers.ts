/**
 * Helpers of the capture tests: sending a payload to a capture path of a test server, and reading
 * back what was stored through the events and persons APIs (the way a user sees it).
 */
import { gzipSync } from 'node:zlib';
import type { TestServer } from '../helpers/server.js';

/** A stored event as the events list returns it (the fields the tests read). */
export interface ListedEvent {
  id: string;
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  timestamp: string;
  elements_chain: string;
  elements: Array<Record<string, unknown>>;
  person: { distinct_ids: string[]; properties: Record<string, unknown>; is_identified: boolean } | null;
}

/** A person as the persons list returns it. */
export interface ListedPerson {
  id: number;
  uuid: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  is_identified: boolean;
}

/** POSTs `body` (an object: JSON; a string or Buffer: as is) to a capture path, without any API key. */
export function capture(
  t: TestServer,
  path: string,
  body: unknown,
  init: { headers?: Record<string, string>; method?: string; gzip?: boolean } = {},
): Promise<Response> {
  let payload: string | Buffer = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...init.headers };
  if (init.gzip) {
    payload = gzipSync(payload);
    headers['Content-Encoding'] ??= 'gzip';
  }
  return fetch(t.url + path, { method: init.method ?? 'POST', headers, body: payload });
}

/** Every stored event of project 1 (newest first), through `GET /api/environments/1/events/`. */
export async function listEvents(t: TestServer, query = ''): Promise<ListedEvent[]> {
  const res = await t.fetch(`/api/environments/${t.boot.team.id}/events/?limit=1000&include_person=true${query}`);
  if (res.status !== 200) throw new Error(`events list answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { results: ListedEvent[] }).results;
}

/** The person of a distinct id of project 1, through `GET /api/environments/1/persons/?distinct_id=`. */
export async function personOf(t: TestServer, distinctId: string): Promise<ListedPerson | undefined> {
  const res = await t.fetch(`/api/environments/${t.boot.team.id}/persons/?distinct_id=${encodeURIComponent(distinctId)}`);
  if (res.status !== 200) throw new Error(`persons list answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { results: ListedPerson[] }).results[0];
}

/** A new event uuid (version 4). */
export function uuid(): string {
  return crypto.randomUUID();
}
