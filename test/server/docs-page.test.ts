/**
 * `GET /docs` in a real browser: headless Chromium (Debian's `chromium`, driven by
 * `playwright-core`, as test/client/posthog-js.test.ts drives it) opens the test server's `/`,
 * which leads a browser to `/docs` (the Redoc page built by `npm run gen` from openapi.yaml,
 * server/http/docs.ts). Checked: every operation the page lists (the contract's, the capture
 * endpoints' included, but each `/api/environments/{project_id}/…` operation only as its
 * `/api/projects/{project_id}/…` twin: scripts/gen-docs-html.mjs) is rendered under its
 * operationId (Redoc 3's anchor `<tag>/<operationId>`, holding the operation's path and, for a
 * twin, the alias's path); each tag's sidebar lists exactly its operations, once each, under
 * summaries that are unique within the tag; the page asks nothing of any host but the test server
 * (every request is recorded, and any request to another origin is aborted so the machine never
 * reaches the network; DNS outside 127.0.0.1 is disabled too); no console error, no uncaught page
 * error.
 *
 * Skipped, saying so in its name, when there is no Chromium binary (`CHROMIUM_PATH`, default
 * /usr/bin/chromium); `.ci/run` installs it. Waits are polls with generous timeouts, no duration
 * is assumed.
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listCaptureOperations } from '../../server/http/spec.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { reportSkip } from '../helpers/skips.js';
import { environmentsTwin, operations, projectsCopies, spec } from '../helpers/spec.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAS_CHROMIUM)
  reportSkip('test/server/docs-page.test.ts', `no Chromium at ${CHROMIUM}`, 'apt-get install chromium (or set CHROMIUM_PATH)');
/** Generous: a loaded 2-core machine runs Chromium, the server and other suites at once. */
const WAIT = { timeout: 90_000, interval: 250 };
const TEST_TIMEOUT = 180_000;

/** Every operation of the contract (the capture endpoints' included), with its (first) tag. */
const ALL_OPERATIONS = [...operations, ...listCaptureOperations(spec)].map((o) => ({
  ...o,
  tag: ((spec.paths[o.path] as Record<string, { tags?: string[] }>)[o.method]?.tags ?? [])[0] ?? '',
}));
/** The environments operations the page shows only as their projects twin, by the twin's operationId. */
const ALIASES = new Map(projectsCopies.map((o) => [o.operationId, environmentsTwin(o)!]));
const ALIASED = new Set([...ALIASES.values()].map((o) => o.operationId));
/** What the page lists: every operation but the aliased environments ones. */
const LISTED = ALL_OPERATIONS.filter((o) => !ALIASED.has(o.operationId));
/** The tags, in the spec's order. */
const TAGS = (spec.tags as Array<{ name: string }>).map((t) => t.name);

describe.skipIf(!HAS_CHROMIUM)(
  `GET /docs in headless Chromium${HAS_CHROMIUM ? '' : ` (skipped: no Chromium at ${CHROMIUM}; install Debian's chromium package, as .ci/run does)`}`,
  () => {
    let t: TestServer;
    let browser: Browser;
    let page: Page;
    const requested: string[] = [];
    const blocked: string[] = [];
    const problems: string[] = [];

    beforeAll(async () => {
      t = await startTestServer();
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
      });
      page = await browser.newPage();
      const origin = new URL(t.url).origin;
      await page.route('**/*', (route) => {
        const url = route.request().url();
        requested.push(url);
        const u = new URL(url);
        // data: and blob: URLs never leave the browser; anything else must be the test server
        if (u.protocol === 'data:' || u.protocol === 'blob:' || u.origin === origin) return route.continue();
        blocked.push(url);
        return route.abort();
      });
      page.on('console', (msg) => {
        if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
      });
      page.on('pageerror', (err) => problems.push(`uncaught: ${err.message}`));
    }, TEST_TIMEOUT);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    it(
      "opened at /, leads to /docs and renders every listed operation under its operationId, each once in its tag's sidebar, loading nothing from another host",
      async () => {
        const res = await page.goto(`${t.url}/`, { waitUntil: 'load', timeout: WAIT.timeout });
        expect(res?.status()).toBe(200);
        expect(res?.url()).toBe(`${t.url}/docs`);
        expect(res?.headers()['content-type']).toMatch(/^text\/html/);
        await vi.waitFor(
          async () => expect(await page.evaluate<string>('document.body.innerText')).toContain('envapi — PostHog environment API'),
          WAIT,
        );
        // Redoc 3 renders one tag's page at a time and only what is on screen: each operation is
        // reached by its own route (`#/<tag>/<operationId>`), where it must be rendered with its path
        for (const op of LISTED) {
          const anchor = `${op.tag}/${op.operationId}`;
          await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${anchor}`)}`);
          await vi.waitFor(async () => {
            const text = await page.evaluate<string | null>(`document.getElementById(${JSON.stringify(anchor)})?.innerText ?? null`);
            expect(text, `${anchor} is rendered`).not.toBeNull();
            expect(text).toContain(op.path);
            // a projects twin names its alias under /api/environments/
            const alias = ALIASES.get(op.operationId);
            if (alias) expect(text, `${anchor} names its alias`).toContain(alias.path);
          }, WAIT);
        }
        // a tag's page expands its group of the sidebar: exactly the tag's listed operations, each
        // once, and no two under the same label
        for (const tag of TAGS) {
          const expected = LISTED.filter((o) => o.tag === tag).map((o) => `#/${tag}/${o.operationId}`);
          await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${tag}`)}`);
          await vi.waitFor(async () => {
            const items = await page.evaluate<Array<{ href: string; label: string }>>(
              `[...document.querySelectorAll('[data-component-name="Menu/MenuItem"].menu-item-type-operation > a[href^=${JSON.stringify(`#/${tag}/`)}]')]` +
                `.map((a) => ({ href: a.getAttribute('href'), label: a.querySelector('[data-testid="menu-item-label"] [data-text]')?.getAttribute('data-text') ?? '' }))`,
            );
            expect(items.map((i) => i.href).sort(), `the sidebar of ${tag}`).toEqual([...expected].sort());
            const labels = items.map((i) => i.label);
            expect(
              labels.every((l) => l !== ''),
              `labels of ${tag}`,
            ).toBe(true);
            expect(new Set(labels).size, `labels of ${tag}: ${labels.join(' | ')}`).toBe(labels.length);
          }, WAIT);
        }
        expect(LISTED.length).toBeGreaterThan(45);
        expect(ALIASED.size).toBeGreaterThan(20);
        expect(blocked, 'requests to another host').toEqual([]);
        for (const url of requested)
          expect(url.startsWith(`${t.url}/`) || url.startsWith('data:') || url.startsWith('blob:'), url).toBe(true);
        expect(problems).toEqual([]);
      },
      TEST_TIMEOUT,
    );
  },
);
