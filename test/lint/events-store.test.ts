/**
 * The events store behind one interface (eslint.config.js, ARCHITECTURE.md "Stores"): outside
 * server/storage/, nothing imports a module of server/storage/events/ but its entry point
 * (index.ts), where the layout of the events rows stays hidden; and the domain builds no SQL (no
 * `sql` of Kysely, no query builder call). Each row lints a few lines as a file of one layer and
 * says whether the rules let it through: `eslint .` on the tree passes only if the tree keeps to
 * them, and these rows prove the rules themselves refuse what they must.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** [file it is linted as, its code, allowed] */
const CASES: [string, string, boolean][] = [
  // the entry point, from every layer that reads or writes events
  ['server/hogql/x.ts', "import type { EventsTable } from '../storage/events/index.js';\nexport type T = EventsTable;", true],
  ['server/domain/x.ts', "import { eventsStore } from '../storage/events/index.js';\nexport const f = eventsStore;", true],
  [
    'server/ingest/x.ts',
    "import { EventsWriteRepository } from '../storage/events/index.js';\nexport const f = EventsWriteRepository;",
    true,
  ],
  ['server/x.ts', "import { keepEventPartitions } from './storage/events/index.js';\nexport const f = keepEventPartitions;", true],
  // a layout module, from outside storage/ (type-only imports too)
  ['server/hogql/x.ts', "import { eventTimeText } from '../storage/events/times.js';\nexport const f = eventTimeText;", false],
  [
    'server/hogql/x.ts',
    "import type { MaterializedColumns } from '../storage/events/materialized.js';\nexport type T = MaterializedColumns;",
    false,
  ],
  ['server/hogql/x.ts', "import { eventUuidLiteral } from '../storage/events/uuids.js';\nexport const f = eventUuidLiteral;", false],
  [
    'server/domain/x.ts',
    "import { loadMaterializedColumns } from '../storage/events/materialized.js';\nexport const f = loadMaterializedColumns;",
    false,
  ],
  [
    'server/domain/x.ts',
    "import { compilePropertyGroup } from '../storage/events/filters.js';\nexport const f = compilePropertyGroup;",
    false,
  ],
  ['server/domain/x.ts', "import type { EventRow } from '../storage/events/store.js';\nexport type T = EventRow;", false],
  [
    'server/cli/x.ts',
    "import { materializeProperty } from '../storage/events/materialized.js';\nexport const f = materializeProperty;",
    false,
  ],
  [
    'server/ingest/x.ts',
    "import { EventsWriteRepository } from '../storage/events/write.js';\nexport const f = EventsWriteRepository;",
    false,
  ],
  // inside storage/, the layout is the store's own
  ['server/storage/repositories/x.ts', "import { eventTimeText } from '../events/times.js';\nexport const f = eventTimeText;", true],
  ['server/storage/events/x.ts', "import { eventTimeText } from './times.js';\nexport const f = eventTimeText;", true],
  // the domain builds no SQL, but may name Kysely's types to pass a transaction through
  ['server/domain/x.ts', "import { sql } from 'kysely';\nexport const q = sql`select 1`;", false],
  ['server/domain/x.ts', "import * as k from 'kysely';\nexport const q = k.sql`select 1`;", false],
  [
    'server/domain/x.ts',
    "import type { Kysely, Transaction } from 'kysely';\nexport type T = [Kysely<unknown>, Transaction<unknown>];",
    true,
  ],
  ['server/domain/x.ts', "export function f(db: { selectFrom(t: string): unknown }) {\n  return db.selectFrom('users');\n}", false],
  ['server/domain/x.ts', "export function f(db: { updateTable(t: string): unknown }) {\n  return db.updateTable('users');\n}", false],
  ['server/domain/x.ts', 'export function f(db: { transaction(): unknown }) {\n  return db.transaction();\n}', true],
  // the repositories and hogql/ do build SQL
  ['server/storage/repositories/x.ts', "import { sql } from 'kysely';\nexport const q = sql`select 1`;", true],
  ['server/hogql/x.ts', "import { sql } from 'kysely';\nexport const q = sql`select 1`;", true],
];

/** The rules this file is about. */
const RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

describe('eslint.config.js: the events store behind one interface', () => {
  let eslint: ESLint;
  beforeAll(() => {
    eslint = new ESLint({ cwd: ROOT });
  });

  it.each(CASES)('%s with %j: allowed %s', async (file, code, allowed) => {
    const [result] = await eslint.lintText(`${code}\n`, { filePath: path.join(ROOT, file) });
    expect((result?.messages ?? []).filter((m) => m.fatal)).toEqual([]);
    const refusals = (result?.messages ?? []).filter((m) => m.ruleId !== null && RULES.has(m.ruleId));
    if (allowed) expect(refusals).toEqual([]);
    else expect(refusals.length).toBeGreaterThan(0);
  });
});
