/**
 * What the docs promise of the `envapi` command (`node bin/envapi.js`, test/helpers/cli.ts): every
 * `npx envapi …` line of README.md, in order, exits 0 on a fresh store; the help of every command
 * and subcommand exits 0 and prints its usage; an unknown command is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { cli, EXAMPLE, newStore, ok, T, useCliProcesses } from '../helpers/cli.js';
import { ROOT } from '../helpers/process.js';

useCliProcesses();

describe('the README’s envapi command lines, in order, on a fresh store', () => {
  /** `npx envapi …` lines of README.md, in order, without their comments. */
  function readmeLines(): string[] {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    return [...readme.matchAll(/^npx envapi (.*)$/gm)].map((m) => m[1]!.replace(/\s+#\s.*$/, '').trim());
  }
  /** Shell words: double-quoted strings or runs of non-blanks. */
  const words = (line: string): string[] => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);

  it('each exits 0 (after npm start’s set-up, `envapi bootstrap`; <id> is the key just created, FILE the example, demo events 2,000 instead of 100,000)', async () => {
    const lines = readmeLines();
    expect(lines.length).toBeGreaterThanOrEqual(8);
    const store = await newStore();
    await ok(['bootstrap'], store);
    let lastKeyId = '';
    for (const line of lines) {
      const args = words(line).map((w) => (w === '<id>' ? lastKeyId : w === 'FILE' ? EXAMPLE : w === '100000' ? '2000' : w));
      const r = await cli(args, store);
      expect(r.code, `npx envapi ${line}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
      lastKeyId = /Personal API key (\S+) created/.exec(r.stdout)?.[1] ?? lastKeyId;
    }
  }, 4 * T);
});

describe('envapi --help', () => {
  /** Subcommand names listed under "Commands:" in a commander help text (without `help`). */
  function commandsIn(help: string): string[] {
    const section = help.split(/^Commands:\s*$/m)[1] ?? '';
    return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
  }

  it('the help of every command exits 0 and prints Usage', async () => {
    const seen: string[] = [];
    const limit = pLimit(2);
    const visit = async (words: string[]): Promise<void> => {
      const r = await limit(() => cli([...words, '--help']));
      const what = `envapi ${[...words, '--help'].join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      expect(r.code, what).toBe(0);
      expect(r.stdout, what).toMatch(/^Usage: envapi/m);
      seen.push(words.join(' '));
      await Promise.all(commandsIn(r.stdout).map((c) => visit([...words, c])));
    };
    await visit([]);
    const expected = ['', 'serve', 'migrate', 'bootstrap', 'build', 'orgs list', 'orgs create', 'orgs add-member', 'projects create', 'projects list'];
    expected.push('users create', 'users list', 'keys create', 'keys list', 'keys revoke', 'plugins catalog', 'plugins install', 'import events', 'demo');
    expect(seen).toEqual(expect.arrayContaining(expected));
  }, 4 * T);

  it('an unknown command exits non-zero', async () => {
    const r = await cli(['no-such-command']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/unknown command/i);
  }, T);
});
