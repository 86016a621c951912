/**
 * fast-check material of the fuzzers: the fixed seed, the nasty values (SQL and regex
 * metacharacters, unicode, prototype keys, 100 KB strings, boundary numbers), every control
 * character and unpaired surrogate (`CONTROL_CHARS`, `UNSTORABLE`, `placed`), percent-encoding
 * (`enc`), and schema → arbitrary: a valid value of a schema (`validOf`), a value of the wrong
 * type (`wrongTypeOf`) and one place of a JSON value mutated (`mutate`).
 */
import fc from 'fast-check';
import { deref, typesOf, type Schema } from '../helpers/spec.js';

/** The fixed seed of the random fuzzing (each operation runs with `SEED + its index`); the log lines name it. */
export const SEED = 20_250_601;

// ------------------------------------------------------------------------------------ nasty values

const HUGE = 'x'.repeat(100_000);
/** Strings that have broken servers: SQL and LIKE / regex metacharacters, emoji, RTL, NUL, lone surrogates, prototype keys, numbers as text. */
export const NASTY_STRINGS: string[] = [
  "' OR 1=1 --",
  '"; DROP TABLE events; --',
  "'); DELETE FROM plugin_configs; --",
  '%',
  '_',
  '%_%',
  '\\',
  '\\\\',
  '(a+)+$',
  '[',
  '.*',
  '(?<x>a)\\k<y>',
  '*',
  '😀👍🏽🏳️‍🌈',
  'مرحبا بالعالم',
  '\u202Eevil\u202C',
  'a\u0000b',
  '\u0000',
  '\uD800',
  '\uDC00x',
  '__proto__',
  'constructor',
  'prototype',
  '',
  ' ',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '2147483648',
  '9007199254740993',
  '1e308',
  'NaN',
  'Infinity',
  '@current',
  '../../etc/passwd',
  '%00',
  '%2F',
  '${jndi:x}',
  '<script>alert(1)</script>',
  'ṩ̴̛̩͎ẕ̷̧͝',
  '\u0001',
  'a\u0007b',
  '\u001b[31mred\u001b[0m',
  'line\r\nbreak\ttab',
  '\u001f\u007f',
  'x\uDBFF',
  '\uDFFF',
  'a\uDC00\uD800b',
];
/**
 * Every control character and unpaired surrogate: U+0000–U+001F, U+007F, both ends of the high and
 * low surrogate ranges alone, and a low surrogate before a high one (a reversed pair). The sweep
 * (`controlSweep`) puts each of them into every string of every operation's requests.
 */
export const CONTROL_CHARS: string[] = [
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)),
  '\u007f',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\udc00\ud800',
];
/** Text no store can hold as sent (PostgreSQL: U+0000; UTF-8: unpaired surrogates): the API answers 400. */
// eslint-disable-next-line no-control-regex -- NUL is what the stores refuse
export const UNSTORABLE = /[\u0000\ud800-\udfff]/u;
/** `c` alone, or before, after or inside other text (which one: `i`, rotating). */
export function placed(c: string, i: number): string {
  return [c, `a${c}`, `${c}b`, `a${c}b`][i % 4] as string;
}
/** Boundary numbers: 0, -1, 2³¹ ± 1, 2⁵³ (+2), ±1e308, 2⁶⁴, a fraction, the smallest double. */
export const NASTY_NUMBERS: number[] = [
  0,
  -1,
  1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  1e308,
  -1e308,
  1.5,
  2 ** 64,
  Number.MIN_VALUE,
];
/** Keys that reach an object's prototype when assigned carelessly. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** One of `CONTROL_CHARS`, `placed` alone or within text. */
export const controlString = fc.tuple(fc.constantFrom(...CONTROL_CHARS), fc.nat(3)).map(([c, i]) => placed(c, i));
/** A nasty string for bodies: `NASTY_STRINGS`, control characters, 100 KB, random binary-range text. */
export const nastyString = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: controlString },
  { weight: 1, arbitrary: fc.constant(HUGE) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(...NASTY_STRINGS).map((s) => `prefix ${s} suffix`) },
);
/** strings for URLs: no 100 KB (Node's 16 KB header limit answers 431 before the app; see report) */
export const nastyUrlString = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: controlString },
  { weight: 1, arbitrary: fc.constant('y'.repeat(2000)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);
/** A nasty number: `NASTY_NUMBERS`, any integer or any finite double. */
export const nastyNumber = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
/** Any nasty JSON value: strings, numbers, booleans, null, empty or small arrays and objects (prototype keys included). */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom(...PROTO_KEYS, 'a', ...NASTY_STRINGS.slice(0, 10)), nastyString, { maxKeys: 3 }),
);

/** Percent-encodes any string (lone surrogates become U+FFFD as UTF-8 would, never a URIError). */
export function enc(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'))
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

// ------------------------------------------------------------------------------------ schema → arbitrary

/** A valid value of a (resolved) JSON schema. `hints` override named properties. */
export function validOf(schema: Schema, hints: Record<string, fc.Arbitrary<unknown>>, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(schema);
  if (s.allOf) return validOf(s.allOf[0] as Schema, hints, depth);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  const arbs = typesOf(s).map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: Math.max(s.minimum ?? -1000, -(2 ** 31)), max: Math.min(s.maximum ?? 1000, 2 ** 31 - 1) });
      case 'number':
        return fc.double({ min: -1e6, max: 1e6, noNaN: true });
      case 'array': {
        const items = s.items ? validOf(s.items as Schema, hints, depth + 1) : fc.string();
        return fc.array(items, { minLength: s.minItems ?? 0, maxLength: Math.max(s.minItems ?? 0, 3) });
      }
      case 'object': {
        const props = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set((s.required ?? []) as string[]);
        const rec: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [k, v] of Object.entries(props)) {
          if (deref(v).readOnly) continue;
          rec[k] = hints[k] ?? validOf(v, hints, depth + 1);
        }
        const base = fc.record(rec, { requiredKeys: Object.keys(rec).filter((k) => required.has(k)) });
        const ap = s.additionalProperties;
        if (ap && typeof ap === 'object' && s.propertyNames?.pattern === '^[0-9]+$') {
          return fc.dictionary(fc.integer({ min: 1, max: 50 }).map(String), validOf(ap as Schema, hints, depth + 1), { maxKeys: 4 });
        }
        if (ap === true && Object.keys(props).length === 0) {
          return fc.dictionary(fc.string({ maxLength: 8 }), depth > 3 ? fc.string() : fc.oneof(fc.string(), fc.integer(), fc.boolean()), {
            maxKeys: 3,
          });
        }
        return base;
      }
      default: {
        const max = s.maxLength ?? 30;
        return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(max, 30) });
      }
    }
  });
  return arbs.length === 1 ? (arbs[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbs);
}

/** A value of the wrong type for a schema. */
export function wrongTypeOf(schema: Schema): fc.Arbitrary<unknown> {
  const types = typesOf(deref(schema));
  const pool: fc.Arbitrary<unknown>[] = [];
  if (!types.includes('string')) pool.push(nastyString);
  if (!types.includes('integer') && !types.includes('number')) pool.push(nastyNumber);
  if (!types.includes('boolean')) pool.push(fc.boolean());
  if (!types.includes('null')) pool.push(fc.constant(null));
  if (!types.includes('object'))
    pool.push(
      fc.constant(JSON.parse('{"__proto__":{"polluted":true}}') as unknown),
      fc.dictionary(fc.constantFrom(...PROTO_KEYS), anyJson, { maxKeys: 2 }),
    );
  if (!types.includes('array')) pool.push(fc.array(anyJson, { maxLength: 3 }));
  return fc.oneof(...pool);
}

type Json = unknown;

/** Mutates one place of a JSON value (walks into objects/arrays). */
export function mutate(value: Json, schema: Schema | undefined): fc.Arbitrary<Json> {
  const s = schema ? deref(schema) : undefined;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, Json>;
    const keys = Object.keys(obj);
    const props = (s?.properties ?? {}) as Record<string, Schema>;
    const options: fc.Arbitrary<Json>[] = [
      // extra field, incl. prototype keys (JSON.parse makes __proto__ an own key)
      fc.tuple(fc.constantFrom(...PROTO_KEYS, 'extra_field', 'id', 'team_id', ...NASTY_STRINGS.slice(0, 8)), anyJson).map(([k, v]) => {
        const copy: Record<string, Json> = { ...obj };
        Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true });
        return copy;
      }),
      // a wrong type as the whole body
      wrongTypeOf(s ?? {}),
    ];
    if (keys.length) {
      options.push(
        // missing field
        fc.constantFrom(...keys).map((k) => {
          const copy = { ...obj };
          delete copy[k];
          return copy;
        }),
        // a field mutated (recursively) or replaced by a nasty value
        fc
          .constantFrom(...keys)
          .chain((k) =>
            fc.oneof(mutate(obj[k], props[k]), wrongTypeOf(props[k] ?? {}), nastyString, nastyNumber).map((v) => ({ ...obj, [k]: v })),
          ),
      );
    }
    return fc.oneof(...options);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return fc.oneof(fc.array(anyJson, { maxLength: 3 }), wrongTypeOf(s ?? {}));
    return fc.nat({ max: value.length - 1 }).chain((i) =>
      mutate(value[i], s?.items as Schema | undefined).map((v) => {
        const copy = [...value];
        copy[i] = v;
        return copy;
      }),
    );
  }
  if (typeof value === 'string') return fc.oneof(nastyString, wrongTypeOf(s ?? { type: 'string' }));
  if (typeof value === 'number') return fc.oneof(nastyNumber, wrongTypeOf(s ?? { type: 'integer' }));
  return fc.oneof(anyJson, wrongTypeOf(s ?? {}));
}
