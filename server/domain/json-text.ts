/**
 * A JSON response body that is already serialized: `JsonText<T>` holds the text of a value of type
 * `T`, so a handler may answer it wherever it may answer a `T` (see `Reply` in ../http/handler-types.ts) and the
 * type checker still ties it to the contract. `createApp` sends the text as it is when response
 * validation is off (production), and parses it back and sends it through `res.json` when it is on
 * (tests and development), so the response validator checks exactly these bytes' meaning.
 *
 * Used where building the object only to serialize it again is most of the work: the events list,
 * whose stored `properties` are already JSON text (docs/performance.md).
 */
export class JsonText<T> {
  /** phantom: the type of the value the text encodes */
  declare readonly __type?: T;

  /**
   * `text` must be a JSON document encoding a `T`, as a string or as its UTF-8 bytes (sent as
   * they are); it is not checked here.
   */
  constructor(readonly text: string | Buffer) {}

  /** The document as a string (decoded from UTF-8 when held as bytes). */
  toString(): string {
    return typeof this.text === 'string' ? this.text : this.text.toString('utf8');
  }
}

/**
 * Builds one UTF-8 buffer from many strings, each encoded straight into the buffer.
 *
 * Why not `Buffer.from(parts.join(''))`: when any part holds a character outside Latin-1 (one
 * accented name or emoji in a page of events), V8 makes the joined string two-byte, and joining
 * then encoding a page-sized two-byte string costs many times more than writing the parts one by
 * one into a buffer (docs/performance.md, events list). The buffer starts at the parts'
 * total length in UTF-16 units plus `slack` bytes and doubles when a part may not fit; `bytes()`
 * returns a view of the written part (no copy).
 */
export class Utf8Builder {
  private buf: Buffer;
  private used = 0;

  /** `expectedChars`: about how many UTF-16 units will be pushed (a hint; growth is automatic). */
  constructor(expectedChars: number, slack = 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(64, expectedChars + slack));
  }

  /**
   * Appends `s` encoded as UTF-8. Each part is encoded on its own: a surrogate pair split across two
   * parts becomes two U+FFFD (as `Buffer.from` does for lone surrogates), so never split one.
   */
  push(s: string): this {
    // a UTF-16 unit takes at most 3 bytes; only when that bound does not fit is the exact length computed
    if (this.buf.length - this.used < s.length * 3) {
      const need = this.used + Buffer.byteLength(s, 'utf8');
      if (need > this.buf.length) {
        const grown = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
        this.buf.copy(grown, 0, 0, this.used);
        this.buf = grown;
      }
    }
    this.used += this.buf.write(s, this.used, 'utf8');
    return this;
  }

  /** The bytes written so far (a view of the internal buffer: push nothing after taking it). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.used);
  }
}
