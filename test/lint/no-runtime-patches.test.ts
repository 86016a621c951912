/**
 * No module of `server/` replaces a library's function, constructor or prototype at run time:
 * libraries are used through their documented surfaces, and a fix a library needs is carried as a
 * reviewed patch file instead (patches/README.md). Each rule below is a pattern of such a
 * replacement; a line of `server/` that matches fails here, named with its file and line number.
 * And each patch names the exact version package.json pins and node_modules holds, so an upgrade
 * cannot leave a patch silently unapplied.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** [what it would do, the pattern] */
const RULES: [string, RegExp][] = [
  ["reach into a library's own files (require as seen from inside it)", /createRequire\(createRequire/],
  ["assign to a module object's export (`mod.x = …`)", /\bmod\.[A-Za-z_]+ *= /],
  ['assign to a prototype (`X.prototype.y = …`)', /\.prototype\.[A-Za-z_]+ *= /],
  ["replace an app's request handler (`….handle = …`)", /\)\.handle *= /],
  ["replace Express's `app.handle`", /\bapp\.handle *= /],
];

/** Every `.ts` file under `server/` (project-relative). */
function serverSources(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts')) out.push(child);
    }
  };
  walk('server');
  return out.sort();
}

describe('no runtime replacement of library code in server/', () => {
  const files = serverSources();

  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  for (const [what, pattern] of RULES) {
    it(`no module does: ${what}`, () => {
      const hits: string[] = [];
      for (const file of files) {
        fs.readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
          });
      }
      expect(hits).toEqual([]);
    });
  }
});

describe('patches/', () => {
  const patches = fs.readdirSync(path.join(ROOT, 'patches')).filter((f) => f.endsWith('.patch'));
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
  };

  it('are applied on install (postinstall: patch-package)', () => {
    expect(pkg.scripts.postinstall).toBe('patch-package');
    expect(pkg.dependencies['patch-package']).toMatch(/^\d+\.\d+\.\d+$/);
  });

  for (const file of patches) {
    it(`${file} patches the exact version package.json pins and node_modules holds`, () => {
      const m = /^(.+)\+(\d+\.\d+\.\d+)\.patch$/.exec(file);
      expect(m, file).not.toBeNull();
      const [, name, version] = m!;
      const pkgName = name!.replace('+', '/');
      expect(pkg.dependencies[pkgName]).toBe(version);
      const installed = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', pkgName, 'package.json'), 'utf8')) as {
        version: string;
      };
      expect(installed.version).toBe(version);
    });

    it(`${file} is applied to node_modules (every line it adds is in the installed file)`, () => {
      // `npm install <package>` does not run the project's postinstall, and replaces what it
      // reinstalls: a tree patched once may lose the patch (run `npx patch-package` again)
      const missing: string[] = [];
      for (const section of fs
        .readFileSync(path.join(ROOT, 'patches', file), 'utf8')
        .split(/^diff --git /m)
        .slice(1)) {
        const target = /^\+\+\+ b\/(.+)$/m.exec(section)?.[1];
        if (!target) continue;
        const installed = fs.readFileSync(path.join(ROOT, target), 'utf8');
        for (const line of section.split('\n')) {
          if (!line.startsWith('+') || line.startsWith('+++')) continue;
          const added = line.slice(1).trim();
          if (added.length >= 12 && !installed.includes(added)) missing.push(`${target}: ${added}`);
        }
      }
      expect(missing.slice(0, 5), 'run npx patch-package').toEqual([]);
    });
  }
});
