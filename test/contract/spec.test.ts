/**
 * Contract ↔ conventions ↔ server, statically (no network), on the contract the server loads
 * (generated/openapi.bundle.yaml: `openapi.yaml` and its `/api/projects/` copies): the rules that
 * Redocly's lint does not express (drf-style operationIds derived from the path, one scope per
 * operation, one throttle class per operation, declared errors, examples on every success,
 * `project_id` once per path item, no 501 placeholder left), and that the server's handler map and `generated/api.d.ts`
 * carry exactly the spec's operationIds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { handlers } from '../../server/handlers/index.js';
import { RATE_CLASSES, RateClassError, rateClassesOf } from '../../server/http/rate-limit.js';
import { listCaptureOperations, SPEC_PATH, type OpenApiDocument } from '../../server/http/spec.js';
import {
  deref,
  environmentsTwin,
  handWrittenOperations,
  HTTP_OPERATIONS,
  operations as ops,
  PROJECTS_PREFIX,
  projectsCopies,
  BODYLESS_ERRORS,
  BODYLESS_SUCCESSES,
  PUBLIC_OPERATIONS,
  spec,
  UNSCOPED_OPERATIONS,
} from '../helpers/spec.js';

type Json = Record<string, unknown>;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Operation {
  operationId: string;
  tags?: string[];
  deprecated?: boolean;
  security?: Array<Record<string, string[]>>;
  parameters?: unknown[];
  responses: Record<string, unknown>;
}
interface Parameter {
  name: string;
  in: string;
}
interface MediaType {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, unknown>;
}
interface Response {
  content?: Record<string, MediaType>;
}

const pathItem = (p: string) => spec.paths[p] as Record<string, unknown> & { parameters?: unknown[] };
const opObject = (o: { path: string; method: string }) => pathItem(o.path)[o.method] as Operation;
const all = ops.map((o) => ({ ...o, op: opObject(o) }));

const ENV_PREFIX = '/api/environments/{project_id}/';
/** The capture endpoints (`x-served-by: capture`, server/capture/): not in `ops`, which the handler map serves. */
const servedByCapture = listCaptureOperations(spec).map((o) => ({ ...o, op: opObject(o) }));
const CAPTURE_PATHS = ['/batch/', '/capture/', '/e/', '/i/v0/e/', '/track/'];
/** The SDKs' start-up calls, served by the capture stage too (server/capture/sdk-config.ts). */
const SDK_OPERATIONS = ['post /flags/', 'post /decide/', 'get /array/{token}/config', 'get /array/{token}/config.js', 'post /i/v1/logs'];
/** The SDKs' calls that go through the API's steps, at PostHog's paths outside the API's prefixes. */
const SDK_API_PATHS = ['/flags/definitions', '/api/feature_flag/local_evaluation/', '/api/surveys/'];

const captureOps = servedByCapture.filter((o) => CAPTURE_PATHS.includes(o.path));
const sdkOps = servedByCapture.filter((o) => !CAPTURE_PATHS.includes(o.path));
const ACTIONS = ['list', 'create', 'retrieve', 'update', 'partial_update', 'destroy'] as const;

/**
 * The operationId drf-spectacular derives from a path and method (PostHog's own schema names), with
 * PostHog's post-processing: `projects_` dropped from a path under `/api/projects/{project_id}/`
 * (posthog/api/documentation.py `custom_postprocessing_hook`), so the copies are `dashboards_list`.
 */
function drfOperationId(p: string, method: string): string {
  let nouns = p
    .split('/')
    .filter((s) => s && s !== 'api' && !s.startsWith('{'))
    .join('_');
  if (p.startsWith('/api/projects/{project_id}/')) nouns = nouns.replace(/^projects_/, '');
  const endsWithParam = /\{[^}]+\}\/$/.test(p);
  const action =
    method === 'get'
      ? endsWithParam || !isCollection(p)
        ? 'retrieve'
        : 'list'
      : method === 'post'
        ? 'create'
        : method === 'put'
          ? 'update'
          : method === 'patch'
            ? 'partial_update'
            : 'destroy';
  return `${nouns}_${action}`;
}

/** Paths of drf APIViews, not viewsets: a GET on them is a `retrieve` (drf-spectacular's `schema_retrieve`). */
const API_VIEWS = ['/api/schema/', '/api/surveys/'];

/** A collection path: `/api/<nouns>/` or `/api/<nouns>/{parent}/<nouns>/` (e.g. `/api/environments/{project_id}/dashboards/`). */
function isCollection(p: string): boolean {
  if (API_VIEWS.includes(p)) return false;
  return /^\/api\/[a-z_]+\/$/.test(p) || /^\/api\/[a-z_]+\/\{[a-z_]+\}\/[a-z_]+\/$/.test(p);
}

/**
 * POST operations that only read, with `:read` scopes as PostHog declares them (posthog/api/query.py:
 * `query:read`; the MCP tools' registrations: `query:read`, `event_definition:read` and `property_definition:read`).
 */
const READING_POSTS = [
  'environments_query_create',
  'query_create',
  'environments_mcp_tools_execute_sql_create',
  'mcp_tools_execute_sql_create',
  'environments_mcp_tools_read_taxonomy_create',
  'mcp_tools_read_taxonomy_create',
];

/** Operations with two scopes (PostHog registers `read_taxonomy` with both definition scopes). */
const TWO_SCOPE_OPERATIONS = ['environments_mcp_tools_read_taxonomy_create', 'mcp_tools_read_taxonomy_create'];

describe('the contract (generated/openapi.bundle.yaml: openapi.yaml and its /api/projects/ copies)', () => {
  it('has 120 operations (71 hand-written: the 19 of the seed, 51 PostHog operations it does not show and the schema; their 49 /api/projects/{project_id}/ copies), each with a unique operationId', () => {
    const ids = ops.map((o) => o.operationId);
    expect(handWrittenOperations).toHaveLength(75);
    expect(projectsCopies).toHaveLength(49);
    expect(ids).toHaveLength(124);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('projects_list');
  });

  describe('operationIds', () => {
    it.each(all.map((o) => [o.operationId, o]))(
      '%s is snake_case drf style (environments_<nouns>_<action>, its /api/projects/ copy <nouns>_<action>, or projects_list)',
      (id, o) => {
        expect(id).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
        const action = new RegExp(`_(${ACTIONS.join('|')})$`);
        if (id !== 'projects_list') {
          if (o.path.startsWith(ENV_PREFIX)) expect(id).toMatch(/^environments_[a-z0-9_]+$/);
          expect(id).toMatch(action);
        }
        expect(id).toBe(drfOperationId(o.path, o.method));
      },
    );
  });

  describe('the /api/projects/{project_id}/ copies (scripts/gen-projects-paths.mjs)', () => {
    it('are in the contract the server loads (generated/openapi.bundle.yaml), which is the hand-written openapi.yaml plus the copies', () => {
      expect(path.relative(ROOT, SPEC_PATH)).toBe(path.join('generated', 'openapi.bundle.yaml'));
      const handWritten = parseYaml(fs.readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as OpenApiDocument;
      const copyPaths = new Set(projectsCopies.map((o) => o.path));
      expect(Object.keys(handWritten.paths).filter((p) => copyPaths.has(p))).toEqual([]);
      const withoutCopies = Object.fromEntries(Object.entries(spec.paths).filter(([p]) => !copyPaths.has(p)));
      expect({ ...spec, paths: withoutCopies }).toEqual(handWritten);
    });

    it('copy every environment-scoped operation, and only those', () => {
      const environmentScoped = handWrittenOperations.filter((o) => o.path.startsWith(ENV_PREFIX));
      expect(projectsCopies.map((o) => `${o.method} ${o.path.slice(PROJECTS_PREFIX.length)}`)).toEqual(
        environmentScoped.map((o) => `${o.method} ${o.path.slice(ENV_PREFIX.length)}`),
      );
    });

    it.each(projectsCopies.map((o) => [o.operationId, o]))(
      "%s is its twin with PostHog's operationId and the projects prefix in its texts",
      (id, o) => {
        const twin = environmentsTwin(o)!;
        expect(id).toBe(twin.operationId.replace(/^environments_/, ''));
        const reprefixed = JSON.parse(JSON.stringify(opObject(twin)).replaceAll('/api/environments/', '/api/projects/')) as Operation;
        expect(opObject(o)).toEqual({ ...reprefixed, operationId: id });
      },
    );
  });

  describe('paths', () => {
    it.each(Object.keys(spec.paths))(
      '%s is under /api/environments/, /api/projects/, /api/users/, /api/personal_api_keys/ or /api/organizations/, or is /api/schema/ or a capture path, and ends with /',
      (p) => {
        if (CAPTURE_PATHS.includes(p)) expect(captureOps.filter((o) => o.path === p)).toHaveLength(2);
        else if (sdkOps.some((o) => o.path === p) || SDK_API_PATHS.includes(p)) return;
        else if (API_VIEWS.includes(p)) expect(p).toBe('/api/schema/');
        else expect(p).toMatch(/^\/api\/(environments|projects|users|personal_api_keys|organizations)\//);
        expect(p.endsWith('/')).toBe(true);
      },
    );

    it.each(Object.keys(spec.paths).filter((p) => p.startsWith(ENV_PREFIX) || p.startsWith(PROJECTS_PREFIX)))(
      '%s declares project_id once, on the path item, via $ref ProjectId',
      (p) => {
        const item = pathItem(p);
        const declared = (item.parameters ?? []).filter((x) => deref<Parameter>(x).name === 'project_id');
        expect(declared).toEqual([{ $ref: '#/components/parameters/ProjectId' }]);
        for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
          const op = item[method] as Operation | undefined;
          if (!op) continue;
          expect(
            (op.parameters ?? []).map((x) => deref<Parameter>(x).name),
            `${method} ${p}`,
          ).not.toContain('project_id');
        }
      },
    );

    it.each(Object.keys(spec.paths))('%s declares every path template parameter exactly once, on the path item', (p) => {
      const item = pathItem(p);
      const inTemplate = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const onItem = (item.parameters ?? [])
        .map((x) => deref<Parameter>(x))
        .filter((x) => x.in === 'path')
        .map((x) => x.name);
      expect([...onItem].sort()).toEqual([...inTemplate].sort());
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const op = item[method] as Operation | undefined;
        if (!op) continue;
        const onOp = (op.parameters ?? []).map((x) => deref<Parameter>(x)).filter((x) => x.in === 'path');
        expect(onOp, `${method} ${p} redeclares a path parameter`).toEqual([]);
      }
    });
  });

  describe('security', () => {
    it('has one PersonalAPIKeyAuth http bearer scheme, and ProjectTokenAuth for the capture endpoints only', () => {
      const schemes = (spec.components as Json).securitySchemes as Json;
      expect(Object.keys(schemes)).toEqual(['PersonalAPIKeyAuth', 'ProjectTokenAuth']);
      expect(schemes.ProjectTokenAuth).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' });
      expect(schemes.PersonalAPIKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it.each(all.map((o) => [o.operationId, o]))(
      "%s lists exactly one PersonalAPIKeyAuth scope (none for a key's own record; two for read_taxonomy; no security at all for the schema)",
      (id, o) => {
        const sec = o.op.security;
        if (PUBLIC_OPERATIONS.includes(id)) {
          expect(sec).toEqual([]);
          return;
        }
        expect(sec).toHaveLength(1);
        expect(Object.keys(sec![0]!)).toEqual(['PersonalAPIKeyAuth']);
        const scopes = sec![0]!.PersonalAPIKeyAuth!;
        if (UNSCOPED_OPERATIONS.includes(id)) {
          expect(scopes).toEqual([]);
          return;
        }
        expect(scopes).toHaveLength(TWO_SCOPE_OPERATIONS.includes(id) ? 2 : 1);
        // a read for GET, a write for everything else, but the query endpoint and the MCP tools: POSTs that only read (PostHog's `query:read`)
        const reads = o.method === 'get' || READING_POSTS.includes(id);
        for (const scope of scopes) {
          expect(scope).toMatch(/^[a-z_]+:(read|write)$/);
          expect(scope.endsWith(reads ? ':read' : ':write')).toBe(true);
        }
      },
    );
  });

  describe('rate limits', () => {
    it.each(all.map((o) => [o.operationId, o]))('%s declares x-rate-limit-class: events | event_values | default', (_id, o) => {
      expect(RATE_CLASSES).toContain((o.op as unknown as Json)['x-rate-limit-class']);
    });

    it('the server reads every class from the spec, and refuses to start on an operation without a valid one', () => {
      expect(rateClassesOf(spec).size).toBe(all.length);
      for (const value of [undefined, 'fast']) {
        const broken = structuredClone(spec);
        const op = (broken.paths['/api/projects/'] as Record<string, Json>).get!;
        if (value === undefined) delete op['x-rate-limit-class'];
        else op['x-rate-limit-class'] = value;
        expect(() => rateClassesOf(broken)).toThrow(RateClassError);
        expect(() => rateClassesOf(broken)).toThrow(/projects_list \(GET \/api\/projects\/\) must declare x-rate-limit-class/);
      }
    });
  });

  describe('tags', () => {
    it.each(all.map((o) => [o.operationId, o]))('%s has one tag, declared with a description', (_id, o) => {
      const declared = (spec.tags as Array<{ name: string; description?: string }>) ?? [];
      expect(o.op.tags).toHaveLength(1);
      const tag = declared.find((t) => t.name === o.op.tags![0]);
      expect(tag?.description?.trim()).toBeTruthy();
    });
  });

  describe('responses', () => {
    it.each(all.map((o) => [o.operationId, o]))(
      '%s declares 401 and 403 (no 403 when it needs no key), and 404 when under /api/environments/{project_id}/',
      (id, o) => {
        const statuses = Object.keys(o.op.responses);
        expect(statuses).toContain('401');
        if (PUBLIC_OPERATIONS.includes(id)) {
          expect(statuses).not.toContain('403');
          return;
        }
        expect(statuses).toContain('401');
        expect(statuses).toContain('403');
        if (o.path.startsWith(ENV_PREFIX)) expect(statuses).toContain('404');
      },
    );

    it.each(all.map((o) => [o.operationId, o]))(
      '%s declares a 2xx, each with content carrying an example (204 without content)',
      (_id, o) => {
        const success = Object.keys(o.op.responses).filter((s) => /^2\d\d$/.test(s));
        expect(success.length).toBeGreaterThan(0);
        for (const status of success) {
          const r = deref<Response>(o.op.responses[status]);
          if (status === '204' || BODYLESS_SUCCESSES[_id]?.includes(status)) {
            expect(r.content, `${status} has no body`).toBeUndefined();
            continue;
          }
          expect(Object.keys(r.content ?? {}).length, `${status} has content`).toBeGreaterThan(0);
          for (const [media, m] of Object.entries(r.content ?? {})) {
            const n = Object.keys(m.examples ?? {}).length + ('example' in m ? 1 : 0);
            expect(n, `${status} ${media} has an example`).toBeGreaterThan(0);
          }
        }
      },
    );

    it.each(all.map((o) => [o.operationId, o]))(
      '%s answers every declared error with the Error schema in application/json, with an example, and declares no 422',
      (_id, o) => {
        const errors = Object.keys(o.op.responses).filter((s) => /^[45]\d\d$/.test(s));
        expect(errors).not.toContain('422');
        for (const status of errors) {
          const r = deref<Response>(o.op.responses[status]);
          if (BODYLESS_ERRORS[_id]?.includes(status)) {
            expect(r.content, `${status} has no body`).toBeUndefined();
            continue;
          }
          expect(Object.keys(r.content ?? {}), status).toEqual(['application/json']);
          const m = r.content!['application/json']!;
          expect(m.schema, status).toEqual({ $ref: '#/components/schemas/Error' });
          const examples = Object.values(m.examples ?? {}).map((e) => deref<{ value: Json }>(e).value);
          expect(examples.length, `${status} has an example`).toBeGreaterThan(0);
          for (const e of examples) expect(Object.keys(e).sort(), status).toEqual(['attr', 'code', 'detail', 'type']);
        }
      },
    );

    it('declares no 501: every operation is implemented', () => {
      expect(all.filter((o) => '501' in o.op.responses).map((o) => o.operationId)).toEqual([]);
    });
  });

  it('marks the events list deprecated: true', () => {
    const events = all.find((o) => o.operationId === 'environments_events_list');
    expect(events?.op.deprecated).toBe(true);
  });
});

describe('the capture operations (x-served-by: capture)', () => {
  it('are POST and GET on each capture path and the SDK start-up calls, and nothing else is served by the capture stage', () => {
    expect(captureOps.map((o) => `${o.method} ${o.path}`).sort()).toEqual(CAPTURE_PATHS.flatMap((p) => [`get ${p}`, `post ${p}`]).sort());
    expect(sdkOps.map((o) => `${o.method} ${o.path}`).sort()).toEqual([...SDK_OPERATIONS].sort());
    for (const o of ops) expect(opObject(o)['x-served-by' as keyof Operation], o.operationId).toBeUndefined();
  });

  it.each(captureOps.map((o) => [o.operationId, o]))(
    '%s: tag capture, ProjectTokenAuth, class capture, capture_<path>_<action>, the capture answers with examples',
    (id, o) => {
      const path = o.path.split('/').filter(Boolean).join('_');
      expect(id).toBe(`capture_${path}_${o.method === 'post' ? 'create' : 'retrieve'}`);
      expect(o.op.tags).toEqual(['capture']);
      expect(o.op.security).toEqual([{ ProjectTokenAuth: [] }]);
      expect((o.op as unknown as Json)['x-rate-limit-class']).toBe('capture');
      expect(Object.keys(o.op.responses).sort()).toEqual(['200', '204', '400', '401', '413', '503']);
      for (const [status, r] of Object.entries(o.op.responses)) {
        if (status === '204') continue;
        const content = deref<Response>(r).content!;
        const media = content[status === '200' ? 'application/json' : 'text/plain']!;
        expect(Object.keys(media.examples ?? {}).length, `${id} ${status}`).toBeGreaterThan(0);
      }
    },
  );

  it.each(sdkOps.map((o) => [o.operationId, o]))(
    '%s: tag sdk, class capture, capture_<path>_<action>, the token as its security, every answer with an example',
    (id, o) => {
      const path = o.path.replace('{token}/', '').replace('.js', '_js').split('/').filter(Boolean).join('_');
      expect(id).toBe(`capture_${path}_${o.method === 'post' ? 'create' : 'retrieve'}`);
      expect(o.op.tags).toEqual(['sdk']);
      expect((o.op as unknown as Json)['x-rate-limit-class']).toBe('capture');
      // flags and decide: the token in the body (ProjectTokenAuth); remote config: the token in the path
      expect(o.op.security).toEqual(o.path.startsWith('/array/') ? [] : [{ ProjectTokenAuth: [] }]);
      for (const [status, r] of Object.entries(o.op.responses)) {
        const content = deref<Response>(r).content!;
        const [media] = Object.values(content);
        expect(Object.keys(media!.examples ?? {}).length, `${id} ${status}`).toBeGreaterThan(0);
      }
    },
  );

  it('are not in the handler map nor given to the validator', () => {
    for (const o of servedByCapture) expect(Object.keys(handlers)).not.toContain(o.operationId);
  });
});

describe('server/handlers/index.ts', () => {
  it('has a handler for exactly the operationIds of the spec (but those server/http/ answers itself)', () => {
    expect(Object.keys(handlers).sort()).toEqual(
      ops
        .map((o) => o.operationId)
        .filter((id) => !HTTP_OPERATIONS.includes(id))
        .sort(),
    );
    for (const h of Object.values(handlers)) expect(h).toBeTypeOf('function');
  });
});

describe('generated/api.d.ts', () => {
  const generated = fs.readFileSync(path.join(ROOT, 'generated', 'api.d.ts'), 'utf8');

  it.each(ops.map((o) => [o.operationId]))('mentions %s', (id) => {
    expect(generated).toContain(`operations["${id}"]`);
    expect(generated).toMatch(new RegExp(`^\\s+${id}: \\{`, 'm'));
  });

  it.each(servedByCapture.map((o) => [o.operationId]))('mentions the capture operation %s', (id) => {
    expect(generated).toContain(`operations["${id}"]`);
  });

  it.each(Object.keys(spec.paths))('has the path %s', (p) => {
    expect(generated).toContain(`"${p}": {`);
  });
});
