/**
 * The built-in plugin catalog: the plugins `npm start` installs for the seed organization and that
 * `envapi plugins install <url-or-key>` installs. The entries are data, in ./plugin-catalog/; this
 * module loads them (`loadPluginCatalog`, once, into `PLUGIN_CATALOG`), checks their shape and
 * finds an entry by key or url (`findCatalogPlugin`).
 *
 * The folder ./plugin-catalog/ (read from the sources also when the server runs from dist/: tsc
 * copies no JSON, and the build's freshness check reads only `.ts` files, so an edit of the data
 * counts at the next start either way):
 * - `catalog.json`: the plugins' keys in install order, e.g. `["customerio", "hubspot", …]`;
 * - `<key>.json`: one entry, a `CatalogPlugin` whose `frontend_source` is null or
 *   `{"file": "<key>.frontend.js"}`, a file next to it holding the transpiled source (its one final
 *   newline is not part of the source); an optional `"$comment"` (text) is dropped;
 * - nothing else: a JSON file that `catalog.json` does not list, a listed key without its file, a
 *   key that is not its file's name, a field missing, unknown or of the wrong type each fail the
 *   load with a `PluginCatalogError` naming the file and the field.
 *
 * Each entry holds what PostHog stores in its `posthog_plugin` row (posthog/models/plugin.py `Plugin`):
 * `config_schema` is the plugin.json `config` list, `public_jobs` is plugin.json `publicJobs` (or the
 * public jobs that PostHog's plugin server adds, e.g. "Export historical events V2"), `capabilities` is
 * what the plugin server reports for the plugin's exports (`{methods, jobs, scheduled_tasks}`; site and
 * frontend apps are never loaded by the plugin server, so theirs stays `{}`), and `frontend_source` is
 * the transpiled `frontend.tsx` (PostHog's `PluginSourceFile` with status TRANSPILED: the plugin
 * transpiler wraps Babel's CommonJS output as `"use strict";\nexport function getFrontendApp
 * (require) { let exports = {}; <code>; return exports; }`, common/plugin_transpiler), served by
 * `GET /pipeline_destination_configs/:id/frontend`.
 *
 * The config schemas, public jobs and urls follow the real plugin.json files of
 * github.com/PostHog/customerio-plugin, hubspot-plugin, webhook-plugin, posthog-plugin-geoip,
 * notification-bar-app, pineapple-mode-app, github-star-sync-plugin and
 * github.com/witty-works/posthog-property-filter-plugin. `tag`/`latest_tag` are real commits of those
 * repositories. `migrator` mirrors PostHog's `HOG_FUNCTION_MIGRATORS` (posthog/cdp/templates/__init__.py,
 * keyed by plugin url; the template id is the one the migrator's template declares, e.g.
 * posthog/cdp/templates/customerio/template_customerio.py `TemplateCustomerioMigrator`).
 *
 * Classification (see `isDestination` / `isFrontendApp` in ./plugin-jobs.ts):
 * - destinations (`methods` has onEvent or composeWebhook): customerio, hubspot, webhook
 * - transformations (`methods` has processEvent): geoip, property-filter
 * - site/frontend apps (`capabilities: {}`): notification-bar (exports a `scene` previewing the bar),
 *   pineapple-mode (exports `inject`, which rains the configured emoji over allowed hosts)
 * - import app (`scheduled_tasks`, no onEvent): github-star-sync — in neither of our two lists
 *
 * Every entry is deeply frozen: copy it (e.g. `structuredClone`) before changing anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One field of a plugin's `config_schema` (a plugin.json `config` entry). Markdown-only entries
 * (`{markdown}`) have no `key`. `secret: true` fields are masked as
 * "**************** POSTHOG SECRET FIELD ****************" when a config is read (posthog/api/plugin.py).
 * `site: true` marks fields exposed to the browser for site apps.
 */
export interface ConfigSchemaField {
  key?: string;
  name?: string;
  type?: 'string' | 'choice' | 'attachment' | 'json' | 'dictionary' | 'boolean';
  default?: unknown;
  required?: boolean;
  secret?: boolean;
  hint?: string;
  choices?: string[];
  required_if?: unknown;
  visible_if?: unknown;
  markdown?: string;
  site?: boolean;
}

/** One payload field of a public job (plugin.json `publicJobs.<name>.payload.<field>`). */
export interface JobPayloadField {
  type: 'string' | 'boolean' | 'json' | 'number' | 'date' | 'daterange';
  title?: string;
  required?: boolean;
  default?: unknown;
  /** only staff users may set a value different from `default` (posthog/models/plugin.py validate_plugin_job_payload) */
  staff_only?: boolean;
}

/** A public job: the jobs a user may trigger with `POST .../job` (`{"job": {"type", "payload"}}`). */
export interface PublicJob {
  payload?: Record<string, JobPayloadField>;
}

/** PostHog's `HOG_FUNCTION_MIGRATORS` entry for a plugin url (posthog/cdp/templates/__init__.py). */
export interface HogFunctionMigrator {
  /** the hog function template id the migrated function gets (`template_id`) */
  template_id: string;
  name: string;
  description: string;
  /** maps the plugin config's keys to the destination function's input names */
  inputs: Record<string, string>;
}

/**
 * One entry of the built-in catalog.
 * Shape: `{key, url, name, description, icon, plugin_type, tag, latest_tag, capabilities: {methods?, jobs?,
 * scheduled_tasks?}, config_schema: ConfigSchemaField[], public_jobs: {<job name>: {payload?: {<field>:
 * JobPayloadField}}}, frontend_source: string | null, migrator: HogFunctionMigrator | null}`.
 */
export interface CatalogPlugin {
  /** short CLI name, e.g. 'customerio' */
  key: string;
  /** PostHog identifies plugins by url, e.g. 'https://github.com/PostHog/customerio-plugin' */
  url: string;
  name: string;
  description: string;
  icon: string | null;
  plugin_type: 'local' | 'custom' | 'repository' | 'source' | 'inline';
  tag: string | null;
  latest_tag: string | null;
  capabilities: { methods?: string[]; jobs?: string[]; scheduled_tasks?: string[] };
  config_schema: ConfigSchemaField[];
  public_jobs: Record<string, PublicJob>;
  /** transpiled frontend.tsx source for site/frontend apps, else null */
  frontend_source: string | null;
  /** PostHog's HOG_FUNCTION_MIGRATORS entry for this plugin url, or null */
  migrator: HogFunctionMigrator | null;
}

/** The catalog's folder, relative to the project root. */
const CATALOG_FOLDER = path.join('server', 'domain', 'plugin-catalog');

/**
 * The catalog's folder: `server/domain/plugin-catalog/` of the nearest folder above this module
 * that has one (the project root, whether this runs from `server/` or from `dist/server/`).
 */
function defaultCatalogDir(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, CATALOG_FOLDER);
    if (fs.existsSync(path.join(candidate, 'catalog.json'))) return candidate;
    if (path.dirname(dir) === dir)
      throw new PluginCatalogError(CATALOG_FOLDER, `no ${path.join(CATALOG_FOLDER, 'catalog.json')} in ${start} or any folder above it`);
  }
}

/** A catalog file that is missing or not of the catalog's shape; `file` is the path, `message` says what and where. */
export class PluginCatalogError extends Error {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'PluginCatalogError';
  }
}

/**
 * Loads the catalog from `dir` (default: the project's server/domain/plugin-catalog/, see the
 * module doc): the entries of `catalog.json`'s keys, in its order, each checked and deeply frozen.
 * Throws `PluginCatalogError` naming the file (relative to the working directory when it is below
 * it, else absolute) and the field, for a file that is missing, not JSON, or not of the shape.
 */
export function loadPluginCatalog(dir: string = defaultCatalogDir()): readonly CatalogPlugin[] {
  const shown = (name: string) => {
    const full = path.resolve(dir, name);
    const relative = path.relative(process.cwd(), full);
    return relative.startsWith('..') || path.isAbsolute(relative) ? full : relative;
  };
  const readJson = (name: string): unknown => {
    let text: string;
    try {
      text = fs.readFileSync(path.join(dir, name), 'utf8');
    } catch (err) {
      throw new PluginCatalogError(shown(name), `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new PluginCatalogError(shown(name), `is not JSON: ${(err as Error).message}`);
    }
  };
  const order = readJson('catalog.json');
  if (!Array.isArray(order) || order.some((k) => typeof k !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(k))) {
    throw new PluginCatalogError(
      shown('catalog.json'),
      'must be an array of plugin keys (lower-case letters, digits and "-"), e.g. ["customerio", "hubspot"]',
    );
  }
  const keys = order as string[];
  const duplicate = keys.find((k, i) => keys.indexOf(k) !== i);
  if (duplicate !== undefined) throw new PluginCatalogError(shown('catalog.json'), `lists "${duplicate}" twice`);
  const unlisted = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'catalog.json' && !keys.includes(f.slice(0, -'.json'.length)))
    .sort();
  if (unlisted.length > 0)
    throw new PluginCatalogError(shown(unlisted[0]!), 'is not listed in catalog.json (add its key there, or remove the file)');
  return deepFreeze(
    keys.map((key) => {
      const file = `${key}.json`;
      const check = new ShapeCheck(shown(file));
      const entry = checkEntry(check, readJson(file), key);
      const source = entry.frontend_source;
      if (source === null) return { ...entry, frontend_source: null };
      let text: string;
      try {
        text = fs.readFileSync(path.join(dir, source.file), 'utf8');
      } catch (err) {
        throw new PluginCatalogError(
          shown(file),
          `frontend_source.file: ${source.file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        );
      }
      return { ...entry, frontend_source: text.endsWith('\n') ? text.slice(0, -1) : text };
    }),
  );
}

/** A catalog entry as its file holds it: `frontend_source` names a file. */
type CatalogFileEntry = Omit<CatalogPlugin, 'frontend_source'> & { frontend_source: { file: string } | null };

/** The checks of one file: each throws a `PluginCatalogError` naming the file and the field's path. */
class ShapeCheck {
  constructor(private readonly file: string) {}

  fail(at: string, problem: string): never {
    throw new PluginCatalogError(this.file, `${at} ${problem}`);
  }

  /** `v` as an object whose keys are among `required` and `optional`, with every `required` one. */
  object(at: string, v: unknown, required: readonly string[], optional: readonly string[] = []): Record<string, unknown> {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(at, `must be an object, not ${describe(v)}`);
    const o = v as Record<string, unknown>;
    for (const k of required) if (!(k in o)) this.fail(at, `lacks "${k}"`);
    for (const k of Object.keys(o))
      if (!required.includes(k) && !optional.includes(k))
        this.fail(at, `has an unknown field "${k}" (known: ${[...required, ...optional].join(', ')})`);
    return o;
  }

  /** `v` as an object of any keys, each value checked by `each`. */
  record<T>(at: string, v: unknown, each: (at: string, value: unknown) => T): Record<string, T> {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(at, `must be an object, not ${describe(v)}`);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, each(`${at}.${k}`, x)]));
  }

  string(at: string, v: unknown): string {
    return typeof v === 'string' ? v : this.fail(at, `must be a string, not ${describe(v)}`);
  }

  nullableString(at: string, v: unknown): string | null {
    return v === null ? null : typeof v === 'string' ? v : this.fail(at, `must be a string or null, not ${describe(v)}`);
  }

  boolean(at: string, v: unknown): boolean {
    return typeof v === 'boolean' ? v : this.fail(at, `must be true or false, not ${describe(v)}`);
  }

  oneOf<T extends string>(at: string, v: unknown, choices: readonly T[]): T {
    return choices.includes(v as T)
      ? (v as T)
      : this.fail(at, `must be one of ${choices.map((c) => `"${c}"`).join(', ')}, not ${describe(v)}`);
  }

  strings(at: string, v: unknown): string[] {
    if (!Array.isArray(v)) this.fail(at, `must be an array of strings, not ${describe(v)}`);
    return v.map((x, i) => this.string(`${at}[${i}]`, x));
  }

  /**
   * The fields of `o` (already checked by `object` to be among `checks`' keys), each checked by its
   * checker, in the file's order: the order the answers that quote them (`config_schema`) keep.
   */
  fields<T extends object>(at: string, o: Record<string, unknown>, checks: { [K in keyof T]-?: (at: string, v: unknown) => T[K] }): T {
    const out: Partial<T> = {};
    for (const k of Object.keys(o) as (keyof T & string)[]) out[k] = checks[k](`${at}.${k}`, o[k]);
    return out as T;
  }
}

/** How a wrong value is named in a message: its JSON text when short, else what it is. */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v);
  if (text.length <= 40) return text;
  if (Array.isArray(v)) return 'an array';
  return v !== null && typeof v === 'object' ? 'an object' : `${text.slice(0, 40)}…`;
}

const PLUGIN_TYPES = ['local', 'custom', 'repository', 'source', 'inline'] as const;
const FIELD_TYPES = ['string', 'choice', 'attachment', 'json', 'dictionary', 'boolean'] as const;
const PAYLOAD_TYPES = ['string', 'boolean', 'json', 'number', 'date', 'daterange'] as const;
const ENTRY_FIELDS = [
  'key',
  'url',
  'name',
  'description',
  'icon',
  'plugin_type',
  'tag',
  'latest_tag',
  'capabilities',
  'config_schema',
  'public_jobs',
  'frontend_source',
  'migrator',
] as const;

/** One file's entry, checked against `CatalogPlugin` (its key must be `key`, the file's name). */
function checkEntry(c: ShapeCheck, v: unknown, key: string): CatalogFileEntry {
  const o = c.object('the entry', v, ENTRY_FIELDS, ['$comment']);
  if (o.key !== key) c.fail('key', `must be "${key}", the file's name, not ${describe(o.key)}`);
  if ('$comment' in o) c.string('$comment', o.$comment);
  const url = c.string('url', o.url);
  if (!/^https:\/\//.test(url)) c.fail('url', `must be an https:// url, not ${describe(url)}`);
  const caps = c.object('capabilities', o.capabilities, [], ['methods', 'jobs', 'scheduled_tasks']);
  const strings = (at: string, x: unknown) => c.strings(at, x);
  return {
    key,
    url,
    name: c.string('name', o.name),
    description: c.string('description', o.description),
    icon: c.nullableString('icon', o.icon),
    plugin_type: c.oneOf('plugin_type', o.plugin_type, PLUGIN_TYPES),
    tag: c.nullableString('tag', o.tag),
    latest_tag: c.nullableString('latest_tag', o.latest_tag),
    capabilities: c.fields<CatalogPlugin['capabilities']>('capabilities', caps, {
      methods: strings,
      jobs: strings,
      scheduled_tasks: strings,
    }),
    config_schema: Array.isArray(o.config_schema)
      ? o.config_schema.map((f, i) => checkField(c, `config_schema[${i}]`, f))
      : c.fail('config_schema', `must be an array, not ${describe(o.config_schema)}`),
    public_jobs: c.record('public_jobs', o.public_jobs, (at, job) => {
      const j = c.object(at, job, [], ['payload']);
      return 'payload' in j ? { payload: c.record(`${at}.payload`, j.payload, (pat, p) => checkPayloadField(c, pat, p)) } : {};
    }),
    frontend_source: o.frontend_source === null ? null : { file: checkFrontendFile(c, o.frontend_source) },
    migrator: o.migrator === null ? null : checkMigrator(c, o.migrator),
  };
}

/** One `config_schema` field (see `ConfigSchemaField`). */
function checkField(c: ShapeCheck, at: string, v: unknown): ConfigSchemaField {
  const o = c.object(
    at,
    v,
    [],
    ['key', 'name', 'type', 'default', 'required', 'secret', 'hint', 'choices', 'required_if', 'visible_if', 'markdown', 'site'],
  );
  const text = (a: string, x: unknown) => c.string(a, x);
  const flag = (a: string, x: unknown) => c.boolean(a, x);
  const any = (_a: string, x: unknown) => x;
  return c.fields<ConfigSchemaField>(at, o, {
    key: text,
    name: text,
    type: (a, x) => c.oneOf(a, x, FIELD_TYPES),
    default: any,
    required: flag,
    secret: flag,
    hint: text,
    choices: (a, x) => c.strings(a, x),
    required_if: any,
    visible_if: any,
    markdown: text,
    site: flag,
  });
}

/** One payload field of a public job (see `JobPayloadField`). */
function checkPayloadField(c: ShapeCheck, at: string, v: unknown): JobPayloadField {
  const o = c.object(at, v, ['type'], ['title', 'required', 'default', 'staff_only']);
  return c.fields<JobPayloadField>(at, o, {
    type: (a, x) => c.oneOf(a, x, PAYLOAD_TYPES),
    title: (a, x) => c.string(a, x),
    required: (a, x) => c.boolean(a, x),
    default: (_a, x) => x,
    staff_only: (a, x) => c.boolean(a, x),
  });
}

/** `frontend_source`'s `{"file": "<name>"}`: a file name in the same folder (no path). */
function checkFrontendFile(c: ShapeCheck, v: unknown): string {
  const file = c.string('frontend_source.file', c.object('frontend_source', v, ['file']).file);
  if (!/^[\w.-]+$/.test(file) || file.startsWith('.') || file.endsWith('.json'))
    c.fail('frontend_source.file', `must name a file next to the entry (e.g. "notification-bar.frontend.js"), not ${describe(file)}`);
  return file;
}

/** `migrator` (see `HogFunctionMigrator`). */
function checkMigrator(c: ShapeCheck, v: unknown): HogFunctionMigrator {
  const o = c.object('migrator', v, ['template_id', 'name', 'description', 'inputs']);
  return {
    template_id: c.string('migrator.template_id', o.template_id),
    name: c.string('migrator.name', o.name),
    description: c.string('migrator.description', o.description),
    inputs: c.record('migrator.inputs', o.inputs, (a, x) => c.string(a, x)),
  };
}

/** Deep-freezes a JSON-like value so the shared catalog cannot be changed by accident. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) {
      deepFreeze(inner);
    }
    Object.freeze(value);
  }
  return value;
}

/**
 * The built-in catalog (order = install order of `npm start`), loaded from ./plugin-catalog/ when
 * this module is first imported (a file of the wrong shape stops the start with its
 * `PluginCatalogError`). See the module docstring for the kinds. Entries are deeply frozen.
 */
export const PLUGIN_CATALOG: readonly CatalogPlugin[] = loadPluginCatalog();

/**
 * Normalizes a plugin url for comparison the way PostHog treats plugin urls: drops `?private_token=…`
 * and other query strings (posthog/models/plugin.py raise_if_plugin_installed splits on "?"), `#…`,
 * the scheme, `www.`, a trailing `/` or `.git`, and a GitHub `/tree/<ref>`, `/commit/<sha>` or
 * `/releases/tag/<tag>` suffix (forms posthog/plugins/utils.py parse_url accepts); GitHub owner/repo
 * names are case-insensitive, so the result is lower-cased.
 */
function normalizePluginUrl(url: string): string {
  let u = url.trim().toLowerCase();
  u = u.split('#')[0] ?? '';
  u = u.split('?')[0] ?? '';
  u = u.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  u = u.replace(/^www\./, '');
  u = u.replace(/\/(tree|commit|releases\/tag)\/.*$/, '');
  u = u.replace(/\/+$/, '');
  u = u.replace(/\.git$/, '');
  return u;
}

/** `findCatalogPlugin`'s index: catalog entries by lower-cased key and by normalised url (first wins). */
let catalogIndex: { byKey: Map<string, CatalogPlugin>; byUrl: Map<string, CatalogPlugin> } | undefined;

/**
 * Finds a catalog entry by its CLI key (case-insensitive, e.g. 'customerio') or by url
 * ('https://github.com/PostHog/customerio-plugin', also without scheme, with `.git`, a trailing slash,
 * `?private_token=…`, or `/tree/<ref>`/`/commit/<sha>`). Returns the frozen entry or undefined; never throws.
 */
export function findCatalogPlugin(keyOrUrl: string): CatalogPlugin | undefined {
  const wanted = keyOrUrl.trim();
  if (wanted === '') {
    return undefined;
  }
  // the catalog is fixed: its keys and normalised urls are indexed once (every plugin config answer
  // with plugin_info looks its plugin up here)
  if (!catalogIndex) {
    catalogIndex = { byKey: new Map(), byUrl: new Map() };
    for (const plugin of PLUGIN_CATALOG) {
      const key = plugin.key.toLowerCase();
      const url = normalizePluginUrl(plugin.url);
      if (!catalogIndex.byKey.has(key)) catalogIndex.byKey.set(key, plugin);
      if (!catalogIndex.byUrl.has(url)) catalogIndex.byUrl.set(url, plugin);
    }
  }
  return catalogIndex.byKey.get(wanted.toLowerCase()) ?? catalogIndex.byUrl.get(normalizePluginUrl(wanted));
}
