/**
 * UUID text as PostHog accepts it (Python's `uuid.UUID`): 32 hex digits with or without the four
 * dashes, any case.
 */

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** `0193…` with or without dashes → lowercase with dashes; undefined when not a UUID. */
export function normalizeUuid(input: string): string | undefined {
  if (!UUID.test(input)) return undefined;
  const h = input.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
