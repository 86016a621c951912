/**
 * Statements the docs give operators, read from the docs themselves, so that a test runs exactly
 * what an operator would copy (e.g. the rollback statements of docs/deploy.md's migrations).
 */
import fs from 'node:fs';

/**
 * The first ```sql block of docs/deploy.md whose text contains `marker`, without the indentation of
 * the list item that holds it. Throws when no block names `marker`.
 */
export function deploySqlBlock(marker: string): string {
  const doc = fs.readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
  const block = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(marker));
  if (block === undefined) throw new Error(`docs/deploy.md has no sql block naming ${marker}`);
  return block.replace(/^ {2}/gm, '');
}
