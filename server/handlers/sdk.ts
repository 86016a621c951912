/**
 * Handlers of the SDKs' calls that go through the API's steps (tag `sdk`): the local-evaluation
 * flag definitions under both paths, a flag's remote config, and the surveys. envapi has no
 * feature flags and no surveys; domain/sdk-flags.ts holds what they answer and why.
 */
import type { HandlersFor } from '../http/handler-types.js';
import { definitionsEtag, invalidApiKey, matchesEtag, missingApiKey, NO_FLAG_DEFINITIONS } from '../domain/sdk-flags.js';

type SdkOperationId =
  'flags_definitions_retrieve' | 'feature_flag_local_evaluation_retrieve' | 'feature_flags_remote_config_retrieve' | 'surveys_retrieve';

const ETAG = definitionsEtag(NO_FLAG_DEFINITIONS);
const CACHING = { ETag: ETAG, 'Cache-Control': 'private, must-revalidate' };

/**
 * The definitions (200 with the ETag) or, when `If-None-Match` names the ETag, 304 without a
 * body; the project was resolved from the `token` by the security handler.
 */
function definitions(ifNoneMatch: string | undefined) {
  if (matchesEtag(ifNoneMatch, ETAG)) return { status: 304 as const, headers: CACHING };
  return { status: 200 as const, contentType: 'application/json' as const, body: NO_FLAG_DEFINITIONS, headers: CACHING };
}

/** The four operations (module doc); errors before them are the security handler's. */
export const sdkHandlers: HandlersFor<SdkOperationId> = {
  async flags_definitions_retrieve(ctx) {
    return definitions(ctx.header('if-none-match'));
  },

  async feature_flag_local_evaluation_retrieve(ctx) {
    return definitions(ctx.header('if-none-match'));
  },

  // no flag has this key (envapi has none): PostHog's Response(status=404), without a body
  async feature_flags_remote_config_retrieve() {
    return { status: 404 };
  },

  async surveys_retrieve({ query, services }) {
    const token = query.token;
    if (token === undefined || token === '') throw missingApiKey();
    if ((await services.authentication.teamIdByApiToken(token)) === undefined) throw invalidApiKey();
    return { status: 200, contentType: 'application/json', body: { surveys: [], survey_config: null } };
  },
};
