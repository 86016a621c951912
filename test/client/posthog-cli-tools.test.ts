/**
 * PostHog's agent tool catalogue, `@posthog/cli` 0.18.3 (npm devDependency, its install script
 * denied), run unchanged through its own `call --json` command against the test server: the tools
 * outside analytics, persons (`persons-values-retrieve`, `persons-cohorts-retrieve`,
 * `persons-property-set`, `persons-property-delete`, `persons-bulk-delete`), elements
 * (`elements-stats-retrieve`), taxonomy (`event-definition-create`, `event-definition-update`,
 * `property-definition-update`) and identity
 * (`project-get`, `project-settings-update`, `org-members-list`, `user-settings-update`). Each
 * tool must succeed (exit 0) and the server must then show what it did.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { capture, personOf } from '../capture/helpers.js';

const run = promisify(execFile);
const CLI = 'node_modules/@posthog/cli/lib/posthog-api-cli.mjs';

let t: TestServer;
let P: number;
let key: string;

/** Runs one tool; answers its exit code and its parsed `--json` output (or stderr when it failed). */
async function tool(name: string, input: Record<string, unknown>): Promise<{ code: number; out: Record<string, unknown>; err: string }> {
  const args = [CLI, 'call', '--json', '--confirm', name, JSON.stringify(input)];
  const env = { ...process.env, POSTHOG_HOST: t.url, POSTHOG_API_KEY: key, POSTHOG_PROJECT_ID: String(P) };
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env, timeout: 60_000 });
    return { code: 0, out: (stdout.trim() ? JSON.parse(stdout) : {}) as Record<string, unknown>, err: stderr };
  } catch (e) {
    const failed = e as { code?: number; stderr?: string; stdout?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : 1,
      out: {},
      err: `${failed.stderr ?? ''}${failed.stdout ?? ''}` || String(e),
    };
  }
}

beforeAll(async () => {
  t = await startTestServer();
  P = t.boot.team.id;
  key = await t.key(['*']);
  const batch = [
    ['ada', { email: 'ada@hedgebox.net', plan: 'pro' }],
    ['bob', { email: 'bob@hedgebox.net', plan: 'pro' }],
    ['cyd', { email: 'cyd@hedgebox.net', plan: 'free' }],
  ].map(([id, set]) => ({ event: 'signed up', distinct_id: id, properties: { $set: set } }));
  const click = {
    event: '$autocapture',
    distinct_id: 'ada',
    properties: { $elements_chain: 'button:nth-child="1"nth-of-type="1"text="Sign up"' },
  };
  expect((await capture(t, '/batch/', { api_key: t.boot.team.api_token, batch: [...batch, click, click] })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('@posthog/cli persons tools', () => {
  it('persons-values-retrieve and persons-cohorts-retrieve', async () => {
    const values = await tool('persons-values-retrieve', { key: 'plan' });
    expect(values.code, values.err).toBe(0);
    expect(values.out).toEqual({
      results: [
        { name: 'pro', count: 2 },
        { name: 'free', count: 1 },
      ],
      refreshing: false,
    });
    const ada = (await personOf(t, 'ada'))!;
    const cohorts = await tool('persons-cohorts-retrieve', { person_id: ada.uuid });
    expect(cohorts.code, cohorts.err).toBe(0);
    expect(cohorts.out).toEqual({ results: [] });
  });

  it('persons-property-set and persons-property-delete change the person', async () => {
    const bob = (await personOf(t, 'bob'))!;
    const set = await tool('persons-property-set', { id: bob.uuid, key: 'plan', value: 'enterprise' });
    expect(set.code, set.err).toBe(0);
    expect((await personOf(t, 'bob'))!.properties.plan).toBe('enterprise');
    const del = await tool('persons-property-delete', { id: bob.uuid, unset: ['plan', 'email'] });
    expect(del.code, del.err).toBe(0);
    expect(del.out).toEqual({ success: true });
    expect((await personOf(t, 'bob'))!.properties).toEqual({});
  });

  it('persons-bulk-delete deletes by distinct id', async () => {
    const r = await tool('persons-bulk-delete', { distinct_ids: ['cyd'] });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatchObject({ persons_found: 1, persons_deleted: 1 });
    expect(await personOf(t, 'cyd')).toBeUndefined();
  });
});

describe('@posthog/cli elements tool', () => {
  it('elements-stats-retrieve counts the autocaptured clicks', async () => {
    const r = await tool('elements-stats-retrieve', { include: ['$autocapture'] });
    expect(r.code, r.err).toBe(0);
    const results = r.out.results as { count: number; type: string; elements: { text: string }[] }[];
    expect(results.map((x) => [x.type, x.count, x.elements[0]!.text])).toEqual([['$autocapture', 2, 'Sign up']]);
  });
});

describe('@posthog/cli taxonomy tools', () => {
  it('event-definition-create, then event-definition-update through by_name/', async () => {
    const created = await tool('event-definition-create', {
      eventName: 'checkout_started',
      data: { description: 'A visitor opened the checkout.', tags: ['revenue'] },
    });
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatchObject({ name: 'checkout_started', description: 'A visitor opened the checkout.', tags: ['revenue'] });
    const updated = await tool('event-definition-update', { eventName: 'signed up', data: { description: 'Signed up.', verified: true } });
    expect(updated.code, updated.err).toBe(0);
    const def = (await t.json(`/api/projects/${P}/event_definitions/by_name/?name=signed%20up`)) as Record<string, unknown>;
    expect(def).toMatchObject({ description: 'Signed up.', verified: true, verified_by: { id: t.boot.user.id } });
    const listed = (await t.json(`/api/projects/${P}/event_definitions/?search=checkout`)) as { results: { name: string }[] };
    expect(listed.results.map((d) => d.name)).toEqual(['checkout_started']);
  });

  it('property-definition-update finds the person property in the list and edits it', async () => {
    const r = await tool('property-definition-update', {
      propertyName: 'plan',
      type: 'person',
      data: { description: 'The billing plan.', tags: ['billing'], hidden: false },
    });
    expect(r.code, r.err).toBe(0);
    const page = (await t.json(`/api/projects/${P}/property_definitions/?type=person&properties=plan`)) as { results: unknown[] };
    expect(page.results).toEqual([expect.objectContaining({ name: 'plan', description: 'The billing plan.', tags: ['billing'] })]);
  });
});

describe('@posthog/cli identity tools', () => {
  it('project-get and project-settings-update', async () => {
    const got = await tool('project-get', {});
    expect(got.code, got.err).toBe(0);
    expect(got.out).toMatchObject({ id: P, name: t.boot.team.name });
    const updated = await tool('project-settings-update', { id: P, timezone: 'Europe/Paris' });
    expect(updated.code, updated.err).toBe(0);
    expect(updated.out).toMatchObject({ id: P, timezone: 'Europe/Paris' });
    expect(((await t.json(`/api/projects/${P}/`)) as { timezone: string }).timezone).toBe('Europe/Paris');
  });

  it('org-members-list and user-settings-update', async () => {
    const members = await tool('org-members-list', {});
    expect(members.code, members.err).toBe(0);
    const results = (members.out.results ?? members.out) as { user: { email: string } }[];
    expect(JSON.stringify(results)).toContain(t.boot.user.email);
    const user = await tool('user-settings-update', { uuid: '@me', first_name: 'Ada' });
    expect(user.code, user.err).toBe(0);
    expect(((await t.json('/api/users/@me/')) as { first_name: string }).first_name).toBe('Ada');
  });
});
