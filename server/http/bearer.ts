/**
 * The bearer token of a request (`Authorization: Bearer <key>`), as the security handler
 * (security.ts) and the rate limiter's counter key (rate-limit/limiter.ts) read it.
 */
import type { IncomingMessage } from 'node:http';

/** Reads `Authorization: Bearer <key>` (scheme case-insensitive); undefined when absent or not a bearer header. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
