/**
 * PostHog's browser SDK, `posthog-js` 1.449.2 (devDependency, its `dist/array.full.js` bundle,
 * unchanged), in a real browser: headless Chromium (Debian's `chromium`, driven by `playwright-core`)
 * opens a page served by a second local HTTP server — another port, so the page is cross-origin to
 * envapi and every SDK request goes through CORS as on a real site — and posthog-js sends to the test
 * server. A `$pageview` arrives on load; a click on a link is autocaptured, and the events API gives
 * back its `elements_chain` and `elements` as PostHog's would.
 *
 * What the page asks of envapi, as observed with envapi's start-up answers (sdk-config.ts):
 * `GET /array/<token>/config.js` (the remote config script; the JSON `/array/<token>/config` only if
 * that fails), `POST /e/` (the pageview, sent before the remote config applies) and then
 * `POST /i/v0/e/` (the remote config's endpoint), both gzip with `Content-Type: text/plain` — a
 * CORS-simple request, so no preflight: the browser only checks `Access-Control-Allow-Origin`. No
 * `/flags/` call, as the remote config says `hasFeatureFlags: false`.
 *
 * Options the page sets (test/client/fixtures/posthog-js-page.html), all else posthog-js's defaults
 * (autocapture on, pageview on, the SDK's start-up calls — remote config, flags — on):
 * - `api_host`: the test server's URL (the assets host follows it, so the remote config script
 *   `/array/<token>/config.js` is asked of envapi too);
 * - `persistence: 'memory'`: nothing survives between runs, no cookie or localStorage to clean;
 * - `request_batching: false`: each event is sent when captured instead of on the queue's flush
 *   timer, so the test waits for the server, not for a timer (every wait below is a poll of the
 *   events API or of the page's state, with a generous timeout; no duration is assumed).
 * - `opt_out_useragent_filter: true`: posthog-js drops every event of a browser it takes for a bot,
 *   and a browser driven by Playwright is one (`navigator.webdriver`); the SDK's own warning advises
 *   this option for end-to-end tests. The events then carry `$browser_type: "bot"`.
 *
 * What is checked: the events are stored with posthog-js's own uuid and distinct id (read from the
 * capture requests' bodies and from `posthog.get_distinct_id()`); the chain of the click is exactly
 * the one derived by hand from the page's DOM with posthog-js's rules (research notes §2d and §5:
 * clicked element first, then its ancestors up to `body`; classes sorted; attributes sorted, `"`
 * escaped as `\"`); `elements` is that chain read as PostHog's events API reads it
 * (server/domain/elements-chain.ts: escapes kept, `attr__…` keys in `attributes`). And the page
 * itself: no request to envapi answered >= 400 or failed, no console error, no request anywhere but
 * the two local servers. Autocapture only starts once posthog-js has had an answer to its remote
 * config (a failed answer leaves it off), so the click test waits for `posthog.autocapture.isEnabled`.
 *
 * Skipped, saying so in its name, when there is no Chromium binary (`CHROMIUM_PATH`, default
 * /usr/bin/chromium); `.ci/run` installs it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listEvents, type ListedEvent } from '../capture/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { reportSkip } from '../helpers/skips.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAS_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAS_CHROMIUM)
  reportSkip('test/client/posthog-js.test.ts', `no Chromium at ${CHROMIUM}`, 'apt-get install chromium (or set CHROMIUM_PATH)');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PAGE_HTML = path.join(ROOT, 'test/client/fixtures/posthog-js-page.html');
const POSTHOG_BUNDLE = path.join(ROOT, 'node_modules/posthog-js/dist/array.full.js');
const PAGE_PATH = '/pricing';

/** Generous: a loaded 2-core machine runs Chromium, the server and other suites at once. */
const WAIT = { timeout: 90_000, interval: 250 };
const TEST_TIMEOUT = 180_000;

/** The chain of a click on `#upgrade-pro`, derived by hand from the page's DOM (fixture file). */
const EXPECTED_CHAIN = [
  'a.btn.btn-primary:attr__class="btn-primary btn"attr__data-testid="upgrade"attr__href="/signup?plan=pro"attr__id="upgrade-pro"' +
    'attr__title="Upgrade to \\"Pro\\""attr_id="upgrade-pro"href="/signup?plan=pro"nth-child="3"nth-of-type="1"text="Upgrade to Pro"',
  'div.featured.plan-card:attr__class="featured plan-card"attr__data-plan="pro"nth-child="2"nth-of-type="2"',
  'section.plans:attr__class="plans"attr__data-section="pricing"nth-child="2"nth-of-type="1"',
  'main.page.pricing:attr__class="pricing page"attr__id="content"attr_id="content"nth-child="2"nth-of-type="1"',
  'body:nth-child="2"nth-of-type="1"',
].join(';');

/** That chain as the events API's `elements` (PostHog's ElementSerializer fields). */
const EXPECTED_ELEMENTS = [
  {
    event: null,
    text: 'Upgrade to Pro',
    tag_name: 'a',
    attr_class: ['btn', 'btn-primary'],
    href: '/signup?plan=pro',
    attr_id: 'upgrade-pro',
    nth_child: 3,
    nth_of_type: 1,
    attributes: {
      attr__class: 'btn-primary btn',
      'attr__data-testid': 'upgrade',
      attr__href: '/signup?plan=pro',
      attr__id: 'upgrade-pro',
      // PostHog's reader keeps the chain's escapes
      attr__title: 'Upgrade to \\"Pro\\"',
    },
    order: 0,
  },
  {
    event: null,
    text: null,
    tag_name: 'div',
    attr_class: ['featured', 'plan-card'],
    href: null,
    attr_id: null,
    nth_child: 2,
    nth_of_type: 2,
    attributes: { attr__class: 'featured plan-card', 'attr__data-plan': 'pro' },
    order: 1,
  },
  {
    event: null,
    text: null,
    tag_name: 'section',
    attr_class: ['plans'],
    href: null,
    attr_id: null,
    nth_child: 2,
    nth_of_type: 1,
    attributes: { attr__class: 'plans', 'attr__data-section': 'pricing' },
    order: 2,
  },
  {
    event: null,
    text: null,
    tag_name: 'main',
    attr_class: ['page', 'pricing'],
    href: null,
    attr_id: 'content',
    nth_child: 2,
    nth_of_type: 1,
    attributes: { attr__class: 'pricing page', attr__id: 'content' },
    order: 3,
  },
  {
    event: null,
    text: null,
    tag_name: 'body',
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: 2,
    nth_of_type: 1,
    attributes: {},
    order: 4,
  },
];

/** One request of the page, as it ended. */
interface PageRequest {
  method: string;
  url: string;
  /** the answer's status, or the network error's text */
  outcome: number | string;
  /** the answer's Access-Control-Allow-Origin, if any */
  allowOrigin?: string | undefined;
}

/** An event as posthog-js sent it (read from a capture request's body). */
interface SentEvent {
  event: string;
  uuid: string;
  distinct_id: string;
}

/** The events in a capture request's body, whatever its encoding (research notes §5); [] for other requests. */
function sentEvents(req: Request): SentEvent[] {
  const raw = req.postDataBuffer();
  if (!raw || raw.length === 0) return [];
  let body: unknown;
  try {
    let text: string;
    if (raw[0] === 0x1f && raw[1] === 0x8b) text = gunzipSync(raw).toString('utf8');
    else if ((req.headers()['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      text = Buffer.from(new URLSearchParams(raw.toString('utf8')).get('data') ?? '', 'base64').toString('utf8');
    } else text = raw.toString('utf8');
    body = JSON.parse(text);
  } catch {
    // not an event payload; a capture request the server cannot read fails the last test anyway
    return [];
  }
  const list: unknown[] = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && 'batch' in body && Array.isArray(body.batch)
      ? body.batch
      : [body];
  const events: SentEvent[] = [];
  for (const e of list) {
    if (!e || typeof e !== 'object') continue;
    const { event, uuid, distinct_id, properties } = e as {
      event?: unknown;
      uuid?: unknown;
      distinct_id?: unknown;
      properties?: { distinct_id?: unknown };
    };
    // posthog-js puts the distinct id in the event's properties
    if (typeof event === 'string') events.push({ event, uuid: String(uuid), distinct_id: String(distinct_id ?? properties?.distinct_id) });
  }
  return events;
}

/** The one-line summary of a request for failure messages and the report. */
function describeRequest(r: PageRequest): string {
  return `${r.method} ${r.url} → ${r.outcome}`;
}

/** Serves the page (token and envapi URL filled in) and the posthog-js bundle; 404 for anything else. */
function startPageServer(token: string, apiHost: string): Promise<http.Server> {
  const html = fs
    .readFileSync(PAGE_HTML, 'utf8')
    .replaceAll('__POSTHOG_TOKEN__', JSON.stringify(token))
    .replaceAll('__ENVAPI_URL__', JSON.stringify(apiHost));
  const bundle = fs.readFileSync(POSTHOG_BUNDLE);
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://page.invalid').pathname;
    if (pathname === PAGE_PATH) res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    else if (pathname === '/static/posthog.js') res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(bundle);
    else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let t: TestServer | undefined;
let pageServer: http.Server | undefined;
let browser: Browser | undefined;
let page: Page;
let pageUrl: string;
/** the page's requests that were answered (status) or failed (network error) */
const requests: PageRequest[] = [];
/** the page's requests still under way */
const pending = new Set<Request>();
const sent: SentEvent[] = [];
const consoleErrors: string[] = [];

/** The stored events of one name, once at least one is there (polls the events API with the personal API key). */
async function waitForStored(event: string): Promise<ListedEvent[]> {
  return vi.waitFor(async () => {
    const events = await listEvents(t!, `&event=${encodeURIComponent(event)}`);
    if (events.length === 0) {
      throw new Error(
        `no ${event} stored yet; the page's requests to envapi so far:\n${requests
          .filter((r) => r.url.startsWith(t!.url))
          .map(describeRequest)
          .join('\n')}`,
      );
    }
    return events;
  }, WAIT);
}

describe.skipIf(!HAS_CHROMIUM)(
  `posthog-js 1.449.2 in headless Chromium against the server${HAS_CHROMIUM ? '' : ` (skipped: no Chromium at ${CHROMIUM}; install Debian's chromium package, as .ci/run does)`}`,
  () => {
    beforeAll(async () => {
      t = await startTestServer();
      pageServer = await startPageServer(t.boot.team.api_token, t.url);
      pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}${PAGE_PATH}`;
      // no name resolves: the page can reach nothing but the two servers on 127.0.0.1
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
      });
      page = await browser.newPage();
      page.on('console', (msg) => {
        if (msg.type() === 'error') consoleErrors.push(`${msg.text()} (${msg.location().url})`);
      });
      page.on('pageerror', (err) => consoleErrors.push(`uncaught: ${err.message}`));
      page.on('request', (req) => {
        pending.add(req);
        if (req.url().startsWith(`${t!.url}/`)) sent.push(...sentEvents(req));
      });
      page.on('response', (res) => {
        const req = res.request();
        requests.push({
          method: req.method(),
          url: req.url(),
          outcome: res.status(),
          allowOrigin: res.headers()['access-control-allow-origin'],
        });
      });
      page.on('requestfinished', (req) => pending.delete(req));
      page.on('requestfailed', (req) => {
        pending.delete(req);
        requests.push({ method: req.method(), url: req.url(), outcome: req.failure()?.errorText ?? 'failed' });
      });
      await page.goto(pageUrl, { waitUntil: 'load' });
    }, TEST_TIMEOUT);

    afterAll(async () => {
      await browser?.close();
      await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()));
      await t?.close();
    }, TEST_TIMEOUT);

    it('the page is served from another origin than the API (CORS is exercised)', () => {
      expect(new URL(pageUrl).origin).not.toBe(new URL(t!.url).origin);
    });

    it(
      'on load, a $pageview is stored with the page URL, posthog-js’s uuid and its distinct id',
      async () => {
        const [pageview, ...more] = await waitForStored('$pageview');
        expect(more).toEqual([]);
        const distinctId = (await page.evaluate('posthog.get_distinct_id()')) as string;
        expect(distinctId).toMatch(/\S/);
        expect(pageview!.distinct_id).toBe(distinctId);
        expect(pageview!.properties).toMatchObject({ $current_url: pageUrl, $lib: 'web', $lib_version: '1.449.2', $pathname: PAGE_PATH });
        const sentPageviews = sent.filter((e) => e.event === '$pageview');
        expect(sentPageviews).toHaveLength(1);
        expect(pageview!.id).toBe(sentPageviews[0]!.uuid);
        expect(sentPageviews[0]!.distinct_id).toBe(distinctId);
      },
      TEST_TIMEOUT,
    );

    it(
      'a click on the link is autocaptured: elements_chain and elements read back as the page’s DOM gives them',
      async () => {
        // autocapture starts once posthog-js has the remote config's answer (a failed one leaves it off)
        await vi.waitFor(async () => {
          if ((await page.evaluate('posthog.autocapture?.isEnabled === true')) !== true) {
            const config = requests.filter((r) => r.url.startsWith(`${t!.url}/array/`)).map(describeRequest);
            throw new Error(
              `posthog-js's autocapture is not enabled (it waits for a successful remote config answer); its remote config requests: ${config.join('; ') || 'none yet'}`,
            );
          }
        }, WAIT);
        await page.click('#upgrade-pro');

        const [click, ...more] = await waitForStored('$autocapture');
        expect(more).toEqual([]);
        expect(click!.elements_chain).toBe(EXPECTED_CHAIN);
        expect(click!.elements).toEqual(EXPECTED_ELEMENTS);
        expect(click!.properties).toMatchObject({ $event_type: 'click', $el_text: 'Upgrade to Pro', $current_url: pageUrl, $lib: 'web' });
        // the chain lives in the event's column, not in its properties (PostHog's getElementsChain)
        expect(click!.properties).not.toHaveProperty('$elements_chain');
        expect(click!.properties).not.toHaveProperty('$elements');

        const distinctId = (await page.evaluate('posthog.get_distinct_id()')) as string;
        expect(click!.distinct_id).toBe(distinctId);
        const sentClicks = sent.filter((e) => e.event === '$autocapture');
        expect(sentClicks).toHaveLength(1);
        expect(click!.id).toBe(sentClicks[0]!.uuid);
        const [pageview] = await listEvents(t!, '&event=%24pageview');
        expect(pageview?.distinct_id).toBe(click!.distinct_id);
      },
      TEST_TIMEOUT,
    );

    it(
      'no request of the page to the server failed or was answered >= 400, the page logged no console error, and it reached nothing else',
      async () => {
        // every request the page made has ended (the server commits an event before it answers, so a
        // stored event's request may still be under way)
        await vi.waitFor(() => expect([...pending].map((r) => `${r.method()} ${r.url()}`)).toEqual([]), WAIT);
        const toApi = requests.filter((r) => r.url.startsWith(`${t!.url}/`));
        const summary = `the page's requests:\n${requests.map(describeRequest).join('\n')}`;
        expect(toApi.length, summary).toBeGreaterThan(0);
        expect(toApi.filter((r) => typeof r.outcome !== 'number' || r.outcome >= 400).map(describeRequest), summary).toEqual([]);
        expect(consoleErrors, summary).toEqual([]);
        const pageOrigin = new URL(pageUrl).origin;
        expect(requests.filter((r) => !r.url.startsWith(`${t!.url}/`) && !r.url.startsWith(`${pageOrigin}/`)).map(describeRequest)).toEqual(
          [],
        );
        // the capture answers carry CORS for the page's origin (a browser drops them otherwise)
        const captures = toApi.filter((r) => r.method === 'POST' && /^\/(e|i\/v0\/e|batch)\/?$/.test(new URL(r.url).pathname));
        expect(captures.length, summary).toBeGreaterThan(0);
        for (const r of captures) expect(r.allowOrigin, describeRequest(r)).toBe(pageOrigin);
      },
      TEST_TIMEOUT,
    );
  },
);
