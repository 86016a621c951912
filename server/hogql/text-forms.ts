/**
 * Text forms that must come out byte for byte the same on both stores, written once as SQL over a
 * few primitives each dialect supplies (`TextSql`): a Float as `toString` writes it, and a JSON
 * number in PostgreSQL's plain decimal form.
 *
 * - `floatText`: a Float as JavaScript's `String(x)` writes it: the shortest digits that read back
 *   as the same double (the nearest such, ties to even), in fixed notation from 1e-6 to 1e21
 *   (`0.1`, `1440`, `0.00001`, `123456789012345680000`), else `1.5e+300`, `1e-7`. ClickHouse (HogQL's
 *   `toString`) writes the same shortest digits, in the same notation at these magnitudes.
 *   Neither store's own text is used: SQLite's printf is not exact at 17 digits, PostgreSQL's
 *   float8 text writes integers below 2^53 in full (`31108663697760352`, not `...350`). The digits
 *   are computed here with double arithmetic and one parse of text to a double, which both
 *   stores do exactly (IEEE 754, correctly rounded), so both give the same text. From 1e-6 to
 *   1e21 the 17-digit scaling is exact (Dekker's product with an exact power of ten, or integer
 *   arithmetic), so the digits are JavaScript's; beyond, the scaling rounds once or twice and the
 *   17th digit may differ from JavaScript's, alike on both stores.
 * - `plainNumber`: a JSON number literal (`1e-7`, `2.50`, `-3`) as PostgreSQL's `numeric` prints
 *   it (jsonb keeps numbers as numeric): no exponent, the literal's own decimals (`0.0000001`,
 *   `2.50`). SQLite keeps the literal as it was stored, so SQLite rewrites it with this (used by
 *   ./dialect-sqlite.ts only).
 *
 * Values are passed between steps with `TextSql.bind`, which binds each value once (a subquery),
 * so that the SQL grows linearly with the expression, not with how often a step reads a value.
 */
import { sql } from 'kysely';
import type { Sql } from './dialect.js';

/** The primitives a dialect supplies to build the text forms. */
export interface TextSql {
  /** 1-based position of `needle` in `text`, 0 when absent (SQLite `instr`, PostgreSQL `strpos`) */
  instr(text: Sql, needle: string): Sql;
  /** `n` zeros (n ≥ 0, any size) */
  zeros(n: Sql): Sql;
  /** a double constant written in SQL (`1e22`) */
  double(literal: string): Sql;
  /** an integer-valued double as a 64-bit integer */
  int(value: Sql): Sql;
  /** log10 of a positive double (an estimate: the caller corrects it) */
  log10(value: Sql): Sql;
  /** the double that the decimal `digits` (text) × 10^`exp` reads as, compared with `a`: a condition; false when the text reads as more than the largest double */
  readsAs(digits: Sql, exp: Sql, a: Sql): Sql;
  /**
   * `body` over `values`, each value computed once: a subquery whose one row holds them (an
   * aggregate in a value must read a column of the outer query: see `Compiled.unbound`).
   */
  bind(values: Record<string, Sql>, body: (refs: Record<string, Sql>) => Sql): Sql;
}

/** `n` (0–20) zeros, as a constant slice (both stores' `substr`). */
function fewZeros(n: Sql): Sql {
  return sql`substr('00000000000000000000', 1, cast(${n} as integer))`;
}

/** The double nearest 10^k, read from text (exact for 0 ≤ k ≤ 22); k in [-323, 308]. */
function pow10(k: Sql): Sql {
  return sql`cast(${sql`'1e' || cast(${k} as text)`} as double precision)`;
}

/** 10^d as an integer, d in 0–4. */
function intPow10(d: Sql): Sql {
  return sql`(case ${d} when 0 then 1 when 1 then 10 when 2 then 100 when 3 then 1000 else 10000 end)`;
}

/** The high half of Veltkamp's split of a double (its top 26 bits), for Dekker's exact product. */
function splitHigh(t: TextSql, v: Sql): Sql {
  const c = sql`(${t.double('134217729.0')} * ${v})`;
  return sql`(${c} - (${c} - ${v}))`;
}

/**
 * `F` and `frac`: the integer and fractional parts of a × 10^s, where 10^17 ≤ a × 10^s < ~10^18
 * (s = 17 − E; 22 for E = −6). Exact for E in [−6, 20]: Dekker's product with 10^s (exact for
 * s ≤ 22), or, for a ≥ 10^18 (a multiple of 128), integer arithmetic on a / 128. Beyond, one or two
 * rounded multiplications (`frac` 0).
 */
function scaled(t: TextSql, a: Sql, e: Sql, s: Sql, body: (r: Record<string, Sql>) => Sql): Sql {
  const exact = sql`(${e} between -6 and 17)`;
  // 10^s where the product is exact, and the high halves (only there: PostgreSQL refuses a float overflow)
  const p = sql`(case when ${exact} then ${pow10(s)} else ${t.double('0')} end)`;
  const ah = sql`(case when ${exact} then ${splitHigh(t, a)} else ${t.double('0')} end)`;
  return t.bind({ a, s, e, p, ah, ph: splitHigh(t, p) }, ({ a, s, e, p, ah, ph }) => {
    const al = sql`(${a!} - ${ah!})`;
    const pl = sql`(${p!} - ${ph!})`;
    const prod = sql`(${a!} * ${p!})`;
    const err = sql`((((${ah!} * ${ph!}) - ${prod}) + (${ah!} * ${pl})) + (${al} * ${ph!})) + (${al} * ${pl})`;
    // a ≥ 1e18: a / 128 is an exact integer; a / 10^k = (a/128) × 2^(7−k) / 5^k, k = E − 17
    const k = sql`(${e!} - 17)`;
    const a128 = t.int(sql`(${a!} / ${t.double('128')})`);
    const five = sql`(case ${k} when 1 then 5 when 2 then 25 else 125 end)`;
    const two = sql`(case ${k} when 1 then 64 when 2 then 32 else 16 end)`;
    const low = sql`((${a128} % ${five}) * ${two})`;
    // beyond: a × 10^s in one or two rounded steps
    const far = sql`(case
      when ${s!} > 22 + 308 then ((${a!} * ${t.double('1e22')}) * ${t.double('1e22')}) * ${pow10(sql`${s!} - 44`)}
      when ${s!} > 22 then (${a!} * ${t.double('1e22')}) * ${pow10(sql`${s!} - 22`)}
      else ${a!} / ${pow10(sql`-(${s!})`)} end)`;
    return body({
      f: sql`(case when ${e!} between -6 and 17 then ${t.int(prod)} + ${t.int(sql`floor(${err})`)} when ${e!} between 18 and 20 then (${a128} / ${five}) * ${two} + ${low} / ${five} else ${t.int(far)} end)`,
      frac: sql`(case when ${e!} between -6 and 17 then ${err} - floor(${err}) when ${e!} between 18 and 20 then cast(${low} % ${five} as double precision) / ${five} else ${t.double('0')} end)`,
      s: s!,
      a: a!,
    });
  });
}

/** F (L digits, fractional part `frac`) rounded to N significant digits, ties to even. */
function roundTo(f: Sql, frac: Sql, len: Sql, n: number): Sql {
  const d = sql`(${len} - ${n})`;
  const q = sql`(${f} / ${intPow10(d)})`;
  const rem = sql`(${f} % ${intPow10(d)})`;
  const half = sql`(5 * ${intPow10(sql`${d} - 1`)})`;
  return sql`(case
    when ${d} < 0 then ${f} * 10
    when ${d} = 0 then ${f} + (case when ${frac} > 0.5 or (${frac} = 0.5 and ${f} % 2 = 1) then 1 else 0 end)
    else ${q} + (case when ${rem} > ${half} or (${rem} = ${half} and (${frac} > 0 or ${q} % 2 = 1)) then 1 else 0 end) end)`;
}

/**
 * The shortest digits of a nonzero finite double `x` and the decimal exponent of the first:
 * `body({d, e, neg})` (`d` text without trailing zeros, `neg` 1 when x < 0).
 */
function shortestDigits(t: TextSql, x: Sql, body: (r: Record<string, Sql>) => Sql): Sql {
  // E: the largest e with double(10^e) ≤ |x|, from log10's estimate g (within one of it)
  const a = sql`abs(${x})`;
  const g = t.int(sql`floor(${t.log10(a)})`);
  const up = sql`(case when ${g} + 1 > 308 then 0 when ${pow10(sql`${g} + 1`)} <= ${a} then 1 else 0 end)`;
  const down = sql`(case when ${g} < -323 then 0 when ${pow10(g)} > ${a} then 1 else 0 end)`;
  return t.bind({ a, neg: sql`(case when ${x} < 0 then 1 else 0 end)`, e: sql`(${g} + ${up} - ${down})` }, ({ a, neg, e }) => {
    const s = sql`(case when ${e!} = -6 then 22 else 17 - ${e!} end)`;
    return scaled(t, a!, e!, s, ({ f, frac, s, a }) =>
      t.bind({ f: f!, frac: frac!, s: s!, a: a!, neg: neg! }, ({ f, frac, s, a, neg }) => {
        const len = sql`length(cast(${f!} as text))`;
        return t.bind(
          {
            r15: roundTo(f!, frac!, len, 15),
            r16: roundTo(f!, frac!, len, 16),
            r17: roundTo(f!, frac!, len, 17),
            s: s!,
            a: a!,
            neg: neg!,
            len,
          },
          ({ r15, r16, r17, s, a, neg, len }) => {
            const reads = (r: Sql, n: number) => t.readsAs(sql`cast(${r} as text)`, sql`(${len!} - ${n} - ${s!})`, a!);
            return t.bind(
              {
                r: sql`(case when ${reads(r15!, 15)} then ${r15!} when ${reads(r16!, 16)} then ${r16!} else ${r17!} end)`,
                n: sql`(case when ${reads(r15!, 15)} then 15 when ${reads(r16!, 16)} then 16 else 17 end)`,
                len: len!,
                s: s!,
                neg: neg!,
              },
              ({ r, n, len, s, neg }) =>
                body({
                  d: sql`rtrim(cast(${r!} as text), '0')`,
                  e: sql`((${len!} - 1 - ${s!}) + (length(cast(${r!} as text)) - ${n!}))`,
                  neg: neg!,
                }),
            );
          },
        );
      }),
    );
  });
}

/**
 * A nonzero, finite Float `x` (bound: it is read several times) as JavaScript's `String(x)` (see
 * the module doc). An integer below 2^53 is its own shortest form, written at once.
 */
export function floatText(t: TextSql, x: Sql): Sql {
  const whole = sql`(abs(${x}) < ${t.double('9007199254740992')} and floor(${x}) = ${x})`;
  return sql`(case when ${whole} then cast(${t.int(x)} as text) else ${layout(t, x)} end)`;
}

/** `x` laid out from its shortest digits (`floatText` without its integer shortcut). */
function layout(t: TextSql, x: Sql): Sql {
  return shortestDigits(t, x, ({ d, e, neg }) => {
    const k = sql`length(${d!})`;
    // (PostgreSQL's substr takes integer positions, not bigint)
    const n = sql`cast(${e!} + 1 as integer)`;
    const mantissa = sql`(substr(${d!}, 1, 1) || (case when ${k} = 1 then '' else '.' || substr(${d!}, 2) end))`;
    const exponent = sql`('e' || (case when ${n} - 1 > 0 then '+' else '-' end) || cast(abs(${n} - 1) as text))`;
    const body = sql`(case
      when ${k} <= ${n} and ${n} <= 21 then ${d!} || ${fewZeros(sql`${n} - ${k}`)}
      when 0 < ${n} and ${n} <= 21 then substr(${d!}, 1, ${n}) || '.' || substr(${d!}, ${n} + 1)
      when -6 < ${n} and ${n} <= 0 then '0.' || ${fewZeros(sql`-(${n})`)} || ${d!}
      else ${mantissa} || ${exponent} end)`;
    return sql`((case when ${neg!} = 1 then '-' else '' end) || ${body})`;
  });
}

/**
 * A JSON number literal in PostgreSQL's `numeric` text (see the module doc): a literal without an
 * exponent as it is; `M e X` with M's digits moved by X places, keeping `max(0, decimals of M − X)`
 * decimals. Zero is `0`.
 */
export function plainNumber(t: TextSql, literal: Sql): Sql {
  const rewritten = t.bind({ b: sql`ltrim(${literal}, '-')`, neg: sql`(substr(${literal}, 1, 1) = '-')` }, ({ b, neg }) => {
    const at = t.instr(sql`lower(${b!})`, 'e');
    const m = sql`substr(${b!}, 1, ${at} - 1)`;
    return t.bind({ m, ex: sql`cast(substr(${b!}, ${at} + 1) as integer)`, neg: neg! }, ({ m, ex, neg }) => {
      const dot = t.instr(m!, '.');
      const ip = sql`(case when ${dot} > 0 then substr(${m!}, 1, ${dot} - 1) else ${m!} end)`;
      const fp = sql`(case when ${dot} > 0 then substr(${m!}, ${dot} + 1) else '' end)`;
      return t.bind({ ip, fp, ex: ex!, neg: neg! }, ({ ip, fp, ex, neg }) => {
        // the digits without leading zeros (trailing ones count as decimals, as numeric keeps them),
        // and the decimal point after `p` of them
        const digits = sql`ltrim(${ip!} || ${fp!}, '0')`;
        const p = sql`(length(${ip!}) + ${ex!} - (length(${ip!} || ${fp!}) - length(${digits})))`;
        return t.bind({ digits, p, neg: neg! }, ({ digits, p, neg }) => {
          const k = sql`length(${digits!})`;
          const body = sql`(case
            when ${digits!} = '' then '0'
            when ${p!} >= ${k} then ${digits!} || ${t.zeros(sql`${p!} - ${k}`)}
            when ${p!} > 0 then substr(${digits!}, 1, ${p!}) || '.' || substr(${digits!}, ${p!} + 1)
            else '0.' || ${t.zeros(sql`-(${p!})`)} || ${digits!} end)`;
          return sql`((case when ${neg!} and ${digits!} <> '' then '-' else '' end) || ${body})`;
        });
      });
    });
  });
  return sql`(case when ${t.instr(sql`lower(${literal})`, 'e')} = 0 then ${literal} else ${rewritten} end)`;
}
