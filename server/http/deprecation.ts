/**
 * PostHog's deprecation of the `/api/environments/` prefix (since 2026: its
 * EnvironmentsRewriteMiddleware serves those paths through the `/api/projects/` viewsets and
 * announces the end date, `API_ENVIRONMENTS_SUNSET_DATE`, default 2026-07-31, in posthog/settings/web.py):
 * every answer to a request under `/api/environments/` (errors included) carries
 *
 * - `Deprecation: true` (RFC 9745),
 * - `Sunset: <HTTP-date>` (RFC 8594), the configured date at 00:00 UTC, and
 * - `Link: </api/projects/…>; rel="successor-version"` (RFC 8288), the same path and query under
 *   the projects prefix.
 *
 * The values are configuration (server/config.ts `API_ENVIRONMENTS_SUNSET_DATE`,
 * `API_ENVIRONMENTS_DEPRECATION`); with the deprecation off nothing is added. The operations
 * themselves answer the same under both prefixes.
 */
import type { RequestHandler } from 'express';

/** The headers' settings: the sunset day (`YYYY-MM-DD`, UTC) or none, and whether to send them at all. */
export interface EnvironmentsDeprecation {
  /** whether `/api/environments/` answers carry the headers */
  enabled: boolean;
  /** the day the prefix is retired (ISO `YYYY-MM-DD`), or undefined for no `Sunset` */
  sunsetDate: string | undefined;
}

/** PostHog's default (posthog/settings/web.py API_ENVIRONMENTS_SUNSET_DATE). */
export const DEFAULT_ENVIRONMENTS_SUNSET_DATE = '2026-07-31';

const PREFIX = '/api/environments/';

/** The middleware, mounted before everything else of `/api/` (module doc). */
export function environmentsDeprecation(opts: EnvironmentsDeprecation): RequestHandler {
  const sunset = opts.sunsetDate === undefined ? undefined : new Date(`${opts.sunsetDate}T00:00:00Z`).toUTCString();
  return (req, res, next) => {
    if (opts.enabled && req.url.startsWith(PREFIX)) {
      res.setHeader('Deprecation', 'true');
      if (sunset !== undefined) res.setHeader('Sunset', sunset);
      // the path and query as sent, with what could end the link's angle brackets percent-encoded
      const rest = req.url.slice(PREFIX.length).replace(/[<>"\s]/g, (c) => encodeURIComponent(c));
      res.setHeader('Link', `</api/projects/${rest}>; rel="successor-version"`);
    }
    next();
  };
}
