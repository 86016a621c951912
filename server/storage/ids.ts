/**
 * Time-ordered UUIDs (version 7 layout: 48-bit Unix ms, then a 12-bit sequence within the same ms,
 * then random bits), monotonic within this process — like PostHog's UUIDT, so rows ordered by id
 * are ordered by creation.
 */
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/** A new time-ordered UUID string, e.g. `01932c8e-7f3a-7000-8f1e-3b2a9c4d5e6f`. */
export function uuid7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    seq += 1;
    if (seq > 0xfff) {
      lastMs += 1;
      seq = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    seq = 0;
  }
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = 0x80 | ((b[8] ?? 0) & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
