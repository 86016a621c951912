/**
 * From the bytes of a capture request to its JSON value, as PostHog's capture service reads them
 * (rust/capture/src/payload/common.rs, payload/decompression.rs, utils.rs; research notes §1c):
 *
 * 1. The payload is the query's `data=` when non-empty (GET or POST), else the body; neither →
 *    400 `request missing data payload`.
 * 2. `Content-Type: application/x-www-form-urlencoded`: the body is a form `data=…&compression=…`
 *    (older posthog-js); a `data` that looks like base64 gets back the `+` that URL-decoding turned
 *    into spaces.
 * 3. A payload that is not a form and looks like base64 (its first 128 characters in
 *    `[A-Za-z0-9+/=]`, length a multiple of 4) is base64-decoded (standard alphabet; a failed
 *    decode keeps the bytes as they are).
 * 4. Compression hint: the query's `compression`, else the form's, else `Content-Encoding`:
 *    `gzip` / `gzip-js` → gzip, `base64` / `b64` → nothing more (step 3 did it). The bytes are
 *    gunzipped when the hint says gzip OR they start with gzip's magic `1f 8b` (posthog-js sends
 *    gzip with `Content-Type: text/plain` and no hint at all). `lz64` / `lz-string` (older
 *    posthog-js): the payload's text (not base64-decoded first) is lz-string's `decompressFromBase64`
 *    (the `lz-string` package: PostHog's capture decodes the same algorithm); text it cannot
 *    decompress answers 400 `failed to decode request: invalid lz-string data`.
 * 5. The result must be UTF-8; on the legacy paths (`/e/`, `/capture/`, `/track/`) text that is
 *    still base64 is decoded once more; then JSON.
 * The decompressed size is capped at the route's limit (413).
 */
import { gunzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { CaptureError } from './errors.js';

/** What the request carried besides its body. */
export interface PayloadSource {
  /** the raw query string (without `?`) */
  query: URLSearchParams;
  /** the request body (empty when none) */
  body: Buffer;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** a legacy path (`/e`, `/capture`, `/track`): base64 inside base64 is decoded */
  legacyPath: boolean;
  /** the route's payload limit, bytes */
  limit: number;
}

const BASE64_CHARS = /^[A-Za-z0-9+/=]*$/;
const BASE64_WITH_SPACES = /^[A-Za-z0-9+/= ]*$/;
const FORM_KEYS = /(^|&)(data|_|ip|compression)=/;

/** True when `text` looks like base64 (PostHog's sniff: first 128 characters, length % 4). */
function looksLikeBase64(text: string, allowSpaces = false): boolean {
  if (text.length === 0 || text.length % 4 !== 0) return false;
  return (allowSpaces ? BASE64_WITH_SPACES : BASE64_CHARS).test(text.slice(0, 128));
}

/** Strict standard base64 (padding required), or undefined when `text` is not. */
function strictBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The payload's text (see the module doc); throws `CaptureError` (400, 413). */
export function decodePayload(src: PayloadSource): string {
  const queryData = src.query.get('data');
  let bytes: Buffer;
  let formCompression: string | undefined;
  let fromForm = false;
  if (queryData) {
    bytes = Buffer.from(looksLikeBase64(queryData, true) ? queryData.replace(/ /g, '+') : queryData, 'utf8');
    fromForm = true;
  } else if (src.body.length === 0) {
    throw new CaptureError(400, 'request missing data payload');
  } else if (src.contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    const text = src.body.toString('latin1');
    if (!FORM_KEYS.test(text.slice(0, 128))) throw new CaptureError(400, 'expected form data in POST request payload');
    const form = new URLSearchParams(text);
    const data = form.get('data');
    if (!data) throw new CaptureError(400, 'request missing data payload');
    formCompression = form.get('compression') ?? undefined;
    bytes = Buffer.from(looksLikeBase64(data, true) ? data.replace(/ /g, '+') : data, 'utf8');
    fromForm = true;
  } else {
    bytes = src.body;
  }
  const hint = (src.query.get('compression') || formCompression || src.contentEncoding || '').trim().toLowerCase();
  if (hint === 'lz64' || hint === 'lz-string') return lzDecompress(bytes, src.limit);
  // optimistic base64 of a payload that is not a form and looks like base64
  const head = bytes.subarray(0, 128).toString('latin1');
  if (fromForm || !FORM_KEYS.test(head)) {
    const asText = bytes.length % 4 === 0 && BASE64_CHARS.test(head) ? bytes.toString('latin1') : undefined;
    const decoded = asText ? strictBase64(asText) : undefined;
    if (decoded) bytes = decoded;
  }
  if (hint === 'gzip' || hint === 'gzip-js' || (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b))
    bytes = gunzip(bytes, src.limit);
  if (bytes.length > src.limit) throw tooBig(src.limit, bytes.length);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new CaptureError(400, 'invalid UTF8 in request payload');
  }
  if (src.legacyPath && looksLikeBase64(text)) {
    const again = strictBase64(text);
    if (again) {
      try {
        text = utf8.decode(again);
      } catch {
        throw new CaptureError(400, 'invalid UTF8 in request payload');
      }
    }
  }
  return text;
}

/** lz-string's base64 form → text; 400 when it does not decompress, 413 past `limit` bytes of UTF-8. */
function lzDecompress(bytes: Buffer, limit: number): string {
  const text = LZString.decompressFromBase64(bytes.toString('latin1').replace(/ /g, '+'));
  if (!text) throw new CaptureError(400, 'failed to decode request: invalid lz-string data');
  const size = Buffer.byteLength(text);
  if (size > limit) throw tooBig(limit, size);
  return text;
}

function tooBig(limit: number, got: number): CaptureError {
  return new CaptureError(413, `maximum event size exceeded: Decompressed payload would exceed ${limit} bytes (got ${got} bytes)`);
}

function gunzip(bytes: Buffer, limit: number): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: limit + 1 });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooBig(limit, limit + 1);
    throw new CaptureError(400, 'failed to decode request: invalid GZIP data');
  }
}
