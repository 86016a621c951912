/**
 * Content negotiation as Django REST framework does it (rest_framework/negotiation.py
 * `DefaultContentNegotiation.select_renderer`, rest_framework/utils/mediatypes.py), which is what
 * PostHog's endpoints answer by: the media types of `Accept` are grouped by precedence (a full type
 * with parameters other than `q`, then a full type, then `type/*`, then `*∕*`), and the first group
 * that matches any offered media type picks the first offered one it matches, in the server's
 * order. `q` values are ignored, as DRF ignores them (`Accept: text/csv, application/json` answers
 * JSON when JSON is offered first). No `Accept` header counts as `*∕*`.
 */

interface MediaRange {
  type: string;
  subtype: string;
  /** parameters other than `q`, lower-cased names */
  params: Map<string, string>;
}

/** `type/subtype; a=b` → its parts (lower-cased type, subtype and parameter names); undefined when malformed. */
function parseRange(text: string): MediaRange | undefined {
  const [full = '', ...rawParams] = text.split(';');
  const [type, subtype, extra] = full.trim().toLowerCase().split('/');
  if (!type || !subtype || extra !== undefined) return undefined;
  const params = new Map<string, string>();
  for (const raw of rawParams) {
    const eq = raw.indexOf('=');
    if (eq === -1) continue;
    const name = raw.slice(0, eq).trim().toLowerCase();
    if (name && name !== 'q')
      params.set(
        name,
        raw
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
  }
  return { type, subtype, params };
}

/** DRF's `_MediaType.precedence`: 3 full type with parameters, 2 full type, 1 `type/*`, 0 `*∕*`. */
function precedence(r: MediaRange): number {
  if (r.type === '*') return 0;
  if (r.subtype === '*') return 1;
  return r.params.size === 0 ? 2 : 3;
}

/** DRF's `_MediaType.match`: does the accepted range `r` cover the offered media type `offered`? */
function matches(r: MediaRange, offered: MediaRange): boolean {
  for (const [name, value] of r.params) if (offered.params.get(name) !== value) return false;
  if (r.subtype !== '*' && offered.subtype !== '*' && r.subtype !== offered.subtype) return false;
  if (r.type !== '*' && offered.type !== '*' && r.type !== offered.type) return false;
  return true;
}

/**
 * The media type of `offered` (in the server's order of preference, e.g. `['application/json',
 * 'text/csv']`) that DRF would answer for the `Accept` header `accept`; undefined when none is
 * acceptable (DRF answers 406 then; callers here fall back to their default). Malformed ranges are
 * skipped.
 */
export function negotiate(accept: string | undefined, offered: readonly string[]): string | undefined {
  const ranges = (accept ?? '*/*')
    .split(',')
    .map((t) => parseRange(t))
    .filter((r): r is MediaRange => r !== undefined);
  if (accept !== undefined && ranges.length === 0) ranges.push({ type: '*', subtype: '*', params: new Map() });
  const parsedOffers = offered.map((o) => ({ media: o, range: parseRange(o) }));
  for (let level = 3; level >= 0; level -= 1) {
    const group = ranges.filter((r) => precedence(r) === level);
    if (group.length === 0) continue;
    for (const { media, range } of parsedOffers) if (range && group.some((r) => matches(r, range))) return media;
  }
  return undefined;
}

/**
 * True when `accept` asks for a page rather than data: DRF's negotiation (`negotiate`) between
 * `offered` (the data media types, in the server's order) and `text/html` offered after them picks
 * `text/html`, as DRF picks its browsable API renderer (offered after `JSONRenderer`) for a
 * browser. A browser's `Accept` (`text/html,application/xhtml+xml,…,*∕*;q=0.8`) names `text/html`
 * as a full type, so it wins over the data types it reaches only through `*∕*`; no `Accept`,
 * `*∕*` and `application/json` pick the data; a client naming both a data type and `text/html`
 * gets the data type offered first (DRF ignores `q`).
 */
export function prefersHtml(accept: string | undefined, offered: readonly string[] = ['application/json']): boolean {
  return negotiate(accept, [...offered, 'text/html']) === 'text/html';
}
