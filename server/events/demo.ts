/**
 * Demo data: a realistic product-analytics data set for "Hedgebox", a file-sharing SaaS app (the
 * product of PostHog's own demo data, posthog/demo/products/hedgebox/), as rows in PostHog's export
 * shape, fed to `importEvents` by `envapi demo`.
 *
 * What it holds: about `count / 40` persons, each first seen at a random time in the last `days`
 * days and coming back in sessions until `now`. Anonymous visitors (distinct id: a UUIDv7, as
 * posthog-js makes them) browse the marketing pages; about 45 % of persons sign up (`signed_up`,
 * then `$identify` from the new user id, a UUID, with `$anon_distinct_id` and
 * `$set: {email, name}`), then come back to upload, download and delete files (`uploaded_file`,
 * `downloaded_file`, `deleted_file` with `file_type` and `file_size_b`) and sometimes upgrade
 * (`upgraded_plan` with `previous_plan` and `plan`, `$set: {plan}`). Each page view is a
 * `$pageview` with `$current_url` / `$pathname` / `$host` / `title`; clicks are `$autocapture`
 * events with `elements_chain` in PostHog's format; a session ends with `$pageleave`. Every event
 * carries posthog-js' common properties: `$browser` (Chrome ~60 %, Safari and Mobile Safari,
 * Edge, Firefox, Chrome iOS, Samsung Internet ~0.6 %, and `Opera Mini` in ~0.05 % of sessions for
 * rare-value filters), `$browser_version`, `$os` (Mac OS X, Windows, iOS, Android, Linux),
 * `$os_version`, `$device_type`, screen size, `$lib: 'web'`, `$lib_version`, `$session_id` and
 * `$window_id` (UUIDv7), `$referrer` / `$referring_domain` (`$direct` when none),
 * `$geoip_country_code` / `$geoip_country_name`; landing page views of campaign traffic carry
 * `utm_source` / `utm_medium` / `utm_campaign` (google, twitter, newsletter, producthunt, …). A
 * person's first page view carries `$set_once` with the `$initial_…` properties. Pageviews are
 * the most common event (~38 %), then autocaptures (~32 %), `$pageleave` (~11 %), file events
 * (~16 %), `signed_up` / `$identify` (~1 % each) and `upgraded_plan` (~0.5 %).
 *
 * Order: rows come in time order (as PostHog's exports do), which also keeps the store's time
 * indexes append-mostly during the import.
 *
 * Reproducible: the same `seed`, `now`, `days` and `count` give the same rows, uuids included
 * (every event has a UUIDv7 made from its timestamp and seeded random bits). Every person and every
 * session draws from its own seeded sfc32 stream, so a session can be planned in one pass and
 * built in another; names and emails come from an `@faker-js/faker` instance of the generator's
 * own (reentrant: two generators never share state), seeded per person.
 *
 * Cost: about 3 s of CPU per million events; memory: one small record per planned session
 * (about 60 MB per million events) plus the sessions open at a time; events are built lazily.
 */
import { Faker, base, en } from '@faker-js/faker';

/** Options of `generateDemoEvents`. */
export interface DemoOptions {
  /** number of events to produce (a non-negative integer) */
  count: number;
  /** any integer; the same seed (with the same `now` and `days`) gives the same rows */
  seed: number;
  /** the end of the period; no event is later than it. Default: the current time */
  now?: Date | undefined;
  /** length of the period in days, ending at `now` (positive integer, default 30) */
  days?: number | undefined;
}

/** One generated event, in the shape `importEvents` reads. */
export type DemoEventRow = {
  /** UUIDv7 */
  uuid: string;
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  /** ISO 8601 UTC with milliseconds, e.g. `2024-11-20T14:03:10.871Z` */
  timestamp: string;
  /** PostHog's elements chain for `$autocapture`, else `''` */
  elements_chain: string;
};

const ORIGIN = 'https://hedgebox.net';
const HOST = 'hedgebox.net';
const LIB_VERSION = '1.194.2';
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** sfc32 seeded through splitmix32 from any number: a small, fast, good 32-bit generator. */
class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = (Math.trunc(seed) ^ Math.trunc(seed / 2 ** 32)) >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4_294_967_296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Exponentially distributed with the given mean. */
  exp(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

/** Items with weights, picked in proportion to them. */
class Weighted<T> {
  private readonly items: T[];
  private readonly cumulative: number[];
  private readonly total: number;

  constructor(entries: readonly (readonly [T, number])[]) {
    this.items = entries.map((e) => e[0]);
    let sum = 0;
    this.cumulative = entries.map((e) => (sum += e[1]));
    this.total = sum;
  }

  pick(rng: Rng): T {
    const x = rng.next() * this.total;
    let i = 0;
    while (i < this.cumulative.length - 1 && this.cumulative[i]! <= x) i++;
    return this.items[i]!;
  }
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex32(n: number): string {
  return HEX[(n >>> 24) & 255]! + HEX[(n >>> 16) & 255]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!;
}

/** A UUIDv7 (RFC 9562) from Unix milliseconds and three random 32-bit draws. */
function uuidv7From(ms: number, r1: number, r2: number, r3: number): string {
  const hi = Math.floor(ms / 4_294_967_296) & 0xffff;
  const lo = ms >>> 0;
  return (
    HEX[hi >>> 8]! + HEX[hi & 255]! + HEX[lo >>> 24]! + HEX[(lo >>> 16) & 255]! + '-' +
    HEX[(lo >>> 8) & 255]! + HEX[lo & 255]! + '-7' + HEX[(r1 >>> 8) & 15]!.charAt(1) + HEX[r1 & 255]! + '-' +
    HEX[((r2 >>> 24) & 0x3f) | 0x80]! + HEX[(r2 >>> 16) & 255]! + '-' + HEX[(r2 >>> 8) & 255]! + HEX[r2 & 255]! + hex32(r3)
  );
}

/** A UUIDv7 of `ms` with seeded random bits (three draws). */
function uuidv7(rng: Rng, ms: number): string {
  return uuidv7From(Math.floor(ms), rng.u32(), rng.u32(), rng.u32());
}

/** A random (version 4) UUID from the seeded generator. */
function uuidv4(rng: Rng): string {
  const a = hex32(rng.u32());
  const b = hex32(rng.u32());
  const c = rng.u32();
  const d = hex32(rng.u32());
  const variant = HEX[((c >>> 24) & 0x3f) | 0x80]! + HEX[(c >>> 16) & 255]!;
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}-${hex32(c).slice(4, 8)}${d}`;
}

// ---------------------------------------------------------------------------------------------
// Elements chains

/** One element of a clicked element's ancestry, innermost first (posthog/models/element/element.py). */
export interface DemoElement {
  tag: string;
  classes?: string[];
  text?: string;
  href?: string;
  id?: string;
  nthChild: number;
  nthOfType: number;
  attributes?: Record<string, string>;
}

function escapeChainValue(s: string): string {
  return s.replace(/"/g, '\\"');
}

/**
 * PostHog's `elements_to_string` (posthog/models/element/element.py): per element the tag, its
 * classes sorted (`.a.b`), then `:` and the attributes sorted by name as `key="value"` (text,
 * nth-child, nth-of-type, href, attr_id and the element's `attr__…` attributes); elements joined
 * with `;`, innermost first.
 */
export function elementsChain(elements: readonly DemoElement[]): string {
  return elements
    .map((el) => {
      const classes = [...(el.classes ?? [])].sort();
      const attrs: Record<string, string> = {
        ...(el.text ? { text: el.text } : {}),
        'nth-child': String(el.nthChild),
        'nth-of-type': String(el.nthOfType),
        ...(el.href ? { href: el.href } : {}),
        ...(el.id ? { attr_id: el.id } : {}),
        ...(classes.length ? { attr__class: classes.join(' ') } : {}),
        ...(el.href ? { attr__href: el.href } : {}),
        ...(el.id ? { attr__id: el.id } : {}),
        ...el.attributes,
      };
      const attrText = Object.keys(attrs)
        .sort()
        .map((k) => `${escapeChainValue(k)}="${escapeChainValue(attrs[k]!)}"`)
        .join('');
      return `${el.tag}${classes.map((c) => `.${c.replace(/"/g, '')}`).join('')}:${attrText}`;
    })
    .join(';');
}

const BODY: DemoElement = { tag: 'body', nthChild: 2, nthOfType: 1 };
const MAIN: DemoElement = { tag: 'main', classes: ['container'], nthChild: 2, nthOfType: 1 };
const NAV: DemoElement = { tag: 'nav', classes: ['navbar'], nthChild: 1, nthOfType: 1 };

/** A clickable thing on a page: its chain, built once. */
interface ClickTarget {
  chain: string;
  eventType: 'click' | 'submit';
}

function target(elements: DemoElement[], eventType: 'click' | 'submit' = 'click'): ClickTarget {
  return { chain: elementsChain(elements), eventType };
}

const navLink = (text: string, href: string, n: number): ClickTarget =>
  target([{ tag: 'a', classes: ['nav-link'], text, href, nthChild: n, nthOfType: n }, { tag: 'li', classes: ['nav-item'], nthChild: n, nthOfType: n }, { tag: 'ul', nthChild: 2, nthOfType: 1 }, NAV, BODY]);

const CLICKS = {
  navPricing: navLink('Pricing', '/pricing/', 2),
  navLogin: navLink('Log in', '/login/', 4),
  navBlog: navLink('Blog', '/mariustechtips/', 3),
  heroSignup: target([
    { tag: 'a', classes: ['btn', 'btn-primary', 'btn-lg'], text: 'Get started for free', href: '/signup/', nthChild: 1, nthOfType: 1 },
    { tag: 'div', classes: ['hero-actions'], nthChild: 3, nthOfType: 2 },
    { tag: 'section', classes: ['hero'], nthChild: 1, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  heroDemo: target([
    { tag: 'button', classes: ['btn', 'btn-secondary', 'btn-lg'], text: 'Watch the demo', nthChild: 2, nthOfType: 1 },
    { tag: 'div', classes: ['hero-actions'], nthChild: 3, nthOfType: 2 },
    { tag: 'section', classes: ['hero'], nthChild: 1, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  pricingStandard: target([
    { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Choose Standard', nthChild: 4, nthOfType: 1, attributes: { 'attr__data-plan': 'standard' } },
    { tag: 'div', classes: ['plan-card'], nthChild: 2, nthOfType: 2 },
    { tag: 'div', classes: ['plans'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  pricingProfessional: target([
    { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Choose Professional', nthChild: 4, nthOfType: 1, attributes: { 'attr__data-plan': 'professional' } },
    { tag: 'div', classes: ['plan-card', 'plan-card-featured'], nthChild: 3, nthOfType: 3 },
    { tag: 'div', classes: ['plans'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  pricingFree: target([
    { tag: 'a', classes: ['btn', 'btn-outline'], text: 'Start for free', href: '/signup/', nthChild: 4, nthOfType: 1 },
    { tag: 'div', classes: ['plan-card'], nthChild: 1, nthOfType: 1 },
    { tag: 'div', classes: ['plans'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  signupEmail: target([
    { tag: 'input', classes: ['form-control'], id: 'email', nthChild: 2, nthOfType: 1, attributes: { attr__type: 'email', attr__name: 'email' } },
    { tag: 'div', classes: ['form-group'], nthChild: 1, nthOfType: 1 },
    { tag: 'form', id: 'signup-form', nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  signupSubmit: target(
    [
      { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Sign up', nthChild: 4, nthOfType: 1, attributes: { attr__type: 'submit' } },
      { tag: 'form', id: 'signup-form', nthChild: 2, nthOfType: 1 },
      MAIN,
      BODY,
    ],
    'submit',
  ),
  loginSubmit: target(
    [
      { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Log in', nthChild: 3, nthOfType: 1, attributes: { attr__type: 'submit' } },
      { tag: 'form', id: 'login-form', nthChild: 2, nthOfType: 1 },
      MAIN,
      BODY,
    ],
    'submit',
  ),
  upload: target([
    { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Upload file', nthChild: 2, nthOfType: 1 },
    { tag: 'form', nthChild: 1, nthOfType: 1 },
    BODY,
  ]),
  fileLink: target([
    { tag: 'a', classes: ['file-link'], text: 'Open', href: '/files/', nthChild: 1, nthOfType: 1 },
    { tag: 'td', classes: ['file-name'], nthChild: 2, nthOfType: 2 },
    { tag: 'tr', classes: ['file-row'], nthChild: 3, nthOfType: 3 },
    { tag: 'tbody', nthChild: 2, nthOfType: 1 },
    { tag: 'table', classes: ['files-table'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  download: target([
    { tag: 'button', classes: ['btn', 'btn-icon'], text: 'Download', nthChild: 1, nthOfType: 1, attributes: { 'attr__aria-label': 'Download file' } },
    { tag: 'td', classes: ['file-actions'], nthChild: 5, nthOfType: 5 },
    { tag: 'tr', classes: ['file-row'], nthChild: 2, nthOfType: 2 },
    { tag: 'tbody', nthChild: 2, nthOfType: 1 },
    { tag: 'table', classes: ['files-table'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  delete: target([
    { tag: 'button', classes: ['btn', 'btn-icon', 'btn-danger'], text: 'Delete', nthChild: 2, nthOfType: 2, attributes: { 'attr__aria-label': 'Delete file' } },
    { tag: 'td', classes: ['file-actions'], nthChild: 5, nthOfType: 5 },
    { tag: 'tr', classes: ['file-row'], nthChild: 4, nthOfType: 4 },
    { tag: 'tbody', nthChild: 2, nthOfType: 1 },
    { tag: 'table', classes: ['files-table'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  search: target([
    { tag: 'input', classes: ['form-control', 'search'], nthChild: 1, nthOfType: 1, attributes: { attr__type: 'search', attr__placeholder: 'Search files' } },
    { tag: 'div', classes: ['toolbar'], nthChild: 1, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  shareLink: target([
    { tag: 'button', classes: ['btn', 'btn-secondary'], text: 'Copy share link', nthChild: 2, nthOfType: 2 },
    { tag: 'div', classes: ['file-detail-actions'], nthChild: 3, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  detailDownload: target([
    { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Download', nthChild: 1, nthOfType: 1 },
    { tag: 'div', classes: ['file-detail-actions'], nthChild: 3, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  saveSettings: target(
    [
      { tag: 'button', classes: ['btn', 'btn-primary'], text: 'Save changes', nthChild: 6, nthOfType: 1, attributes: { attr__type: 'submit' } },
      { tag: 'form', id: 'settings-form', nthChild: 2, nthOfType: 1 },
      MAIN,
      BODY,
    ],
    'submit',
  ),
  upgrade: target([
    { tag: 'button', classes: ['btn', 'btn-primary', 'upgrade-button'], text: 'Upgrade plan', nthChild: 3, nthOfType: 1 },
    { tag: 'div', classes: ['billing-plan'], nthChild: 1, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  comparePlans: target([
    { tag: 'a', text: 'Compare plans', href: '/pricing/', nthChild: 4, nthOfType: 1 },
    { tag: 'div', classes: ['billing-plan'], nthChild: 1, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  blogPost: target([
    { tag: 'a', classes: ['post-link'], text: 'Read more', href: '/mariustechtips/', nthChild: 3, nthOfType: 1 },
    { tag: 'article', classes: ['post-preview'], nthChild: 2, nthOfType: 2 },
    MAIN,
    BODY,
  ]),
} satisfies Record<string, ClickTarget>;

// ---------------------------------------------------------------------------------------------
// The population

interface Device {
  os: string;
  osVersions: readonly string[];
  browser: string;
  browserVersions: readonly string[];
  deviceType: 'Desktop' | 'Mobile' | 'Tablet';
  screens: readonly (readonly [number, number])[];
}

const CHROME_VERSIONS = ['129.0.6668.100', '130.0.6723.117', '131.0.6778.86', '131.0.6778.109', '132.0.6834.83'];
const DESKTOP_SCREENS = [[1920, 1080], [1440, 900], [2560, 1440], [1536, 864], [1680, 1050]] as const;
const PHONE_SCREENS = [[390, 844], [393, 852], [412, 915], [360, 800], [430, 932]] as const;
const mac: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = { os: 'Mac OS X', osVersions: ['10.15.7', '14.6.1', '15.1'], deviceType: 'Desktop', screens: DESKTOP_SCREENS };
const windows: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = { os: 'Windows', osVersions: ['10.0', '11.0'], deviceType: 'Desktop', screens: DESKTOP_SCREENS };
const linux: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = { os: 'Linux', osVersions: [''], deviceType: 'Desktop', screens: DESKTOP_SCREENS };
const ios: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = { os: 'iOS', osVersions: ['17.6.1', '18.0.1', '18.1.1'], deviceType: 'Mobile', screens: PHONE_SCREENS };
const android: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = { os: 'Android', osVersions: ['13.0.0', '14.0.0', '15.0.0'], deviceType: 'Mobile', screens: PHONE_SCREENS };

/** Browser, OS and device of a person, weighted so that Chrome is ~60 % and Samsung Internet ~0.6 %. */
const DEVICES = new Weighted<Device>([
  [{ ...mac, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 24],
  [{ ...windows, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 24],
  [{ ...linux, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 2],
  [{ ...android, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 10],
  [{ ...mac, browser: 'Safari', browserVersions: ['17.6', '18.0', '18.1'] }, 8],
  [{ ...ios, browser: 'Mobile Safari', browserVersions: ['17.6', '18.0', '18.1'] }, 13],
  [{ ...ios, deviceType: 'Tablet', screens: [[820, 1180], [1024, 1366]], browser: 'Mobile Safari', browserVersions: ['18.0', '18.1'] }, 1],
  [{ ...ios, browser: 'Chrome iOS', browserVersions: ['130.0.6723.90', '131.0.6778.73'] }, 3],
  [{ ...windows, browser: 'Microsoft Edge', browserVersions: ['130.0.2849.80', '131.0.2903.86'] }, 8],
  [{ ...windows, browser: 'Firefox', browserVersions: ['131.0', '132.0', '133.0'] }, 3.5],
  [{ ...mac, browser: 'Firefox', browserVersions: ['132.0', '133.0'] }, 1.5],
  [{ ...linux, browser: 'Firefox', browserVersions: ['132.0', '133.0'] }, 1.3],
  [{ ...android, browser: 'Samsung Internet', browserVersions: ['26.0', '27.0'] }, 0.7],
]);

/** The rare device of the rare-filter benchmark: ~0.05 % of sessions. */
const OPERA_MINI: Device = { ...android, browser: 'Opera Mini', browserVersions: ['84.0.2254'], screens: [[360, 640]] };
const OPERA_MINI_SESSION_SHARE = 0.0005;

const COUNTRIES = new Weighted<readonly [string, string]>([
  [['US', 'United States'], 34],
  [['GB', 'United Kingdom'], 8],
  [['DE', 'Germany'], 7],
  [['IN', 'India'], 7],
  [['FR', 'France'], 5],
  [['CA', 'Canada'], 5],
  [['BR', 'Brazil'], 4],
  [['NL', 'Netherlands'], 3],
  [['AU', 'Australia'], 3],
  [['PL', 'Poland'], 3],
  [['ES', 'Spain'], 3],
  [['SE', 'Sweden'], 2],
  [['JP', 'Japan'], 2],
  [['MX', 'Mexico'], 2],
  [['NG', 'Nigeria'], 1],
  [['ZA', 'South Africa'], 1],
]);

/** Where a session comes from. `utm` on the landing page view when set. */
interface Source {
  referrer: string;
  referringDomain: string;
  utm?: { source: string; medium: string; campaign: string };
  landing: string;
}

const SOURCES = new Weighted<Source>([
  [{ referrer: '$direct', referringDomain: '$direct', landing: '/' }, 30],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/' }, 20],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/mariustechtips/' }, 6],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', utm: { source: 'google', medium: 'cpc', campaign: 'brand_search' }, landing: '/' }, 9],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', utm: { source: 'google', medium: 'cpc', campaign: 'file_sharing_generic' }, landing: '/pricing/' }, 4],
  [{ referrer: 'https://t.co/', referringDomain: 't.co', utm: { source: 'twitter', medium: 'social', campaign: 'launch_week' }, landing: '/' }, 6],
  [{ referrer: '$direct', referringDomain: '$direct', utm: { source: 'newsletter', medium: 'email', campaign: 'monthly_digest' }, landing: '/mariustechtips/' }, 7],
  [{ referrer: 'https://www.producthunt.com/', referringDomain: 'www.producthunt.com', utm: { source: 'producthunt', medium: 'referral', campaign: 'ph_launch' }, landing: '/' }, 4],
  [{ referrer: 'https://www.linkedin.com/', referringDomain: 'www.linkedin.com', utm: { source: 'linkedin', medium: 'social', campaign: 'teams_q4' }, landing: '/pricing/' }, 3],
  [{ referrer: 'https://www.reddit.com/', referringDomain: 'www.reddit.com', landing: '/mariustechtips/' }, 4],
  [{ referrer: 'https://news.ycombinator.com/', referringDomain: 'news.ycombinator.com', landing: '/' }, 3],
  [{ referrer: 'https://duckduckgo.com/', referringDomain: 'duckduckgo.com', landing: '/' }, 4],
]);

/** Returning users mostly come straight in. */
const RETURNING_SOURCES = new Weighted<Source>([
  [{ referrer: '$direct', referringDomain: '$direct', landing: '/files/' }, 70],
  [{ referrer: 'https://mail.google.com/', referringDomain: 'mail.google.com', landing: '/files/' }, 15],
  [{ referrer: '$direct', referringDomain: '$direct', utm: { source: 'newsletter', medium: 'email', campaign: 'product_updates' }, landing: '/files/' }, 8],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/' }, 7],
]);

const FILE_TYPES = new Weighted<readonly [string, number]>([
  // [MIME type, median size in bytes]
  [['image/jpeg', 2_400_000], 24],
  [['image/png', 900_000], 14],
  [['application/pdf', 1_300_000], 20],
  [['video/mp4', 85_000_000], 8],
  [['application/zip', 40_000_000], 5],
  [['text/plain', 12_000], 5],
  [['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 250_000], 9],
  [['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 180_000], 6],
  [['image/heic', 2_000_000], 5],
  [['audio/mpeg', 6_000_000], 4],
]);

const BLOG_POSTS = ['how-to-share-large-files', 'hedgebox-vs-dropbox', 'backup-strategies-for-teams', 'encrypting-your-files', 'five-tips-for-remote-teams'];

const TITLES: Record<string, string> = {
  '/': 'Hedgebox – Your files, everywhere',
  '/pricing/': 'Pricing – Hedgebox',
  '/signup/': 'Sign up – Hedgebox',
  '/login/': 'Log in – Hedgebox',
  '/files/': 'My files – Hedgebox',
  '/account/settings/': 'Settings – Hedgebox',
  '/account/billing/': 'Billing – Hedgebox',
  '/mariustechtips/': "Marius' Tech Tips – Hedgebox blog",
};

type Plan = 'free' | 'standard' | 'professional';

/** One simulated person: what they use and how far they are in the product. */
interface DemoPerson {
  anonId: string;
  /** set once they signed up */
  userId?: string;
  willSignUp: boolean;
  plan: Plan;
  device: Device;
  osVersion: string;
  browserVersion: string;
  screen: readonly [number, number];
  country: readonly [string, string];
  /** whether the `$initial_…` `$set_once` went out already */
  initialSent: boolean;
}

// ---------------------------------------------------------------------------------------------
// The generator

/** A 32-bit seed from several integers (FNV-1a steps with a murmur finaliser). */
function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
  }
  return h >>> 0;
}

/** A new person: their device, country and whether they will sign up (from the person's stream). */
function newPerson(rng: Rng): DemoPerson {
  const device = DEVICES.pick(rng);
  return {
    anonId: '', // set in their first session (a UUIDv7 of that time)
    willSignUp: rng.chance(0.45),
    plan: 'free',
    device,
    osVersion: rng.pick(device.osVersions),
    browserVersion: rng.pick(device.browserVersions),
    screen: rng.pick(device.screens),
    country: COUNTRIES.pick(rng),
    initialSent: false,
  };
}

/** A session decided by the planning pass, replayed by the output pass. */
interface PlannedSession {
  startMs: number;
  personIndex: number;
  index: number;
  /** the person as it was when the session began (the session changes it: sign-up, plan) */
  person: DemoPerson;
  /** events of the session to keep (the last planned session may be cut to reach `count`) */
  limit: number;
}

/** Seeds of one generator run: every person and every session has its own random stream. */
class Seeds {
  private readonly lo: number;
  private readonly hi: number;
  constructor(seed: number) {
    this.lo = Math.trunc(seed) >>> 0;
    this.hi = Math.floor(Math.trunc(seed) / 2 ** 32) >>> 0;
  }
  person(personIndex: number): Rng {
    return new Rng(mixSeed(this.lo, this.hi, personIndex, 0x7fffffff));
  }
  session(personIndex: number, index: number): Rng {
    return new Rng(mixSeed(this.lo, this.hi, personIndex, index));
  }
  faker(personIndex: number): number {
    return mixSeed(this.lo, this.hi, personIndex, 0x6b6b6b6b);
  }
}

/**
 * The planning pass: persons one after another, each with their sessions (run without building
 * events, to count them) until `count` events are planned; returns the sessions by start time.
 * Memory: one small record per session (about a tenth of the events).
 */
function planSessions(seeds: Seeds, count: number, start: number, end: number): PlannedSession[] {
  const plan: PlannedSession[] = [];
  let planned = 0;
  for (let personIndex = 0; planned < count; personIndex++) {
    const rng = seeds.person(personIndex);
    const person = newPerson(rng);
    const firstSeen = start + rng.next() * (end - start);
    // Anonymous visitors come once or a few times; users keep coming back.
    const sessions = person.willSignUp ? 2 + Math.floor(rng.exp(7)) : 1 + Math.floor(rng.exp(1.2));
    const meanGap = Math.max(60_000, (end - firstSeen) / sessions);
    let sessionStart = firstSeen;
    for (let index = 0; index < sessions && planned < count; index++) {
      if (index > 0) sessionStart += 5 * 60_000 + rng.exp(meanGap);
      // Fewer sessions at night (UTC, where most of the traffic is): move most of them to the day.
      const hour = new Date(sessionStart).getUTCHours();
      if (hour < 6 && rng.chance(0.6) && sessionStart + 8 * 3_600_000 < end) sessionStart += 8 * 3_600_000;
      if (sessionStart >= end) break;
      const before: DemoPerson = { ...person };
      const { count: n } = session(seeds.session(personIndex, index), undefined, person, sessionStart, end, index, 0);
      if (n === 0) continue;
      const limit = Math.min(n, count - planned);
      plan.push({ startMs: Math.floor(sessionStart), personIndex, index, person: before, limit });
      planned += limit;
    }
  }
  return plan.sort((a, b) => a.startMs - b.startMs || a.personIndex - b.personIndex || a.index - b.index);
}

/** A binary min-heap of events by (time, sequence): the events of the sessions still open. */
class EventHeap {
  private readonly items: { ms: number; seq: number; row: DemoEventRow }[] = [];

  get size(): number {
    return this.items.length;
  }

  peekMs(): number {
    return this.items[0]!.ms;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!;
    const b = this.items[j]!;
    return a.ms < b.ms || (a.ms === b.ms && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = t;
  }

  push(ms: number, seq: number, row: DemoEventRow): void {
    this.items.push({ ms, seq, row });
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): DemoEventRow {
    const top = this.items[0]!;
    const last = this.items.pop()!;
    if (this.items.length) {
      this.items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.items.length && this.less(l, m)) m = l;
        if (r < this.items.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top.row;
  }
}

/**
 * Yields `count` Hedgebox events (see module doc) in time order (ties in a fixed order). Two
 * passes: the first plans every person's sessions (counting their events without building them),
 * the second builds the sessions in start order and merges their events; only the sessions open
 * at a time are in memory. Timestamps lie in `[now - days, now]`. Throws RangeError when `count`
 * is not a non-negative integer, `days` not a positive integer, `seed` not a finite number or
 * `now` not a valid date.
 */
export function* generateDemoEvents(opts: DemoOptions): Generator<DemoEventRow, void, undefined> {
  const { count, seed } = opts;
  const days = opts.days ?? 30;
  const now = opts.now ?? new Date();
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  if (Number.isNaN(now.getTime())) throw new RangeError('now must be a valid date');

  const seeds = new Seeds(seed);
  const faker = new Faker({ locale: [en, base] });
  const end = now.getTime();
  const start = end - days * DAY_MS;
  const plan = planSessions(seeds, count, start, end);
  const heap = new EventHeap();
  let seq = 0;
  for (const planned of plan) {
    while (heap.size && heap.peekMs() < planned.startMs) yield heap.pop();
    const { events } = session(
      seeds.session(planned.personIndex, planned.index),
      faker,
      { ...planned.person },
      planned.startMs,
      end,
      planned.index,
      seeds.faker(planned.personIndex),
    );
    for (let i = 0; i < planned.limit && i < events.length; i++) {
      const row = events[i]!;
      heap.push(Date.parse(row.timestamp), seq++, row);
    }
  }
  while (heap.size) yield heap.pop();
}

/**
 * Plays one session of `person` (changing it: sign-up, plan) and returns its events in time order,
 * none after `end`. Without `faker` it only counts them (`events` stays empty) while drawing from
 * `rng` exactly as when building them, so that both runs of a session agree.
 */
function session(
  rng: Rng,
  faker: Faker | undefined,
  person: DemoPerson,
  startMs: number,
  end: number,
  index: number,
  fakerSeed: number,
): { events: DemoEventRow[]; count: number } {
  const dry = faker === undefined;
  let count = 0;
  if (!person.anonId) person.anonId = uuidv7(rng, startMs);
  const rare = rng.chance(OPERA_MINI_SESSION_SHARE);
  const device = rare ? OPERA_MINI : person.device;
  const source = person.userId ? RETURNING_SOURCES.pick(rng) : SOURCES.pick(rng);
  const sessionId = uuidv7(rng, startMs);
  const osVersion = rare ? device.osVersions[0]! : person.osVersion;
  const browserVersion = rare ? device.browserVersions[0]! : person.browserVersion;
  const screen = rare ? device.screens[0]! : person.screen;
  const windowId = uuidv7(rng, startMs);
  const events: DemoEventRow[] = [];
  let t = startMs;
  let distinctId = person.userId ?? person.anonId;
  let path = source.landing;
  let url = ORIGIN + path;
  let pageviewAt = t;
  let stopped = false;

  const advance = (minS: number, meanS: number): void => {
    t += (minS + rng.exp(meanS)) * 1000;
  };
  const emit = (event: string, extra: Record<string, unknown> | undefined, chain = ''): void => {
    if (stopped || t > end) {
      stopped = true;
      return;
    }
    const ms = Math.floor(t);
    // Drawn in both runs, to keep the random sequence the same.
    const r1 = rng.u32();
    const r2 = rng.u32();
    const r3 = rng.u32();
    count += 1;
    if (dry) return;
    const uuid = uuidv7From(ms, r1, r2, r3);
    // One object literal of a fixed shape (fast to build and to serialise), then the extras.
    const properties: Record<string, unknown> = {
      $os: device.os,
      $os_version: osVersion,
      $browser: device.browser,
      $browser_version: browserVersion,
      $device_type: device.deviceType,
      $screen_width: screen[0],
      $screen_height: screen[1],
      $lib: 'web',
      $lib_version: LIB_VERSION,
      $session_id: sessionId,
      $window_id: windowId,
      $referrer: source.referrer,
      $referring_domain: source.referringDomain,
      $geoip_country_code: person.country[0],
      $geoip_country_name: person.country[1],
      $current_url: url,
      $pathname: path,
      $host: HOST,
    };
    if (extra) for (const key in extra) properties[key] = extra[key];
    events.push({ uuid, event, distinct_id: distinctId, properties, timestamp: new Date(ms).toISOString(), elements_chain: chain });
  };
  const pageview = (to: string, landing = false): void => {
    advance(1, 4);
    path = to;
    const query = landing && source.utm ? `?utm_source=${source.utm.source}&utm_medium=${source.utm.medium}&utm_campaign=${source.utm.campaign}` : '';
    url = ORIGIN + to + query;
    pageviewAt = t;
    const base = to.startsWith('/files/') && to !== '/files/' ? 'File – Hedgebox' : to.startsWith('/mariustechtips/') && to !== '/mariustechtips/' ? "Marius' Tech Tips – Hedgebox blog" : TITLES[to] ?? 'Hedgebox';
    const extra: Record<string, unknown> = { title: base };
    if (landing && source.utm) {
      extra.utm_source = source.utm.source;
      extra.utm_medium = source.utm.medium;
      extra.utm_campaign = source.utm.campaign;
    }
    if (!person.initialSent) {
      person.initialSent = true;
      extra.$set_once = {
        $initial_referrer: source.referrer,
        $initial_referring_domain: source.referringDomain,
        $initial_current_url: url,
        $initial_pathname: to,
        $initial_browser: device.browser,
        $initial_os: device.os,
        $initial_device_type: device.deviceType,
        $initial_geoip_country_code: person.country[0],
        ...(source.utm ? { $initial_utm_source: source.utm.source, $initial_utm_medium: source.utm.medium, $initial_utm_campaign: source.utm.campaign } : {}),
      };
    }
    emit('$pageview', extra);
  };
  const click = (target: ClickTarget, minS = 2, meanS = 12): void => {
    advance(minS, meanS);
    emit('$autocapture', { $event_type: target.eventType, $ce_version: 1 }, target.chain);
  };
  const fileProps = (): Record<string, unknown> => {
    const [type, median] = FILE_TYPES.pick(rng);
    return { file_type: type, file_size_b: Math.max(1, Math.round(median * Math.exp(1.1 * rng.normal()))) };
  };

  // Landing.
  pageview(source.landing, true);

  if (!person.userId) {
    // Marketing pages, then maybe the signup (most users sign up in their first or second visit).
    const signUpNow = person.willSignUp && (index > 0 || rng.chance(0.55));
    let pages = 1 + Math.floor(rng.exp(1.6));
    while (pages-- > 0 && !stopped) {
      if (path === '/') {
        const r = rng.next();
        if (r < 0.2) click(CLICKS.heroDemo);
        if (r < 0.5) {
          click(CLICKS.navPricing);
          pageview('/pricing/');
        } else if (r < 0.7) {
          click(CLICKS.navBlog);
          pageview('/mariustechtips/');
        } else break;
      } else if (path === '/pricing/') {
        if (rng.chance(0.5)) click(rng.chance(0.6) ? CLICKS.pricingStandard : CLICKS.pricingProfessional);
        if (rng.chance(0.4)) {
          click(CLICKS.pricingFree);
          break;
        }
        pageview('/');
      } else if (path.startsWith('/mariustechtips/')) {
        if (rng.chance(0.6)) {
          click(CLICKS.blogPost, 20, 60);
          pageview(`/mariustechtips/${rng.pick(BLOG_POSTS)}/`);
        } else pageview('/');
      } else break;
    }
    if (signUpNow && !stopped) {
      if (path !== '/pricing/') click(CLICKS.heroSignup);
      pageview('/signup/');
      if (rng.chance(0.3)) click(CLICKS.signupEmail, 1, 3);
      click(CLICKS.signupSubmit, 5, 15);
      if (!stopped) {
        const userId = uuidv4(rng);
        let name = '';
        let email = '';
        if (faker) {
          faker.seed(fakerSeed);
          const firstName = faker.person.firstName();
          const lastName = faker.person.lastName();
          name = `${firstName} ${lastName}`;
          email = faker.internet.email({ firstName, lastName }).toLowerCase();
        }
        advance(0.2, 0.5);
        emit('signed_up', { from_invite: rng.chance(0.15) });
        if (!stopped) {
          const anon = distinctId;
          distinctId = userId;
          person.userId = userId;
          advance(0.05, 0.1);
          emit('$identify', { $anon_distinct_id: anon, $set: { email, name }, $set_once: { plan_at_signup: 'free' } });
          pageview('/files/');
          const uploads = rng.int(0, 3);
          for (let i = 0; i < uploads; i++) {
            if (rng.chance(0.6)) click(CLICKS.upload, 3, 20); // else dragged and dropped
            advance(2, 10);
            emit('uploaded_file', fileProps());
          }
        }
      }
    }
  } else {
    // A returning user: sometimes logs in, then works with files.
    if (path === '/') {
      click(CLICKS.navLogin);
      pageview('/login/');
      click(CLICKS.loginSubmit, 4, 8);
      pageview('/files/');
    } else if (rng.chance(0.2)) {
      pageview('/login/');
      click(CLICKS.loginSubmit, 4, 8);
      pageview('/files/');
    }
    let actions = 1 + Math.floor(rng.exp(3));
    while (actions-- > 0 && !stopped) {
      const r = rng.next();
      if (r < 0.3) {
        if (rng.chance(0.6)) click(CLICKS.upload, 3, 30); // else dragged and dropped
        advance(2, 15);
        emit('uploaded_file', fileProps());
      } else if (r < 0.5) {
        click(CLICKS.download, 3, 30);
        advance(0.5, 2);
        emit('downloaded_file', fileProps());
      } else if (r < 0.58) {
        click(CLICKS.delete, 3, 30);
        advance(0.5, 2);
        emit('deleted_file', fileProps());
      } else if (r < 0.65) {
        click(CLICKS.search, 2, 10);
      } else if (r < 0.85) {
        click(CLICKS.fileLink, 2, 20);
        pageview(`/files/${hex32(rng.u32())}/`);
        if (rng.chance(0.4)) {
          click(rng.chance(0.6) ? CLICKS.detailDownload : CLICKS.shareLink, 3, 15);
          if (rng.chance(0.5)) {
            advance(0.5, 2);
            emit('downloaded_file', fileProps());
          }
        }
        pageview('/files/');
      } else if (r < 0.93) {
        pageview('/account/settings/');
        if (rng.chance(0.5)) click(CLICKS.saveSettings, 5, 30);
        pageview('/files/');
      } else {
        pageview('/account/billing/');
        if (person.plan !== 'professional' && rng.chance(0.35)) {
          click(CLICKS.upgrade, 5, 30);
          const previous = person.plan;
          person.plan = previous === 'free' && rng.chance(0.7) ? 'standard' : 'professional';
          advance(1, 3);
          emit('upgraded_plan', { previous_plan: previous, plan: person.plan, $set: { plan: person.plan } });
        } else if (rng.chance(0.3)) {
          click(CLICKS.comparePlans);
          pageview('/pricing/');
        }
        pageview('/files/');
      }
    }
  }

  // Leaving the site.
  advance(3, 40);
  emit('$pageleave', { $prev_pageview_pathname: path, $prev_pageview_duration: Math.max(0, Math.round((t - pageviewAt) / 1000)) });
  return { events, count };
}
