/**
 * No import cycles in `server/`: builds the graph of its modules from their static imports and
 * fails naming every cycle it finds (`server/a.ts → server/b.ts → server/a.ts`).
 *
 * What counts as an edge (read with the TypeScript compiler API, `ts.createSourceFile`, so comments
 * and strings that look like imports do not count):
 * - `import … from './x.js'`, `import './x.js'` and `export … from './x.js'`;
 * - type-only imports and exports too (`import type { T } from …`, `import { type T } …`): they
 *   vanish from the emitted JavaScript, so they cannot break module evaluation, but two modules
 *   that name each other's types still cannot be understood, tested or moved one without the
 *   other — the cycle is in the design, not only at run time;
 * - not dynamic `import()` (evaluated later, not part of the static graph; no module breaks a
 *   cycle that way) and not npm packages: only relative specifiers, `.js` read as the `.ts` source
 *   and a folder as its `index.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every `.ts` file under `dir` (project-relative, with `/`), sorted. */
function sourcesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

/** The module specifiers of `text`'s static imports and re-exports (type-only ones included). */
export function staticSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  for (const statement of source.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      out.push(statement.moduleSpecifier.text);
    }
  }
  return out;
}

/**
 * The file a relative specifier of `from` names among `files` (`./x.js` → `x.ts`, `./dir/index.js`,
 * `./dir` → `dir/index.ts`), or undefined for a package or a file outside `files`.
 */
function resolve(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => files.has(c));
}

/** The import graph of `sources` (path → text): each file's imported files among them, sorted. */
export function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const files = new Set(sources.keys());
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const targets = new Set<string>();
    for (const s of staticSpecifiers(file, text)) {
      const target = resolve(file, s, files);
      if (target !== undefined) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The cycles of `graph`: one per strongly connected component with more than one file (or a file
 * importing itself), each written as a shortest path from the component's first file (in sort
 * order) back to it, `a → b → a`. A component with several cycles is named by one of them.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);

  const cycles: string[][] = [];
  for (const component of components) {
    const start = component[0]!;
    const members = new Set(component);
    if (component.length === 1 && !(graph.get(start) ?? []).includes(start)) continue;
    // breadth-first from `start` within the component, back to `start`
    const previous = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (w === start) {
          last = v;
          break;
        }
        if (members.has(w) && !previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    const cycle = [start];
    for (let v = last!; v !== start; v = previous.get(v)!) cycle.splice(1, 0, v);
    cycle.push(start);
    cycles.push(cycle);
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

describe('server/: import cycles', () => {
  it('finds none (static imports and re-exports, type-only ones included)', () => {
    const sources = new Map(sourcesUnder('server').map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')] as const));
    const cycles = findCycles(importGraph(sources)).map((c) => c.join(' → '));
    expect(cycles, `import cycles in server/:\n${cycles.join('\n')}`).toEqual([]);
  });
});

describe('the cycle finder', () => {
  const graphOf = (files: Record<string, string>) => importGraph(new Map(Object.entries(files)));

  it('names a cycle of plain imports, of a re-export and of a type-only import', () => {
    const graph = graphOf({
      'server/a.ts': "import { b } from './b.js';\nexport const a = b;",
      'server/b.ts': "import type { A } from './a.js';\nexport const b = 1;",
      'server/d/x.ts': "export { y } from './y.js';",
      'server/d/y.ts': "import { type X } from './x.js';\nexport const y = 1;",
      'server/e.ts': "import './e.js';",
      'server/f.ts': "import { a } from './a.js';\nimport fs from 'node:fs';",
    });
    expect(findCycles(graph)).toEqual([
      ['server/a.ts', 'server/b.ts', 'server/a.ts'],
      ['server/d/x.ts', 'server/d/y.ts', 'server/d/x.ts'],
      ['server/e.ts', 'server/e.ts'],
    ]);
  });

  it('ignores dynamic imports, comments, strings and packages', () => {
    const graph = graphOf({
      'server/a.ts': "// import { b } from './b.js';\nexport const a = 1;",
      'server/b.ts': "const text = \"import { a } from './a.js'\";\nexport const load = () => import('./a.js');\nimport 'kysely';",
    });
    expect(graph.get('server/a.ts')).toEqual([]);
    expect(graph.get('server/b.ts')).toEqual([]);
    expect(findCycles(graph)).toEqual([]);
  });

  it('resolves a folder to its index.ts and reads a longer cycle in order', () => {
    const graph = graphOf({
      'server/p/index.ts': "export * from '../q.js';",
      'server/q.ts': "import { r } from './r.js';",
      'server/r.ts': "import * as p from './p';\nimport { s } from './s.js';",
      'server/s.ts': 'export const s = 1;',
    });
    expect(findCycles(graph)).toEqual([['server/p/index.ts', 'server/q.ts', 'server/r.ts', 'server/p/index.ts']]);
  });
});
