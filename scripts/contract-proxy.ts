/**
 * `npm run contract`: an independent contract check (issue 6). Starts the real server on a free
 * port over a fresh temporary store, puts Prism in proxy mode in front of it
 * (`prism proxy generated/openapi.bundle.yaml <server> --errors`: the contract with its
 * `/api/projects/{project_id}/` copies, scripts/gen-projects-paths.mjs), replays a scenario
 * through the proxy that covers every operation of the spec and every declared status it can
 * provoke cheaply, and fails (exit 1) when:
 *
 * - an operation of the spec is not exercised at all;
 * - a request answers another status than the scenario meant (e.g. a 200 meant, a 404 got);
 * - Prism reports a violation: a `VIOLATIONS` error body (with `--errors`), an `sl-violations`
 *   header, or a `Violation` line in its log (an undeclared status is only logged there);
 * - Prism answered a request itself (it never reached the server).
 *
 * Prism runs with `--validate-request false`: the scenario sends deliberately invalid requests
 * (wrong types, out-of-range numbers, non-JSON and oversized bodies) to provoke the server's 400,
 * 413 and 415, and those must reach the server; every response is still validated.
 *
 * Prints a table (operation, statuses exercised, declared statuses not exercised). The spec is
 * read at run time, so statuses declared later (429, 413, 415) are tried when they appear.
 *
 * Exported as `runContract()` for the vitest wrapper (test/contract/proxy.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { parse } from 'yaml';
import { freePort } from './bench-lib.js';
import { eventUuidOut } from '../server/storage/events/uuids.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The contract as served: openapi.yaml with its generated /api/projects/ copies. */
const SPEC = path.join(ROOT, 'generated', 'openapi.bundle.yaml');
const PRISM_BIN = path.join(ROOT, 'node_modules', '.bin', 'prism');
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const MISSING_ID = 2_147_483_000;
const MISSING_PROJECT = '999999';
/** a low limit on the events-values class (per key), so one key reaches 429 cheaply */
const VALUES_PER_MINUTE = 8;
const BAD_KEY = `phx_${'0'.repeat(43)}`;

/** One operation of the spec with its declared statuses and required scope. */
interface Operation {
  operationId: string;
  method: string;
  path: string;
  declared: string[];
  scope: string | undefined;
  hasBody: boolean;
  /** served by the capture stage (`x-served-by: capture`): its own scenario, with the project token */
  capture: boolean;
}

/** What `runContract` found. */
export interface ContractResult {
  ok: boolean;
  /** every problem, one line each */
  failures: string[];
  /** per operation: statuses exercised (as answered through the proxy) and declared ones not exercised */
  rows: Array<{ operationId: string; exercised: string[]; notExercised: string[] }>;
  /** `Violation` lines of Prism's log */
  violations: string[];
  requests: number;
  durationMs: number;
}

/** Options of `runContract`. */
export interface ContractOptions {
  /** where progress and the table go (default: console.log) */
  log?: (line: string) => void;
}

function readOperations(): Operation[] {
  const doc = parse(fs.readFileSync(SPEC, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const ops: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as
        | {
            operationId?: string;
            responses?: Record<string, unknown>;
            requestBody?: unknown;
            security?: Array<{ PersonalAPIKeyAuth?: string[] }>;
            'x-served-by'?: string;
          }
        | undefined;
      if (!op?.operationId) continue;
      ops.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path: p,
        declared: Object.keys(op.responses ?? {}).sort(),
        scope: op.security?.flatMap((s) => s.PersonalAPIKeyAuth ?? [])[0],
        hasBody: op.requestBody !== undefined,
        capture: op['x-served-by'] === 'capture',
      });
    }
  }
  return ops;
}

// ------------------------------------------------------------------------------------------ processes

interface Child {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startChild(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  timeoutMs: number,
): Promise<{ proc: Child; match: RegExpExecArray }> {
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const append = (c: Buffer) => {
    output += c.toString('utf8');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  let stopping: Promise<void> | undefined;
  const proc: Child = {
    child,
    output: () => output,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      })),
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${path.basename(cmd)} not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = () => {
      const m = ready.exec(output);
      if (m) done(undefined, m);
    };
    const onExit = (code: number | null) => done(new Error(`${path.basename(cmd)} exited (code ${code}) before it was ready:\n${output}`));
    function done(err: Error | undefined, m?: RegExpExecArray) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (err) void proc.stop().then(() => reject(err));
      else resolve({ proc, match: m! });
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

// ------------------------------------------------------------------------------------------ the run

/** Runs the whole check; never throws for a contract failure (see `ok` and `failures`). */
export async function runContract(opts: ContractOptions = {}): Promise<ContractResult> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const started = performance.now();
  const ops = readOperations();
  const byId = new Map(ops.map((o) => [o.operationId, o]));
  const failures: string[] = [];
  const exercised = new Map<string, Set<string>>(ops.map((o) => [o.operationId, new Set<string>()]));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-contract-'));
  let server: Child | undefined;
  let prism: Child | undefined;
  let requests = 0;
  try {
    // 1. the real server
    const port = await freePort();
    const s = await startChild(
      process.execPath,
      ['--import', 'tsx', 'server/main.ts'],
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        VALIDATE_RESPONSES: 'off',
        NODE_ENV: 'production',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_ENABLED: 'on',
        RATE_LIMIT_EVENT_VALUES: `${VALUES_PER_MINUTE}/minute,1000/hour`,
      },
      /envapi listening on (http:\/\/\S+)/,
      30_000,
    );
    server = s.proc;
    const key = /^\s+(phx_\S+)\s*$/m.exec(server.output())?.[1];
    if (!key) throw new Error(`no API key in the server's output:\n${server.output()}`);
    const serverUrl = `http://127.0.0.1:${port}`;

    // 2. fixtures the API cannot create: a private project, another member, scoped keys, events
    const fx = await setUpFixtures(dataDir);

    // 3. Prism in front of it
    const proxyPort = await freePort();
    const p = await startChild(
      PRISM_BIN,
      ['proxy', SPEC, serverUrl, '--errors', '--validate-request', 'false', '--port', String(proxyPort), '--host', '127.0.0.1'],
      {},
      /Prism is listening on (http:\/\/\S+)/,
      30_000,
    );
    prism = p.proc;
    const proxy = p.match[1]!.replace(/\/+$/, '');
    log(`server ${serverUrl}, Prism proxy ${proxy}, store ${dataDir}`);

    // ------------------------------------------------------------------------------ requests
    interface Req {
      query?: string;
      body?: unknown;
      rawBody?: string | Buffer;
      contentType?: string;
      key?: string | null;
      path?: Record<string, string | number>;
    }
    /** Sends a request of `operationId` through the proxy and checks it answered `expected`. */
    async function sendOp(
      operationId: string,
      expected: number,
      r: Req = {},
    ): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
      const op = byId.get(operationId);
      if (!op) throw new Error(`the scenario names ${operationId}, which the spec does not have`);
      const params: Record<string, string | number> = { project_id: '1', ...r.path };
      const url =
        proxy +
        op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(params[name] ?? ''))) +
        (r.query ? `?${r.query}` : '');
      const headers: Record<string, string> = {};
      const k = r.key === undefined ? key! : r.key;
      if (k) headers.Authorization = `Bearer ${k}`;
      let body: string | Buffer | undefined;
      if (r.rawBody !== undefined) body = r.rawBody;
      else if (r.body !== undefined) body = JSON.stringify(r.body);
      if (body !== undefined) headers['Content-Type'] = r.contentType ?? 'application/json';
      requests += 1;
      const res = await fetch(url, { method: op.method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      const ct = res.headers.get('content-type') ?? '';
      let parsed: unknown = text;
      try {
        if (ct.includes('json') && text) parsed = JSON.parse(text);
      } catch {
        /* left as text */
      }
      const what = `${operationId}: ${op.method} ${url.slice(proxy.length)} (meant ${expected})`;
      const problemType = typeof parsed === 'object' && parsed ? (parsed as { type?: unknown }).type : undefined;
      const prismType = typeof problemType === 'string' && problemType.includes('stoplight.io/prism') ? problemType : undefined;
      const slViolations = res.headers.get('sl-violations');
      if (prismType?.endsWith('#VIOLATIONS')) {
        failures.push(`${what}: Prism reports the response violates the contract: ${text.slice(0, 800)}`);
      } else if (prismType) {
        failures.push(
          `${what}: Prism answered ${res.status} itself (${prismType}), the request never reached the server: ${text.slice(0, 400)}`,
        );
      } else {
        if (slViolations) failures.push(`${what}: sl-violations ${slViolations.slice(0, 800)}`);
        if (res.status !== expected) failures.push(`${what}: answered ${res.status}: ${text.slice(0, 300)}`);
        else exercised.get(operationId)!.add(String(res.status));
        if (!op.declared.includes(String(res.status))) failures.push(`${what}: status ${res.status} is not declared`);
      }
      return { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') };
    }
    const send = sendOp;
    const otherScopeKey = (op: Operation) => (op.scope?.startsWith('query:') ? fx.pluginReadKey : fx.queryReadKey);

    // ---------------------------------------------------------------------------- scenario
    /**
     * The scenario, under `/api/environments/{project_id}/` (`twin` false) or under
     * `/api/projects/{project_id}/` (`twin` true: each operationId read as its copy's, PostHog's
     * id without `environments_`). It creates what it needs each time, so it runs twice.
     */
    const scenario = async (twin: boolean) => {
      const send = (operationId: string, expected: number, r: Req = {}) =>
        sendOp(twin ? operationId.replace(/^environments_/, '') : operationId, expected, r);
      await send('environments_pipeline_frontend_apps_configs_list', 200);
      // plugin ids by name, from a created config's plugin_info
      const create = async (pluginId: number, order: number) =>
        (
          await send('environments_pipeline_frontend_apps_configs_create', 201, {
            body: { plugin: pluginId, order, enabled: true, config: {} },
          })
        ).body as { id: number };
      const frontendCfg = await create(fx.plugin.notificationBar, 1);
      const destCfg = await create(fx.plugin.customerio, 2);
      const webhookCfg = await create(fx.plugin.webhook, 3);
      const doomed = await create(fx.plugin.customerio, 4);
      await send('environments_pipeline_frontend_apps_configs_create', 400, { body: { plugin: MISSING_ID, order: 1 } });
      await send('environments_pipeline_frontend_apps_configs_list', 200, { query: 'limit=1&offset=1' });
      await send('environments_pipeline_frontend_apps_configs_list', 400, { query: 'limit=abc' });
      await send('environments_pipeline_frontend_apps_configs_retrieve', 200, { path: { id: frontendCfg.id } });
      await send('environments_pipeline_frontend_apps_configs_retrieve', 404, { path: { id: destCfg.id } });

      await send('environments_pipeline_destination_configs_list', 200, { query: 'limit=10' });
      await send('environments_pipeline_destination_configs_list', 400, { query: 'offset=abc' });
      await send('environments_pipeline_destination_configs_retrieve', 200, { path: { id: destCfg.id } });
      await send('environments_pipeline_destination_configs_retrieve', 404, { path: { id: frontendCfg.id } });
      await send('environments_pipeline_destination_configs_rearrange_partial_update', 200, {
        body: { orders: { [String(destCfg.id)]: 5 } },
      });
      await send('environments_pipeline_destination_configs_rearrange_partial_update', 400, { body: { orders: { abc: 5 } } });
      await send('environments_pipeline_destination_configs_partial_update', 200, {
        path: { id: destCfg.id },
        body: { name: 'Renamed', config: { host: 'track.customer.io' } },
      });
      await send('environments_pipeline_destination_configs_partial_update', 400, { path: { id: destCfg.id }, body: { order: 'first' } });
      await send('environments_pipeline_destination_configs_activity_retrieve', 200, { path: { id: destCfg.id }, query: 'page=1&limit=2' });
      await send('environments_pipeline_destination_configs_activity_retrieve', 200, { path: { id: destCfg.id }, query: 'page=99' });
      await send('environments_pipeline_destination_configs_activity_retrieve', 400, { path: { id: destCfg.id }, query: 'page=0' });
      await send('environments_pipeline_destination_configs_frontend_retrieve', 200, { path: { id: destCfg.id } });
      await send('environments_pipeline_destination_configs_job_create', 200, {
        path: { id: destCfg.id },
        body: { job: { type: 'Export historical events V2', payload: { dateRange: ['2024-01-01', '2024-01-31'] } } },
      });
      await send('environments_pipeline_destination_configs_job_create', 400, {
        path: { id: destCfg.id },
        body: { job: { type: 'No such job' } },
      });
      await send('environments_pipeline_destination_configs_migrate_create', 200, { path: { id: destCfg.id } });
      await send('environments_pipeline_destination_configs_migrate_create', 400, { path: { id: webhookCfg.id } });
      await send('environments_pipeline_destination_configs_destroy', 204, { path: { id: doomed.id } });

      // dashboards
      const template = (name: string) => ({
        template: {
          template_name: name,
          dashboard_description: 'Contract check',
          dashboard_filters: {},
          tags: ['contract'],
          tiles: [
            { type: 'TEXT', body: 'Hello' },
            {
              type: 'INSIGHT',
              name: 'Pageviews',
              query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] } },
            },
          ],
        },
      });
      const dashA = (await send('environments_dashboards_create_from_template_json_create', 200, { body: template('Source') })).body as {
        id: number;
        tiles: Array<{ id: number }>;
      };
      const dashB = (await send('environments_dashboards_create_from_template_json_create', 200, { body: template('Target') })).body as {
        id: number;
        tiles: Array<{ id: number }>;
      };
      await send('environments_dashboards_create_from_template_json_create', 400, {
        body: { template: { ...template('Bad').template, tiles: [{ type: 'CHART', body: 'x' }] } },
      });
      await send('environments_dashboards_list', 200, { query: 'limit=1' });
      await send('environments_dashboards_list', 400, { query: 'offset=-1' });
      await send('environments_dashboards_retrieve', 200, { path: { id: dashA.id } });
      await send('environments_dashboards_move_tile_partial_update', 200, {
        path: { id: dashA.id },
        body: { tile: { id: dashA.tiles[0]!.id }, toDashboard: dashB.id },
      });
      await send('environments_dashboards_move_tile_partial_update', 400, {
        path: { id: dashA.id },
        body: { tile: { id: dashB.tiles[1]!.id }, toDashboard: dashB.id },
      });
      // create_from_template_json ignores restriction_level (as PostHog's): restricted by a PATCH
      const restricted = (
        await send('environments_dashboards_create_from_template_json_create', 200, {
          body: { ...template('Restricted') },
        })
      ).body as {
        id: number;
        tiles: Array<{ id: number }>;
      };
      await send('environments_dashboards_partial_update', 200, { path: { id: restricted.id }, body: { restriction_level: 37 } });
      await send('environments_dashboards_move_tile_partial_update', 403, {
        key: fx.memberKey,
        path: { id: restricted.id },
        body: { tile: { id: restricted.tiles[0]!.id }, toDashboard: dashB.id },
      });

      // the dashboards' writes and tile actions, run_insights
      const dashC = (await send('environments_dashboards_create', 201, { body: { name: 'Contract', tags: ['contract'] } })).body as {
        id: number;
      };
      await send('environments_dashboards_create', 400, { body: { use_template: 'NOPE' } });
      await send('environments_dashboards_partial_update', 200, { path: { id: dashC.id }, body: { description: 'Checked', pinned: true } });
      await send('environments_dashboards_partial_update', 400, { path: { id: dashC.id }, body: { tiles: [{ id: MISSING_ID }] } });
      const text = (await send('environments_dashboards_create_text_tile_create', 200, { path: { id: dashC.id }, body: { body: 'Note' } }))
        .body as { id: number };
      await send('environments_dashboards_create_text_tile_create', 400, { path: { id: dashC.id }, body: { body: '' } });
      await send('environments_dashboards_update_text_tile_create', 200, {
        path: { id: dashC.id },
        body: { tile_id: text.id, body: 'Changed' },
      });
      await send('environments_dashboards_update_text_tile_create', 400, { path: { id: dashC.id }, body: { tile_id: MISSING_ID } });
      await send('environments_dashboards_reorder_tiles_create', 200, {
        path: { id: dashC.id },
        body: { tile_order: [text.id], layout: 'two_column' },
      });
      await send('environments_dashboards_reorder_tiles_create', 400, { path: { id: dashC.id }, body: { tile_order: [text.id, text.id] } });
      await send('environments_dashboards_copy_tile_create', 200, {
        path: { id: dashC.id },
        body: { fromDashboardId: dashA.id, tileId: dashA.tiles[1]!.id },
      });
      await send('environments_dashboards_copy_tile_create', 400, {
        path: { id: dashC.id },
        body: { fromDashboardId: dashC.id, tileId: text.id },
      });
      await send('environments_dashboards_run_insights_retrieve', 200, { path: { id: dashC.id }, query: 'refresh=blocking' });
      await send('environments_dashboards_run_insights_retrieve', 400, { path: { id: dashC.id }, query: 'refresh=sometimes' });
      await send('environments_dashboards_delete_tile_create', 204, { path: { id: dashC.id }, body: { tile_id: text.id } });
      await send('environments_dashboards_delete_tile_create', 400, { path: { id: dashC.id }, body: { tile_id: text.id } });

      // insights
      const trends = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] } };
      const insight = (
        await send('environments_insights_create', 201, { body: { name: 'Contract', query: trends, dashboards: [dashC.id] } })
      ).body as {
        id: number;
        short_id: string;
      };
      await send('environments_insights_create', 400, { body: { query: { kind: 'NoSuchQuery' } } });
      await send('environments_insights_list', 200, { query: `short_id=${insight.short_id}` });
      await send('environments_insights_list', 400, { query: 'limit=abc' });
      await send('environments_insights_retrieve', 200, { path: { id: insight.short_id }, query: 'refresh=blocking' });
      await send('environments_insights_retrieve', 404, { path: { id: String(MISSING_ID) } });
      await send('environments_insights_partial_update', 200, { path: { id: insight.id }, body: { name: 'Renamed' } });
      await send('environments_insights_partial_update', 400, { path: { id: insight.id }, body: { dashboards: [MISSING_ID] } });

      // dashboard templates, MCP tools
      const templates = (await send('environments_dashboard_templates_list', 200, { query: 'limit=2' })).body as {
        results: { id: string }[];
      };
      await send('environments_dashboard_templates_list', 400, { query: 'limit=abc' });
      await send('environments_dashboard_templates_retrieve', 200, { path: { id: templates.results[0]!.id } });
      await send('environments_dashboard_templates_retrieve', 404, { path: { id: '8f3c1a52-0000-4000-8000-000000000000' } });
      await send('environments_mcp_tools_execute_sql_create', 200, { body: { args: { query: 'select 1', truncate: true } } });
      await send('environments_mcp_tools_execute_sql_create', 400, { body: { args: {} } });
      await send('environments_mcp_tools_read_taxonomy_create', 200, { body: { args: { query: { kind: 'events' } } } });
      await send('environments_mcp_tools_read_taxonomy_create', 400, { body: { args: {} } });

      // events
      const page = (await send('environments_events_list', 200, { query: 'limit=2&event=$pageview' })).body as {
        results: Array<{ id: string }>;
      };
      await send('environments_events_list', 200, { query: 'format=csv&limit=2' });
      await send('environments_events_list', 400, { query: 'after=not-a-date' });
      await send('environments_events_values_retrieve', 200, { query: 'key=$browser' });
      await send('environments_events_values_retrieve', 200, { query: 'key=$browser&format=csv' });
      await send('environments_events_values_retrieve', 400, {});
      const eventId = page.results[0]?.id ?? fx.eventUuid;
      await send('environments_events_retrieve', 200, { path: { id: eventId } });
      await send('environments_events_retrieve', 200, { path: { id: eventId }, query: 'format=csv' });
      await send('environments_events_retrieve', 400, { path: { id: 'not-a-uuid' } });
      await send('environments_events_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });

      // query: a HogQLQuery, an EventsQuery, a construct outside the subset, a syntax error
      await send('environments_query_create', 200, {
        body: { query: { kind: 'HogQLQuery', query: 'select event, count() from events group by event order by event' } },
      });
      await send('environments_query_create', 200, { body: { query: { kind: 'EventsQuery', select: ['*'], after: 'all', limit: 2 } } });
      await send('environments_query_create', 200, {
        body: { query: { kind: 'EventsQuery', select: ['event', 'count()'], after: 'all' } },
      });
      await send('environments_query_create', 400, {
        body: { query: { kind: 'HogQLQuery', query: 'select event from events join persons p on 1' } },
      });
      await send('environments_query_create', 400, { body: { query: { kind: 'HogQLQuery', query: 'select event from events where' } } });
      await send('environments_query_create', 200, {
        body: {
          query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], breakdownFilter: { breakdown: '$browser' } },
        },
      });
      await send('environments_query_create', 200, { body: { query: { kind: 'HogQLMetadata', language: 'hogQL', query: 'select 1' } } });
      await send('environments_query_create', 400, { body: { query: { kind: 'SavedInsightNode', shortId: 'AbCdEf12' } } });

      // explicit members (private project Q)
      const Q = fx.privateProject;
      await send('environments_explicit_members_list', 200, { path: { project_id: Q } });
      await send('environments_explicit_members_create', 201, { path: { project_id: Q }, body: { user_uuid: fx.memberUuid, level: 1 } });
      await send('environments_explicit_members_create', 400, { path: { project_id: Q }, body: { user_uuid: fx.memberUuid, level: 1 } });
      await send('environments_explicit_members_create', 403, { path: { project_id: Q }, body: { user_uuid: fx.ownerUuid, level: 1 } });
      await send('environments_explicit_members_retrieve', 200, { path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid } });
      await send('environments_explicit_members_partial_update', 200, {
        path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid },
        body: { level: 8 },
      });
      await send('environments_explicit_members_partial_update', 400, {
        path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid },
        body: { level: 5 },
      });
      await send('environments_explicit_members_retrieve', 403, {
        key: fx.outsiderKey,
        path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid },
      });
      await send('environments_explicit_members_list', 403, { key: fx.outsiderKey, path: { project_id: Q } });
      await send('environments_explicit_members_destroy', 403, {
        key: fx.outsiderKey,
        path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid },
      });
      await send('environments_explicit_members_destroy', 204, { path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid } });
      await send('environments_explicit_members_retrieve', 404, { path: { project_id: Q, parent_membership__user__uuid: fx.memberUuid } });

      await send('projects_list', 200, { query: 'limit=1' });
      await send('projects_list', 400, { query: 'limit=0' });
      // persons (environment-scoped: also under the projects prefix)
      await send('environments_persons_list', 200, { query: 'limit=2' });
      await send('environments_persons_list', 400, { query: 'limit=abc' });
      await send('environments_persons_retrieve', 200, { path: { id: fx.personUuid } });
      await send('environments_persons_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
      await send('environments_persons_retrieve', 400, { path: { id: 'not-a-person' } });
      await send('environments_persons_values_retrieve', 200, { query: 'key=email' });
      await send('environments_elements_stats_retrieve', 200, { query: 'date_from=-30d' });
      await send('environments_elements_stats_retrieve', 400, { query: 'include=%24pageview' });
      await send('environments_persons_cohorts_retrieve', 200, { query: `person_id=${fx.personUuid}` });
      await send('environments_persons_cohorts_retrieve', 400, {});
      await send('environments_persons_cohorts_retrieve', 404, { query: 'person_id=01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' });
      await send('environments_persons_update_property_create', 202, { path: { id: fx.personUuid }, body: { key: 'plan', value: 'pro' } });
      await send('environments_persons_update_property_create', 400, { path: { id: fx.personUuid }, body: { key: 'plan' } });
      await send('environments_persons_update_property_create', 404, {
        path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' },
        body: { key: 'plan', value: 1 },
      });
      await send('environments_persons_delete_property_create', 201, { path: { id: fx.personUuid }, body: { $unset: 'plan' } });
      await send('environments_persons_delete_property_create', 400, { path: { id: fx.personUuid }, body: {} });
      await send('environments_persons_bulk_delete_create', 202, { body: { distinct_ids: ['nobody-at-all'] } });
      await send('environments_persons_bulk_delete_create', 400, { body: {} });
      return { frontendCfg, destCfg, dashA, dashB, eventId, Q, template };
    };
    await scenario(true);
    const { frontendCfg, destCfg, dashA, dashB, eventId, Q, template } = await scenario(false);

    // identity and discovery, event definitions (no /api/environments/{project_id}/ twin)
    await send('users_retrieve', 200, { path: { uuid: '@me' } });
    await send('users_retrieve', 403, { path: { uuid: fx.memberUuid } });
    await send('personal_api_keys_retrieve', 200, { path: { id: '@current' } });
    await send('personal_api_keys_retrieve', 403, { path: { id: fx.pluginReadKeyId }, key: fx.queryReadKey });
    await send('personal_api_keys_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    await send('organizations_list', 200, { query: 'limit=1' });
    await send('organizations_retrieve', 200, { path: { id: fx.organizationId } });
    await send('organizations_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    await send('organizations_projects_list', 200, { path: { organization_id: fx.organizationId } });
    await send('organizations_pipeline_frontend_apps_list', 200, { path: { organization_id: '@current' } });
    await send('organizations_pipeline_frontend_apps_list', 404, { path: { organization_id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    await send('organizations_projects_retrieve', 200, { path: { organization_id: fx.organizationId, id: '1' } });
    await send('organizations_projects_retrieve', 400, { path: { organization_id: fx.organizationId, id: 'abc' } });
    await send('organizations_projects_retrieve', 404, { path: { organization_id: fx.organizationId, id: MISSING_PROJECT } });
    await send('organizations_projects_partial_update', 200, {
      path: { organization_id: fx.organizationId, id: '1' },
      body: { timezone: 'UTC' },
    });
    await send('organizations_projects_partial_update', 400, {
      path: { organization_id: fx.organizationId, id: '1' },
      body: { timezone: 'Mars/Olympus' },
    });
    await send('organizations_members_list', 200, { path: { organization_id: fx.organizationId }, query: 'limit=2' });
    await send('organizations_members_list', 404, { path: { organization_id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    await send('users_partial_update', 200, { path: { uuid: '@me' }, body: { set_current_team: 1 } });
    await send('users_partial_update', 400, { path: { uuid: '@me' }, body: { set_current_team: 999999 } });
    await send('users_partial_update', 403, { path: { uuid: fx.memberUuid }, body: { first_name: 'x' } });
    await send('projects_retrieve', 200, { path: { id: '1' } });
    await send('projects_retrieve', 404, { path: { id: MISSING_PROJECT } });
    await send('environments_retrieve', 200, { path: { id: '@current' } });
    await send('event_definitions_list', 200, { query: 'search=page' });
    await send('event_definitions_by_name_retrieve', 200, { query: 'name=%24pageview' });
    const defs = (await send('property_definitions_list', 200, { query: 'type=event' })).body as { results?: { id: string }[] };
    const firstDef = defs.results?.[0];
    if (firstDef) await send('property_definitions_retrieve', 200, { path: { id: firstDef.id } });
    await send('property_definitions_list', 400, { query: 'type=group' });
    await send('property_definitions_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    await send('event_definitions_by_name_retrieve', 400, {});
    await send('event_definitions_by_name_retrieve', 404, { query: 'name=no-such-event' });
    const declared = (await send('event_definitions_create', 201, { body: { name: 'proxy_declared', tags: ['proxy'] } })).body as {
      id?: string;
    };
    await send('event_definitions_create', 400, { body: { name: 'proxy_declared' } });
    if (declared.id) {
      await send('event_definitions_retrieve', 200, { path: { id: declared.id } });
      await send('event_definitions_partial_update', 200, { path: { id: declared.id }, body: { verified: true } });
      await send('event_definitions_partial_update', 400, { path: { id: declared.id }, body: { verified: true, hidden: true } });
    }
    await send('event_definitions_retrieve', 404, { path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' } });
    if (firstDef) {
      await send('property_definitions_partial_update', 200, { path: { id: firstDef.id }, body: { description: 'proxy' } });
      await send('property_definitions_partial_update', 400, { path: { id: firstDef.id }, body: { property_type: 'Text' } });
    }
    await send('property_definitions_partial_update', 404, {
      path: { id: '01934e8a-4b7e-7c21-8e5f-3a9b1c2d4e6f' },
      body: { hidden: true },
    });
    // the SDKs' flag and survey calls: the token names the project; no flag and no survey exist
    await send('flags_definitions_retrieve', 200, { query: `token=${fx.projectToken}&send_cohorts` });
    await send('flags_definitions_retrieve', 400, {});
    await send('feature_flag_local_evaluation_retrieve', 200, { query: `token=${fx.projectToken}&send_cohorts` });
    await send('feature_flags_remote_config_retrieve', 404, { path: { key: 'new-onboarding' } });
    await send('surveys_retrieve', 200, { key: null, query: `token=${fx.projectToken}` });
    await send('surveys_retrieve', 401, { key: null });
    // the contract itself: no key needed (security: []), YAML by default, JSON by format; 400 for another format
    await send('schema_retrieve', 200, { key: null });
    await send('schema_retrieve', 200, { key: null, query: 'format=json' });
    await send('schema_retrieve', 400, { key: null, query: 'format=xml' });

    // the capture endpoints (x-served-by: capture): authenticated by the project token, which Prism
    // checks in the query (`ProjectTokenAuth`: `token`); the server reads it there when the payload
    // has none. 200, 204 (beacon), 400 (no distinct_id), 401 (unknown token), 413 (past 2 MiB).
    // The SDK start-up calls: 200, 400 (no distinct_id), 401 (unknown token); remote config 200, 404.
    for (const op of ops.filter((o) => o.capture)) {
      const event = { event: 'contract capture', distinct_id: 'contract-user', properties: { $current_url: 'https://hedgebox.net/' } };
      const b64 = (v: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(v)).toString('base64'));
      const token = `token=${fx.projectToken}`;
      // the SDK start-up calls (tag sdk): flags and decide read the body's token; remote config the path's
      if (op.operationId === 'capture_flags_create' || op.operationId === 'capture_decide_create') {
        await send(op.operationId, 200, {
          key: null,
          query: `v=2&${token}`,
          body: { token: fx.projectToken, distinct_id: 'contract-user' },
        });
        await send(op.operationId, 400, { key: null, query: `v=2&${token}`, body: { token: fx.projectToken } });
        await send(op.operationId, 401, {
          key: null,
          query: 'v=2&token=phc_unknown',
          body: { token: 'phc_unknown', distinct_id: 'contract-user' },
        });
        continue;
      }
      if (op.operationId === 'capture_i_v1_logs_create') {
        await send(op.operationId, 200, { key: null, query: token, body: { resourceLogs: [] } });
        await send(op.operationId, 400, { key: null, query: token, body: [1, 2] });
        await send(op.operationId, 401, { key: null, query: 'token=phc_unknown', body: { resourceLogs: [] } });
        continue;
      }
      if (op.path.startsWith('/array/')) {
        await send(op.operationId, 200, { key: null, path: { token: fx.projectToken } });
        await send(op.operationId, 404, { key: null, path: { token: 'phc_unknown' } });
        continue;
      }
      if (op.method === 'GET') {
        await send(op.operationId, 200, { key: null, query: `${token}&data=${b64(event)}` });
        await send(op.operationId, 204, { key: null, query: `${token}&beacon=1&data=${b64(event)}` });
        await send(op.operationId, 400, { key: null, query: `${token}&data=${b64({ event: 'no distinct id' })}` });
        await send(op.operationId, 401, { key: null, query: `token=phc_unknown&data=${b64(event)}` });
      } else {
        await send(op.operationId, 200, { key: null, query: token, body: { batch: [event] } });
        await send(op.operationId, 204, { key: null, query: `${token}&beacon=1`, body: [event] });
        await send(op.operationId, 400, { key: null, query: token, body: { event: 'no distinct id' } });
        await send(op.operationId, 401, { key: null, query: 'token=phc_unknown', body: event });
        if (op.path !== '/batch/')
          await send(op.operationId, 413, {
            key: null,
            query: token,
            rawBody: JSON.stringify({ ...event, padding: 'x'.repeat(2 * 1024 * 1024 + 16) }),
          });
      }
    }

    // generic statuses for every operation: 401 (unknown key), 403 (scope missing), 404 (no such
    // project or object), and 413 / 415 where declared
    const pathFor = (op: Operation, project: string): Record<string, string | number> => ({
      project_id: op.path.includes('explicit_members') && project === '1' ? Q : project,
      id: op.path.includes('/events/')
        ? eventId
        : op.path.includes('/dashboards/')
          ? dashA.id
          : op.path.includes('frontend_apps')
            ? frontendCfg.id
            : op.path.includes('/persons/')
              ? fx.personUuid
              : op.path.startsWith('/api/organizations/')
                ? fx.organizationId
                : op.path.startsWith('/api/personal_api_keys/')
                  ? '@current'
                  : /^\/api\/(projects|environments)\/\{id\}\/$/.test(op.path)
                    ? project
                    : destCfg.id,
      parent_membership__user__uuid: fx.ownerUuid,
      key: 'new-onboarding',
      uuid: '@me',
      organization_id: fx.organizationId,
    });
    const bodyFor = (op: Operation): unknown =>
      !op.hasBody
        ? undefined
        : op.operationId.includes('move_tile')
          ? { tile: { id: dashA.tiles[1]!.id }, toDashboard: dashB.id }
          : op.operationId.includes('create_from_template')
            ? template('Generic')
            : op.operationId.includes('job_create')
              ? { job: { type: 'Export historical events V2', payload: { dateRange: ['2024-01-01', '2024-01-31'] } } }
              : op.operationId.includes('frontend_apps_configs_create')
                ? { plugin: fx.plugin.notificationBar, order: 9 }
                : op.operationId.includes('rearrange')
                  ? { orders: {} }
                  : op.operationId.includes('explicit_members_create')
                    ? { user_uuid: fx.memberUuid, level: 1 }
                    : op.operationId.includes('explicit_members')
                      ? { level: 1 }
                      : {};
    const queryFor = (op: Operation) =>
      op.operationId === 'environments_events_values_retrieve'
        ? 'key=$browser'
        : op.operationId === 'flags_definitions_retrieve' || op.operationId === 'feature_flag_local_evaluation_retrieve'
          ? `token=${fx.projectToken}`
          : undefined;
    for (const op of ops) {
      if (op.capture) continue;
      const base: Req = { path: pathFor(op, '1'), body: bodyFor(op) };
      const q = queryFor(op);
      if (q) base.query = q;
      if (op.declared.includes('401')) await send(op.operationId, 401, { ...base, key: BAD_KEY });
      if (op.scope && op.declared.includes('403') && !exercised.get(op.operationId)!.has('403'))
        await send(op.operationId, 403, { ...base, key: otherScopeKey(op) });
      if (op.declared.includes('404') && !exercised.get(op.operationId)!.has('404')) {
        if (op.path.includes('{project_id}'))
          await send(op.operationId, 404, { ...base, path: { ...base.path, project_id: MISSING_PROJECT } });
      }
      if (op.declared.includes('415') && op.hasBody) {
        await send(op.operationId, 415, { ...base, rawBody: 'plain text', contentType: 'text/plain' });
      }
      if (op.declared.includes('413') && op.hasBody) {
        const big = { ...(base.body as object), padding: 'x'.repeat(1024 * 1024 + 16) };
        await send(op.operationId, 413, { ...base, rawBody: JSON.stringify(big) });
      }
    }
    // 429: a fresh key exhausts the events-values class (limit set low on the server above)
    if (byId.get('environments_events_values_retrieve')?.declared.includes('429')) {
      for (let i = 0; i < VALUES_PER_MINUTE; i += 1)
        await send('environments_events_values_retrieve', 200, { key: fx.throttledKey, query: 'key=$browser' });
      const r = await send('environments_events_values_retrieve', 429, { key: fx.throttledKey, query: 'key=$browser' });
      if (r.status === 429 && !r.retryAfter) failures.push('environments_events_values_retrieve: 429 without a Retry-After header');
    }
    // the id-not-found 404 of operations with an id
    await send('environments_pipeline_destination_configs_partial_update', 404, { path: { id: MISSING_ID }, body: { name: 'x' } });
    await send('environments_dashboards_retrieve', 404, { path: { id: MISSING_ID } });

    // let Prism flush its log
    await new Promise((r) => setTimeout(r, 300));
  } catch (err) {
    failures.push(`the run stopped: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    await prism?.stop();
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const prismLog = prism?.output() ?? '';
  const violations = prismLog.split('\n').filter((l) => /Violation/i.test(l));
  for (const v of violations) failures.push(`Prism log: ${v.trim()}`);
  const rows = ops.map((o) => {
    const done = [...(exercised.get(o.operationId) ?? [])].sort();
    return { operationId: o.operationId, exercised: done, notExercised: o.declared.filter((s) => !done.includes(s)) };
  });
  for (const r of rows) if (!r.exercised.length) failures.push(`${r.operationId}: not exercised at all`);

  const w = Math.max(...rows.map((r) => r.operationId.length));
  log('');
  log(`${'operation'.padEnd(w)}  ${'exercised'.padEnd(28)}  declared, not exercised`);
  log(`${'-'.repeat(w)}  ${'-'.repeat(28)}  ${'-'.repeat(24)}`);
  for (const r of rows) log(`${r.operationId.padEnd(w)}  ${r.exercised.join(' ').padEnd(28)}  ${r.notExercised.join(' ') || '-'}`);
  const durationMs = Math.round(performance.now() - started);
  log('');
  log(
    `${requests} requests through Prism in ${durationMs} ms; ${violations.length} violation(s) in Prism's log; ${failures.length} failure(s).`,
  );
  for (const f of failures) log(`FAIL ${f}`);
  return { ok: failures.length === 0, failures, rows, violations, requests, durationMs };
}

/** Fixture records created straight in the store (the API has no operation for them). */
interface Fixtures {
  privateProject: string;
  memberUuid: string;
  ownerUuid: string;
  memberKey: string;
  outsiderKey: string;
  queryReadKey: string;
  pluginReadKey: string;
  throttledKey: string;
  eventUuid: string;
  /** project 1's project API token (`phc_…`), for the capture endpoints */
  projectToken: string;
  plugin: { customerio: number; notificationBar: number; webhook: number };
  organizationId: string;
  /** a person of project 1 (from the imported events) */
  personUuid: string;
  /** the id of `pluginReadKey`'s record (another key of the owner than `queryReadKey`) */
  pluginReadKeyId: string;
}

async function setUpFixtures(dataDir: string): Promise<Fixtures> {
  const { openStore } = await import('../server/storage/db.js');
  const { AccountsRepository, OrganizationLevel } = await import('../server/storage/repositories/accounts.js');
  const { ApiKeysRepository } = await import('../server/storage/repositories/api-keys.js');
  const { PLUGIN_CATALOG } = await import('../server/domain/plugin-catalog.js');
  const { importEvents } = await import('../server/ingest/import.js');
  const { generateDemoEvents } = await import('../server/ingest/demo.js');
  const store = openStore({ dataDir });
  try {
    const accounts = new AccountsRepository(store.db);
    const keys = new ApiKeysRepository(store.db);
    const orgs = await accounts.listOrganizations();
    const org = orgs[0]!;
    const owner = (await accounts.listUsers())[0]!;
    const team = await accounts.createTeam({ organization_id: org.id, name: 'Private (contract)', access_control: true });
    const member = await accounts.createUser({ email: 'member@contract.example.com', first_name: 'Member' });
    await accounts.upsertMembership(org.id, member.id, OrganizationLevel.MEMBER);
    const otherOrg = await accounts.createOrganization({ name: 'Elsewhere' });
    const outsider = await accounts.createUser({ email: 'outsider@contract.example.com' });
    await accounts.upsertMembership(otherOrg.id, outsider.id, OrganizationLevel.OWNER);
    const mkKey = (user_id: number, scopes: string[]) => keys.create({ user_id, label: 'contract', scopes, scoped_teams: null });
    const mk = async (user_id: number, scopes: string[]) => (await mkKey(user_id, scopes)).key;
    const pluginRead = await mkKey(owner.id, ['plugin:read']);
    const pluginRows = await store.db.selectFrom('plugins').select(['id', 'url']).execute();
    const pluginId = (k: string) => {
      const url = PLUGIN_CATALOG.find((p) => p.key === k)?.url;
      const row = pluginRows.find((r) => r.url === url);
      if (!row) throw new Error(`plugin ${k} not installed`);
      return row.id;
    };
    const now = new Date();
    await importEvents(store, 1, generateDemoEvents({ count: 300, seed: 7, now, days: 3 }));
    const anyEvent = await store.db.selectFrom('events').select('uuid').limit(1).executeTakeFirstOrThrow();
    const result: Fixtures = {
      privateProject: String(team.id),
      memberUuid: member.uuid,
      ownerUuid: owner.uuid,
      memberKey: await mk(member.id, ['*']),
      outsiderKey: await mk(outsider.id, ['*']),
      queryReadKey: await mk(owner.id, ['query:read']),
      pluginReadKey: pluginRead.key,
      pluginReadKeyId: pluginRead.record.id,
      organizationId: org.id,
      personUuid: (await store.db.selectFrom('persons').select('uuid').where('team_id', '=', 1).limit(1).executeTakeFirstOrThrow()).uuid,
      throttledKey: await mk(owner.id, ['query:read']),
      eventUuid: eventUuidOut(anyEvent.uuid),
      projectToken: (await accounts.findTeam(1))!.api_token,
      plugin: { customerio: pluginId('customerio'), notificationBar: pluginId('notification-bar'), webhook: pluginId('webhook') },
    };
    return result;
  } finally {
    await store.close();
  }
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]);
if (isMain) {
  new Command('contract')
    .description(
      'independent contract check: the real server behind `prism proxy generated/openapi.bundle.yaml --errors`, a scenario covering every operation; exits 1 on an unexercised operation, an unexpected status or a Prism violation',
    )
    .action(async () => {
      const r = await runContract();
      process.exitCode = r.ok ? 0 : 1;
    })
    .parseAsync()
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
