/**
 * PostHog's elements chain: the one-string form in which an autocaptured event stores the DOM
 * elements it went through, and its reading into the element objects of the events API.
 *
 * Source: posthog/models/element/element.py (`chain_to_element_dicts` / `chain_to_elements`,
 * `split_chain_regex`, `split_class_attributes`, `parse_attributes_regex`, `_int_or_none`), and the
 * `ElementSerializer` fields of posthog/api/event.py, which the events list applies to the result of
 * `chain_to_elements` (posthog/models/event/util.py, `ClickhouseEventSerializer.get_elements`).
 *
 * The format, as PostHog writes it (`elements_to_string`): elements joined with `;`, the clicked
 * (innermost) element first; each element is `tag.class1.class2:` followed by `key="value"` pairs
 * written back to back, keys sorted, `"` inside a value escaped as `\"`:
 *
 *     button.btn.btn-primary:attr__class="btn btn-primary"attr__id="upload"nth-child="2"nth-of-type="1"text="Upload";form:nth-child="1"nth-of-type="1"
 *
 * Reading rules (each mirrors one of PostHog's regular expressions; the scanners below give the
 * exact result of those expressions, in linear time — the expressions themselves backtrack
 * exponentially or quadratically on crafted chains, and a chain is user-supplied event data):
 *
 * 1. Splitting (`split_chain_regex`, `(?:[^\s;"]|"(?:\\.|[^"])*")+`): an element is a maximal run
 *    of characters other than whitespace, `;` and `"`, and of double-quoted strings (in which `\x`
 *    is one escaped character, so `;`, spaces and `\"` may appear inside). `;` and whitespace
 *    outside quotes both separate elements (PostHog's `\s` is Python's Unicode whitespace). A
 *    quote with no closing quote ends the element before it, unless a later `\"` can serve as the
 *    closing quote, as the backtracking expression allows. Empty pieces produce nothing.
 * 2. Tag and classes against attributes (`split_class_attributes`,
 *    `(.*?)($|:([a-zA-Z\-_0-9]*=.*))`): the tag part is everything before the first `:` that is
 *    followed by `name=` (classes may contain `:`); the attribute part is what follows that `:`, up
 *    to the first newline. Tag part `a.b.c` → `tag_name` `a`, `attr_class` `["b","c"]` (empty
 *    class names dropped; a tag part without `.` gives `attr_class` null; an empty tag part gives
 *    `tag_name` null, `.x` gives `tag_name` "").
 * 3. Attributes (`parse_attributes_regex`, `(?P<key>.*?)="(?P<value>.*?[^\\])"`, the expression
 *    PostHog has read every stored chain with, and which its linear rewrites keep exactly): pairs
 *    `key="value"` read one after the other, the key being everything since the previous pair (no
 *    newline). A value has at least one character and ends at the first `"` not preceded by `\`,
 *    so `\"` stays inside it, and an empty value `a=""b="2"` runs on (`a` = `"b=`). Values are
 *    kept as written: escapes such as `\"` are NOT undone, as in PostHog. Keys `text`, `href`,
 *    `attr_id` fill those fields; `nth-child` and `nth-of-type` fill `nth_child` / `nth_of_type`
 *    when the value is an integer (Python's `int()`: surrounding whitespace, a sign and `_` between
 *    digits allowed), otherwise null; every other non-empty key goes into `attributes` (usually
 *    `attr__<html attribute>`). A repeated key keeps its last value.
 *
 * Departures, all on input PostHog cannot read either: a non-integer `nth-child` / `nth-of-type`
 * is null here (PostHog's `int()` raises and the request fails with 500, except in one rewrite
 * that also gives None); one outside the safe-integer range is null too, and non-ASCII digits are
 * not read as digits. Some PostHog versions cut chains longer than their MAX_ELEMENTS_CHAIN_LENGTH
 * before reading them; this reads the whole chain. Nothing here throws: garbage gives whatever
 * elements can be read, and `''` gives `[]`.
 *
 * Writing (`writeElementsChain`, PostHog's `elements_to_string`) is the other half: the demo
 * generator uses it. What it writes reads back as the element it was written from (checked by a
 * property test, test/domain/elements-chain-roundtrip.test.ts) as long as the element's strings stay
 * within what PostHog's writer can express: it escapes only `"`, so a value ending in `\`, holding
 * `\"`, a newline or nothing at all, or a tag or class with `.`, `;`, `"`, `=` or whitespace, does
 * not read back, in PostHog either.
 */

/** One element of a chain, shaped as the `ClickhouseEventElement` schema of openapi.yaml. */
export interface Element {
  /** Always null (PostHog's serializer keeps a field for the legacy Postgres foreign key). */
  event: null;
  /** The element's text (`text="…"`), escapes kept, or null. */
  text: string | null;
  /** The tag name, or null when the element has no tag part. */
  tag_name: string | null;
  /** Class names, in chain order; null when the tag part has no `.`. */
  attr_class: string[] | null;
  /** `href="…"`, or null. */
  href: string | null;
  /** `attr_id="…"` (PostHog's own copy of the id; `attr__id` stays in `attributes`), or null. */
  attr_id: string | null;
  /** `nth-child="…"` as an integer, or null when absent or not an integer. */
  nth_child: number | null;
  /** `nth-of-type="…"` as an integer, or null when absent or not an integer. */
  nth_of_type: number | null;
  /** Every other attribute, by key as written in the chain (`attr__class`, `attr__id`, …). */
  attributes: Record<string, string>;
  /** Position in the chain: 0 for the clicked element, then its ancestors outwards. */
  order: number;
}

/** Python's `str.isspace()` characters: what `\s` matches in PostHog's (Python `re`) expressions. */
// eslint-disable-next-line no-control-regex -- Python's whitespace includes the separators \x1c-\x1f
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
/** `[a-zA-Z\-_0-9]` of `split_class_attributes`. */
const ATTRIBUTE_NAME_CHAR = /[a-zA-Z\-_0-9]/;
/** Python's `int()` on ASCII text: optional whitespace, sign, digits with single `_` between. */
const PY_INT = /^[+-]?\d+(?:_\d+)*$/;
/** Leading or trailing Python whitespace, stripped by `int()`. */
const PY_OUTER_WHITESPACE = new RegExp(`^${PY_WHITESPACE.source}+|${PY_WHITESPACE.source}+$`, 'g');

/**
 * Reads an elements chain into elements, innermost first (`order` = index). See the module doc for
 * the rules (posthog/models/element/element.py `chain_to_element_dicts`). Never throws; `''` → `[]`.
 */
export function parseElementsChain(chain: string): Element[] {
  return splitChain(chain).map((piece, order) => parseElement(piece, order));
}

/**
 * The pieces `split_chain_regex.findall(chain)` returns, computed in linear time.
 *
 * The expression has nothing after its `+` loop, so a match never backtracks out of the loop: it
 * takes plain characters and quoted strings as long as it can. Only a quoted string backtracks,
 * inside itself: it first reads `\x` as an escape and stops at the first `"` that is not escaped;
 * if it reaches the end of the text without one, the last `"` after the opening one closes it
 * (that `"` was read as part of `\"`, and reading its backslash as a plain character instead is
 * the latest choice the backtracking can undo); with no `"` at all the quoted string fails.
 */
export function splitChain(chain: string): string[] {
  const pieces: string[] = [];
  const n = chain.length;
  let pos = 0;
  while (pos < n) {
    let i = pos;
    for (;;) {
      if (i >= n) break;
      const c = chain[i] as string;
      if (c === '"') {
        const end = quotedStringEnd(chain, i);
        if (end < 0) break;
        i = end;
      } else if (c === ';' || PY_WHITESPACE.test(c)) {
        break;
      } else {
        i += 1;
      }
    }
    if (i > pos) {
      pieces.push(chain.slice(pos, i));
      pos = i;
    } else {
      pos += 1;
    }
  }
  return pieces;
}

/** End (exclusive) of the quoted string `"(?:\\.|[^"])*"` opening at `open`, or -1 (see splitChain). */
function quotedStringEnd(text: string, open: number): number {
  const n = text.length;
  let j = open + 1;
  while (j < n) {
    const c = text[j];
    if (c === '\\' && j + 1 < n && text[j + 1] !== '\n') j += 2;
    else if (c === '"') return j + 1;
    else j += 1;
  }
  const last = text.lastIndexOf('"');
  return last > open ? last + 1 : -1;
}

/**
 * `split_class_attributes.search(piece)`: the tag part (group 1) and the attribute part (group 3,
 * undefined when the match ended at `$`). Linear-time equivalent of the expression: the lazy
 * group 1 stops at the first position that is the end of the text (Python's `$`: the very end or
 * just before a final newline) or a `:` followed by `name=`; group 1 cannot cross a newline, so
 * when one comes first the search starts again after it.
 */
function splitTagAndAttributes(piece: string): { tag: string; attrs: string | undefined } {
  const n = piece.length;
  let start = 0;
  for (;;) {
    let i = start;
    for (;;) {
      if (i === n || (i === n - 1 && piece[i] === '\n')) return { tag: piece.slice(start, i), attrs: undefined };
      if (piece[i] === ':') {
        let j = i + 1;
        while (j < n && ATTRIBUTE_NAME_CHAR.test(piece[j] as string)) j += 1;
        if (j < n && piece[j] === '=') {
          const newline = piece.indexOf('\n', j);
          return { tag: piece.slice(start, i), attrs: piece.slice(i + 1, newline < 0 ? n : newline) };
        }
      }
      if (piece[i] === '\n') break;
      i += 1;
    }
    start = i + 1;
  }
}

/**
 * `parse_attributes_regex.finditer(attrs)` as `[key, value]` pairs, in linear time, for PostHog's
 * long-standing expression `(?P<key>.*?)="(?P<value>.*?[^\\])"` (`.` excludes newlines).
 *
 * From the search position, the lazy key ends at the first `="` with no newline before it. The
 * value is the shortest run of at least one character, without a newline except as its last
 * character, whose last character is not `\` and which is followed by `"`: it ends at the first
 * `"` after its first character that does not follow a backslash. When that value cannot close,
 * no pair can start on this line (a later `="` on the line would have closed it), so the search
 * resumes after the next newline.
 */
export function parseAttributePairs(attrs: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const n = attrs.length;
  let pos = 0;
  // both only move forwards, which keeps the whole scan linear
  let candidate = attrs.indexOf('="');
  let newline = attrs.indexOf('\n');
  while (pos < n && candidate >= 0) {
    if (candidate < pos) candidate = attrs.indexOf('="', pos);
    if (candidate < 0) break;
    if (newline >= 0 && newline < pos) newline = attrs.indexOf('\n', pos);
    const lineEnd = newline < 0 ? n : newline;
    if (candidate > lineEnd) {
      pos = lineEnd + 1;
      continue;
    }
    const start = candidate + 2;
    const close = valueEnd(attrs, start, lineEnd);
    if (close < 0) {
      pos = lineEnd + 1;
      continue;
    }
    pairs.push([attrs.slice(pos, candidate), attrs.slice(start, close)]);
    pos = close + 1;
  }
  return pairs;
}

/**
 * Index of the quote closing a value `.*?[^\\]"` that starts at `from`, or -1: the first `"` at
 * `from + 1` or later not preceded by `\`, at most one past `lineEnd` (the first newline at or after
 * `from`, or the end of the text), since only the value's last character may be a newline.
 */
function valueEnd(text: string, from: number, lineEnd: number): number {
  const last = Math.min(lineEnd + 1, text.length - 1);
  for (let j = from + 1; j <= last; j++) {
    if (text[j] === '"' && text[j - 1] !== '\\') return j;
  }
  return -1;
}

/** PostHog's `_int_or_none`: Python `int(value)` for ASCII input, null when it fails or is not a safe integer. */
function intOrNull(value: string): number | null {
  const text = value.replace(PY_OUTER_WHITESPACE, '');
  if (!PY_INT.test(text)) return null;
  const n = Number(text.replace(/_/g, ''));
  return Number.isSafeInteger(n) ? n : null;
}

function parseElement(piece: string, order: number): Element {
  const { tag, attrs } = splitTagAndAttributes(piece);
  const element: Element = {
    event: null,
    text: null,
    tag_name: null,
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: null,
    nth_of_type: null,
    attributes: {},
    order,
  };
  if (tag) {
    const dot = tag.indexOf('.');
    if (dot < 0) {
      element.tag_name = tag;
    } else {
      element.tag_name = tag.slice(0, dot);
      element.attr_class = tag
        .slice(dot + 1)
        .split('.')
        .filter((c) => c !== '');
    }
  }
  if (attrs) {
    const others = new Map<string, string>();
    for (const [key, value] of parseAttributePairs(attrs)) {
      if (key === 'text') element.text = value;
      else if (key === 'href') element.href = value;
      else if (key === 'attr_id') element.attr_id = value;
      else if (key === 'nth-child') element.nth_child = intOrNull(value);
      else if (key === 'nth-of-type') element.nth_of_type = intOrNull(value);
      else if (key !== '') others.set(key, value);
    }
    // fromEntries defines own properties, so a key such as `__proto__` stays an ordinary key
    element.attributes = Object.fromEntries(others);
  }
  return element;
}

/**
 * One element to write into a chain: an element of a clicked element's ancestry, as posthog-js
 * captures it (posthog/models/element/element.py `Element`). The optional strings are written only
 * when non-empty.
 */
export interface ChainElement {
  /** tag name, e.g. `button` */
  tag: string;
  /** class names, in any order (written sorted) */
  classes?: string[];
  /** the element's text (`text="…"`) */
  text?: string;
  /** `href` (written both as `href` and `attr__href`) */
  href?: string;
  /** the HTML id (written both as `attr_id` and `attr__id`) */
  id?: string;
  /** 1-based position among its parent's children */
  nthChild: number;
  /** 1-based position among its parent's children of the same tag */
  nthOfType: number;
  /** further attributes by chain key, usually `attr__<html attribute>`; they win over the derived ones */
  attributes?: Record<string, string>;
}

function escapeChainValue(s: string): string {
  return s.replace(/"/g, '\\"');
}

/**
 * PostHog's `elements_to_string` (posthog/models/element/element.py): per element the tag, its
 * classes sorted (`.a.b`), then `:` and the attributes sorted by name as `key="value"` (text,
 * nth-child, nth-of-type, href, attr_id and the element's `attr__…` attributes); elements joined
 * with `;`, innermost first. `"` in keys and values is written `\"` (and dropped from class names
 * in the tag part); nothing else is escaped. Never throws.
 */
export function writeElementsChain(elements: readonly ChainElement[]): string {
  return elements
    .map((el) => {
      const classes = [...(el.classes ?? [])].sort();
      const attrs: Record<string, string> = {
        ...(el.text ? { text: el.text } : {}),
        'nth-child': String(el.nthChild),
        'nth-of-type': String(el.nthOfType),
        ...(el.href ? { href: el.href } : {}),
        ...(el.id ? { attr_id: el.id } : {}),
        ...(classes.length ? { attr__class: classes.join(' ') } : {}),
        ...(el.href ? { attr__href: el.href } : {}),
        ...(el.id ? { attr__id: el.id } : {}),
        ...el.attributes,
      };
      const attrText = Object.keys(attrs)
        .sort()
        .map((k) => `${escapeChainValue(k)}="${escapeChainValue(attrs[k]!)}"`)
        .join('');
      return `${el.tag}${classes.map((c) => `.${c.replace(/"/g, '')}`).join('')}:${attrText}`;
    })
    .join(';');
}
