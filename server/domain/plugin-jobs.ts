/**
 * Pure PostHog plugin rules, without I/O:
 * - `validatePluginJobPayload`: posthog/models/plugin.py `validate_plugin_job_payload` (the check behind
 *   `POST /pipeline_destination_configs/:id/job`), with PostHog's exact messages and order of checks;
 * - secret fields: posthog/api/plugin.py `PluginConfigSerializer.get_config` (masking on read),
 *   `PluginConfigSerializer.update` (keeping stored secrets on write) and `_get_secret_fields_for_plugin`;
 * - default config: posthog/models/plugin.py `Plugin.get_default_config`;
 * - classification: posthog/api/plugin.py `PipelineDestinationsConfigsViewSet`,
 *   `PipelineFrontendAppsConfigsViewSet` and `PipelineTransformationsConfigsViewSet` querysets; the
 *   classifiers take the stored `capabilities` JSON (e.g. `CatalogPlugin['capabilities']`,
 *   `{methods?, jobs?, scheduled_tasks?}`) as `unknown` and never throw.
 *
 * Values are JSON as decoded by `JSON.parse`; Python's truthiness and `==` are reproduced where PostHog
 * relies on them (`pyTruthy`, `pyEquals`). Known limit: JSON objects whose keys look like array indices
 * ("2") are iterated first by JavaScript, so with several faulty fields the first one reported may
 * differ from PostHog's.
 */
import { clip, quoteCapped } from './echo.js';
import type { ConfigSchemaField, PublicJob } from './plugin-catalog.js';

/** A config schema as stored: a list of fields (plugin.json `config`) or the old dict keyed by field key. */
export type ConfigSchema = readonly ConfigSchemaField[] | Readonly<Record<string, ConfigSchemaField>>;

/** A job request rejected by `validatePluginJobPayload`; `message` is PostHog's exact text, request input cut to 200 characters (a 400 `ValidationError`). */
export class PluginJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginJobError';
  }
}

/** The value PostHog shows instead of a secret (posthog/api/plugin.py SECRET_FIELD_VALUE). */
export const SECRET_FIELD_VALUE = '**************** POSTHOG SECRET FIELD ****************';

const hasOwn = (object: object, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Python's `bool(value)` for JSON values: None/False/0/""/[]/{} are false, everything else (NaN too) true.
 * `undefined` counts as None.
 */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/**
 * Python's `a == b` for JSON values: None == None, `True == 1` and `False == 0` (bool is an int), lists
 * element-wise, dicts by equal key sets and values, no other cross-type equality. `undefined` counts as None.
 */
export function pyEquals(a: unknown, b: unknown): boolean {
  const left = a === undefined ? null : a;
  const right = b === undefined ? null : b;
  const numeric = (v: unknown): v is number | boolean => typeof v === 'number' || typeof v === 'boolean';
  if (numeric(left) && numeric(right)) return Number(left) === Number(right);
  if (left === null || right === null) return left === right;
  if (typeof left === 'string' || typeof right === 'string') return left === right;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => pyEquals(item, right[index]));
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const leftKeys = Object.keys(left);
    if (leftKeys.length !== Object.keys(right).length) return false;
    return leftKeys.every((key) => hasOwn(right, key) && pyEquals(left[key], right[key]));
  }
  return Object.is(left, right);
}

/** Characters Python's `str.isprintable()` rejects (besides the ASCII space, which is printable). */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/**
 * Python's `repr(s)` for a str: single quotes unless the text holds `'` and no `"`; backslash, the quote
 * and \n \r \t escaped; other non-printable characters as \xNN, \uNNNN or \UNNNNNNNN.
 * E.g. `pyRepr("x")` → `'x'`, `pyRepr("it's")` → `"it's"`.
 */
export function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\\' || char === quote) out += `\\${char}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (char !== ' ' && NON_PRINTABLE.test(char)) {
      if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`;
      else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
      else out += `\\U${code.toString(16).padStart(8, '0')}`;
    } else out += char;
  }
  return out + quote;
}

/**
 * Validates a job request against the plugin's public jobs, exactly as PostHog's
 * posthog/models/plugin.py `validate_plugin_job_payload(plugin, job_type, payload, *, is_staff)`.
 *
 * - `publicJobs`: the plugin's `public_jobs` (`{<job name>: {payload?: {<field>: {type, required?,
 *   default?, staff_only?, title?}}}}`), null when unset.
 * - `jobType`: the request's `job.type` (the caller answers "The job type must be specified!" when absent).
 * - `payload`: the request's `job.payload` object (`{}` when absent).
 * - `isStaff`: whether the requesting user is PostHog staff (`request.user.is_staff`).
 *
 * Checks, in PostHog's order, throwing PluginJobError with PostHog's message:
 * 1. `public_jobs` empty or null → "Plugin has no public jobs"
 * 2. `jobType` not a job name → "Unknown plugin job: 'x'" (Python repr quoting, see `pyRepr`; a name
 *    longer than 200 characters is cut, `'xxx…'`, see server/domain/echo.ts)
 * 3. for each spec field in order, first `required` (truthy) and absent from the payload →
 *    "Missing required job field: k"; then `staff_only` (truthy), caller not staff, key present and
 *    `payload[k] != default` (Python `!=`, a missing default is None, so `null` passes) →
 *    "Field is only settable for admins: k"
 * 4. for each payload key in order, not in the spec → "Unknown field for job: k" (k cut to 200
 *    characters with `…`)
 * Returns nothing when valid. A job spec or `payload` spec that is null is treated as `{}` (PostHog
 * would fail with a 500 there).
 */
export function validatePluginJobPayload(
  publicJobs: Readonly<Record<string, PublicJob>> | null | undefined,
  jobType: string,
  payload: Readonly<Record<string, unknown>>,
  isStaff: boolean,
): void {
  if (!publicJobs || !pyTruthy(publicJobs)) {
    throw new PluginJobError('Plugin has no public jobs');
  }
  if (!hasOwn(publicJobs, jobType)) {
    throw new PluginJobError(`Unknown plugin job: ${quoteCapped(jobType, pyRepr)}`);
  }
  const job: unknown = publicJobs[jobType];
  const specValue: unknown = isPlainObject(job) ? job['payload'] : undefined;
  const payloadSpec: Record<string, unknown> = isPlainObject(specValue) ? specValue : {};

  for (const [key, options] of Object.entries(payloadSpec)) {
    const field: Record<string, unknown> = isPlainObject(options) ? options : {};
    if (pyTruthy(field['required']) && !hasOwn(payload, key)) {
      throw new PluginJobError(`Missing required job field: ${key}`);
    }
    if (pyTruthy(field['staff_only']) && !isStaff && hasOwn(payload, key) && !pyEquals(payload[key], field['default'])) {
      throw new PluginJobError(`Field is only settable for admins: ${key}`);
    }
  }

  for (const key of Object.keys(payload)) {
    if (!hasOwn(payloadSpec, key)) {
      throw new PluginJobError(`Unknown field for job: ${clip(key)}`);
    }
  }
}

/**
 * The `[key, field]` pairs of a config schema in either stored form: the list form uses each entry's
 * `key` (entries without a string `key`, e.g. markdown blocks, are skipped); the old dict form uses the
 * dict key. Non-object entries are skipped.
 */
function schemaEntries(schema: ConfigSchema | null | undefined): Array<[string, Record<string, unknown>]> {
  const entries: Array<[string, Record<string, unknown>]> = [];
  if (Array.isArray(schema)) {
    for (const field of schema as readonly unknown[]) {
      if (isPlainObject(field) && typeof field['key'] === 'string') entries.push([field['key'], field]);
    }
  } else if (isPlainObject(schema)) {
    for (const [key, field] of Object.entries(schema)) {
      if (isPlainObject(field)) entries.push([key, field]);
    }
  }
  return entries;
}

/**
 * Keys of the config fields with a truthy `secret`, in schema order (posthog/api/plugin.py
 * `_get_secret_fields_for_plugin`). Accepts the list form and the old dict form. Deliberate difference:
 * PostHog's newest code skips dict-form schemas (its entries are not dicts there), so it would show such
 * secrets in clear; we mask them.
 */
export function secretFieldKeys(schema: ConfigSchema | null | undefined): string[] {
  return schemaEntries(schema)
    .filter(([, field]) => pyTruthy(field['secret']))
    .map(([key]) => key);
}

/**
 * The config as PostHog returns it (posthog/api/plugin.py `PluginConfigSerializer.get_config`): a shallow
 * copy of `config` where every secret key (per `schema`, list or dict form) whose value is truthy
 * (Python truthiness: "" / null / {} / 0 stay as they are) is replaced by SECRET_FIELD_VALUE, in place
 * (key order kept). Does not change `config`; never throws. (Attachments are not modelled here.)
 */
export function maskSecretConfig(
  config: Readonly<Record<string, unknown>>,
  schema: ConfigSchema | null | undefined,
): Record<string, unknown> {
  const masked: Record<string, unknown> = { ...config };
  for (const key of secretFieldKeys(schema)) {
    if (hasOwn(masked, key) && pyTruthy(masked[key])) {
      masked[key] = SECRET_FIELD_VALUE;
    }
  }
  return masked;
}

/**
 * The config to store when an update carries a `config` (posthog/api/plugin.py
 * `PluginConfigSerializer.update`): PostHog REPLACES the stored config with the new one, except that every
 * secret key (per `schema`) whose new value is missing or null gets the old value back — `null` when the
 * old config has none either ("explicitly checking None to allow \"\""; so "" clears a secret). Non-secret
 * keys absent from `update` are therefore dropped. Unlike PostHog, a secret key sent back as
 * SECRET_FIELD_VALUE (a retrieved config PATCHed back) also keeps its stored value. Does not change
 * its arguments; never throws.
 */
export function mergeConfigUpdate(
  old: Readonly<Record<string, unknown>>,
  update: Readonly<Record<string, unknown>>,
  schema: ConfigSchema | null | undefined,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...update };
  for (const key of secretFieldKeys(schema)) {
    const incoming = merged[key];
    // We also keep the stored value when the masked placeholder comes back (a retrieved config sent
    // back as is); PostHog would store the placeholder over the secret.
    if (incoming === null || incoming === undefined || incoming === SECRET_FIELD_VALUE) {
      const previous = old[key];
      merged[key] = previous === undefined ? null : previous;
    }
  }
  return merged;
}

/**
 * The plugin's default config (posthog/models/plugin.py `Plugin.get_default_config`): `{key: default}` for
 * every schema field (list or dict form) whose `default` is not null/undefined. Used for new configs.
 */
export function getDefaultConfig(schema: ConfigSchema | null | undefined): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [key, field] of schemaEntries(schema)) {
    const value = field['default'];
    if (value !== null && value !== undefined) config[key] = value;
  }
  return config;
}

/** Postgres `capabilities ? key` (jsonb has_key): an object's own key, a string element of an array, or an equal string. */
function hasKey(capabilities: unknown, key: string): boolean {
  if (Array.isArray(capabilities)) return capabilities.includes(key);
  if (isPlainObject(capabilities)) return hasOwn(capabilities, key);
  return capabilities === key;
}

/** Postgres `capabilities -> 'methods' @> '["<method>"]'`: `methods` is an array holding that string. */
function methodsContain(capabilities: unknown, method: string): boolean {
  if (!isPlainObject(capabilities)) return false;
  const methods = capabilities['methods'];
  return Array.isArray(methods) && methods.includes(method);
}

/**
 * Whether a plugin with these capabilities is a destination (posthog/api/plugin.py
 * `PipelineDestinationsConfigsViewSet`): capabilities has a `methods` key and `methods` contains
 * "onEvent" or "composeWebhook". Never throws.
 */
export function isDestination(capabilities: unknown): boolean {
  return hasKey(capabilities, 'methods') && (methodsContain(capabilities, 'onEvent') || methodsContain(capabilities, 'composeWebhook'));
}

/**
 * Whether a plugin with these capabilities is a site/frontend app (posthog/api/plugin.py
 * `PipelineFrontendAppsConfigsViewSet` excludes plugins whose capabilities has the key "methods" or the
 * key "scheduled_tasks"), e.g. `{}`. Never throws.
 */
export function isFrontendApp(capabilities: unknown): boolean {
  return !hasKey(capabilities, 'methods') && !hasKey(capabilities, 'scheduled_tasks');
}

/**
 * Whether a plugin with these capabilities is a transformation (posthog/api/plugin.py
 * `PipelineTransformationsConfigsViewSet`): has `methods` and it contains "processEvent". Never throws.
 */
export function isTransformation(capabilities: unknown): boolean {
  return hasKey(capabilities, 'methods') && methodsContain(capabilities, 'processEvent');
}
