/**
 * Pagination math, as Django REST Framework's LimitOffsetPagination (default page size 100, no
 * upper cap: PostHog's REST_FRAMEWORK settings) and PostHog's activity-log page links
 * (posthog/utils.py `format_query_params_absolute_url`). Links are absolute URLs that keep every
 * other query parameter of the request.
 */

/** PostHog's default page size (REST_FRAMEWORK PAGE_SIZE). */
export const DEFAULT_LIMIT = 100;

/** `url` with the given query parameters set (or removed when `null`), as an absolute URL string. */
export function withQuery(url: URL, changes: Record<string, string | number | null>): string {
  const next = new URL(url.toString());
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) next.searchParams.delete(k);
    else next.searchParams.set(k, String(v));
  }
  return next.toString();
}

/** `{next, previous}` links of a limit/offset page over `count` rows (DRF LimitOffsetPagination). */
export function limitOffsetLinks(url: URL, limit: number, offset: number, count: number): { next: string | null; previous: string | null } {
  const next = offset + limit < count ? withQuery(url, { limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0)
    previous = offset - limit <= 0 ? withQuery(url, { limit, offset: null }) : withQuery(url, { limit, offset: offset - limit });
  return { next, previous };
}

/** `{next, previous}` links of a 1-based page of `limit` rows over `total` rows. */
export function pageLinks(url: URL, limit: number, page: number, total: number): { next: string | null; previous: string | null } {
  return {
    next: page * limit < total ? withQuery(url, { page: page + 1, limit }) : null,
    previous: page > 1 ? withQuery(url, { page: page - 1, limit }) : null,
  };
}
