/**
 * A JSON response body that is already serialized: `JsonText<T>` holds the text of a value of type
 * `T`, so a handler may answer it wherever it may answer a `T` (see `Reply` in typed.ts) and the
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

  /** `text` must be a JSON document encoding a `T`; it is not checked here. */
  constructor(readonly text: string) {}
}
