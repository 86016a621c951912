/**
 * The scope matrix, driven by the contract (generated/openapi.bundle.yaml: `openapi.yaml` and its
 * generated `/api/projects/{project_id}/` copies): for every operation of it (120, the copies
 * included, each with exactly one scope in its `security` but the key's own record and the
 * schema, which need none, and `read_taxonomy`, which needs two), a key lacking one of those
 * scopes answers 403 permission_denied with PostHog's "API key missing required scope '…'"; a
 * key holding exactly the operation's scopes, a `*` key and,
 * for a `:read` scope, a key holding only the matching `:write` are not refused (answering a status
 * the operation declares, neither 401 nor 403); and on operations under a project, a key limited to
 * another project answers 403 on project 1 while a key limited to project 1 (among others) is not
 * refused. Requests are built from the spec: path ids of objects made for the purpose, required
 * query parameters from their examples, a minimal valid body where one is required.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpecOperation } from '../../server/http/spec.js';
import { KNOWN_SCOPES } from '../../server/domain/access.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type ErrorBody, missingScope, projectNotAllowed } from '../helpers/errors.js';
import {
  bodyRequired,
  declaredStatuses,
  environmentsTwin,
  operations,
  paramsOf,
  requiredScopes,
  UNSCOPED_OPERATIONS,
  type Param,
} from '../helpers/spec.js';

/** Operations that need two scopes (PostHog's `read_taxonomy` registers both definition scopes). */
const TWO_SCOPE_OPERATIONS: readonly string[] = ['environments_mcp_tools_read_taxonomy_create', 'mcp_tools_read_taxonomy_create'];

/** Every scope a key can carry, but `*`. */
const ALL_SCOPES = KNOWN_SCOPES.filter((s) => s !== '*');

/** An example value for a required query parameter, taken from the spec. */
function exampleOf(p: Param): string {
  if (p.example !== undefined) return String(p.example);
  const first = p.examples && Object.values(p.examples)[0];
  if (first?.value !== undefined) return String(first.value);
  if (p.schema?.examples?.[0] !== undefined) return String(p.schema.examples[0]);
  if (p.schema?.default !== undefined) return String(p.schema.default);
  throw new Error(`no example for required parameter ${p.name}`);
}

const EXISTING_UUID = '01934a10-7b2c-7d3e-8f4a-5b6c7d8e9f01';

/** What an operation needs from the fixture: ids of objects to act on. */
interface Fixture {
  t: TestServer;
  /** a plugin id per kind */
  destinationPluginId: number;
  frontendPluginId: number;
}

/** Creates a plugin config in project 1 through the API (bootstrap `*` key) and answers its id. */
async function createConfig(f: Fixture, plugin: number): Promise<number> {
  const res = await f.t.fetch('/api/environments/1/pipeline_frontend_apps_configs/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ plugin, order: 1, enabled: true, config: {} }),
  });
  expect(res.status, 'creating a plugin config for the scope matrix').toBe(201);
  return ((await res.json()) as { id: number }).id;
}

/**
 * A minimal valid body per operation that requires one. Every operation whose `requestBody` is
 * required must have an entry (checked by a test below).
 */
const BODIES: Record<string, (f: Fixture) => unknown> = {
  environments_query_create: () => ({ query: { kind: 'HogQLQuery', query: 'select 1' } }),
  environments_pipeline_destination_configs_rearrange_partial_update: () => ({ orders: {} }),
  environments_pipeline_destination_configs_partial_update: () => ({ name: 'renamed by the scope matrix' }),
  environments_pipeline_destination_configs_job_create: () => ({
    job: { type: 'Export historical events V2', payload: { dateRange: ['2024-01-01', '2024-01-31'] } },
  }),
  environments_pipeline_frontend_apps_configs_create: (f) => ({ plugin: f.frontendPluginId, order: 3 }),
  environments_dashboards_move_tile_partial_update: () => ({ tile: { id: 1 }, toDashboard: 2 }),
  environments_dashboards_create_from_template_json_create: () => ({
    template: {
      template_name: 'Scope matrix',
      dashboard_description: '',
      dashboard_filters: {},
      tiles: [{ type: 'TEXT', body: 'Hello' }],
    },
  }),
  environments_explicit_members_create: () => ({ user_uuid: EXISTING_UUID, level: 1 }),
  environments_insights_create: () => ({ name: 'Scope matrix insight' }),
  environments_dashboards_create: () => ({ name: 'Scope matrix dashboard' }),
  environments_dashboards_partial_update: () => ({ description: 'changed by the scope matrix' }),
  environments_dashboards_create_text_tile_create: () => ({ body: 'Scope matrix text' }),
  environments_dashboards_update_text_tile_create: () => ({ tile_id: 1, body: 'changed' }),
  environments_dashboards_delete_tile_create: () => ({ tile_id: 999999 }),
  environments_dashboards_reorder_tiles_create: () => ({ tile_order: [999999] }),
  environments_dashboards_copy_tile_create: () => ({ fromDashboardId: 999999, tileId: 1 }),
  environments_insights_partial_update: () => ({ name: 'renamed by the scope matrix' }),
  environments_mcp_tools_execute_sql_create: () => ({ args: { query: 'select 1' } }),
  environments_mcp_tools_read_taxonomy_create: () => ({ args: { query: { kind: 'events' } } }),
  environments_explicit_members_partial_update: () => ({ level: 1 }),
  environments_persons_update_property_create: () => ({ key: 'scope_matrix', value: 1 }),
  environments_persons_delete_property_create: () => ({ $unset: 'scope_matrix' }),
  environments_persons_bulk_delete_create: () => ({ distinct_ids: ['nobody-of-the-scope-matrix'] }),
  event_definitions_create: () => ({ name: `scope_matrix_${Math.random().toString(36).slice(2)}` }),
  event_definitions_partial_update: () => ({ description: 'changed by the scope matrix' }),
  property_definitions_partial_update: () => ({ description: 'changed by the scope matrix' }),
};

/** A request for an operation: its path with parameters filled, the method and the body. */
async function buildRequest(f: Fixture, op: SpecOperation, projectId = '1'): Promise<{ path: string; init: RequestInit }> {
  let path = op.path;
  const query = new URLSearchParams();
  for (const p of paramsOf(op)) {
    if (p.in === 'path') {
      let value: string;
      if (p.name === 'project_id') value = projectId;
      else if (p.name === 'id' && op.path.includes('/pipeline_destination_configs/')) {
        value = String(await createConfig(f, f.destinationPluginId));
      } else if (p.name === 'id' && op.path.includes('/pipeline_frontend_apps_configs/')) {
        value = String(await createConfig(f, f.frontendPluginId));
      } else if (p.name === 'id' && op.path.includes('/dashboards/')) value = '1';
      else if (p.name === 'id' && op.path.includes('/insights/')) value = '1';
      else if (p.name === 'id' && op.path.includes('/events/')) value = '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f';
      else if (p.name === 'id' && op.path.includes('/persons/')) value = EXISTING_UUID;
      else if (p.name === 'id' && op.path.includes('/dashboard_templates/')) value = '8f3c1a52-6d1e-4b7a-9c0e-2a4b6c8d0e01';
      else if (p.name === 'parent_membership__user__uuid') value = EXISTING_UUID;
      else if (p.name === 'id' && /^\/api\/(projects|environments)\/\{id\}\/$/.test(op.path)) value = projectId;
      else if (p.name === 'id' && op.path === '/api/organizations/{organization_id}/projects/{id}/') value = projectId;
      else if ((p.name === 'id' || p.name === 'organization_id') && op.path.startsWith('/api/organizations/'))
        value = f.t.boot.organization.id;
      else if (p.name === 'uuid' && op.path.startsWith('/api/users/')) value = '@me';
      else if (p.name === 'id' && op.path.startsWith('/api/personal_api_keys/')) value = '@current';
      else if (p.name === 'key' && op.path.includes('/feature_flags/')) value = 'new-onboarding';
      else if (p.name === 'id' && /\/(property|event)_definitions\//.test(op.path)) value = EXISTING_UUID;
      else throw new Error(`the scope matrix does not know how to fill ${p.name} in ${op.path}`);
      path = path.replace(`{${p.name}}`, encodeURIComponent(value));
    } else if (p.in === 'query' && p.name === 'token') {
      // a project API token names the project (the SDKs' calls): project 1's
      query.set('token', f.t.boot.team.api_token);
    } else if (p.in === 'query' && p.required) {
      query.set(p.name, exampleOf(p));
    }
  }
  const qs = query.toString();
  const init: RequestInit = { method: op.method.toUpperCase() };
  const body = BODIES[(environmentsTwin(op) ?? op).operationId];
  if (body) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body(f));
  }
  return { path: qs ? `${path}?${qs}` : path, init };
}

/** Neither 401 nor 403, and a status the operation declares (so never an undeclared 500). */
async function expectNotRefused(op: SpecOperation, path: string, res: Response): Promise<void> {
  const text = await res.text();
  const what = `${op.method.toUpperCase()} ${path} answered ${res.status}: ${text.slice(0, 300)}`;
  expect([401, 403], what).not.toContain(res.status);
  expect(declaredStatuses(op), what).toContain(String(res.status));
}

let t: TestServer;
let fixture: Fixture;
let otherProjectId: number;

beforeAll(async () => {
  t = await startTestServer();
  const destination = t.boot.plugins.find((p) => p.name === 'Customer.io');
  const frontend = t.boot.plugins.find((p) => p.name === 'Notification Bar');
  if (!destination || !frontend) throw new Error('the bootstrap catalog lacks Customer.io or Notification Bar');
  fixture = { t, destinationPluginId: destination.id, frontendPluginId: frontend.id };
  // a second project of the same organization, for keys limited to it
  otherProjectId = (await t.accounts.createTeam({ organization_id: t.boot.organization.id, name: 'Scope matrix project 2' })).id;
});

afterAll(async () => {
  await t?.close();
});

describe('the scope matrix', () => {
  it("covers every operation of the contract (120: 71 hand-written in openapi.yaml, 49 /api/projects/ copies), each with exactly one required scope but the key's own record and the schema (none) and read_taxonomy (two)", () => {
    expect(operations).toHaveLength(124);
    for (const op of operations)
      expect(requiredScopes(op), op.operationId).toHaveLength(
        UNSCOPED_OPERATIONS.includes(op.operationId) ? 0 : TWO_SCOPE_OPERATIONS.includes(op.operationId) ? 2 : 1,
      );
  });

  it('has a request body for every operation whose body is required', () => {
    for (const op of operations) {
      const required = bodyRequired(op);
      const id = (environmentsTwin(op) ?? op).operationId;
      expect(id in BODIES, `${op.operationId}: body required = ${required}`).toBe(required);
    }
  });
});

for (const op of operations) {
  const method = op.method.toUpperCase();
  const scopes = requiredScopes(op);
  const hasProject = op.path.includes('{project_id}');

  describe(`${method} ${op.path}`, () => {
    for (const scope of scopes) {
      const [object, action] = scope.split(':') as [string, string];
      // a key with every other scope, but neither this one nor (for :read) the matching :write
      const lacking = ALL_SCOPES.filter((s) => s !== scope && !(action === 'read' && s === `${object}:write`));

      it(`when the key lacks ${scope}, answers 403 permission_denied`, async () => {
        const key = await t.key(lacking);
        const { path, init } = await buildRequest(fixture, op);
        const res = await t.fetch(path, { ...init, key });
        const body = (await res.json()) as ErrorBody;
        expect(res.status).toBe(403);
        expect(body).toEqual(missingScope(scope));
      });

      it(`with a key holding exactly ${scopes.join(' and ')}, is not refused`, async () => {
        const key = await t.key(scopes);
        const { path, init } = await buildRequest(fixture, op);
        const res = await t.fetch(path, { ...init, key });
        await expectNotRefused(op, path, res);
      });

      if (action === 'read') {
        it(`with a key holding only ${object}:write (and the operation's other scopes), passes the ${scope} check`, async () => {
          const key = await t.key([`${object}:write`, ...scopes.filter((s) => s !== scope)]);
          const { path, init } = await buildRequest(fixture, op);
          const res = await t.fetch(path, { ...init, key });
          await expectNotRefused(op, path, res);
        });
      }
    }

    it('with a * key, is not refused', async () => {
      const key = await t.key(['*']);
      const { path, init } = await buildRequest(fixture, op);
      const res = await t.fetch(path, { ...init, key });
      await expectNotRefused(op, path, res);
    });

    if (hasProject) {
      it('with a key limited to another project, answers 403 on project 1', async () => {
        const key = await t.key(['*'], { projects: [otherProjectId] });
        const { path, init } = await buildRequest(fixture, op);
        const res = await t.fetch(path, { ...init, key });
        const body = (await res.json()) as ErrorBody;
        expect(res.status).toBe(403);
        expect(body).toEqual(projectNotAllowed(1));
      });

      it('with a key limited to project 1, is not refused on project 1', async () => {
        const key = await t.key(scopes, { projects: [otherProjectId, 1] });
        const { path, init } = await buildRequest(fixture, op);
        const res = await t.fetch(path, { ...init, key });
        await expectNotRefused(op, path, res);
      });
    }
  });
}
