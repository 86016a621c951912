/**
 * PostHog's own MCP tools, `@posthog/agent-toolkit` (npm, pinned devDependency), run unchanged
 * against the test server: `getTools()` first reads `GET /api/personal_api_keys/@current` (no
 * trailing slash) to decide which tools to offer, the default project comes from
 * `GET /api/users/@me/` (or the key's single `scoped_teams` entry), and the tools for
 * organizations, projects and dashboards call `/api/organizations/…` and
 * `/api/projects/{id}/dashboards/…`. Each tool must succeed with the server's data (the toolkit
 * validates every answer with its own zod schemas and throws on a mismatch).
 *
 * Also `event-definitions-list` (`GET /api/projects/{id}/event_definitions/`, following `next`).
 * Also `query-run` (`POST /api/environments/{id}/query/` with a DataVisualizationNode or an
 * InsightVizNode). Not covered: tools whose endpoints envapi does not serve (feature flags,
 * experiments, surveys).
 *
 * The toolkit keeps its state (key record, project, organization) in a process-wide cache keyed by
 * a hash of the key, so every test makes its own key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostHogAgentToolkit } from '@posthog/agent-toolkit';
import { startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let second: number;

beforeAll(async () => {
  t = await startTestServer();
  second = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Hedgebox Staging' })).id;
});

afterAll(async () => {
  await t?.close();
});

/** A toolkit for a new key with these scopes (optionally limited to projects), its tools by name and its context. */
async function toolkitFor(scopes: string[], projects?: number[]) {
  const key = await t.key(scopes, projects ? { projects } : {});
  const toolkit = new PostHogAgentToolkit({ posthogApiToken: key, posthogApiBaseUrl: t.url });
  const tools = await toolkit.getTools();
  const context = toolkit.getContext();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  /** Runs a tool by name and parses its text answer as JSON. */
  async function run<T>(name: string, params: Record<string, unknown> = {}): Promise<T> {
    return JSON.parse(await runText(name, params)) as T;
  }
  /** Runs a tool by name and returns its text answer. */
  async function runText(name: string, params: Record<string, unknown> = {}): Promise<string> {
    const tool = byName.get(name);
    if (!tool) throw new Error(`tool ${name} not offered`);
    const out = (await tool.handler(context, params)) as { content: Array<{ type: string; text: string }> };
    return out.content[0]!.text;
  }
  return { tools, context, run, runText, names: [...byName.keys()] };
}

const PAGEVIEWS_QUERY = {
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }], interval: 'day' },
};

/** Creates a dashboard in a project from a template with one insight tile (through the API). */
async function createDashboard(project: number, name: string): Promise<number> {
  const res = await t.fetch(`/api/projects/${project}/dashboards/create_from_template_json/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      template: {
        template_name: name,
        dashboard_description: `${name} numbers`,
        dashboard_filters: {},
        tags: [],
        tiles: [{ type: 'INSIGHT', name: 'Pageviews', description: 'Daily pageviews', query: PAGEVIEWS_QUERY, layouts: {}, color: null }],
      },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number }).id;
}

describe('@posthog/agent-toolkit against envapi', () => {
  it('getTools() offers the tools a `*` key may use, after reading the key record', async () => {
    const { names } = await toolkitFor(['*']);
    for (const name of [
      'organizations-get',
      'organization-details-get',
      'projects-get',
      'dashboards-get-all',
      'dashboard-get',
      'switch-project',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('getTools() offers only the tools the key’s scopes allow', async () => {
    const { names } = await toolkitFor(['dashboard:read']);
    expect(names).toContain('dashboards-get-all');
    expect(names).toContain('dashboard-get');
    expect(names).not.toContain('projects-get');
    expect(names).not.toContain('dashboard-create');
  });

  it('finds the key owner’s user, default project and organization (GET /api/users/@me/)', async () => {
    const { context } = await toolkitFor(['user:read']);
    const user = (await context.stateManager.getUser()) as { distinct_id: string; team: { id: number }; organization: { id: string } };
    expect(user.distinct_id).toBe(t.boot.user.distinct_id);
    expect(user.team.id).toBe(t.boot.team.id);
    expect(user.organization.id).toBe(t.boot.organization.id);
    expect(await context.stateManager.getProjectId()).toBe(String(t.boot.team.id));
    expect(await context.stateManager.getOrgID()).toBe(t.boot.organization.id);
    expect(await context.stateManager.getDistinctId()).toBe(t.boot.user.distinct_id);
  });

  it('a key limited to one project makes that project the default', async () => {
    const { context } = await toolkitFor(['*'], [second]);
    expect(await context.stateManager.getProjectId()).toBe(String(second));
  });

  it('organizations-get and organization-details-get answer the user’s organization', async () => {
    const { run } = await toolkitFor(['*']);
    const orgs = await run<Array<{ id: string; name: string }>>('organizations-get');
    expect(orgs).toEqual([expect.objectContaining({ id: t.boot.organization.id, name: t.boot.organization.name })]);
    const details = await run<{ id: string; name: string }>('organization-details-get');
    expect(details).toMatchObject({ id: t.boot.organization.id, name: t.boot.organization.name });
  });

  it('projects-get lists the organization’s projects', async () => {
    const { run } = await toolkitFor(['*']);
    const projects = await run<Array<{ id: number; name: string; organization: string }>>('projects-get');
    expect(projects.map((p) => p.id)).toEqual([t.boot.team.id, second]);
    expect(projects[1]).toMatchObject({ name: 'Hedgebox Staging', organization: t.boot.organization.id });
  });

  it('switch-project changes the project the dashboards tools use', async () => {
    const id = await createDashboard(second, 'Staging KPIs');
    const { run, runText } = await toolkitFor(['*']);
    expect(await runText('switch-project', { projectId: second })).toContain(String(second));
    const list = await run<Array<{ id: number; name: string }>>('dashboards-get-all', { data: { limit: 50 } });
    expect(list.map((d) => d.id)).toEqual([id]);
  });

  it('dashboards-get-all lists the default project’s dashboards, with limit and offset', async () => {
    const a = await createDashboard(t.boot.team.id, 'Hedgebox KPIs');
    const b = await createDashboard(t.boot.team.id, 'Growth');
    const { run } = await toolkitFor(['dashboard:read', 'user:read']);
    const list = await run<Array<{ id: number; name: string; description: string | null }>>('dashboards-get-all', { data: { limit: 10 } });
    expect(list.map((d) => d.id)).toEqual([a, b]);
    expect(list[0]).toMatchObject({ name: 'Hedgebox KPIs', description: 'Hedgebox KPIs numbers' });
    const page = await run<Array<{ id: number }>>('dashboards-get-all', { data: { limit: 1, offset: 1 } });
    expect(page.map((d) => d.id)).toEqual([b]);
  });

  it('the dashboards tools need user:read besides dashboard:read (the toolkit reads the user for the default project), as against PostHog', async () => {
    for (const projects of [undefined, [t.boot.team.id]]) {
      const { run } = await toolkitFor(['dashboard:read'], projects);
      await expect(run('dashboards-get-all', { data: { limit: 100 } })).rejects.toThrow(/API key missing required scope 'user:read'/);
    }
    const id = await createDashboard(t.boot.team.id, 'Scoped');
    const { run } = await toolkitFor(['dashboard:read', 'user:read'], [t.boot.team.id]);
    expect((await run<Array<{ id: number }>>('dashboards-get-all', { data: { limit: 100 } })).map((d) => d.id)).toContain(id);
  });

  it('a tool whose call the server refuses fails with the server’s answer', async () => {
    const { run } = await toolkitFor(['dashboard:read', 'user:read']);
    await expect(run('dashboard-get', { dashboardId: 2_000_000_000 })).rejects.toThrow(/404[\s\S]*Not found\./);
  });

  // The toolkit's dashboard schema requires each tile's `insight.derived_name` (string or null,
  // PostHog's InsightBasicSerializer) and an insight on every tile (a text tile fails its schema,
  // as it would against PostHog).
  it('dashboard-get reads a dashboard with its insight tiles', async () => {
    const id = await createDashboard(t.boot.team.id, 'One');
    const { run } = await toolkitFor(['dashboard:read', 'user:read']);
    const dashboard = await run<{ id: number; name: string; tiles: Array<{ insight: { name: string; derived_name: string | null } }> }>(
      'dashboard-get',
      { dashboardId: id },
    );
    expect(dashboard).toMatchObject({ id, name: 'One' });
    expect(dashboard.tiles.map((x) => x.insight)).toEqual([expect.objectContaining({ name: 'Pageviews', derived_name: null })]);
  });

  it("event-definitions-list lists the project's event names, and filters them with q", async () => {
    const project = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Defined events' })).id;
    const { importEvents } = await import('../../server/ingest/import.js');
    const at = '2026-11-20T10:00:00.000Z';
    const event = (name: string, i: number) => ({
      uuid: `0193${String(i).padStart(4, '0')}-0000-7000-8000-000000000000`,
      event: name,
      distinct_id: 'u1',
      properties: {},
      timestamp: at,
      elements_chain: '',
    });
    await importEvents(t.store, project, [event('$pageview', 1), event('signed_up', 2), event('signed_up', 3), event('upgraded_plan', 4)]);
    const { run, context } = await toolkitFor(['event_definition:read', 'user:read'], [project]);
    expect(await context.stateManager.getProjectId()).toBe(String(project));
    // the tool validates each definition (its `id` must be a UUID) and keeps name and last_seen_at
    const all = await run<Array<{ name: string; last_seen_at: string }>>('event-definitions-list', {});
    expect(all.map((d) => d.name).sort()).toEqual(['$pageview', 'signed_up', 'upgraded_plan']);
    for (const d of all) expect(new Date(d.last_seen_at).toISOString()).toBe(at);
    const some = await run<Array<{ name: string }>>('event-definitions-list', { q: 'sign' });
    expect(some.map((d) => d.name)).toEqual(['signed_up']);
  });

  it('query-run runs a DataVisualizationNode (HogQL) and an InsightVizNode (TrendsQuery) through /query/', async () => {
    const project = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Queried' })).id;
    const { importEvents } = await import('../../server/ingest/import.js');
    await importEvents(t.store, project, [
      { event: '$pageview', distinct_id: 'u1', timestamp: '2024-11-01T10:00:00Z' },
      { event: '$pageview', distinct_id: 'u2', timestamp: '2024-11-02T10:00:00Z' },
      { event: '$pageview', distinct_id: 'u2', timestamp: '2024-11-02T11:00:00Z' },
    ]);
    const { run } = await toolkitFor(['query:read', 'user:read'], [project]);
    const rows = await run<unknown[][]>('query-run', {
      query: {
        kind: 'DataVisualizationNode',
        source: { kind: 'HogQLQuery', query: "select count() from events where event = '$pageview'" },
      },
    });
    expect(rows).toEqual([[3]]);
    const series = await run<{ data: number[] }[]>('query-run', {
      query: {
        kind: 'InsightVizNode',
        source: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
          dateRange: { date_from: '2024-11-01', date_to: '2024-11-02' },
        },
      },
    });
    expect(series[0]!.data).toEqual([1, 2]);
  });
});
