/**
 * The insights layer's one error: a query kind's input it cannot run (PostHog's DRF
 * `ValidationError`, which its query runners raise for a bad series, range or formula). The domain,
 * which calls the runners, turns it into PostHog's 400 `validation_error` / `invalid_input` with
 * `detail` and `attr` (server/domain/query.ts); the insights layer knows no HTTP.
 */
export class InsightQueryError extends Error {
  /**
   * @param detail the message, PostHog's where it has one
   * @param attr the request field it is about (nested names joined with `__`), or null
   */
  constructor(
    readonly detail: string,
    readonly attr: string | null = null,
  ) {
    super(detail);
    this.name = 'InsightQueryError';
  }
}

/**
 * Runs `fn`, naming the fields of an `InsightQueryError` it throws under `prefix` (`source`: the
 * error of a query nested in another's `source`). Other errors pass through.
 */
export async function nestedErrors<T>(prefix: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof InsightQueryError) throw new InsightQueryError(err.detail, err.attr ? `${prefix}__${err.attr}` : prefix);
    throw err;
  }
}
