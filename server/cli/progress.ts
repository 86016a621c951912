/**
 * Progress lines of `envapi import events` and `envapi demo` on stderr (none with `--json`), one
 * per phase of the import: `Checking` (the file's first pass), `Importing` / `Writing`, `Vacuuming`.
 *
 * - On a terminal: a cli-progress bar redrawn in place.
 * - Otherwise (a log, a pipe, CI): plain lines, no control sequences, each phase printing
 *   - one line when it starts;
 *   - one line every `PROGRESS_LINE_EVERY_MS` while it runs (so a long phase shows it is alive);
 *   - one line when it ends, unless the count has not moved since its last line (that line says it
 *     all already).
 *   No two lines of a phase say the same count less than `PROGRESS_LINE_EVERY_MS` apart.
 *
 * Why not cli-progress's own `noTTYOutput` mode: it redraws unconditionally at start, at every
 * tick and at stop, so a phase shorter than a tick printed its line twice (start and stop), and a
 * tick just before the end printed the last line again, its ETA turned to `?`.
 */
import cliProgress from 'cli-progress';
import type { ImportPhase } from '../ingest/import.js';

/** When stderr is not a terminal: one progress line every this many ms while a phase runs. */
export const PROGRESS_LINE_EVERY_MS = 5_000;

/** A phase of an import, or `writing` (`demo --output`). */
export type ProgressPhase = ImportPhase | 'writing';

/** What the import commands report progress to. */
export interface ProgressReporter {
  /** `done` rows of `total` (undefined: not known) in `phase`; a new phase (or total known or not) ends the last one. */
  onProgress(done: number, total: number | undefined, phase: ProgressPhase): void;
  /** Ends the current phase (its last line, or the bar left as it is); safe to call twice. */
  stop(): void;
}

/** The progress line of a phase (cli-progress placeholders); `{bar}` only on a terminal. */
function progressFormat(phase: ProgressPhase, known: boolean, tty: boolean): string {
  if (phase === 'validating') return 'Checking  {value} rows | {duration_formatted}';
  if (phase === 'vacuuming')
    return 'Vacuuming the tables written (PostgreSQL VACUUM ANALYZE: statistics, index-only reads) | {duration_formatted}';
  const verb = phase === 'writing' ? 'Writing' : 'Importing';
  if (!known) return `${verb} {value} events | {duration_formatted}`;
  return `${verb} ${tty ? '|{bar}| ' : ''}{percentage}% | {value}/{total} events | {duration_formatted} elapsed, {eta_formatted} left`;
}

/** cli-progress's time options without padding (what its default `autopadding: false` gives). */
const TIME_OPTIONS: cliProgress.Options = { autopaddingChar: '' };

/**
 * cli-progress's time format (`12s`, `3m05s`, `1h02m`), with `?` for an unknown time: its ETA is
 * the string `NULL` or `INF` when no rate is known yet (the default format prints `LLs`).
 */
const formatSeconds: cliProgress.TimeFormatter = (t, options, roundTo) =>
  Number.isFinite(Number(t)) ? cliProgress.Format.TimeFormat(Number(t), options, roundTo) : '?';

/**
 * The progress reporter of the import commands: none with `json`; a bar when `stream` is a
 * terminal; otherwise the plain lines of the module doc, one every `everyMs`.
 */
export function importProgress(
  json: boolean,
  stream: NodeJS.WriteStream = process.stderr,
  everyMs = PROGRESS_LINE_EVERY_MS,
): ProgressReporter {
  if (json) return { onProgress: () => undefined, stop: () => undefined };
  return stream.isTTY === true ? barProgress(stream) : lineProgress(stream, everyMs);
}

/** A cli-progress bar per phase, redrawn in place on the terminal `stream`. */
function barProgress(stream: NodeJS.WriteStream): ProgressReporter {
  let bar: cliProgress.SingleBar | undefined;
  let phase: string | undefined;
  const stop = (): void => {
    bar?.stop();
    bar = undefined;
    phase = undefined;
  };
  return {
    onProgress(done, total, p) {
      const key = `${p}:${total === undefined ? '' : 'total'}`;
      if (key !== phase) {
        stop();
        phase = key;
        bar = new cliProgress.SingleBar(
          {
            format: progressFormat(p, total !== undefined, true),
            stream,
            hideCursor: true,
            fps: 10,
            etaBuffer: 50,
            formatTime: formatSeconds,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total ?? 0, done);
      }
      bar?.update(done);
    },
    stop,
  };
}

/** The phase a line reporter is in. */
interface LinePhase {
  key: string;
  format: string;
  total: number | undefined;
  startedAt: number;
  startValue: number;
  value: number;
  /** the count the last printed line said */
  printed: number;
  /** the line every `everyMs` */
  timer?: NodeJS.Timeout;
}

/** Plain lines on `stream` (not a terminal), as the module doc says. */
function lineProgress(stream: NodeJS.WriteStream, everyMs: number): ProgressReporter {
  let current: LinePhase | undefined;
  const print = (ph: LinePhase): void => {
    ph.printed = ph.value;
    stream.write(renderLine(ph, Date.now()) + '\n');
  };
  const stop = (): void => {
    if (!current) return;
    clearInterval(current.timer);
    if (current.value !== current.printed) print(current);
    current = undefined;
  };
  return {
    onProgress(done, total, p) {
      const key = `${p}:${total === undefined ? '' : 'total'}`;
      if (current?.key === key) {
        current.value = done;
        current.total = total;
        return;
      }
      stop();
      const ph: LinePhase = {
        key,
        format: progressFormat(p, total !== undefined, false),
        total,
        startedAt: Date.now(),
        startValue: done,
        value: done,
        printed: done,
      };
      // unref: a progress line never keeps the process alive
      ph.timer = setInterval(() => print(ph), everyMs).unref();
      current = ph;
      print(ph);
    },
    stop,
  };
}

/** A phase's line at `now`: cli-progress's placeholders filled as its default formatter fills them. */
function renderLine(ph: LinePhase, now: number): string {
  const elapsedMs = now - ph.startedAt;
  const total = ph.total ?? 0;
  const progress = total > 0 ? Math.min(Math.max(ph.value / total, 0), 1) : 1;
  // the rate since the phase started; unknown until the count moved
  const rate = (ph.value - ph.startValue) / elapsedMs;
  const eta = ph.value >= total ? 0 : rate > 0 ? Math.ceil((total - ph.value) / rate / 1000) : Number.NaN;
  const values: Record<string, string> = {
    value: String(ph.value),
    total: String(total),
    percentage: String(Math.floor(progress * 100)),
    duration_formatted: formatSeconds(Math.round(elapsedMs / 1000), TIME_OPTIONS, 1),
    eta_formatted: formatSeconds(eta, TIME_OPTIONS, 5),
  };
  return ph.format.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m);
}
