/**
 * The HogQL subset's grammar for property-based tests (fast-check): random expressions over the
 * fixed dataset (../dataset.ts) built from fields, constants, operators and functions, and random
 * queries made of them (test/hogql/property.test.ts, test/hogql/materialized.test.ts). The module
 * doc of property.test.ts says what the grammar reaches.
 */
import fc from 'fast-check';

const FIELDS = [
  'event',
  'distinct_id',
  'timestamp',
  'uuid',
  'properties.$browser',
  'properties.price',
  'properties.plan',
  'properties.flag',
  'properties.$current_url',
  'person.properties.email',
  '(person_id is null)',
  'elements_chain',
  // an object, an array, the whole object as text
  'properties.nested',
  'properties.tags',
  'toString(properties)',
  'properties',
  // month ends (2024-10-31, 2024-11-30), as a Date and a DateTime
  '(toStartOfMonth(timestamp) - interval 1 day)',
  '(toDateTime(toStartOfMonth(timestamp)) - interval 1 second)',
];
// person_id itself is left out: each store gives its persons their own random uuids
const STRINGS = [
  "'Chrome'",
  "''",
  "'pro'",
  "'12'",
  "'2024-11-02'",
  "'2024-11-02 09:00:00'",
  "'-3'",
  "'Zürich'",
  "'$pageview'",
  "'2024-01-31'",
];
/** Numbers JSON writes as 1.5e-7 and 0.3333333333333333, and text of a Float that is not an exact binary fraction. */
const OTHER_NUMBER_TEXTS = ['properties.tiny', 'properties.ratio', "'0.1'"];
/** Text of a row (not a constant, which the compiler reads itself) that no store's cast can read. */
const ODD_TEXTS = [
  "'1e400'",
  "'-1e400'",
  "'1e-400'",
  "'2024-02-30'",
  "'2023-02-29 10:00:00'",
  "'0000-03-01'",
  "'9999-12-31T23:30:00-01:00'",
  "'2024-01-01T10:00:00+0200'",
  "'2024-01-01T24:00:00'",
  "'12345'",
].map((t) => `if(event = '', '', ${t})`);
const PATTERNS = ["'%'", "'Chr%'", "'%e%'", "'_'", "'%\\\\%%'"];
const REGEXES = ["'^C'", "'hedgebox\\\\.net'", "'[0-9]+'", "'(?i)chrome'", "''"];
/** Floats that are exact binary fractions. */
const EXACT_FLOATS = ['0.5', '2.25', '-1.5'];
/** Floats whose text needs up to 17 digits, and one in exponent form (`toString` of them, and of what they make). */
const OTHER_FLOATS = ['0.1', '0.3', '1.1', '-2.7', '123.456', '1e-7', '0.000015'];
/** Floats at the doubles' ends: their products overflow or underflow (both stores answer 400). */
const EDGE_FLOATS = ['1e300', '-1e300', '1e-300', '1.7976931348623157e308', '5e-324'];
/** Int64's edge: their products and sums overflow (both stores answer 400). */
const LARGE_INTS = ['9007199254740991', '-9007199254740991', '3037000500', '4294967296'];

/** A random HogQL expression of the subset (non-aggregate). */
function expression(): fc.Arbitrary<string> {
  return fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...FIELDS, ...OTHER_NUMBER_TEXTS),
      fc.constantFrom(...STRINGS, ...ODD_TEXTS),
      fc.integer({ min: -100, max: 100 }).map(String),
      fc.constantFrom(...EXACT_FLOATS, ...OTHER_FLOATS, ...EDGE_FLOATS, ...LARGE_INTS, 'null', 'true', 'false', 'now()', 'today()'),
      fc
        .tuple(tie('e'), fc.constantFrom('=', '!=', '<', '>', '<=', '>=', 'and', 'or', '+', '-', '*', '/', '%'), tie('e'))
        .map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc
        .tuple(tie('e'), fc.constantFrom('like', 'ilike', 'not like', 'not ilike'), fc.constantFrom(...PATTERNS))
        .map(([a, op, p]) => `(${a} ${op} ${p})`),
      fc.tuple(tie('e'), fc.constantFrom('=~', '!~', '=~*'), fc.constantFrom(...REGEXES)).map(([a, op, p]) => `(${a} ${op} ${p})`),
      fc
        .tuple(
          tie('e'),
          fc.constantFrom('in', 'not in'),
          fc.array(fc.constantFrom(...STRINGS, '12', '-3', 'null'), { minLength: 1, maxLength: 3 }),
        )
        .map(([a, op, xs]) => `(${a} ${op} (${xs.join(', ')}))`),
      fc
        .tuple(
          fc.constantFrom(
            'not',
            'lower',
            'upper',
            'length',
            'toInt',
            'toFloat',
            'toString',
            'toDate',
            'toDateTime',
            'toStartOfDay',
            'toStartOfHour',
            'toStartOfWeek',
            'toStartOfMonth',
            '-',
            'isNull',
          ),
          tie('e'),
        )
        .map(([f, a]) => (f === '-' ? `(-${a})` : f === 'isNull' ? `(${a} is null)` : `${f}(${a})`)),
      // `toString` of a Float made of the above (the unary functions reach Floats rarely)
      fc
        .tuple(tie('e'), fc.constantFrom('*', '/', '+'), fc.constantFrom(...OTHER_FLOATS, ...EDGE_FLOATS))
        .map(([a, op, f]) => `toString(toFloat(${a}) ${op} ${f})`),
      fc.tuple(fc.constantFrom('coalesce', 'ifNull', 'concat'), tie('e'), tie('e')).map(([f, a, b]) => `${f}(${a}, ${b})`),
      fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `if(${c}, ${a}, ${b})`),
      fc
        .tuple(
          tie('e'),
          fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-8000, 8000)),
          fc.constantFrom('hour', 'day', 'week', 'month', 'quarter', 'year'),
        )
        .map(([a, n, u]) => `(${a} + interval ${n} ${u})`),
    ),
  })).e;
}

export const expr = expression();

/** A random query: a column and a condition over the events, or an aggregate grouped by an expression. */
export const query: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(expr, expr).map(([s, w]) => `select ${s} from events where ${w} order by uuid`),
  fc
    .tuple(fc.constantFrom('count()', 'uniq', 'min', 'max', 'countIf'), expr, expr)
    .map(([agg, a, g]) =>
      agg === 'count()'
        ? `select ${g} as g, count() from events group by g order by g`
        : `select ${g} as g, ${agg}(${a}) from events group by g order by g`,
    ),
  fc
    .tuple(fc.constantFrom('sum', 'avg'), expr, expr)
    .map(([agg, a, g]) => `select ${g} as g, ${agg}(${a}) from events group by g order by g`),
  expr.map((g) => `select distinct ${g} as g from events order by g`),
);
