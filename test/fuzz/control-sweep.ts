/**
 * The deterministic requests of the control-character sweep (`controlSweep`): for an operation, a
 * valid base request (project 1, the bootstrap key, a seeded id, a body with every declared field)
 * with one of `CONTROL_CHARS` put into one string it reads. Requests carrying text no store can hold
 * where the operation reads it are marked `strict` (the answer must be a 4xx).
 */
import type { SpecOperation } from '../../server/http/spec.js';
import { CONTROL_CHARS, enc, placed, UNSTORABLE } from './arbitraries.js';
import type { Fixture } from './fixture.js';
import { idsOf, OPERATORS, type FuzzRequest } from './requests.js';
import { bodySchemaOf, deref, paramsOf, typesOf, type Schema } from '../helpers/spec.js';

/**
 * Percent-encodes like `enc`, but writes an unpaired surrogate as its three "WTF-8" bytes
 * (`%ED%A0%80`), the invalid UTF-8 a client may send, instead of U+FFFD.
 */
function encWtf8(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += enc(ch);
  }
  return out;
}

/** How `text` reaches the server through `enc` (UTF-8: an unpaired surrogate becomes U+FFFD). */
function asSentInUrl(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}

/** A valid-looking value of a schema with every declared (non-read-only) property present. */
interface Skeleton {
  value: unknown;
  /** paths of the free-form maps (`config`, `filters`, `payload`…) in `value` */
  freeForm: string[][];
}

/** A skeleton of `schema` for `op`: fixture ids where the body names a plugin, user, tile or dashboard. */
function skeletonOf(op: SpecOperation, schema: Schema, f: Fixture): Skeleton {
  const freeForm: string[][] = [];
  const hints: Record<string, unknown> = {
    plugin: op.path.includes('frontend_apps') ? f.frontendPluginId : f.destinationPluginId,
    user_uuid: f.p1.memberUuids[0],
    tile: { id: f.p1.tiles[0] },
    toDashboard: f.p1.dashboards[1],
  };
  const build = (node: Schema, path: string[], name: string | undefined, depth: number): unknown => {
    let sch = deref(node);
    if (name !== undefined && name in hints && depth > 0) return hints[name];
    if (sch.allOf) sch = deref(sch.allOf[0] as Schema);
    if (sch.oneOf || sch.anyOf) sch = deref((sch.oneOf ?? sch.anyOf)[0] as Schema);
    if (sch.enum) return (sch.enum as unknown[]).find((v) => v !== null) ?? null;
    const type = typesOf(sch).find((t) => t !== 'null') ?? 'null';
    switch (type) {
      case 'object': {
        const props = (sch.properties ?? {}) as Record<string, Schema>;
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(props)) if (!deref(v).readOnly) out[k] = build(v, [...path, k], k, depth + 1);
        const ap = sch.additionalProperties;
        if (ap && typeof ap === 'object' && Object.keys(props).length === 0) {
          const key = sch.propertyNames?.pattern === '^[0-9]+$' ? String(f.p1.configs[0]) : 'k';
          out[key] = build(ap as Schema, [...path, key], undefined, depth + 1);
        } else if (Object.keys(props).length === 0 && ap !== false) {
          freeForm.push(path);
          out.k = 'v';
        }
        return out;
      }
      case 'array':
        return Array.from({ length: Math.max(1, sch.minItems ?? 1) }, (_, i) =>
          build((sch.items ?? {}) as Schema, [...path, String(i)], undefined, depth + 1),
        );
      case 'integer':
      case 'number':
        return sch.minimum ?? 1;
      case 'boolean':
        return false;
      case 'null':
        return null;
      default: {
        if (typeof sch.example === 'string') return sch.example;
        if (Array.isArray(sch.examples) && typeof sch.examples[0] === 'string') return sch.examples[0];
        if (sch.format === 'uuid') return f.p1.memberUuids[0];
        if (sch.format === 'date-time') return '2024-11-20T14:03:10Z';
        return 'text';
      }
    }
  };
  return { value: build(schema, [], undefined, 0), freeForm };
}

/** Every path to a string in a JSON value. */
function stringPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...path, String(i)]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...path, k]));
  return [];
}

/** A deep copy of `root` with `fn` applied to the value at `path`. */
function updateAt(root: unknown, path: string[], fn: (v: unknown) => unknown): unknown {
  if (path.length === 0) return fn(root);
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(root)) return root.map((v, i) => (String(i) === head ? updateAt(v, rest, fn) : v));
  const obj = root as Record<string, unknown>;
  return { ...obj, [head]: updateAt(obj[head], rest, fn) };
}

/** Operations whose base request needs a query parameter to get past their own checks. */
const BASE_QUERY: Record<string, Record<string, string>> = { environments_events_values_retrieve: { key: '$browser' } };

/** A value each property-filter operator accepts (so that the swept text is the only problem). */
const FILTER_VALUE: Record<string, unknown> = {
  exact: 'Chrome',
  is_not: 'Chrome',
  icontains: 'Chr',
  not_icontains: 'Chr',
  regex: 'Ch.*',
  not_regex: 'Ch.*',
  gt: 1,
  lt: 1,
  gte: 1,
  lte: 1,
  is_set: undefined,
  is_not_set: undefined,
  is_date_exact: '2024-01-01',
  is_date_after: '-7d',
  is_date_before: '2024-01-01',
};

/**
 * Deterministic requests putting every character of `CONTROL_CHARS` (alone, or before, after or
 * inside other text) into every string the operation reads: each path parameter, each declared
 * query parameter (surrogates both as U+FFFD, as UTF-8 carries them, and as raw WTF-8 bytes), the
 * key and the value of an events `properties` filter (every operator, `event` and `person` types,
 * in turn), every string of a body with all declared fields, and a key added to each free-form map
 * (`config`, `dashboard_filters`, `payload`…). The base request is valid (project 1, the bootstrap
 * key, a seeded id), so the swept text is the request's only oddity.
 */
export function controlSweep(op: SpecOperation, f: Fixture): FuzzRequest[] {
  const params = paramsOf(op);
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const bodySchema = op.method === 'get' ? undefined : bodySchemaOf(op);
  const skeleton = bodySchema ? skeletonOf(op, bodySchema, f) : undefined;
  const baseQuery = BASE_QUERY[op.operationId] ?? {};
  const out: FuzzRequest[] = [];
  const make = (o: { path?: Record<string, string>; query?: Record<string, string>; body?: unknown; strict?: string }): FuzzRequest => {
    let path = op.path;
    for (const p of pathParams) {
      const raw = o.path?.[p.name];
      const value = raw ?? (p.name === 'project_id' ? enc('1') : enc(String(idsOf(op, p.name, f.p1)[0])));
      path = path.replace(`{${p.name}}`, value);
    }
    const q = { ...Object.fromEntries(Object.entries(baseQuery).map(([k, v]) => [k, enc(v)])), ...o.query };
    const body = skeleton ? JSON.stringify(o.body === undefined ? skeleton.value : o.body) : undefined;
    return {
      op,
      emptySegment: false,
      key: 'boot',
      path,
      project: '1',
      query: Object.entries(q)
        .map(([k, v]) => `${enc(k)}=${v}`)
        .join('&'),
      method: op.method.toUpperCase(),
      contentType: body === undefined ? undefined : 'application/json',
      body,
      mutated: true,
      ...(o.strict ? { strict: o.strict } : {}),
    };
  };
  CONTROL_CHARS.forEach((c, i) => {
    const text = placed(c, i);
    const surrogate = /[\ud800-\udfff]/.test(c);
    // path parameters: a control character names no object
    for (const p of pathParams) {
      out.push(make({ path: { [p.name]: enc(text) }, strict: `path parameter ${p.name}` }));
      if (surrogate) out.push(make({ path: { [p.name]: encWtf8(text) }, strict: `path parameter ${p.name} (WTF-8)` }));
    }
    // declared query parameters
    for (const p of queryParams) {
      const sent = asSentInUrl(text);
      out.push(make({ query: { [p.name]: enc(text) }, ...(UNSTORABLE.test(sent) ? { strict: `query parameter ${p.name}` } : {}) }));
      if (surrogate) out.push(make({ query: { [p.name]: encWtf8(text) } }));
    }
    // the key and the value of a property filter, through every operator and both types in turn
    if (op.operationId === 'environments_events_list') {
      const operator = OPERATORS[i % OPERATORS.length] as string;
      const type = i % 2 ? 'person' : 'event';
      const strict = UNSTORABLE.test(text) ? 'properties' : undefined;
      const props = (filter: Record<string, unknown>) => enc(JSON.stringify([filter]));
      out.push(
        make({
          query: { properties: props({ key: text, value: FILTER_VALUE[operator], operator, type }) },
          ...(strict ? { strict: `properties key (${operator}, ${type})` } : {}),
        }),
      );
      const valueOperator = OPERATORS[(i * 7) % 6] as string; // the operators that take text
      out.push(
        make({
          query: { properties: props({ key: '$browser', value: text, operator: valueOperator, type }) },
          ...(strict ? { strict: `properties value (${valueOperator}, ${type})` } : {}),
        }),
      );
      out.push(
        make({
          query: { properties: enc(JSON.stringify({ type: 'OR', values: [{ key: '$browser', value: ['Chrome', text], type }] })) },
          ...(strict ? { strict: 'properties value in an array, in a group' } : {}),
        }),
      );
    }
    // every string of the body, and a key in every free-form map
    if (skeleton) {
      const strict = UNSTORABLE.test(text);
      for (const at of stringPaths(skeleton.value)) {
        out.push(
          make({ body: updateAt(skeleton.value, at, () => text), ...(strict ? { strict: `body ${at.join('__') || '(the body)'}` } : {}) }),
        );
      }
      for (const at of skeleton.freeForm) {
        out.push(
          make({
            body: updateAt(skeleton.value, at, (m) => ({ ...(m as object), [text]: 'v' })),
            ...(strict ? { strict: `body key in ${at.join('__')}` } : {}),
          }),
        );
      }
    }
  });
  return out;
}
