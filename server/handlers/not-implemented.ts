/**
 * The one explicit placeholder: operations of the contract that later issues implement (dashboards:
 * issue 5, events: issue 3, explicit members: issue 4) answer 501 `not_implemented`, which the spec
 * declares on exactly those operations. Each issue replaces its entries in `handlers/index.ts`.
 */
import { notImplemented as notImplementedError } from '../http/errors.js';

/** Answers 501 `{"type":"server_error","code":"not_implemented",…}` for any operation. */
export async function notImplemented(): Promise<never> {
  throw notImplementedError();
}
