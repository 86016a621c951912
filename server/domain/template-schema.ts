/**
 * The dashboard template JSON schema and its errors as PostHog answers them
 * (products/dashboards/backend/api/dashboard_template_json_schema_parser.py: `jsonschema.validate`
 * of the body's `template`, a failure answered as DRF's `ValidationError(str(error))`, i.e. 400
 * `invalid_input`, `attr` null, `detail` python-jsonschema 4.24's text of its best error:
 *
 *     <message>
 *
 *     Failed validating '<keyword>' in schema[…]:
 *         <the sub-schema holding the keyword, pprinted>
 *
 *     On instance[…]:
 *         <the failing value, pprinted>
 *
 * The schema is PostHog's (dashboard_template_schema.json, in its key order, which the message
 * prints), with what this server needs beyond it: a tile's `type` required and one of the kinds
 * it creates (`INSIGHT`, `TEXT`; PostHog skips other tiles with a log line), the lengths its
 * tables hold (names and colors 400, a text 4,000), a tile's `query` and `layouts` objects, and
 * an integer `id` (not used). The validator covers the keywords the schema uses (`type`,
 * `required`, `properties`, `items`, `minItems`, `maxLength`, `enum`, `anyOf`) with
 * python-jsonschema's messages, and picks the error as its `best_match` does (the shallowest
 * instance path; among siblings the greatest path; `anyOf` weak; descending into an `anyOf`'s
 * errors unless the best two tie).
 */
import type { components } from '../../generated/api.js';
import { pformat, pythonRepr } from './python-repr.js';

/** What a template that passes the schema holds (the fields a dashboard is made from; others may be there). */
export interface DashboardTemplate {
  id?: string | number;
  template_name: string;
  dashboard_description: string;
  dashboard_filters: Record<string, unknown>;
  tiles: components['schemas']['DashboardTemplateTile'][];
  tags?: string[];
  [field: string]: unknown;
}

type Path = (string | number)[];
type Schema = Record<string, unknown>;

const nameOrNull = (max: number) => ({ type: ['string', 'null'], maxLength: max });

/** PostHog's template schema with this server's additions (module doc), in PostHog's key order. */
export const DASHBOARD_TEMPLATE_SCHEMA: Schema = {
  type: 'object',
  required: ['template_name', 'dashboard_description', 'dashboard_filters', 'tiles'],
  properties: {
    id: { description: 'The id of the dashboard template', type: ['string', 'integer'] },
    template_name: { description: 'The name of the dashboard template', type: 'string', maxLength: 400 },
    team_id: { description: 'The team this dashboard template belongs to', type: ['number', 'null'] },
    created_at: { description: 'When the dashboard template was created', type: 'string' },
    image_url: { description: 'The image of the dashboard template', type: ['string', 'null'] },
    dashboard_description: { description: 'The description of the dashboard template', type: 'string' },
    dashboard_filters: { description: 'The filters of the dashboard template', type: 'object' },
    tiles: {
      description: 'The tiles of the dashboard template',
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { enum: ['INSIGHT', 'TEXT'] },
          name: nameOrNull(400),
          description: nameOrNull(400),
          query: { type: ['object', 'null'] },
          layouts: { type: 'object' },
          color: nameOrNull(400),
          body: nameOrNull(4000),
        },
      },
    },
    variables: {
      description: 'The variables of the dashboard template',
      anyOf: [
        {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'type', 'default', 'description', 'required'],
            properties: {
              id: { description: 'The id of the variable', type: 'string' },
              name: { description: 'The name of the variable', type: 'string' },
              type: { description: 'The type of the variable', enum: ['event', 'element'] },
              default: { description: 'The default value of the variable', type: 'object' },
              description: { description: 'The description of the variable', type: 'string' },
              required: { description: 'Whether the variable is required', type: 'boolean' },
            },
          },
        },
        { type: 'null' },
      ],
    },
    tags: { description: 'The tags of the dashboard template', type: 'array', items: { type: 'string' } },
    is_featured: { description: 'Whether this template is manually marked as featured in the UI', type: 'boolean' },
  },
};

/** One failure, as python-jsonschema's `ValidationError` holds it. */
interface SchemaError {
  message: string;
  keyword: string;
  /** the instance path, relative to where the validation that made it started */
  path: Path;
  /** the schema path, the keyword last */
  schemaPath: Path;
  schema: Schema;
  instance: unknown;
  /** an `anyOf`'s errors under each branch */
  context: SchemaError[];
}

function isType(v: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      return false;
  }
}

/** Equality as jsonschema's `equal` for the enum values used (strings). */
const sameValue = (a: unknown, b: unknown) => a === b;

/** Every error of `instance` against `schema`, in jsonschema's order (the schema's keywords in order). */
function* iterErrors(schema: Schema, instance: unknown, path: Path = [], schemaPath: Path = []): Generator<SchemaError> {
  const error = (keyword: string, message: string, context: SchemaError[] = []): SchemaError => ({
    message,
    keyword,
    path,
    schemaPath: [...schemaPath, keyword],
    schema,
    instance,
    context,
  });
  for (const [keyword, value] of Object.entries(schema)) {
    switch (keyword) {
      case 'type': {
        const types = Array.isArray(value) ? (value as string[]) : [value as string];
        if (!types.some((t) => isType(instance, t)))
          yield error(keyword, `${pythonRepr(instance)} is not of type ${types.map((t) => pythonRepr(t)).join(', ')}`);
        break;
      }
      case 'required':
        if (!isType(instance, 'object')) break;
        for (const name of value as string[])
          if (!Object.hasOwn(instance as object, name)) yield error(keyword, `${pythonRepr(name)} is a required property`);
        break;
      case 'properties':
        if (!isType(instance, 'object')) break;
        for (const [name, sub] of Object.entries(value as Record<string, Schema>))
          if (Object.hasOwn(instance as object, name))
            yield* iterErrors(sub, (instance as Record<string, unknown>)[name], [...path, name], [...schemaPath, keyword, name]);
        break;
      case 'items':
        if (!Array.isArray(instance)) break;
        for (const [i, item] of instance.entries()) yield* iterErrors(value as Schema, item, [...path, i], [...schemaPath, keyword]);
        break;
      case 'minItems':
        if (Array.isArray(instance) && instance.length < (value as number))
          yield error(keyword, `${pythonRepr(instance)} ${value === 1 ? 'should be non-empty' : 'is too short'}`);
        break;
      case 'maxLength':
        // Python counts code points
        if (typeof instance === 'string' && [...instance].length > (value as number))
          yield error(keyword, `${pythonRepr(instance)} ${value === 0 ? 'is expected to be empty' : 'is too long'}`);
        break;
      case 'enum':
        if (!(value as unknown[]).some((e) => sameValue(e, instance)))
          yield error(keyword, `${pythonRepr(instance)} is not one of ${pythonRepr(value)}`);
        break;
      case 'anyOf': {
        const all: SchemaError[] = [];
        let matched = false;
        for (const [i, sub] of (value as Schema[]).entries()) {
          // a branch's errors are relative to here, as jsonschema's `descend` without a path
          const errs = [...iterErrors(sub, instance, [], [i])];
          if (!errs.length) {
            matched = true;
            break;
          }
          all.push(...errs);
        }
        if (!matched) yield error(keyword, `${pythonRepr(instance)} is not valid under any of the given schemas`, all);
        break;
      }
    }
  }
}

/** Compares two relevance keys element by element (tuples of numbers, paths and booleans), as Python does. */
function compareKeys(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i], b[i]];
    const c = Array.isArray(x) ? compareKeys(x, y as unknown[]) : x === y ? 0 : (x as number | string) < (y as number | string) ? -1 : 1;
    if (c) return c;
  }
  return a.length - b.length;
}

/** python-jsonschema's `relevance` of an error (its `by_relevance` with the default weak keywords). */
function relevance(e: SchemaError): unknown[] {
  const expected = e.schema.type;
  const matchesType =
    expected !== undefined && (Array.isArray(expected) ? expected : [expected]).some((t) => isType(e.instance, t as string));
  return [-e.path.length, e.path, e.keyword !== 'anyOf' && e.keyword !== 'oneOf', false, !matchesType];
}

/** python-jsonschema's `best_match`: the first error of greatest relevance, then into its context. */
function bestMatch(errors: SchemaError[]): SchemaError | undefined {
  let best: SchemaError | undefined;
  for (const e of errors) if (!best || compareKeys(relevance(e), relevance(best)) > 0) best = e;
  while (best && best.context.length) {
    const sorted = [...best.context].sort((a, b) => compareKeys(relevance(a), relevance(b)));
    if (sorted.length >= 2 && compareKeys(relevance(sorted[0]!), relevance(sorted[1]!)) === 0) return best;
    best = sorted[0];
  }
  return best;
}

/** `container[…]` as python-jsonschema's `format_as_index`. */
function asIndex(container: string, indices: Path): string {
  return indices.length ? `${container}[${indices.map((i) => pythonRepr(i)).join('][')}]` : container;
}

/** The text of an error as python-jsonschema 4.24's `str(ValidationError)` (module doc). */
function errorText(e: SchemaError): string {
  const pretty = (v: unknown) => pformat(v).split('\n').join('\n    ');
  return [
    e.message,
    '',
    `Failed validating ${pythonRepr(e.keyword)} in ${asIndex('schema', e.schemaPath.slice(0, -1))}:`,
    `    ${pretty(e.schema)}`,
    '',
    `On ${asIndex('instance', e.path)}:`,
    `    ${pretty(e.instance)}`,
  ].join('\n');
}

/**
 * The detail PostHog answers for a template that fails the schema (module doc), or undefined when
 * `template` is valid. Pure; any JSON value may be given.
 */
export function templateSchemaProblem(template: unknown): string | undefined {
  const best = bestMatch([...iterErrors(DASHBOARD_TEMPLATE_SCHEMA, template)]);
  return best && errorText(best);
}
