/**
 * The contract's check of a query kept in the store (an insight's `query`, a dashboard template
 * tile's), before it runs: the same JSON schema the request validator applies to `/query/`'s body
 * (`InsightQueryNode`, openapi.yaml, read from generated/openapi.json), with ajv's discriminator,
 * so that a stored query runs only when `/query/` would accept it, and fails with the same 400.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { ApiError, schemaProblemBody } from './errors.js';

let validator: ValidateFunction | undefined;

/** generated/openapi.json, found from this module upwards (the source tree, or dist/ beside it). */
function contractDocument(): unknown {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'generated', 'openapi.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { document: unknown }).document;
    if (path.dirname(dir) === dir) throw new Error('generated/openapi.json not found: run `npm run gen`');
  }
}

function compiled(): ValidateFunction {
  if (validator) return validator;
  const ajv = new Ajv({ strict: false, discriminator: true, allErrors: false, validateFormats: false });
  ajv.addSchema(contractDocument() as object, 'contract');
  const found = ajv.getSchema('contract#/components/schemas/InsightQueryNode');
  if (!found) throw new Error('the contract has no InsightQueryNode schema');
  validator = found;
  return validator;
}

/**
 * Throws the 400 `/query/` would answer for `query` (attr under `attr`, e.g. `query__source__series`;
 * "Unsupported query kind: X" for a kind it does not run), or returns when it is runnable.
 */
export function assertRunnableQuery(query: unknown, attr = 'query'): void {
  const validate = compiled();
  if (validate(query)) return;
  const e = validate.errors?.[0];
  const item = {
    path: `/body/${attr}${e?.instancePath ?? ''}`,
    message: e?.message ?? 'is invalid',
    errorCode: `${e?.keyword ?? 'type'}.openapi.validation`,
  };
  throw new ApiError(400, schemaProblemBody(item, { body: { [attr]: query } }));
}
