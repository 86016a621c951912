/**
 * What the README and the documents promise of themselves: every relative link of README.md,
 * client/README.md and docs/*.md names a file or folder that exists, every `#anchor` link of the
 * README names one of its headings, and the README holds no measurement (durations, rates, sizes:
 * those belong to docs/performance.md, where a benchmark under scripts/ produced them) and no
 * issue number, and it states package.json's `engines` as they are. Plain text checks; no server,
 * no store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** The text outside fenced code blocks. */
const prose = (text: string) => text.replace(/```[\s\S]*?```/g, '');

const DOCS = [
  'README.md',
  'client/README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The targets of the Markdown links `[text](target)` of `text`, outside code blocks. */
function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('links of the README and docs/', () => {
  it.each(DOCS)('every relative link of %s names a file that exists', (file) => {
    const missing = links(read(file))
      .filter((l) => !/^[a-z][a-z+.-]*:/i.test(l) && !l.startsWith('#'))
      .filter((l) => !fs.existsSync(path.join(ROOT, path.dirname(file), decodeURIComponent(l.split('#')[0]!))));
    expect(missing).toEqual([]);
  });

  it("every #anchor link of README.md names one of the README's headings", () => {
    const readme = read('README.md');
    const anchors = new Set([...prose(readme).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.trim())));
    const anchorLinks = links(readme).filter((l) => l.startsWith('#'));
    expect(anchorLinks.length).toBeGreaterThan(0);
    expect(anchorLinks.filter((l) => !anchors.has(l.slice(1)))).toEqual([]);
  });

  it('README.md links the CHANGELOG, the LICENSE and docs/', () => {
    const targets = links(read('README.md'));
    expect(targets).toEqual(expect.arrayContaining(['CHANGELOG.md', 'LICENSE']));
    expect(targets.some((l) => l.startsWith('docs/'))).toBe(true);
  });
});

describe('README.md', () => {
  it('holds no measurement: no duration, rate or size (figures live in docs/performance.md)', () => {
    const text = read('README.md');
    const figures = [...text.matchAll(/~?\b\d[\d,.]*\s?(?:ms|s|sec|seconds?|minutes?|µs|req\/s|events\/s|[KMG]i?B)\b/g)].map((m) => m[0]);
    expect(figures).toEqual([]);
  });

  it("states package.json's Node.js lines (engines) as they are", () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(read('README.md')).toContain(`\`${engines}\``);
  });

  it('names no issue number', () => {
    expect(read('README.md')).not.toMatch(/\bissues? #?\d+|\(#\d+\)/i);
  });
});
