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
 * The YAML is the bytes of `openapi.yaml` when the app serves that file's contract (its comments
 * kept), or the app's document printed as YAML when it was given another one; the JSON is the
 * parsed document. Both are built on first use and kept. This operation is answered by
 * server/http/, not by a tag's handler object (typed.ts `HttpOperationId`).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { JsonText } from '../wire/json-text.js';
import { negotiate } from './negotiate.js';
import type { OpenApiDocument } from './spec.js';
import type { HandlersFor } from './typed.js';

const YAML_TYPES = ['application/vnd.oai.openapi', 'application/yaml'] as const;
const JSON_TYPES = ['application/vnd.oai.openapi+json', 'application/json'] as const;

/** The media type `schema_retrieve` answers for a `format` query value and an `Accept` header. */
export function schemaMediaType(format: 'json' | 'yaml' | undefined, accept: string | undefined): (typeof YAML_TYPES)[number] | (typeof JSON_TYPES)[number] {
  const offered = format === 'json' ? JSON_TYPES : format === 'yaml' ? YAML_TYPES : [...YAML_TYPES, ...JSON_TYPES];
  return (negotiate(accept, offered) as (typeof offered)[number] | undefined) ?? offered[0];
}

/** What the schema handler serves: the document, and the YAML file it was read from (if any). */
export interface SchemaSource {
  document: OpenApiDocument;
  /** `openapi.yaml`'s path when `document` is that file's contract: its bytes are the YAML answer */
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
      if (media === 'application/vnd.oai.openapi' || media === 'application/yaml') return { status: 200, contentType: media, body: yaml(), headers };
      jsonText ??= new JsonText(JSON.stringify(source.document));
      return { status: 200, contentType: media, body: jsonText, headers };
    },
  };
}
