/**
 * The layers eslint.config.js enforces: each row lints one import from a file of one layer and
 * says whether eslint-plugin-boundaries lets it through. `npm test` also runs `eslint .` on the
 * whole tree; this proves the rules themselves refuse what they must (a rule that allowed
 * everything would pass that run).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** [importing file, what it imports, allowed] */
const CASES: [string, string, boolean][] = [
  ['server/handlers/x.ts', '../domain/dashboards.js', true],
  ['server/handlers/x.ts', '../http/handler-types.js', true],
  ['server/handlers/x.ts', '../storage/db.js', false],
  ['server/handlers/x.ts', '../storage/repositories/dashboards.js', false],
  ['server/domain/x.ts', '../storage/db.js', true],
  ['server/domain/x.ts', '../http/errors.js', false],
  ['server/domain/x.ts', '../handlers/index.js', false],
  ['server/domain/x.ts', '../read-pool/index.js', false],
  ['server/domain/x.ts', '../app.js', false],
  ['server/storage/x.ts', '../domain/errors.js', false],
  ['server/storage/x.ts', '../domain/json-text.js', false],
  ['server/http/x.ts', '../domain/json-text.js', true],
  ['server/http/x.ts', '../domain/errors.js', true],
  ['server/http/x.ts', '../storage/errors.js', true],
  ['server/http/x.ts', '../storage/db.js', false],
  ['server/http/x.ts', '../read-pool/errors.js', true],
  ['server/http/x.ts', '../read-pool/index.js', false],
  ['server/http/x.ts', '../handlers/index.js', false],
  ['server/read-pool/x.ts', '../domain/events.js', true],
  ['server/read-pool/x.ts', '../http/errors.js', false],
  ['client/x.ts', '../generated/api.js', true],
  ['client/x.ts', '../server/domain/errors.js', false],
  ['server/cli/x.ts', '../main.js', true],
  ['server/cli/x.ts', '../http/errors.js', false],
  ['server/x.ts', './http/errors.js', true],
  ['server/x.ts', './capture/index.js', true],
  ['server/capture/x.ts', '../ingest/write-events.js', true],
  ['server/capture/x.ts', '../storage/db.js', true],
  ['server/capture/x.ts', '../http/errors.js', false],
  ['server/capture/x.ts', '../handlers/index.js', false],
  ['server/ingest/x.ts', '../capture/index.js', false],
  ['server/domain/x.ts', '../capture/index.js', false],
  ['server/domain/x.ts', '../hogql/index.js', true],
  ['server/hogql/x.ts', '../domain/errors.js', false],
  ['server/hogql/x.ts', '../domain/query.js', false],
  ['server/hogql/x.ts', '../storage/dialect.js', true],
  ['server/hogql/x.ts', '../storage/timestamps.js', true],
  ['server/capture/x.ts', '../storage/timestamps.js', true],
];

describe('eslint.config.js: layer boundaries', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = new ESLint({ cwd: ROOT });
  });

  it.each(CASES)('%s importing %s: allowed %s', async (file, target, allowed) => {
    const code = `import * as m from '${target}';\nexport const used = m;\n`;
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    const refusals = (result?.messages ?? []).filter((m) => m.ruleId?.startsWith('boundaries/'));
    if (allowed) expect(refusals).toEqual([]);
    else expect(refusals.map((m) => m.ruleId)).toContain('boundaries/dependencies');
  });
});
