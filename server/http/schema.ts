/**
 * `GET /api/schema/` (`schema_retrieve`): the contract itself, as PostHog serves its OpenAPI
 * document (drf-spectacular's `SpectacularAPIView`, posthog/urls.py), without authentication
 * (`security: []` in openapi.yaml, so the validator asks for no key).
 *
 * Formats as drf-spectacular offers them (drf_spectacular/renderers.py), in its order:
 * `application/vnd.oai.openapi` and `application/yaml` (format `yaml`), then
 * `application/vnd.oai.openapi+json` and `application/json` (format `json`). `?format=` keeps only
 * that format's media types, then `Accept` picks among them by DRF's rules (negotiate.ts); with
 * nothing acceptable the first remaining media type is answered (DRF would answer 406). So the
 * default is YAML, `?format=json` answers `application/vnd.oai.openapi+json`, and `Accept:
 * application/json` answers `application/json`.
 *
 * A browser (an `Accept` that prefers `text/html`, negotiate.ts `prefersHtml`) is answered a type
 * it displays rather than downloads: the YAML as `text/plain; charset=utf-8`, and with
 * `?format=json` the JSON as `application/json`. drf-spectacular would answer the browser
 * `application/vnd.oai.openapi`, which a browser saves as a file named `download`; the bytes are
 * the same either way. `Accept: text/plain` (or `text/*`) picks the YAML as `text/plain` too.
 *
 * The YAML is the bytes of the contract's file, `generated/openapi.bundle.yaml` (the hand-written
 * `openapi.yaml` with its `/api/projects/{project_id}/` copies; server/http/spec.ts `SPEC_PATH`),
 * when the app serves that file's contract (its comments kept), or the app's document printed as
 * YAML when it was given another one; the JSON is the
 * parsed document. Both are built on first use and kept. This operation is answered by
 * server/http/, not by a tag's handler object (handler-types.ts `HttpOperationId`).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { JsonText } from '../domain/json-text.js';
import { negotiate, prefersHtml } from './negotiate.js';
import type { OpenApiDocument } from './spec.js';
import type { HandlersFor } from './handler-types.js';

/** The YAML media types, in drf-spectacular's order, then `text/plain` (what a browser displays). */
const YAML_TYPES = ['application/vnd.oai.openapi', 'application/yaml', 'text/plain'] as const;
const JSON_TYPES = ['application/vnd.oai.openapi+json', 'application/json'] as const;

/** A media type `schema_retrieve` answers. */
export type SchemaMediaType = (typeof YAML_TYPES)[number] | (typeof JSON_TYPES)[number];

/**
 * The media type `schema_retrieve` answers for a `format` query value and an `Accept` header (see
 * the module doc): `format` keeps its family, a browser gets the family's displayable type, and
 * otherwise DRF's negotiation picks, the family's first type when nothing is acceptable.
 */
export function schemaMediaType(format: 'json' | 'yaml' | undefined, accept: string | undefined): SchemaMediaType {
  const offered: readonly SchemaMediaType[] =
    format === 'json' ? JSON_TYPES : format === 'yaml' ? YAML_TYPES : [...YAML_TYPES, ...JSON_TYPES];
  if (prefersHtml(accept, offered)) return format === 'json' ? 'application/json' : 'text/plain';
  return (negotiate(accept, offered) as SchemaMediaType | undefined) ?? offered[0]!;
}

/** What the schema handler serves: the document, and the YAML file it was read from (if any). */
export interface SchemaSource {
  document: OpenApiDocument;
  /** the contract file's path (`SPEC_PATH`) when `document` is that file's contract: its bytes are the YAML answer */
  yamlPath?: string;
}

/** The handler of `schema_retrieve` over `source` (see the module doc). */
export function schemaHandlers(source: SchemaSource): HandlersFor<'schema_retrieve'> {
  let yamlText: string | undefined;
  let jsonText: JsonText<Record<string, unknown>> | undefined;
  const yaml = (): string => {
    if (yamlText !== undefined) return yamlText;
    if (source.yamlPath) return (yamlText = fs.readFileSync(source.yamlPath, 'utf8'));
    const lib = createRequire(import.meta.url)('yaml') as typeof Yaml;
    return (yamlText = lib.stringify(source.document));
  };
  return {
    async schema_retrieve(ctx) {
      const media = schemaMediaType(ctx.query.format, ctx.accept);
      const headers = { Vary: 'Accept' };
      if (media === 'application/vnd.oai.openapi' || media === 'application/yaml' || media === 'text/plain')
        return { status: 200, contentType: media, body: yaml(), headers };
      jsonText ??= new JsonText(JSON.stringify(source.document));
      return { status: 200, contentType: media, body: jsonText, headers };
    },
  };
}
