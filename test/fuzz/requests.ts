/**
 * The random requests of the contract fuzzer (`requestArb`): for an operation, a project (1,
 * `@current`, B, another organization's, nonsense), a key (`KeyKind`), path ids from the fixture
 * (own, foreign, nonsense), declared query parameters (valid-looking or nasty; the events list's
 * `properties` filter as JSON with nasty keys, values, operators and nesting), an extra query
 * parameter, and a body built from the schema, valid or mutated (wrong content types, broken JSON).
 * Also `FuzzRequest`, the request both fuzzers send, and `OPERATORS`, every property-filter operator.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { SpecOperation } from '../../server/http/spec.js';
import { PROPERTY_OPERATORS } from '../../server/storage/events/filter-tree.js';
import { anyJson, enc, mutate, NASTY_NUMBERS, nastyNumber, nastyString, nastyUrlString, PROTO_KEYS, validOf } from './arbitraries.js';
import type { Fixture } from './fixture.js';
import { bodySchemaOf, deref, paramsOf, type Param, type Schema } from '../helpers/spec.js';

/** Which key a request carries: the bootstrap key, the project-1 key, none, one with no scope, a garbage one. */
export type KeyKind = 'boot' | 'p1' | 'none' | 'noscope' | 'garbage';

/** A request as sent (path and query already percent-encoded, body as text), with what the checks need to judge its answer. */
export interface FuzzRequest {
  op: SpecOperation;
  /** a path parameter was sent empty (`…/explicit_members//`): the path is another route's */
  emptySegment: boolean;
  key: KeyKind;
  /** the path with parameters filled (encoded) */
  path: string;
  /** the project id as sent, decoded */
  project: string;
  query: string;
  method: string;
  contentType: string | undefined;
  body: string | undefined;
  mutated: boolean;
  /**
   * Set when the request carries text no store can hold (U+0000, an unpaired surrogate) in a place
   * the operation reads, or any control character in a path id: the answer must be a 4xx (never a
   * 2xx that one store would keep and the other could not). Says where the text is.
   */
  strict?: string;
}

/** The `Authorization` key of `kind` (null: none sent). */
export function keyValue(kind: KeyKind, f: Fixture): string | null {
  switch (kind) {
    case 'boot':
      return f.t.boot.key;
    case 'p1':
      return f.p1Key;
    case 'noscope':
      return f.noScopeKey;
    case 'garbage':
      return "phx_' OR 1=1 --";
    default:
      return null;
  }
}

/** The ids a path parameter `name` of `op` takes in one project's objects. */
export function idsOf(op: SpecOperation, name: string, bag: Fixture['p1'] | Fixture['b']): Array<string | number> {
  if (name === 'parent_membership__user__uuid') return bag.memberUuids;
  if (op.path.includes('/events/')) return bag.events;
  if (op.path.includes('/dashboards/')) return bag.dashboards;
  return bag.configs;
}

/** A path id for `name` in `project`: mostly one of its own objects, sometimes a foreign one or nonsense. */
function idPool(op: SpecOperation, name: string, project: string, f: Fixture): fc.Arbitrary<string> {
  const own = project === String(f.projectB) ? f.b : f.p1;
  const foreign = project === String(f.projectB) ? f.p1 : f.b;
  const valid = idsOf(op, name, own);
  const foreignIds = idsOf(op, name, foreign);
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...valid.map(String)) },
    { weight: 1, arbitrary: fc.constantFrom(...foreignIds.map(String)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...NASTY_NUMBERS.map(String), '00000000-0000-0000-0000-000000000000', randomUUID(), '1.0', '0x1', ' 1'),
    },
  );
}

/** Every operator of a property filter: the server's own list (its first six take text). */
export const OPERATORS: readonly string[] = PROPERTY_OPERATORS;
/** The `properties` filter of the events list: valid-looking JSON with nasty keys, values and operators. */
const filterArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    key: fc.oneof(fc.constantFrom('$browser', 'marker', 'n', 'email', 'redos', "' OR 1=1 --", '%', ...PROTO_KEYS), nastyString),
    value: fc.oneof(
      nastyString,
      nastyNumber,
      fc.array(nastyString, { maxLength: 3 }),
      fc.constant(null),
      fc.boolean(),
      fc.constant(JSON.parse('{"__proto__":1}') as unknown),
      fc.constantFrom('Chrome', 'p1-marker-1', '(a+)+$', 'a+$'),
    ),
    operator: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...OPERATORS, 'regex', 'icontains', 'exact') },
      { weight: 1, arbitrary: nastyString },
    ),
    type: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('event', 'person') },
      { weight: 1, arbitrary: fc.oneof(nastyString, fc.constantFrom('element', 'cohort', 'group')) },
    ),
  },
  { requiredKeys: [] },
);
const groupArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  group: fc.record({
    type: fc.oneof(fc.constantFrom('AND', 'OR'), nastyString),
    values: fc.array(fc.oneof({ maxDepth: 3, depthIdentifier: 'g' }, filterArb, tie('group')), { maxLength: 3 }),
  }),
})).group;
/** a group nested `depth` levels deep, built as text (JSON.stringify would recurse as deep) */
const deepGroup = fc
  .integer({ min: 50, max: 5000 })
  .map((depth) => '{"type":"AND","values":['.repeat(depth) + '{"key":"$browser","value":"Chrome"}' + ']}'.repeat(depth));
const propertiesArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.array(filterArb, { maxLength: 4 }).map((a) => JSON.stringify(a)) },
  { weight: 2, arbitrary: groupArb.map((g) => JSON.stringify(g)) },
  { weight: 1, arbitrary: deepGroup },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '[',
      '{"type":"OR"}',
      '[{"key":"__proto__","value":{"polluted":1}}]',
      '{"__proto__":{"type":"AND"}}',
      'null',
      '1',
      '"x"',
      '[[[]]]',
      '[null]',
    ),
  },
  { weight: 1, arbitrary: nastyUrlString },
);

/** A value for a query parameter (valid-looking, or nasty). */
function queryValue(op: SpecOperation, p: Param, mutated: boolean, f: Fixture): fc.Arbitrary<string | string[]> {
  if (p.name === 'properties' && op.operationId === 'environments_events_list') return propertiesArb;
  const s = deref(p.schema ?? {});
  const examples: string[] = [];
  if (p.example !== undefined) examples.push(String(p.example));
  for (const e of Object.values(p.examples ?? {})) examples.push(String(e.value));
  const special: Record<string, string[]> = {
    after: ['-24h', '-7d', '2024-01-01', 'dStart', '-1h', '-99999999d', '-1e308h'],
    before: ['-1h', 'now', '2099-12-31T00:00:00Z', '+9999999d'],
    distinct_id: [...f.p1.distinctIds, ...f.b.distinctIds],
    event: ['$pageview', '$autocapture', 'p1 custom event', 'B-secret custom event'],
    key: ['$browser', 'marker', 'n', 'email', '$current_url', 'redos'],
    value: ['Chr', 'p1', 'B-secret', '%', '_'],
    cursor: [
      'MjAyNC0xMS0yMFQxNDowMzoxMC44NzFaLDAxOTM0ZThhLTRiN2UtN2MyMS04ZTVmLTNhOWIxYzJkNGU2Zg',
      Buffer.from("2024-01-01T00:00:00Z,' OR 1=1 --").toString('base64url'),
      '!!!',
      Buffer.from('{"__proto__":1}').toString('base64'),
    ],
    event_name: ['$pageview', 'p1 custom event'],
  };
  const validArb: fc.Arbitrary<string | string[]> =
    s.type === 'array'
      ? fc.array(fc.constantFrom(...(special[p.name] ?? ['x'])), { minLength: 1, maxLength: 3 })
      : fc.oneof(
          ...(examples.length ? [fc.constantFrom(...examples)] : []),
          ...(special[p.name] ? [fc.constantFrom(...(special[p.name] as string[]))] : []),
          validOf(s, {}).map((v) => String(v)),
        );
  if (!mutated) return validArb;
  return fc.oneof(
    validArb,
    nastyUrlString,
    nastyNumber.map(String),
    fc.constantFrom('', 'Infinity', '-Infinity', 'true', 'false', '[]', '{}', '1,2', 'NaN', '-0', '1e3', '0x10'),
    fc.array(nastyUrlString, { minLength: 2, maxLength: 3 }),
  );
}

/** A random request for `op`, valid or mutated (see the module's docstring), against the seeded fixture `f`. */
export function requestArb(op: SpecOperation, f: Fixture): fc.Arbitrary<FuzzRequest> {
  const params = paramsOf(op);
  const bodySchema = bodySchemaOf(op);
  const hasProject = params.some((p) => p.name === 'project_id');
  const isWrite = op.method !== 'get';
  const projectArb: fc.Arbitrary<string> = hasProject
    ? fc.oneof(
        { weight: 10, arbitrary: fc.constant('1') },
        { weight: 2, arbitrary: fc.constant('@current') },
        // writes never target project B with the all-projects key: its rows must stay to be looked for
        ...(isWrite ? [] : [{ weight: 2, arbitrary: fc.constant(String(f.projectB)) }]),
        { weight: 1, arbitrary: fc.constant(String(f.otherOrgTeam)) },
        { weight: 1, arbitrary: fc.constantFrom('999999', '0', '-1', '2147483648', '9007199254740993', '1e308', '01', '1.0') },
        { weight: 1, arbitrary: nastyUrlString },
      )
    : fc.constant('');
  const keyArb = fc.oneof(
    { weight: 8, arbitrary: fc.constant<KeyKind>('boot') },
    { weight: 6, arbitrary: fc.constant<KeyKind>('p1') },
    { weight: 1, arbitrary: fc.constantFrom<KeyKind>('none', 'noscope', 'garbage') },
  );
  return fc.record({ project: projectArb, key: keyArb, mutated: fc.boolean(), seedInt: fc.nat() }).chain(({ project, key, mutated }) => {
    // writes with project B in the path only with keys that cannot reach it
    const safeKey: KeyKind = isWrite && project === String(f.projectB) && key === 'boot' ? 'p1' : key;
    const pathParts = params
      .filter((p) => p.in === 'path' && p.name !== 'project_id')
      .map((p) =>
        fc.tuple(
          fc.constant(p.name),
          fc.oneof({ weight: mutated ? 2 : 9, arbitrary: idPool(op, p.name, project, f) }, { weight: 1, arbitrary: nastyUrlString }),
        ),
      );
    const queryParts = params
      .filter((p) => p.in === 'query')
      .map((p) => fc.option(fc.tuple(fc.constant(p.name), queryValue(op, p, mutated, f)), { freq: 2, nil: undefined }));
    const extraQuery = mutated
      ? fc.option(
          fc.tuple(
            fc.constantFrom('__proto__[polluted]', 'constructor[prototype][x]', 'limit[]', 'offset[$gt]', 'extra', "' OR 1=1 --"),
            nastyUrlString,
          ),
          { nil: undefined },
        )
      : fc.constant(undefined);
    const bodyArb: fc.Arbitrary<{ contentType: string | undefined; body: string | undefined }> = bodySchema
      ? bodyFor(op, bodySchema, mutated, f)
      : mutated
        ? fc
            .option(
              anyJson.map((b) => ({ contentType: 'application/json', body: JSON.stringify(b) })),
              { nil: undefined },
            )
            .map((x) => x ?? { contentType: undefined, body: undefined })
        : fc.constant({ contentType: undefined, body: undefined });
    return fc
      .record({ pathParts: fc.tuple(...pathParts), queryParts: fc.tuple(...queryParts), extraQuery, body: bodyArb })
      .map(({ pathParts: pp, queryParts: qp, extraQuery: eq, body }) => {
        let path = op.path.replace('{project_id}', enc(project));
        for (const [name, value] of pp) path = path.replace(`{${name}}`, enc(value));
        const qs: string[] = [];
        for (const part of [...qp, eq]) {
          if (!part) continue;
          const [name, value] = part;
          for (const v of Array.isArray(value) ? value : [value]) qs.push(`${enc(name)}=${enc(v)}`);
        }
        const method = op.method.toUpperCase();
        // fetch cannot send a body with GET
        const sendBody = method === 'GET' ? { contentType: undefined, body: undefined } : body;
        return {
          op,
          emptySegment: (project === '' && hasProject) || pp.some(([, v]) => v === ''),
          key: safeKey,
          path,
          project,
          query: qs.join('&'),
          method,
          contentType: sendBody.contentType,
          body: sendBody.body,
          mutated,
        };
      });
  });
}

/** A body for `op`'s schema (with fixture ids for plugins, users, tiles, dashboards), valid or mutated. */
function bodyFor(
  op: SpecOperation,
  schema: Schema,
  mutated: boolean,
  f: Fixture,
): fc.Arbitrary<{ contentType: string | undefined; body: string | undefined }> {
  const hints: Record<string, fc.Arbitrary<unknown>> = {
    plugin: fc.constantFrom(f.destinationPluginId, f.frontendPluginId),
    user_uuid: fc.constantFrom(...f.p1.memberUuids, ...f.b.memberUuids),
    tile: fc.record({ id: fc.constantFrom(...f.p1.tiles, ...f.b.tiles) }),
    toDashboard: fc.constantFrom(...f.p1.dashboards, ...f.b.dashboards),
    type: fc.constantFrom('TEXT', 'INSIGHT', 'Export historical events V2', 'Export historical events'),
    payload: fc.constantFrom({ dateRange: ['2024-01-01', '2024-01-31'] }, { dateRange: [] }, {}),
  };
  const valid = validOf(schema, hints);
  const asJson = (v: unknown) => ({ contentType: 'application/json' as string | undefined, body: JSON.stringify(v) as string | undefined });
  if (!mutated) return valid.map(asJson);
  return fc.oneof(
    { weight: 6, arbitrary: valid.chain((v) => mutate(v, schema)).map(asJson) },
    { weight: 1, arbitrary: valid.map((v) => ({ contentType: 'text/plain', body: JSON.stringify(v) })) },
    { weight: 1, arbitrary: valid.map((v) => ({ contentType: undefined, body: JSON.stringify(v) })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '{',
          '{"a":',
          'null',
          '[]',
          '"str"',
          '1e308',
          '{"__proto__":{"polluted":true}}',
          '{"constructor":{"prototype":{"x":1}}}',
          '\u0000',
          '',
        )
        .map((b) => ({
          contentType: 'application/json',
          body: b,
        })),
    },
    { weight: 1, arbitrary: fc.constant({ contentType: 'application/x-www-form-urlencoded', body: '__proto__[x]=1&plugin=1&order=1' }) },
  );
}
