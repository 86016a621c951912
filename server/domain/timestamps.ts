/**
 * Moved to ../wire/timestamps.ts (the canonical timestamp form is shared by `domain/` and
 * `hogql/`, and `hogql/` may not import `domain/`). This re-export keeps the importers outside the
 * domain working until they import ../wire/timestamps.js themselves: server/capture/process.ts,
 * server/cli/events.ts, server/events/import/normalize.ts and some tests. Add no new importer.
 */
export { formatTimestamp, parseIsoTimestamp, timestampFromDate, timestampToMs, type ParsedTimestamp } from '../wire/timestamps.js';
