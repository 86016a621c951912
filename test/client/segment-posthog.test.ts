/**
 * Segment's PostHog destination, `actions-posthog` of `@segment/action-destinations` (devDependency,
 * exact version; the destination as Segment runs it, its `dist/destinations/posthog`), driven by
 * `@segment/actions-core`'s own test harness (`createTestIntegration`), whose requests are real
 * fetches (cross-fetch → node-fetch → node:http) to the test server as `endpoint`. What it sends:
 * - the `event` action (Track Event, and the Page View preset: `$pageview` with `$current_url`):
 *   `POST {endpoint}/batch/` `{api_key, historical_migration, batch: [{event, timestamp,
 *   properties: {…, distinct_id, $process_person_profile, $ip}}]}`, one request per event, or one
 *   for all with `enable_batching` (`testBatchAction`);
 * - the `identify` action: `POST {endpoint}/i/v0/e/` `{event: '$identify', api_key, distinct_id,
 *   properties: {$set: <traits>, $ip}, timestamp}`.
 * The project token travels in the body only (no auth header). Asserted: the harness sees 200
 * answers; the events list shows each event with its name, distinct id, properties and timestamp
 * (envapi stores a `historical_migration` batch like any other); `$process_person_profile` is the
 * mapping's `anonymous_event_capture` (default false: a personless event, no person made, the flag
 * kept; true: the person made); the person gets the identify's `$set` traits. An unknown api_key
 * makes the harness throw its HTTPError with the 401, and nothing is stored. The tests run in order
 * on one server: each reads what the ones before it stored.
 *
 * Both packages are CommonJS and loaded with `createRequire`: actions-core's ESM build has
 * directory imports plain Node refuses, and the action-destinations package root loads every
 * destination (one of which needs an undeclared `xml-js`), so only the posthog folder is loaded.
 */
import { createRequire } from 'node:module';
import type { Settings } from '@segment/action-destinations/dist/destinations/posthog/generated-types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { listEvents, personOf, type ListedEvent } from '../capture/helpers.js';

/**
 * What this file uses of actions-core and of the destination, typed here: actions-core's own
 * declarations reach cross-fetch's, which pull in the DOM lib (`/// <reference lib="dom" />`) and
 * with it DOM typings of `fetch` for the whole project (tsc then rejects a Buffer body elsewhere).
 */
interface HarnessOptions {
  settings: Settings;
  mapping?: Record<string, unknown>;
  useDefaultMappings?: boolean;
}
/** One response the harness got: status, URL, parsed body, and the request's options (`json`: the body sent). */
interface HarnessResponse {
  status: number;
  url: string;
  data: unknown;
  options: { json?: unknown };
}
interface TestDestination {
  testAction(action: string, o: HarnessOptions & { event: SegmentEvent }): Promise<HarnessResponse[]>;
  testBatchAction(action: string, o: HarnessOptions & { events: SegmentEvent[] }): Promise<HarnessResponse[]>;
  /** the steps' log; a batch's first step has each event's `multistatus` */
  results: Array<{ multistatus?: Array<{ status: number }> }>;
}
type SegmentEvent = Record<string, unknown>;
interface PosthogDestination {
  name: string;
  presets?: Array<{ name: string; mapping?: Record<string, unknown> }>;
}
interface ActionsCore {
  createTestIntegration(destination: PosthogDestination): TestDestination;
  /** a Segment event: the given fields over the harness's defaults (userId, context.ip 8.8.8.8, …), shallowly */
  createTestEvent(event: SegmentEvent): SegmentEvent;
}

const require = createRequire(import.meta.url);
const { createTestEvent, createTestIntegration } = require('@segment/actions-core') as ActionsCore;
const posthog = (require('@segment/action-destinations/dist/destinations/posthog') as { default: PosthogDestination }).default;

let t: TestServer;
let settings: Settings;

beforeAll(async () => {
  t = await startTestServer();
  settings = { api_key: t.boot.team.api_token, project_id: String(t.boot.team.id), endpoint: t.url, historical_migration: true };
});
afterAll(async () => {
  await t.close();
});

/** The stored event of this name and distinct id (exactly one). */
async function stored(event: string, distinctId: string): Promise<ListedEvent> {
  const found = (await listEvents(t)).filter((e) => e.event === event && e.distinct_id === distinctId);
  expect(found, `${event} of ${distinctId}`).toHaveLength(1);
  return found[0]!;
}

const at = (iso: string): number => new Date(iso).getTime();

describe("Segment's PostHog destination (actions-posthog) through actions-core's harness", () => {
  it('Track Event with historical_migration: /batch/ answers 200, the event is stored with its name, distinct id, properties, $ip and timestamp', async () => {
    const dest = createTestIntegration(posthog);
    const ts = '2025-11-03T08:15:30.250Z';
    const responses = await dest.testAction('event', {
      event: createTestEvent({
        type: 'track',
        event: 'Order Completed',
        userId: 'seg-ada',
        properties: { order_id: 'o-1042', revenue: 129.5, products: [{ sku: 'hb-pro' }] },
        timestamp: ts,
        receivedAt: ts,
      }),
      settings,
      useDefaultMappings: true,
    });
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ status: 200, url: `${t.url}/batch/`, data: { status: 'Ok' } });
    expect(responses[0]!.options.json).toMatchObject({ api_key: t.boot.team.api_token, historical_migration: true });

    const e = await stored('Order Completed', 'seg-ada');
    expect(e.properties).toMatchObject({
      order_id: 'o-1042',
      revenue: 129.5,
      products: [{ sku: 'hb-pro' }],
      distinct_id: 'seg-ada',
      $ip: '8.8.8.8',
      $process_person_profile: false,
    });
    expect(at(e.timestamp)).toBe(at(ts));
    // anonymous_event_capture (default false) is sent as $process_person_profile: a personless event
    expect(await personOf(t, 'seg-ada')).toBeUndefined();
  });

  it('the Page View preset: $pageview with $current_url, and anonymous_event_capture true processes the person', async () => {
    const dest = createTestIntegration(posthog);
    const preset = posthog.presets?.find((p) => p.name === 'Page View');
    expect(preset).toBeDefined();
    const ts = '2025-11-03T08:16:00.000Z';
    const responses = await dest.testAction('event', {
      event: createTestEvent({
        type: 'page',
        name: 'Pricing',
        userId: 'seg-ada',
        properties: { title: 'Pricing · Hedgebox', path: '/pricing' },
        context: { ip: '203.0.113.7', page: { url: 'https://hedgebox.net/pricing' } },
        timestamp: ts,
        receivedAt: ts,
      }),
      settings,
      mapping: { ...preset?.mapping, anonymous_event_capture: true },
      useDefaultMappings: true,
    });
    expect(responses.map((r) => r.status)).toEqual([200]);

    const e = await stored('$pageview', 'seg-ada');
    expect(e.properties).toMatchObject({
      title: 'Pricing · Hedgebox',
      path: '/pricing',
      $current_url: 'https://hedgebox.net/pricing',
      $ip: '203.0.113.7',
    });
    expect(at(e.timestamp)).toBe(at(ts));
    // $process_person_profile: true: the person is made, and the flag not stored (PostHog's ingestion drops it)
    expect(e.properties).not.toHaveProperty('$process_person_profile');
    expect(await personOf(t, 'seg-ada')).toMatchObject({ distinct_ids: ['seg-ada'] });
  });

  it('testBatchAction with enable_batching: one /batch/ request for three events, each stored, multistatus 200', async () => {
    const dest = createTestIntegration(posthog);
    const times = ['2025-11-02T10:00:00.000Z', '2025-11-02T10:00:01.000Z', '2025-11-02T10:00:02.000Z'];
    const responses = await dest.testBatchAction('event', {
      events: [
        createTestEvent({ event: 'File Uploaded', userId: 'seg-bo', properties: { size_mb: 12 }, receivedAt: times[0] }),
        createTestEvent({ event: 'File Shared', userId: 'seg-bo', properties: { with: 2 }, receivedAt: times[1] }),
        createTestEvent({ event: 'File Uploaded', userId: 'seg-cy', properties: { size_mb: 3 }, receivedAt: times[2] }),
      ],
      settings,
      mapping: { enable_batching: true },
      useDefaultMappings: true,
    });
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ status: 200, url: `${t.url}/batch/` });
    const body = responses[0]!.options.json as { historical_migration: boolean; batch: unknown[] };
    expect(body.historical_migration).toBe(true);
    expect(body.batch).toHaveLength(3);
    expect(dest.results[0]?.multistatus?.map((m) => m.status)).toEqual([200, 200, 200]);

    const uploaded = await stored('File Uploaded', 'seg-bo');
    expect(uploaded.properties).toMatchObject({ size_mb: 12, $ip: '8.8.8.8' });
    expect(at(uploaded.timestamp)).toBe(at(times[0]!));
    expect((await stored('File Shared', 'seg-bo')).properties).toMatchObject({ with: 2 });
    const other = await stored('File Uploaded', 'seg-cy');
    expect(other.properties).toMatchObject({ size_mb: 3 });
    expect(at(other.timestamp)).toBe(at(times[2]!));
  });

  it('Identify: $identify to /i/v0/e/ answers 200, the event is stored and the person has the $set traits', async () => {
    const dest = createTestIntegration(posthog);
    const ts = '2025-11-03T08:20:00.000Z';
    const traits = { email: 'ada@hedgebox.net', name: 'Ada Lovelace', plan: 'pro' };
    const responses = await dest.testAction('identify', {
      event: createTestEvent({ type: 'identify', userId: 'seg-ada', traits, timestamp: ts }),
      settings,
      useDefaultMappings: true,
    });
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ status: 200, url: `${t.url}/i/v0/e/` });
    expect(responses[0]!.options.json).toMatchObject({ event: '$identify', distinct_id: 'seg-ada', properties: { $set: traits } });

    const e = await stored('$identify', 'seg-ada');
    expect(e.properties).toMatchObject({ $set: traits, $ip: '8.8.8.8' });
    expect(at(e.timestamp)).toBe(at(ts));
    const person = await personOf(t, 'seg-ada');
    expect(person?.distinct_ids).toEqual(['seg-ada']);
    expect(person?.properties).toMatchObject(traits);
    // the events list shows the person (its email and name, as PostHog's list does) on the
    // person-processing $pageview and on the personless track event alike: by distinct id
    for (const name of ['$pageview', 'Order Completed']) {
      const e = await stored(name, 'seg-ada');
      expect(e.person, name).toMatchObject({ distinct_ids: ['seg-ada'], properties: { email: traits.email, name: traits.name } });
    }
  });

  it('an unknown api_key: the harness throws its HTTPError with the 401, and nothing is stored', async () => {
    const before = (await listEvents(t)).length;
    const dest = createTestIntegration(posthog);
    const rejected = dest.testAction('event', {
      event: createTestEvent({ event: 'Lost Event', userId: 'seg-ada' }),
      settings: { ...settings, api_key: 'phc_NoSuchProjectToken0000000000000000000000' },
      useDefaultMappings: true,
    });
    await expect(rejected).rejects.toMatchObject({ name: 'HTTPError', response: { status: 401 } });
    expect((await listEvents(t)).length).toBe(before);
  });
});
