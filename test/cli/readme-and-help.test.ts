/**
 * What the docs promise of the `envapi` command (`node bin/envapi.js`, test/helpers/cli.ts): every
 * `npx envapi …` line of README.md, in order, exits 0 on a fresh store; the help of every command
 * and subcommand exits 0 and prints its usage; bad usage (an unknown command or option, a missing
 * option or argument, a bad value) exits 2 with the error and one line of usage, not the help.
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

  it(
    'each exits 0 (after npm start’s set-up, `envapi bootstrap`; <id> is the key just created, FILE the example, demo events 2,000 instead of 100,000)',
    async () => {
      const lines = readmeLines();
      expect(lines.length).toBeGreaterThanOrEqual(8);
      const store = await newStore();
      await ok(['bootstrap'], store);
      let lastKeyId = '';
      for (const line of lines) {
        // `<id>` is the id of the key a line before created: the README must create one first
        if (words(line).includes('<id>')) expect(lastKeyId, `npx envapi ${line}: no key created before it`).not.toBe('');
        const args = words(line).map((w) => (w === '<id>' ? lastKeyId : w === 'FILE' ? EXAMPLE : w === '100000' ? '2000' : w));
        const r = await cli(args, store);
        expect(r.code, `npx envapi ${line}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
        lastKeyId = /Personal API key (\S+) created/.exec(r.stdout)?.[1] ?? lastKeyId;
      }
    },
    4 * T,
  );
});

describe('envapi --help', () => {
  /** Subcommand names listed under "Commands:" in a commander help text (without `help`). */
  function commandsIn(help: string): string[] {
    const section = help.split(/^Commands:\s*$/m)[1] ?? '';
    return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
  }

  it(
    'the help of every command exits 0 and prints Usage',
    async () => {
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
      const expected = [
        '',
        'serve',
        'migrate',
        'bootstrap',
        'build',
        'orgs list',
        'orgs create',
        'orgs add-member',
        'projects create',
        'projects list',
      ];
      expected.push(
        'users create',
        'users list',
        'keys create',
        'keys list',
        'keys revoke',
        'plugins catalog',
        'plugins install',
        'import events',
        'demo',
      );
      expect(seen).toEqual(expect.arrayContaining(expected));
    },
    4 * T,
  );

  it(
    'an unknown command exits 2 with the error and one line of usage, not the whole help',
    async () => {
      const r = await cli(['no-such-command']);
      expect(r.code).toBe(2);
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        "error: unknown command 'no-such-command'",
        'Usage: envapi [options] [command]',
        "Run 'envapi --help' for its commands and options.",
      ]);
      expect(r.stdout).toBe('');
    },
    T,
  );
});

describe('bad usage of a subcommand', () => {
  /** Args, the error line commander prints, and the command whose usage follows. */
  const cases: Array<[string, string[], RegExp, string]> = [
    [
      'a missing required option',
      ['keys', 'create', '--scopes', 'plugin:read'],
      /^error: required option '--user <email-or-id>' not specified$/,
      'envapi keys create',
    ],
    [
      'an unknown option',
      ['keys', 'create', '--user', 'ana@example.com', '--scopes', 'plugin:read', '--bogus'],
      /^error: unknown option '--bogus'$/,
      'envapi keys create',
    ],
    ['a missing argument', ['keys', 'revoke'], /^error: missing required argument 'id'$/, 'envapi keys revoke'],
    [
      'a bad option value',
      ['orgs', 'add-member', '--user', 'ana@example.com', '--level', 'boss'],
      /^error: option '--level <level>' argument 'boss' is invalid\. Use member, admin or owner/,
      'envapi orgs add-member',
    ],
    ['an unknown subcommand', ['keys', 'no-such-command'], /^error: unknown command 'no-such-command'$/, 'envapi keys'],
    [
      'an action’s own check (demo with neither --project nor --output)',
      ['demo', '--events', '5'],
      /^error: name the project to import into \(--project ID\), or a file to write \(--output FILE\)$/,
      'envapi demo',
    ],
  ];
  it.each(cases)(
    '%s exits 2, printing the error, the usage line and where the help is (no help text)',
    async (_what, args, error, command) => {
      const store = await newStore();
      const r = await cli(args, store);
      const what = `envapi ${args.join(' ')}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      expect(r.code, what).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines[0], what).toMatch(error);
      expect(lines.slice(-2), what).toEqual([
        expect.stringMatching(new RegExp(`^Usage: ${command} \\[options\\]`)),
        expect.stringMatching(new RegExp(`^Run '${command} --help' for `)),
      ]);
      expect(lines.length, what).toBeLessThanOrEqual(4);
      expect(r.stderr, what).not.toMatch(/^Options:/m);
      expect(r.stdout, what).toBe('');
    },
    T,
  );
});
