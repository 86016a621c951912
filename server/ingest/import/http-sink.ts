/**
 * An import sent to a running envapi server instead of the store: `envapi import events` and
 * `envapi demo` while a server holds the embedded ClickHouse events store (chDB lets one process
 * hold its data directory; server/storage/clickhouse/connection.ts). Each batch goes, gzipped, to
 * the server's `POST /batch/` with `historical_migration: true` and the project's token
 * (`api_key`), PostHog's own path for imports (posthog/api/capture.py; rust/capture: the flag sends
 * the events to the historical topic). The server answers once the events are written (capture's
 * group commit, server/capture/queue.ts), and skips a uuid it stores already, as a local import
 * does, but without saying how many it skipped.
 *
 * Each normalised row goes as the event capture would have received: its uuid (a derived one for
 * rows without, ./normalize.ts `deterministicUuid`, so a second import is skipped), event,
 * distinct id, timestamp, and its properties (with `$set` / `$set_once`, from which the server
 * applies the same person updates: ../person-rules.ts) plus its elements chain as
 * `$elements_chain`. Errors: `ImportSendError` with the server's status and message, or the
 * network's reason; the batches before it are written.
 */
import { gzipSync } from 'node:zlib';
import type { NormalizedEventRow } from '../write-events.js';
import type { BatchSink } from './write.js';

/** A batch's JSON above this many bytes is split in two (capture's `/batch/` takes 20 MiB: server/capture/index.ts). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The server refused a batch, or could not be reached. */
export class ImportSendError extends Error {
  override readonly name = 'ImportSendError';
}

/** The capture event of a normalised row (module doc). */
function captureEvent(row: NormalizedEventRow): Record<string, unknown> {
  const e = row.event;
  const properties = e.elements_chain ? { ...e.properties, $elements_chain: e.elements_chain } : e.properties;
  return { uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, timestamp: e.timestamp, properties };
}

/**
 * A sink sending batches to the server at `baseUrl` (`http://host:port`) for the project whose
 * token is `token`. `timeoutMs`: how long one request may take (the server's write included).
 */
export function httpBatchSink(baseUrl: string, token: string, timeoutMs = 300_000): BatchSink {
  const url = new URL('/batch/', baseUrl).toString();
  const post = async (events: Record<string, unknown>[]): Promise<void> => {
    const json = JSON.stringify({ api_key: token, historical_migration: true, batch: events });
    if (Buffer.byteLength(json) > MAX_BODY_BYTES && events.length > 1) {
      const half = Math.ceil(events.length / 2);
      await post(events.slice(0, half));
      await post(events.slice(half));
      return;
    }
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: gzipSync(json),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new ImportSendError(`The server at ${baseUrl} could not be reached (${why}); the batches before this one were written.`);
    }
    if (res.status !== 200) {
      const text = (await res.text()).slice(0, 500);
      throw new ImportSendError(`The server at ${baseUrl} answered ${res.status} to a batch: ${text}; the batches before it were written.`);
    }
    await res.arrayBuffer().catch(() => undefined);
  };
  return { via: baseUrl, send: (batch) => post(batch.map(captureEvent)) };
}
