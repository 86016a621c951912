/**
 * PostHog's own Node SDK, `posthog-node` (devDependency, exact version), pointed at the test
 * server as a user would (`host`), unchanged: it sends gzip batches to `POST /batch/` with the
 * project API token. Capture, identify, alias and flush; then the events list shows the events
 * with the person merged, and `person_id` finds them all. A flush with an unknown token rejects
 * (401, which the SDK does not retry).
 */
import { PostHog } from 'posthog-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { listEvents, personOf } from '../capture/helpers.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

function sdk(token: string): PostHog {
  return new PostHog(token, { host: t.url, flushAt: 1, flushInterval: 0, fetchRetryCount: 0 });
}

describe('posthog-node against the server', () => {
  it('capture, identify, alias and flush: the events are stored, the person merged, person_id finds them all', async () => {
    const posthog = sdk(t.boot.team.api_token);
    posthog.capture({
      distinctId: 'anon-7f3a',
      event: 'viewed pricing',
      properties: { plan: 'pro', $current_url: 'https://hedgebox.net/pricing' },
    });
    posthog.identify({
      distinctId: 'ada@hedgebox.net',
      properties: { $anon_distinct_id: 'anon-7f3a', email: 'ada@hedgebox.net', name: 'Ada' },
    });
    posthog.alias({ distinctId: 'ada@hedgebox.net', alias: 'crm-4242' });
    posthog.capture({ distinctId: 'crm-4242', event: 'upgraded plan', properties: { plan: 'business' } });
    await posthog.flush();
    await posthog.shutdown();

    const events = await listEvents(t);
    expect(events.map((e) => e.event).sort()).toEqual(['$create_alias', '$identify', 'upgraded plan', 'viewed pricing']);
    const viewed = events.find((e) => e.event === 'viewed pricing')!;
    expect(viewed.properties).toMatchObject({ plan: 'pro', $lib: 'posthog-node', $current_url: 'https://hedgebox.net/pricing' });
    expect(viewed.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);

    const person = await personOf(t, 'crm-4242');
    expect(person?.distinct_ids.sort()).toEqual(['ada@hedgebox.net', 'anon-7f3a', 'crm-4242']);
    expect(person?.is_identified).toBe(true);
    expect(person?.properties).toMatchObject({ email: 'ada@hedgebox.net', name: 'Ada' });
    // every event, whichever of the three ids it was sent with, shows the merged person
    for (const e of events) expect(e.person?.properties, e.event).toMatchObject({ email: 'ada@hedgebox.net', name: 'Ada' });

    const byPerson = await listEvents(t, `&person_id=${person!.uuid}`);
    expect(byPerson.map((e) => e.event).sort()).toEqual(['$create_alias', '$identify', 'upgraded plan', 'viewed pricing']);
  });

  it('a flush with a token no project has rejects with the 401, and nothing is stored', async () => {
    const before = (await listEvents(t)).length;
    const posthog = sdk('phc_NoSuchProjectToken0000000000000000000000');
    const errors: unknown[] = [];
    posthog.on('error', (err) => errors.push(err));
    posthog.capture({ distinctId: 'someone', event: 'lost' });
    await expect(posthog.flush()).rejects.toMatchObject({ status: 401 });
    await posthog.shutdown().catch(() => undefined);
    expect((await listEvents(t)).length).toBe(before);
  });
});
