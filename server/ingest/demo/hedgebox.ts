/**
 * The Hedgebox data tables of the demo generator (the product of PostHog's own demo data,
 * posthog/demo/products/hedgebox/): the site's origin, page titles and blog posts, the clickable
 * elements of its pages with their elements chains (written once, at load), and the population's
 * weighted devices, countries, traffic sources and uploaded file types. Data only: how they are
 * drawn lives in sessions.ts.
 */
import { writeElementsChain, type ChainElement } from '../../domain/elements-chain.js';
import { Weighted } from './random.js';

/** Where the site lives: `$current_url` is ORIGIN + path, `$host` is HOST. */
export const ORIGIN = 'https://hedgebox.net';
/** `$host` of every event. */
export const HOST = 'hedgebox.net';
/** `$lib_version` of every event (posthog-js). */
export const LIB_VERSION = '1.194.2';

const BODY: ChainElement = { tag: 'body', nthChild: 2, nthOfType: 1 };
const MAIN: ChainElement = { tag: 'main', classes: ['container'], nthChild: 2, nthOfType: 1 };
const NAV: ChainElement = { tag: 'nav', classes: ['navbar'], nthChild: 1, nthOfType: 1 };

/** A clickable thing on a page: its chain, built once. */
export interface ClickTarget {
  chain: string;
  eventType: 'click' | 'submit';
}

function target(elements: ChainElement[], eventType: 'click' | 'submit' = 'click'): ClickTarget {
  return { chain: writeElementsChain(elements), eventType };
}

const navLink = (text: string, href: string, n: number): ClickTarget =>
  target([
    { tag: 'a', classes: ['nav-link'], text, href, nthChild: n, nthOfType: n },
    { tag: 'li', classes: ['nav-item'], nthChild: n, nthOfType: n },
    { tag: 'ul', nthChild: 2, nthOfType: 1 },
    NAV,
    BODY,
  ]);

/** The clickable elements of Hedgebox's pages, by what they do. */
export const CLICKS = {
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
    {
      tag: 'button',
      classes: ['btn', 'btn-primary'],
      text: 'Choose Standard',
      nthChild: 4,
      nthOfType: 1,
      attributes: { 'attr__data-plan': 'standard' },
    },
    { tag: 'div', classes: ['plan-card'], nthChild: 2, nthOfType: 2 },
    { tag: 'div', classes: ['plans'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  pricingProfessional: target([
    {
      tag: 'button',
      classes: ['btn', 'btn-primary'],
      text: 'Choose Professional',
      nthChild: 4,
      nthOfType: 1,
      attributes: { 'attr__data-plan': 'professional' },
    },
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
    {
      tag: 'input',
      classes: ['form-control'],
      id: 'email',
      nthChild: 2,
      nthOfType: 1,
      attributes: { attr__type: 'email', attr__name: 'email' },
    },
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
    {
      tag: 'button',
      classes: ['btn', 'btn-icon'],
      text: 'Download',
      nthChild: 1,
      nthOfType: 1,
      attributes: { 'attr__aria-label': 'Download file' },
    },
    { tag: 'td', classes: ['file-actions'], nthChild: 5, nthOfType: 5 },
    { tag: 'tr', classes: ['file-row'], nthChild: 2, nthOfType: 2 },
    { tag: 'tbody', nthChild: 2, nthOfType: 1 },
    { tag: 'table', classes: ['files-table'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  delete: target([
    {
      tag: 'button',
      classes: ['btn', 'btn-icon', 'btn-danger'],
      text: 'Delete',
      nthChild: 2,
      nthOfType: 2,
      attributes: { 'attr__aria-label': 'Delete file' },
    },
    { tag: 'td', classes: ['file-actions'], nthChild: 5, nthOfType: 5 },
    { tag: 'tr', classes: ['file-row'], nthChild: 4, nthOfType: 4 },
    { tag: 'tbody', nthChild: 2, nthOfType: 1 },
    { tag: 'table', classes: ['files-table'], nthChild: 2, nthOfType: 1 },
    MAIN,
    BODY,
  ]),
  search: target([
    {
      tag: 'input',
      classes: ['form-control', 'search'],
      nthChild: 1,
      nthOfType: 1,
      attributes: { attr__type: 'search', attr__placeholder: 'Search files' },
    },
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
      {
        tag: 'button',
        classes: ['btn', 'btn-primary'],
        text: 'Save changes',
        nthChild: 6,
        nthOfType: 1,
        attributes: { attr__type: 'submit' },
      },
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

// The population

/** What a person browses with: one entry of DEVICES (a person keeps one version and screen of it). */
export interface Device {
  os: string;
  osVersions: readonly string[];
  browser: string;
  browserVersions: readonly string[];
  deviceType: 'Desktop' | 'Mobile' | 'Tablet';
  screens: readonly (readonly [number, number])[];
}

const CHROME_VERSIONS = ['129.0.6668.100', '130.0.6723.117', '131.0.6778.86', '131.0.6778.109', '132.0.6834.83'];
const DESKTOP_SCREENS = [
  [1920, 1080],
  [1440, 900],
  [2560, 1440],
  [1536, 864],
  [1680, 1050],
] as const;
const PHONE_SCREENS = [
  [390, 844],
  [393, 852],
  [412, 915],
  [360, 800],
  [430, 932],
] as const;
const mac: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = {
  os: 'Mac OS X',
  osVersions: ['10.15.7', '14.6.1', '15.1'],
  deviceType: 'Desktop',
  screens: DESKTOP_SCREENS,
};
const windows: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = {
  os: 'Windows',
  osVersions: ['10.0', '11.0'],
  deviceType: 'Desktop',
  screens: DESKTOP_SCREENS,
};
const linux: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = {
  os: 'Linux',
  osVersions: [''],
  deviceType: 'Desktop',
  screens: DESKTOP_SCREENS,
};
const ios: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = {
  os: 'iOS',
  osVersions: ['17.6.1', '18.0.1', '18.1.1'],
  deviceType: 'Mobile',
  screens: PHONE_SCREENS,
};
const android: Pick<Device, 'os' | 'osVersions' | 'deviceType' | 'screens'> = {
  os: 'Android',
  osVersions: ['13.0.0', '14.0.0', '15.0.0'],
  deviceType: 'Mobile',
  screens: PHONE_SCREENS,
};

/** Browser, OS and device of a person, weighted so that Chrome is ~60 % and Samsung Internet ~0.6 %. */
export const DEVICES = new Weighted<Device>([
  [{ ...mac, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 24],
  [{ ...windows, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 24],
  [{ ...linux, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 2],
  [{ ...android, browser: 'Chrome', browserVersions: CHROME_VERSIONS }, 10],
  [{ ...mac, browser: 'Safari', browserVersions: ['17.6', '18.0', '18.1'] }, 8],
  [{ ...ios, browser: 'Mobile Safari', browserVersions: ['17.6', '18.0', '18.1'] }, 13],
  [
    {
      ...ios,
      deviceType: 'Tablet',
      screens: [
        [820, 1180],
        [1024, 1366],
      ],
      browser: 'Mobile Safari',
      browserVersions: ['18.0', '18.1'],
    },
    1,
  ],
  [{ ...ios, browser: 'Chrome iOS', browserVersions: ['130.0.6723.90', '131.0.6778.73'] }, 3],
  [{ ...windows, browser: 'Microsoft Edge', browserVersions: ['130.0.2849.80', '131.0.2903.86'] }, 8],
  [{ ...windows, browser: 'Firefox', browserVersions: ['131.0', '132.0', '133.0'] }, 3.5],
  [{ ...mac, browser: 'Firefox', browserVersions: ['132.0', '133.0'] }, 1.5],
  [{ ...linux, browser: 'Firefox', browserVersions: ['132.0', '133.0'] }, 1.3],
  [{ ...android, browser: 'Samsung Internet', browserVersions: ['26.0', '27.0'] }, 0.7],
]);

/** The rare device of the rare-filter benchmark: ~0.05 % of sessions. */
export const OPERA_MINI: Device = { ...android, browser: 'Opera Mini', browserVersions: ['84.0.2254'], screens: [[360, 640]] };
/** Share of sessions made on OPERA_MINI, whatever the person's own device. */
export const OPERA_MINI_SESSION_SHARE = 0.0005;

/** `$geoip_country_code` and `$geoip_country_name` of a person, weighted. */
export const COUNTRIES = new Weighted<readonly [string, string]>([
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
export interface Source {
  referrer: string;
  referringDomain: string;
  utm?: { source: string; medium: string; campaign: string };
  landing: string;
}

/** Where a new visitor's session comes from, weighted. */
export const SOURCES = new Weighted<Source>([
  [{ referrer: '$direct', referringDomain: '$direct', landing: '/' }, 30],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/' }, 20],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/mariustechtips/' }, 6],
  [
    {
      referrer: 'https://www.google.com/',
      referringDomain: 'www.google.com',
      utm: { source: 'google', medium: 'cpc', campaign: 'brand_search' },
      landing: '/',
    },
    9,
  ],
  [
    {
      referrer: 'https://www.google.com/',
      referringDomain: 'www.google.com',
      utm: { source: 'google', medium: 'cpc', campaign: 'file_sharing_generic' },
      landing: '/pricing/',
    },
    4,
  ],
  [
    {
      referrer: 'https://t.co/',
      referringDomain: 't.co',
      utm: { source: 'twitter', medium: 'social', campaign: 'launch_week' },
      landing: '/',
    },
    6,
  ],
  [
    {
      referrer: '$direct',
      referringDomain: '$direct',
      utm: { source: 'newsletter', medium: 'email', campaign: 'monthly_digest' },
      landing: '/mariustechtips/',
    },
    7,
  ],
  [
    {
      referrer: 'https://www.producthunt.com/',
      referringDomain: 'www.producthunt.com',
      utm: { source: 'producthunt', medium: 'referral', campaign: 'ph_launch' },
      landing: '/',
    },
    4,
  ],
  [
    {
      referrer: 'https://www.linkedin.com/',
      referringDomain: 'www.linkedin.com',
      utm: { source: 'linkedin', medium: 'social', campaign: 'teams_q4' },
      landing: '/pricing/',
    },
    3,
  ],
  [{ referrer: 'https://www.reddit.com/', referringDomain: 'www.reddit.com', landing: '/mariustechtips/' }, 4],
  [{ referrer: 'https://news.ycombinator.com/', referringDomain: 'news.ycombinator.com', landing: '/' }, 3],
  [{ referrer: 'https://duckduckgo.com/', referringDomain: 'duckduckgo.com', landing: '/' }, 4],
]);

/** Returning users mostly come straight in. */
export const RETURNING_SOURCES = new Weighted<Source>([
  [{ referrer: '$direct', referringDomain: '$direct', landing: '/files/' }, 70],
  [{ referrer: 'https://mail.google.com/', referringDomain: 'mail.google.com', landing: '/files/' }, 15],
  [
    {
      referrer: '$direct',
      referringDomain: '$direct',
      utm: { source: 'newsletter', medium: 'email', campaign: 'product_updates' },
      landing: '/files/',
    },
    8,
  ],
  [{ referrer: 'https://www.google.com/', referringDomain: 'www.google.com', landing: '/' }, 7],
]);

/** Uploaded and downloaded files: MIME type and median size, weighted. */
export const FILE_TYPES = new Weighted<readonly [string, number]>([
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

/** Slugs of the blog posts under /mariustechtips/. */
export const BLOG_POSTS = [
  'how-to-share-large-files',
  'hedgebox-vs-dropbox',
  'backup-strategies-for-teams',
  'encrypting-your-files',
  'five-tips-for-remote-teams',
];

/** `title` of a page view by path (file and blog post pages are titled in sessions.ts). */
export const TITLES: Record<string, string> = {
  '/': 'Hedgebox – Your files, everywhere',
  '/pricing/': 'Pricing – Hedgebox',
  '/signup/': 'Sign up – Hedgebox',
  '/login/': 'Log in – Hedgebox',
  '/files/': 'My files – Hedgebox',
  '/account/settings/': 'Settings – Hedgebox',
  '/account/billing/': 'Billing – Hedgebox',
  '/mariustechtips/': "Marius' Tech Tips – Hedgebox blog",
};
