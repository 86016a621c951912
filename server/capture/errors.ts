/**
 * The capture endpoints' error: an HTTP status and PostHog's plain-text message (the capture
 * service answers errors as `text/plain`, its error's text, not DRF's JSON shape:
 * rust/capture/src/api.rs `CaptureError`). Statuses: 400 malformed request, 401 token, 413 too
 * big, 503 busy (with `Retry-After`, seconds).
 */
export class CaptureError extends Error {
  constructor(
    readonly status: 400 | 401 | 405 | 413 | 503,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'CaptureError';
  }
}
