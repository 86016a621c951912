/**
 * Request input quoted in error messages, cut to a bounded length.
 *
 * An error message that names the value it refuses ("Unknown plugin job: 'x'") must not send a
 * 400 KB job name back: every message built from request input quotes it through this module, at
 * most `ECHO_MAX_LENGTH` characters (quotes and ellipsis included) per quoted value. A value that
 * fits is quoted whole, exactly as before; a longer one keeps its start and ends with `…` inside
 * the quotes (`"aaaa…"`), so the message still says what was wrong and which value it was.
 * Messages whose own text is long, or that quote several values, give each value less room
 * (`echo(value, 100)`), so that no detail built this way passes 300 characters.
 * Lengths are UTF-16 code units (JavaScript's `length`); a surrogate pair is never split.
 */

/** How many characters one quoted value of an error message takes at most. */
export const ECHO_MAX_LENGTH = 200;

/** What marks a cut value. */
export const ELLIPSIS = '…';

/** The first `n` code units of `text`, one fewer when the last one would be half a surrogate pair. */
function head(text: string, n: number): string {
  const cut = text.slice(0, n);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/**
 * `text` unchanged when it has at most `max` characters; otherwise its start followed by `…`, `max`
 * characters in all (one fewer when a surrogate pair would be split). For unquoted text, e.g. a
 * library's message that may repeat the input: `clip('abcdef', 4)` → `'abc…'`.
 */
export function clip(text: string, max: number = ECHO_MAX_LENGTH): string {
  if (text.length <= max) return text;
  return head(text, Math.max(0, max - ELLIPSIS.length)) + ELLIPSIS;
}

/**
 * `quote(text)` when that is at most `max` characters long; otherwise `quote(start + '…')` for the
 * longest start of `text` that keeps the result within `max` (escapes count: a text of control
 * characters keeps fewer of them). `quote` must quote character by character, as `JSON.stringify`
 * and Python's `repr` (`pyRepr`) do. E.g. `quoteCapped('abcdefgh', JSON.stringify, 6)` → `"abc…"`.
 */
export function quoteCapped(text: string, quote: (s: string) => string, max: number = ECHO_MAX_LENGTH): string {
  if (text.length <= max) {
    const whole = quote(text);
    if (whole.length <= max) return whole;
  }
  // Binary search on the length of the start kept; the quoted length grows with it.
  let lo = 0;
  let hi = Math.min(text.length, max);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (quote(head(text, mid) + ELLIPSIS).length <= max) lo = mid;
    else hi = mid - 1;
  }
  return quote(head(text, lo) + ELLIPSIS);
}

/**
 * `value` as JSON text for an error message, at most `max` characters: a string in double quotes,
 * cut inside the quotes when too long (`"abc…"`, see `quoteCapped`); any other value as
 * `JSON.stringify` writes it (`undefined`, a BigInt or a cycle as `String(value)`), cut at the end with `…` when too long.
 * E.g. `` `Unknown operator ${echo(op)}` `` → `Unknown operator "contains"`.
 */
export function echo(value: unknown, max: number = ECHO_MAX_LENGTH): string {
  if (typeof value === 'string') return quoteCapped(value, JSON.stringify, max);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // a BigInt or a cycle: not JSON input, but a message must still be built
  }
  return clip(json ?? String(value), max);
}
