/**
 * Seeded randomness of the demo generator: the sfc32 stream (`Rng`), weighted picks, the per-person
 * and per-session seeds of one run (`Seeds`), and UUIDs (v7 from a timestamp, v4) made from seeded
 * draws, so the same seed gives the same rows, uuids included. Nothing here reads the clock or
 * `Math.random`.
 */
import { v4, v7 } from 'uuid';

/** sfc32 seeded through splitmix32 from any number: a small, fast, good 32-bit generator. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = (Math.trunc(seed) ^ Math.trunc(seed / 2 ** 32)) >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4_294_967_296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p` (0–1). */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items` (non-empty), uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Exponentially distributed with the given mean. */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

/** Items with weights, picked in proportion to them. */
export class Weighted<T> {
  private readonly items: T[];
  private readonly cumulative: number[];
  private readonly total: number;

  constructor(entries: readonly (readonly [T, number])[]) {
    this.items = entries.map((e) => e[0]);
    let sum = 0;
    this.cumulative = entries.map((e) => (sum += e[1]));
    this.total = sum;
  }

  /** One item, with probability proportional to its weight. */
  pick(rng: Rng): T {
    const x = rng.next() * this.total;
    let i = 0;
    while (i < this.cumulative.length - 1 && this.cumulative[i]! <= x) i++;
    return this.items[i]!;
  }
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** `n` as 8 lower-case hex digits (its low 32 bits). */
export function hex32(n: number): string {
  return HEX[(n >>> 24) & 255]! + HEX[(n >>> 16) & 255]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!;
}

/** 16 bytes from four draws of the seeded generator: the random part of a UUID. */
export function seededBytes(rng: Rng): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < 16; i += 4) view.setUint32(i, rng.u32());
  return bytes;
}

/**
 * A UUIDv7 (RFC 9562) of Unix milliseconds `ms`, its random bits drawn from the seeded generator
 * (four draws), so that a demo run with one seed repeats its ids. Made by the `uuid` package.
 */
export function uuidv7(rng: Rng, ms: number): string {
  return uuidv7Of(ms, seededBytes(rng));
}

/** A UUIDv7 of Unix milliseconds `ms` (floored) with the random bits `random` (16 bytes, as `seededBytes` draws them). */
export function uuidv7Of(ms: number, random: Uint8Array): string {
  return v7({ msecs: Math.floor(ms), random });
}

/** A random (version 4) UUID from the seeded generator (four draws), made by the `uuid` package. */
export function uuidv4(rng: Rng): string {
  return v4({ random: seededBytes(rng) });
}

/** A 32-bit seed from several integers (FNV-1a steps with a murmur finaliser). */
function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
  }
  return h >>> 0;
}

/** Seeds of one generator run: every person and every session has its own random stream. */
export class Seeds {
  private readonly lo: number;
  private readonly hi: number;
  constructor(seed: number) {
    this.lo = Math.trunc(seed) >>> 0;
    this.hi = Math.floor(Math.trunc(seed) / 2 ** 32) >>> 0;
  }
  /** The stream that makes person `personIndex` (device, country, sessions). */
  person(personIndex: number): Rng {
    return new Rng(mixSeed(this.lo, this.hi, personIndex, 0x7fffffff));
  }
  /** The stream of session `index` (0-based) of person `personIndex`. */
  session(personIndex: number, index: number): Rng {
    return new Rng(mixSeed(this.lo, this.hi, personIndex, index));
  }
  /** The faker seed of person `personIndex` (name and email). */
  faker(personIndex: number): number {
    return mixSeed(this.lo, this.hi, personIndex, 0x6b6b6b6b);
  }
}
