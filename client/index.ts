/**
 * The typed client of the envapi / PostHog environment API, on openapi-fetch with the generated
 * `paths` of `openapi.yaml`. Published as its own package, `@envapi/client`: client/package.json,
 * built by tsup (its config is that file's `tsup` field; `npm run build:client` at the root, or
 * `npm pack` here) into `dist/index.js` (ESM), `dist/index.cjs` (CJS) and `dist/index.d.ts` /
 * `.d.cts` with the generated contract types bundled in; `openapi-fetch` is its one dependency.
 *
 * ```ts
 * import { createClient, paginate, unwrap } from '@envapi/client';
 * const api = createClient({ baseUrl: 'http://127.0.0.1:8000', apiKey: process.env.POSTHOG_API_KEY! });
 * const page = await unwrap(api.GET('/api/environments/{project_id}/pipeline_frontend_apps_configs/', {
 *   params: { path: { project_id: '1' } },
 * }));
 * for await (const config of paginate(api, page)) console.log(config.id);
 * ```
 *
 * Answers that are not JSON (`text/csv` with `format=csv`, the `application/javascript` of
 * `…/frontend/` and `/array/{token}/config.js`) come back as strings: pass `parseAs: 'text'` to
 * have them typed as exactly `string`; without it they are still strings at run time (see
 * `textAnswers`), typed as the union of the operation's JSON and text answers (just `string` for
 * an operation that answers only text, such as `…/frontend/`).
 */
import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from '../generated/api.js';

/** The generated contract types, for typing requests and answers. */
export type { components, operations, paths } from '../generated/api.js';

/** The client type: openapi-fetch over the contract's paths. */
export type EnvApiClient = Client<paths> & { readonly baseUrl: string; readonly apiKey: string; readonly fetch: typeof fetch };

/** Options of `createClient`. */
export interface ClientOptions {
  /** e.g. `http://127.0.0.1:8000` (no trailing slash needed) */
  baseUrl: string;
  /** a personal API key, `phx_…`; sent as `Authorization: Bearer` */
  apiKey: string;
  /** a fetch implementation (default: global fetch) */
  fetch?: typeof fetch;
}

/** True for a JSON media type: `application/json` or `application/<x>+json` (parameters ignored). */
function isJsonMediaType(contentType: string): boolean {
  const media = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/**
 * openapi-fetch middleware: a 2xx answer that is not JSON (`text/csv`, `application/javascript`)
 * comes back as its text, also when empty. With openapi-fetch's default `parseAs: 'json'` the body
 * is handed on JSON-encoded, so `data` is the CSV or the script as a string instead of a JSON parse
 * error; with `parseAs: 'text'` an empty body is `''` (openapi-fetch makes any `Content-Length: 0`
 * answer `undefined`). The `Response` the caller gets keeps the status, headers (without
 * `Content-Length`, which no longer matches) and `url`. Answers without a `Content-Type`, 204 and
 * 205 answers, and calls with another `parseAs` (`blob`, `arrayBuffer`, `stream`) are left alone.
 */
export const textAnswers: Middleware = {
  async onResponse({ response, options }) {
    const parseAs = options.parseAs;
    if ((parseAs !== 'json' && parseAs !== 'text') || !response.ok || response.status === 204 || response.status === 205) return undefined;
    const type = response.headers.get('content-type');
    if (!type || isJsonMediaType(type)) return undefined;
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    const body = await response.text();
    const text = new Response(parseAs === 'json' ? JSON.stringify(body) : body, {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
    Object.defineProperty(text, 'url', { value: response.url });
    return text;
  },
};

/**
 * Creates a client that sends the key on every request (`Authorization: Bearer`). Non-JSON answers
 * come back as strings (`textAnswers`). Does not throw; calls resolve to openapi-fetch's
 * `{ data, error, response }` (see `unwrap`).
 */
export function createClient(options: ClientOptions): EnvApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const f = options.fetch ?? globalThis.fetch;
  const client = createFetchClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: (req: Request) => f(req),
  });
  client.use(textAnswers);
  return Object.assign(client, { baseUrl, apiKey: options.apiKey, fetch: f });
}

/** PostHog's error body: `{type, code, detail, attr}`. */
export type ErrorBody = components['schemas']['Error'];

/** An error answer of the API, carrying PostHog's `type`, `code`, `detail` and `attr`. */
export class EnvApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly detail: string;
  readonly attr: string | null;

  constructor(status: number, body: Partial<ErrorBody> | undefined) {
    super(`${status} ${body?.code ?? 'error'}: ${body?.detail ?? 'request failed'}${body?.attr ? ` (${body.attr})` : ''}`);
    this.name = 'EnvApiError';
    this.status = status;
    this.type = body?.type ?? 'server_error';
    this.code = body?.code ?? 'error';
    this.detail = body?.detail ?? '';
    this.attr = body?.attr ?? null;
  }
}

/** An openapi-fetch result. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Awaits an openapi-fetch call and returns its data, or throws `EnvApiError` for an error answer.
 * For 204 answers it returns undefined.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new EnvApiError(response.status, error as Partial<ErrorBody> | undefined);
  return data as T;
}

/** A page with absolute `next` links: offset pages, activity pages and the events list. */
export interface LinkedPage<T> {
  next?: string | null;
  results: T[];
}

/**
 * Iterates every result of a paginated answer, following `next` links (absolute URLs that keep
 * every query parameter) with the client's key, until `next` is null. Throws `EnvApiError`.
 */
export async function* paginate<T>(client: EnvApiClient, first: LinkedPage<T>): AsyncGenerator<T, void, undefined> {
  let page: LinkedPage<T> | undefined = first;
  while (page) {
    yield* page.results;
    if (!page.next) return;
    const res = await client.fetch(page.next, { headers: { Authorization: `Bearer ${client.apiKey}`, Accept: 'application/json' } });
    const body = (await res.json()) as unknown;
    if (!res.ok) throw new EnvApiError(res.status, body as Partial<ErrorBody>);
    page = body as LinkedPage<T>;
  }
}
