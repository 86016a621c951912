/**
 * JSON values written as Python writes them, for the messages PostHog builds from Python objects
 * (`repr`, and `pprint.pformat(…, width=72, sort_dicts=False)` as python-jsonschema prints a schema
 * and an instance in its errors: ./template-schema.ts). A JSON value maps to Python's as `json.loads`
 * makes it: objects are dicts (keys in order), arrays lists, `null` None, booleans True/False,
 * numbers int when integral, else float. The pretty-printer follows CPython 3.12's `pprint`
 * (`PrettyPrinter._format`, `_pprint_dict`, `_pprint_list`, `_pprint_str`; indent 1, not compact).
 * A value nested deeper than `MAX_DEPTH` levels is written `...` past that depth: CPython's own
 * `repr` stops with a RecursionError near 1,000 levels (which PostHog answers 500), and the
 * stack here would overflow not far beyond.
 */

/** Characters Python's `str.isprintable` refuses (other than the space), written escaped by `repr`. */
const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

/** Python's `repr` of a string: single quotes unless it holds `'` and no `"`; escapes as CPython's. */
export function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && (code < 0x20 || code === 0x7f || NOT_PRINTABLE.test(ch))) {
      if (code < 0x100) out += `\\x${code.toString(16).padStart(2, '0')}`;
      else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0')}`;
      else out += `\\U${code.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

/** Python's `repr` of a float (the shortest text that reads back, with Python's exponent form). */
function reprFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const exp = n === 0 ? 0 : Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 16) {
    const [mantissa, e] = n.toExponential().split('e') as [string, string];
    const power = Number(e);
    return `${mantissa}e${power < 0 ? '-' : '+'}${String(Math.abs(power)).padStart(2, '0')}`;
  }
  const text = String(n);
  return text.includes('.') || text.includes('e') ? text : `${text}.0`;
}

/** How deep values are written out (module doc). */
export const MAX_DEPTH = 1_000;

/** Python's `repr` of a JSON value (module doc), on one line; `depth` is how deep `v` is. */
export function pythonRepr(v: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) return '...';
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : reprFloat(v);
  if (typeof v === 'string') return reprString(v);
  if (Array.isArray(v)) return `[${v.map((x) => pythonRepr(x, depth + 1)).join(', ')}]`;
  const entries = Object.entries(v as Record<string, unknown>);
  return `{${entries.map(([k, x]) => `${reprString(k)}: ${pythonRepr(x, depth + 1)}`).join(', ')}}`;
}

/** The width `pformat` is given by python-jsonschema. */
const WIDTH = 72;

/** CPython's `_pprint_str`: a long string as adjacent literals split after whitespace. */
function formatString(s: string, indent: number, allowance: number, level: number): string {
  if (s === '') return pythonRepr(s);
  const lines = s.split(/(?<=\r\n|\n|\r)/);
  const chunks: string[] = [];
  let ind = indent;
  let allow = allowance;
  if (level === 1) {
    ind += 1;
    allow += 1;
  }
  const maxWidth = WIDTH - ind;
  let maxWidth1 = maxWidth;
  let rep = '';
  for (const [i, line] of lines.entries()) {
    rep = reprString(line);
    if (i === lines.length - 1) maxWidth1 -= allow;
    if (rep.length <= maxWidth1) {
      chunks.push(rep);
      continue;
    }
    // alternating non-space, space runs (the last match is the empty one at the end)
    const parts = line.match(/\S*\s*/g)!.slice(0, -1);
    let maxWidth2 = maxWidth;
    let current = '';
    for (const [j, part] of parts.entries()) {
      const candidate = current + part;
      if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allow;
      if (reprString(candidate).length > maxWidth2) {
        if (current) chunks.push(reprString(current));
        current = part;
      } else current = candidate;
    }
    if (current) chunks.push(reprString(current));
  }
  if (chunks.length === 1) return rep;
  const body = chunks.join(`\n${' '.repeat(ind)}`);
  return level === 1 ? `(${body})` : body;
}

/** CPython's `PrettyPrinter._format`: `v` at column `indent`, leaving `allowance` columns after it. */
function format(v: unknown, indent: number, allowance: number, level: number): string {
  const rep = pythonRepr(v, level);
  if (rep.length <= WIDTH - indent - allowance || level >= MAX_DEPTH) return rep;
  if (typeof v === 'string') return formatString(v, indent, allowance, level + 1);
  if (Array.isArray(v)) {
    if (!v.length) return rep;
    const inner = indent + 1;
    const items = v.map((x, i) => format(x, inner, i === v.length - 1 ? allowance + 1 : 1, level + 1));
    return `[${items.join(`,\n${' '.repeat(inner)}`)}]`;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    if (!entries.length) return rep;
    const inner = indent + 1;
    const items = entries.map(([k, x], i) => {
      const key = reprString(k);
      return `${key}: ${format(x, inner + key.length + 2, i === entries.length - 1 ? allowance + 1 : 1, level + 1)}`;
    });
    return `{${items.join(`,\n${' '.repeat(inner)}`)}}`;
  }
  return rep;
}

/** `pprint.pformat(v, width=72, sort_dicts=False)` of a JSON value (module doc). */
export function pformat(v: unknown): string {
  return format(v, 0, 0, 0);
}
