/**
 * The fuzzers' fixture: what `seed` puts into a fresh test server before any fuzzed request —
 * plugin configs, dashboards (with tiles), events and persons in project 1 and in a private
 * project B of the same organization, an explicit member of B, events in another organization's
 * project, and keys limited to project 1 or with no scope. Project B's ids and markers are what the
 * isolation check looks for in answers to project 1.
 */
import { randomUUID } from 'node:crypto';
import type { TestServer } from '../helpers/server.js';
import type { EventInput } from '../../server/storage/events/write.js';
import { applyPersonUpdates, insertEvents } from '../helpers/events-store.js';
import { formatTimestamp } from '../../server/storage/timestamps.js';

/** The seeded test server: its keys, projects, plugins, and the ids of each project's objects. */
export interface Fixture {
  t: TestServer;
  /** key with `*` limited to project 1 */
  p1Key: string;
  /** a key with no scopes (every operation: 403) */
  noScopeKey: string;
  projectB: number;
  otherOrgTeam: number;
  destinationPluginId: number;
  frontendPluginId: number;
  /** project 1's objects */
  p1: { configs: number[]; dashboards: number[]; tiles: number[]; events: string[]; distinctIds: string[]; memberUuids: string[] };
  /** project B's objects (must never show up for project 1) */
  b: {
    configs: number[];
    dashboards: number[];
    tiles: number[];
    events: string[];
    distinctIds: string[];
    memberUuids: string[];
    markers: string[];
  };
}

/** The JSON body of a seeding answer; throws on a non-2xx. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(res: Response): Promise<any> {
  const text = await res.text();
  if (!res.ok) throw new Error(`seeding failed: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** POSTs `body` as JSON with the bootstrap key (a seeding step). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function post(t: TestServer, path: string, body: unknown): Promise<any> {
  return json(await t.fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
}

/** A `create_from_template_json` body with two text tiles. */
function template(name: string) {
  return {
    template: {
      template_name: name,
      dashboard_description: `${name} description`,
      dashboard_filters: {},
      tiles: [
        { type: 'TEXT', body: `${name} text tile` },
        { type: 'TEXT', body: `${name} second tile`, layouts: {} },
      ],
    },
    name,
  };
}

/** Twelve events of three persons in `teamId`, written through the store, each with `prefix` in its ids and properties. */
async function seedEvents(
  t: TestServer,
  teamId: number,
  prefix: string,
  extra: Record<string, unknown> = {},
): Promise<{ uuids: string[]; distinctIds: string[] }> {
  const distinctIds = [0, 1, 2].map((i) => `${prefix}-distinct-${i}-${randomUUID()}`);
  const now = Date.now();
  const inputs: EventInput[] = Array.from({ length: 12 }, (_, i) => ({
    uuid: randomUUID(),
    event: i % 3 === 0 ? '$pageview' : i % 3 === 1 ? `${prefix} custom event` : '$autocapture',
    distinct_id: distinctIds[i % 3] as string,
    properties: {
      $browser: i % 2 ? 'Chrome' : 'Firefox',
      $current_url: `https://example.com/${prefix}/${i}`,
      marker: `${prefix}-marker-${i}`,
      n: i,
      "' OR 1=1 --": 'sql key',
      '%': '100%',
      ...extra,
    },
    timestamp: formatTimestamp(new Date(now - i * 60_000)),
    elements_chain: i % 3 === 2 ? 'a.btn:attr__href="/x"nth-child="1"nth-of-type="1"text="Go"' : '',
  }));
  await insertEvents(t.store, teamId, inputs);
  await applyPersonUpdates(
    t.store,
    teamId,
    distinctIds.map((d, i) => ({ distinct_id: d, set: { email: `${prefix}-${i}@example.com`, name: `${prefix} person ${i}` } })),
  );
  return { uuids: inputs.map((e) => e.uuid), distinctIds };
}

/** Seeds `t` (see the module's docstring); call once per test server. */
export async function seed(t: TestServer): Promise<Fixture> {
  const destination = t.boot.plugins.find((p) => p.name === 'Customer.io');
  const frontend = t.boot.plugins.find((p) => p.name === 'Notification Bar');
  if (!destination || !frontend) throw new Error('bootstrap catalog lacks Customer.io or Notification Bar');
  const projectB = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Fuzz project B', access_control: true }))
    .id;
  const other = await t.otherOrganization();
  const fx: Fixture = {
    t,
    p1Key: await t.key(['*'], { projects: [1] }),
    noScopeKey: await t.key([]),
    projectB,
    otherOrgTeam: other.team.id,
    destinationPluginId: destination.id,
    frontendPluginId: frontend.id,
    p1: { configs: [], dashboards: [], tiles: [], events: [], distinctIds: [], memberUuids: [] },
    b: { configs: [], dashboards: [], tiles: [], events: [], distinctIds: [], memberUuids: [], markers: [] },
  };
  for (const [project, bag, prefix] of [
    [1, fx.p1, 'p1'],
    [projectB, fx.b, 'B-secret'],
  ] as const) {
    for (const [i, plugin] of [destination.id, frontend.id, destination.id, frontend.id].entries()) {
      const name = `${prefix} config ${i} ${randomUUID()}`;
      const c = await post(t, `/api/environments/${project}/pipeline_frontend_apps_configs/`, {
        plugin,
        order: i,
        enabled: i % 2 === 0,
        name,
        config: {},
      });
      bag.configs.push(c.id as number);
      if (prefix !== 'p1') fx.b.markers.push(name);
    }
    for (let i = 0; i < 2; i += 1) {
      const name = `${prefix} dashboard ${i} ${randomUUID()}`;
      const d = await post(t, `/api/environments/${project}/dashboards/create_from_template_json/`, template(name));
      bag.dashboards.push(d.id as number);
      for (const tile of (d.tiles ?? []) as Array<{ id: number }>) bag.tiles.push(tile.id);
      if (prefix !== 'p1') fx.b.markers.push(name);
    }
    const ev = await seedEvents(t, project, prefix, prefix === 'p1' ? { redos: 'a'.repeat(24) + '!' } : {});
    bag.events.push(...ev.uuids);
    bag.distinctIds.push(...ev.distinctIds);
  }
  // an explicit member in the private project B
  const member = await t.user({ email: `b-member-${randomUUID()}@example.com` });
  const m = await post(t, `/api/environments/${projectB}/explicit_members/`, { user_uuid: member.uuid, level: 1 });
  fx.b.memberUuids.push(member.uuid);
  fx.b.markers.push(m.id as string, member.email);
  // events in the other organization's project too
  const otherEv = await seedEvents(t, other.team.id, 'other-org-secret');
  fx.b.events.push(...otherEv.uuids);
  fx.b.distinctIds.push(...otherEv.distinctIds);
  // a user of the bootstrap organization to add to projects (member uuid for project 1 paths)
  const candidate = await t.user({ email: `candidate-${randomUUID()}@example.com` });
  fx.p1.memberUuids.push(candidate.uuid, t.boot.user.uuid);
  return fx;
}
