/**
 * Structured request logs (pino + pino-http) and request ids.
 *
 * One line per request, when the response finishes:
 * `{"level":30,"req":{"id":"…","method":"GET","path":"/api/…/"},"res":{"statusCode":200},"responseTime":3,"msg":"GET /api/…/ 200 3ms"}`.
 * Only these fields are serialized: no headers (so never `Authorization`), no query string (so never
 * `personal_api_key`), and anything that looks like a personal API key (`phx_…`) in the path is
 * replaced by `phx_[redacted]`.
 *
 * The request id is an incoming `X-Request-Id` when it is a plain token (1–200 characters of
 * `[A-Za-z0-9._:-]`), otherwise a new UUID; it is sent back as `X-Request-Id`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
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
 * The default logger: JSON lines on stdout at `level` (`silent` under vitest). Lines are written
 * asynchronously (sonic-boom, `sync: false`): a line written while the previous write is still in
 * flight joins the next write instead of costing a system call of its own (docs/performance.md).
 * pino flushes what is pending
 * synchronously when the process exits; `flushLogs` does it on a graceful shutdown.
 */
export function defaultLogger(level: string = process.env.LOG_LEVEL || 'info'): Logger {
  const silent = !!process.env.VITEST || level === 'silent';
  return pino({ level: process.env.VITEST ? 'silent' : level }, silent ? undefined : pino.destination({ dest: 1, sync: false }));
}

/** Writes out what `logger` still holds (a no-op for a synchronous destination). */
export function flushLogs(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/** The request-logging middleware; also sets `X-Request-Id` on every response. */
export function requestLogger(logger: Logger): RequestHandler {
  const middleware = pinoHttp({
    logger,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = requestIdOf(req);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage & { id?: unknown }) => ({ id: req.id, method: req.method, path: loggablePath(req) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    customSuccessMessage: (req, res, responseTime) => `${req.method} ${loggablePath(req)} ${res.statusCode} ${Math.round(responseTime)}ms`,
    customErrorMessage: (req, res) => `${req.method} ${loggablePath(req)} ${res.statusCode}`,
  });
  return middleware as unknown as RequestHandler;
}
