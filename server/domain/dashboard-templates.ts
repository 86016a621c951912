/**
 * The dashboard templates gallery (PostHog's posthog/api/dashboards/dashboard_templates.py
 * `DashboardTemplateViewSet`, read-only here): a small built-in catalogue of global templates,
 * the same for every project, held as data in ./dashboard-templates/ and loaded once.
 *
 * The folder (read from the sources also when the server runs from dist/, as the plugin catalog
 * is: tsc copies no JSON):
 * - `catalog.json`: the templates' file names without `.json`, in the order they are listed;
 * - `<name>.json`: one template in PostHog's serializer shape (`DashboardTemplateEntry` of
 *   openapi.yaml: `id`, `template_name`, `dashboard_description`, `dashboard_filters`, `tags`,
 *   `tiles`, `variables`, `deleted`, `created_at`, `created_by`, `image_url`, `team_id`, `scope`,
 *   `availability_contexts`, `is_featured`, `non_portable_references`); an optional `"$comment"`
 *   is dropped. Its tiles are PostHog's template tiles (`type: INSIGHT` with `name`,
 *   `description`, `query: {kind: InsightVizNode, source: {kind: TrendsQuery, …}}`, `layouts`,
 *   `color`; or `type: TEXT` with `body`), so a template can be posted unchanged as the
 *   `template` of `dashboards/create_from_template_json/` (server/domain/dashboards.ts).
 * A listed file that is missing, or a template without a string `id` or `template_name`, fails
 * the load with an `Error` naming the file.
 *
 * The list's rules: `search` keeps templates in which every whitespace-separated term (any
 * case) is in the name, a tag or the description, ranked name > tags > description (PostHog's
 * full-text weights A, B, C); `scope` keeps the templates of that scope (all are `global`);
 * `is_featured` keeps featured or other templates; the order (no `search`) is featured first,
 * then `template_name`, as PostHog's newest default ordering. Errors: `notFound` (404) for an
 * unknown id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { components } from '../../generated/api.js';
import { notFound } from './errors.js';
import { DEFAULT_LIMIT, limitOffsetLinks } from './pagination.js';

/** A template on the wire (schema `DashboardTemplateEntry`). */
export type DashboardTemplateWire = components['schemas']['DashboardTemplateEntry'];
/** A page of templates (schema `PaginatedDashboardTemplateEntryList`). */
export type DashboardTemplatePageWire = components['schemas']['PaginatedDashboardTemplateEntryList'];

/** The list's query parameters, as validated by the spec. */
export interface DashboardTemplateListParams {
  search?: string | undefined;
  scope?: 'feature_flag' | 'global' | 'organization' | 'team' | undefined;
  is_featured?: boolean | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
}

const CATALOG_FOLDER = path.join('server', 'domain', 'dashboard-templates');

/** `server/domain/dashboard-templates/` of the nearest folder above this module that has one. */
function defaultCatalogDir(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, CATALOG_FOLDER);
    if (fs.existsSync(path.join(candidate, 'catalog.json'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`no ${path.join(CATALOG_FOLDER, 'catalog.json')} in ${start} or any folder above it`);
  }
}

/**
 * Loads the catalogue of `dir` (default: the sources' folder), in `catalog.json`'s order; each
 * template deeply frozen. Throws an `Error` naming the file for a missing or malformed one.
 */
export function loadDashboardTemplates(dir: string = defaultCatalogDir()): readonly DashboardTemplateWire[] {
  const names: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'catalog.json'), 'utf8'));
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
    throw new Error(`${path.join(dir, 'catalog.json')}: must be a JSON array of file names`);
  return Object.freeze(
    names.map((name: string) => {
      const file = path.join(dir, `${name}.json`);
      const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      delete raw.$comment;
      if (typeof raw.id !== 'string' || typeof raw.template_name !== 'string' || !Array.isArray(raw.tiles))
        throw new Error(`${file}: a template needs a string id and template_name and a tiles array`);
      return deepFreeze(raw) as unknown as DashboardTemplateWire;
    }),
  );
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

let catalogue: readonly DashboardTemplateWire[] | undefined;

/** The built-in catalogue, loaded on first use. */
export function dashboardTemplates(): readonly DashboardTemplateWire[] {
  return (catalogue ??= loadDashboardTemplates());
}

/** The rank of `t` for `terms`: 0 when a term is in none of its texts; else name 3, tags 2, description 1 per term, summed. */
function rank(t: DashboardTemplateWire, terms: string[]): number {
  const name = (t.template_name ?? '').toLowerCase();
  const tags = t.tags.map((s) => s.toLowerCase());
  const description = (t.dashboard_description ?? '').toLowerCase();
  let total = 0;
  for (const term of terms) {
    const score = name.includes(term) ? 3 : tags.some((tag) => tag.includes(term)) ? 2 : description.includes(term) ? 1 : 0;
    if (score === 0) return 0;
    total += score;
  }
  return total;
}

/**
 * A page of the catalogue in PostHog's envelope `{count, next, previous, results}` (links
 * absolute, keeping the other query parameters of `url`).
 */
export function listDashboardTemplates(
  params: DashboardTemplateListParams,
  url: URL,
  templates: readonly DashboardTemplateWire[] = dashboardTemplates(),
): DashboardTemplatePageWire {
  const limit = params.limit ?? DEFAULT_LIMIT;
  const offset = params.offset ?? 0;
  const terms = (params.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  let kept = templates.filter(
    (t) =>
      (params.scope === undefined || t.scope === params.scope) &&
      (params.is_featured === undefined || t.is_featured === params.is_featured),
  );
  const byName = (a: DashboardTemplateWire, b: DashboardTemplateWire) =>
    Number(b.is_featured) - Number(a.is_featured) || (a.template_name ?? '').localeCompare(b.template_name ?? '');
  if (terms.length > 0) {
    const ranked = kept.map((t) => ({ t, r: rank(t, terms) })).filter((x) => x.r > 0);
    ranked.sort((a, b) => b.r - a.r || byName(a.t, b.t));
    kept = ranked.map((x) => x.t);
  } else {
    kept = [...kept].sort(byName);
  }
  const count = kept.length;
  return { count, ...limitOffsetLinks(url, limit, offset, count), results: kept.slice(offset, offset + limit) };
}

/** One template by id; 404 "Not found." for an id that is none of the catalogue's. */
export function retrieveDashboardTemplate(
  id: string,
  templates: readonly DashboardTemplateWire[] = dashboardTemplates(),
): DashboardTemplateWire {
  const found = templates.find((t) => t.id === id.toLowerCase());
  if (!found) throw notFound();
  return found;
}
