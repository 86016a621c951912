/**
 * Structured request logs (pino) and request ids.
 *
 * One line per request, when the response is closed:
 * `{"level":30,"req":{"id":"…","method":"GET","path":"/api/…/"},"res":{"statusCode":200},"responseTime":3,"msg":"GET /api/…/ 200 3ms"}`.
 * Only these fields are serialized: no headers (so never `Authorization`), no query string (so never
 * `personal_api_key`), and anything that looks like a personal API key (`phx_…`) in the path is
 * replaced by `phx_[redacted]`.
 *
 * The request id is an incoming `X-Request-Id` when it is a plain token (1–200 characters of
 * `[A-Za-z0-9._:-]`), otherwise a new UUID; it is sent back as `X-Request-Id`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pino, type Logger } from 'pino';
import type { RequestHandler } from 'express';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const KEY_LIKE = /phx_[A-Za-z0-9_-]*/g;

/** The request id of a request: the client's `X-Request-Id` when well-formed, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && REQUEST_ID.test(value) && !value.includes('phx_') ? value : randomUUID();
}

/** The path of a request for the log: no query string, key-like segments redacted. */
export function loggablePath(req: IncomingMessage): string {
  const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const q = url.indexOf('?');
  return (q === -1 ? url : url.slice(0, q)).replace(KEY_LIKE, 'phx_[redacted]');
}

/**
 * The default logger: JSON lines on stdout at `level` (`silent`: no output). Lines are written
 * asynchronously (sonic-boom, `sync: false`): a line written while the previous write is still in
 * flight joins the next write instead of costing a system call of its own (docs/performance.md).
 * pino flushes what is pending
 * synchronously when the process exits; `flushLogs` does it on a graceful shutdown.
 */
export function defaultLogger(level: string = process.env.LOG_LEVEL || 'info'): Logger {
  return pino({ level }, level === 'silent' ? undefined : pino.destination({ dest: 1, sync: false }));
}

/** Writes out what `logger` still holds (a no-op for a synchronous destination). */
export function flushLogs(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/**
 * The request-logging middleware; also sets `X-Request-Id` on every response and `req.id`.
 *
 * The method logged is the one the request arrived with (HEAD stays HEAD, though the API path
 * runs it as GET). One pino call per request, when the response is closed: at level `info`
 * below 400, `warn` for 4xx and `error` for 5xx; skipped entirely when that level is off. A response whose connection
 * closed before it was completely sent is logged at `warn` (or `error` for a 5xx) with
 * `aborted: true`: its status code was set but the client did not get the whole answer.
 * One `close` listener a request: Node emits `close` on every response, after `finish` when it
 * completed, so one listener does what `finish` and `close` did. This is what pino-http did here,
 * without its per-request child logger: building that child serializes the request's bindings on
 * every request, a large share of a keyed GET's CPU (docs/performance.md).
 */
export function requestLogger(logger: Logger): RequestHandler {
  return function requestLog(req, res, next) {
    const id = requestIdOf(req);
    res.setHeader('X-Request-Id', id);
    (req as IncomingMessage & { id?: string }).id = id;
    const started = performance.now();
    // as the client sent it: a later step runs HEAD as GET (before-validator.ts `normaliseRequest`)
    const method = req.method;
    res.once('close', () => {
      const statusCode = res.statusCode;
      const aborted = !res.writableFinished;
      const level = statusCode >= 500 ? 'error' : statusCode >= 400 || aborted ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const responseTime = Math.round(performance.now() - started);
      const path = loggablePath(req);
      const line = { req: { id, method, path }, res: { statusCode }, responseTime };
      const msg = `${method} ${path} ${statusCode} ${responseTime}ms`;
      if (aborted) logger[level]({ ...line, aborted: true }, `${msg} (aborted)`);
      else logger[level](line, msg);
    });
    next();
  };
}
