/**
 * The built-in plugin catalog: the plugins `npm start` installs for the seed organization and that
 * `envapi plugins install <url-or-key>` installs.
 *
 * Each entry holds what PostHog stores in its `posthog_plugin` row (posthog/models/plugin.py `Plugin`):
 * `config_schema` is the plugin.json `config` list, `public_jobs` is plugin.json `publicJobs` (or the
 * public jobs that PostHog's plugin server adds, e.g. "Export historical events V2"), `capabilities` is
 * what the plugin server reports for the plugin's exports (`{methods, jobs, scheduled_tasks}`; site and
 * frontend apps are never loaded by the plugin server, so theirs stays `{}`), and `frontend_source` is
 * the transpiled `frontend.tsx` (PostHog's `PluginSourceFile` with status TRANSPILED), served by
 * `GET /pipeline_destination_configs/:id/frontend`.
 *
 * The config schemas, public jobs and urls follow the real plugin.json files of
 * github.com/PostHog/customerio-plugin, hubspot-plugin, webhook-plugin, posthog-plugin-geoip,
 * notification-bar-app, pineapple-mode-app, github-star-sync-plugin and
 * github.com/witty-works/posthog-property-filter-plugin. `tag`/`latest_tag` are real commits of those
 * repositories. `migrator` mirrors PostHog's `HOG_FUNCTION_MIGRATORS` (posthog/cdp/templates/__init__.py,
 * keyed by plugin url; the template id is the one the migrator's template declares, e.g.
 * posthog/cdp/templates/customerio/template_customerio.py `TemplateCustomerioMigrator`).
 *
 * Classification (see `isDestination` / `isFrontendApp` in ./plugin-jobs.ts):
 * - destinations (`methods` has onEvent or composeWebhook): customerio, hubspot, webhook
 * - transformations (`methods` has processEvent): geoip, property-filter
 * - site/frontend apps (`capabilities: {}`): notification-bar, pineapple-mode
 * - import app (`scheduled_tasks`, no onEvent): github-star-sync — in neither of our two lists
 *
 * Every entry is deeply frozen: copy it (e.g. `structuredClone`) before changing anything.
 */

/**
 * One field of a plugin's `config_schema` (a plugin.json `config` entry). Markdown-only entries
 * (`{markdown}`) have no `key`. `secret: true` fields are masked as
 * "**************** POSTHOG SECRET FIELD ****************" when a config is read (posthog/api/plugin.py).
 * `site: true` marks fields exposed to the browser for site apps.
 */
export interface ConfigSchemaField {
  key?: string;
  name?: string;
  type?: 'string' | 'choice' | 'attachment' | 'json' | 'dictionary' | 'boolean';
  default?: unknown;
  required?: boolean;
  secret?: boolean;
  hint?: string;
  choices?: string[];
  required_if?: unknown;
  visible_if?: unknown;
  markdown?: string;
  site?: boolean;
}

/** One payload field of a public job (plugin.json `publicJobs.<name>.payload.<field>`). */
export interface JobPayloadField {
  type: 'string' | 'boolean' | 'json' | 'number' | 'date' | 'daterange';
  title?: string;
  required?: boolean;
  default?: unknown;
  /** only staff users may set a value different from `default` (posthog/models/plugin.py validate_plugin_job_payload) */
  staff_only?: boolean;
}

/** A public job: the jobs a user may trigger with `POST .../job` (`{"job": {"type", "payload"}}`). */
export interface PublicJob {
  payload?: Record<string, JobPayloadField>;
}

/** PostHog's `HOG_FUNCTION_MIGRATORS` entry for a plugin url (posthog/cdp/templates/__init__.py). */
export interface HogFunctionMigrator {
  /** the hog function template id the migrated function gets (`template_id`) */
  template_id: string;
  name: string;
  description: string;
  /** maps the plugin config's keys to the destination function's input names */
  inputs: Record<string, string>;
}

/**
 * One entry of the built-in catalog.
 * Shape: `{key, url, name, description, icon, plugin_type, tag, latest_tag, capabilities: {methods?, jobs?,
 * scheduled_tasks?}, config_schema: ConfigSchemaField[], public_jobs: {<job name>: {payload?: {<field>:
 * JobPayloadField}}}, frontend_source: string | null, migrator: HogFunctionMigrator | null}`.
 */
export interface CatalogPlugin {
  /** short CLI name, e.g. 'customerio' */
  key: string;
  /** PostHog identifies plugins by url, e.g. 'https://github.com/PostHog/customerio-plugin' */
  url: string;
  name: string;
  description: string;
  icon: string | null;
  plugin_type: 'local' | 'custom' | 'repository' | 'source' | 'inline';
  tag: string | null;
  latest_tag: string | null;
  capabilities: { methods?: string[]; jobs?: string[]; scheduled_tasks?: string[] };
  config_schema: ConfigSchemaField[];
  public_jobs: Record<string, PublicJob>;
  /** transpiled frontend.tsx source for site/frontend apps, else null */
  frontend_source: string | null;
  /** PostHog's HOG_FUNCTION_MIGRATORS entry for this plugin url, or null */
  migrator: HogFunctionMigrator | null;
}

/**
 * Transpiled frontend.tsx of the Notification Bar app: PostHog's plugin transpiler wraps Babel's CommonJS
 * output as `"use strict";\nexport function getFrontendApp (require) { let exports = {}; <code>; return exports; }`
 * (common/plugin_transpiler). Exports a `scene` previewing the bar with the config's colours.
 */
const NOTIFICATION_BAR_FRONTEND = `"use strict";
export function getFrontendApp (require) { let exports = {}; "use strict";

Object.defineProperty(exports, "__esModule", {
  value: true
});
exports.scene = void 0;
var _react = _interopRequireDefault(require("react"));
function _interopRequireDefault(obj) { return obj && obj.__esModule ? obj : { default: obj }; }
function NotificationBarPreview(_ref) {
  var config = _ref.config || {};
  var sticky = config.position !== 'top-of-page';
  return /*#__PURE__*/_react.default.createElement("div", {
    className: "notification-bar-preview"
  }, /*#__PURE__*/_react.default.createElement("h2", null, "Preview"), /*#__PURE__*/_react.default.createElement("div", {
    style: {
      width: '100%',
      minHeight: 56,
      display: 'flex',
      alignItems: 'center',
      justifyContent: 'center',
      position: sticky ? 'sticky' : 'relative',
      top: 0,
      color: config.textColor || '#333',
      background: config.backgroundColor || '#ebece8'
    },
    dangerouslySetInnerHTML: {
      __html: config.notification || ''
    }
  }), /*#__PURE__*/_react.default.createElement("p", null, sticky ? 'The bar stays at the top while scrolling.' : 'The bar scrolls away with the page.'));
}
const scene = {
  title: 'Notification Bar',
  component: NotificationBarPreview
};
exports.scene = scene;; return exports; }`;

/**
 * Transpiled frontend.tsx of the Pineapple Mode app (same wrapper as above). Exports `inject`, which rains
 * the configured emoji over the page when the hostname is allowed by `domains`.
 */
const PINEAPPLE_MODE_FRONTEND = `"use strict";
export function getFrontendApp (require) { let exports = {}; "use strict";

Object.defineProperty(exports, "__esModule", {
  value: true
});
exports.inject = inject;
var rainTimer;
function allowedHere(config) {
  if (!config.domains) {
    return true;
  }
  var domains = config.domains.split(',').map(function (domain) {
    return domain.trim();
  }).filter(Boolean);
  return domains.length === 0 || domains.indexOf(window.location.hostname) !== -1;
}
function dropEmoji(root, emoji) {
  var drop = document.createElement('div');
  Object.assign(drop.style, {
    position: 'fixed',
    top: '-24px',
    left: Math.floor(Math.random() * Math.max(window.innerWidth - 24, 1)) + 'px',
    fontSize: '24px',
    pointerEvents: 'none',
    zIndex: 2147483647
  });
  drop.textContent = emoji;
  root.appendChild(drop);
  var duration = 2500 + Math.random() * 2500;
  drop.animate([{
    transform: 'translateY(0)'
  }, {
    transform: 'translateY(' + (window.innerHeight + 48) + 'px)'
  }], {
    duration: duration,
    iterations: 1
  });
  window.setTimeout(function () {
    return drop.remove();
  }, duration);
}
function inject(_ref) {
  var config = _ref.config || {};
  var posthog = _ref.posthog;
  if (!allowedHere(config) || rainTimer) {
    return;
  }
  var host = document.createElement('div');
  var root = host.attachShadow({
    mode: 'open'
  });
  document.body.appendChild(host);
  var emoji = config.emoji || '\\u{1F34D}';
  rainTimer = window.setInterval(function () {
    return dropEmoji(root, emoji);
  }, 200);
  posthog === null || posthog === void 0 ? void 0 : posthog.capture('Pineapple mode activated', {
    emoji: emoji
  });
}; return exports; }`;

/** Deep-freezes a JSON-like value so the shared catalog cannot be changed by accident. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) {
      deepFreeze(inner);
    }
    Object.freeze(value);
  }
  return value;
}

/**
 * The built-in catalog (order = install order of `npm start`). See the module docstring for the kinds.
 * Entries are deeply frozen.
 */
export const PLUGIN_CATALOG: readonly CatalogPlugin[] = deepFreeze<CatalogPlugin[]>([
  {
    key: 'customerio',
    url: 'https://github.com/PostHog/customerio-plugin',
    name: 'Customer.io',
    description: 'Send event data and emails into Customer.io.',
    icon: 'https://raw.githubusercontent.com/PostHog/customerio-plugin/main/logo.png',
    plugin_type: 'repository',
    tag: 'ab4e836a3856dce240d653d72c0e305272a5cadc',
    latest_tag: 'ab4e836a3856dce240d653d72c0e305272a5cadc',
    // exportEvents plugins got onEvent plus the historical-export job and its runEveryMinute coordinator
    // from the plugin server (worker/vm/upgrades/historical-export/export-historical-events-v2.ts).
    capabilities: {
      methods: ['setupPlugin', 'onEvent', 'exportEvents'],
      jobs: ['Export historical events V2', 'exportHistoricalEvents'],
      scheduled_tasks: ['runEveryMinute'],
    },
    config_schema: [
      {
        key: 'customerioSiteId',
        name: 'Customer.io Site ID',
        type: 'string',
        hint: 'Provided during Customer.io setup.',
        default: '',
        required: true,
        secret: true,
      },
      {
        key: 'customerioToken',
        name: 'Customer.io API Key',
        type: 'string',
        hint: 'Provided during Customer.io setup.',
        default: '',
        required: true,
        secret: true,
      },
      {
        key: 'host',
        name: 'Tracking Endpoint',
        type: 'choice',
        hint: 'Use the EU variant if your Customer.io account is based in the EU region.',
        default: 'track.customer.io',
        choices: ['track.customer.io', 'track-eu.customer.io'],
      },
      {
        key: 'identifyByEmail',
        name: 'Identify by email',
        type: 'choice',
        hint: 'If enabled, the email address is used as the Customer.io identifier when a person has one.',
        default: 'No',
        choices: ['Yes', 'No'],
      },
      {
        key: 'sendEventsFromAnonymousUsers',
        name: 'Filtering of Anonymous Users',
        type: 'choice',
        hint:
          "Customer.io pricing is based on the number of customers. This is an option to only send events from users that have been identified. Take into consideration that merging after identification won't work (as those previously anonymous events won't be there).",
        default: 'Send all events',
        choices: [
          'Send all events',
          'Only send events from users that have been identified',
          'Only send events from users with emails',
        ],
      },
      {
        key: 'eventsToSend',
        name: 'PostHog Event Allowlist',
        type: 'string',
        hint: 'If this is set, only the specified events (comma-separated) will be sent to Customer.io.',
      },
    ],
    public_jobs: {
      'Export historical events V2': {
        payload: {
          dateRange: { type: 'daterange', title: 'Export date range', required: true },
          parallelism: { type: 'number', title: 'Parallelism', default: 1, staff_only: true },
        },
      },
    },
    frontend_source: null,
    migrator: {
      template_id: 'template-customerio',
      name: 'Customer.io',
      description: 'Identify or track events against customers in Customer.io',
      inputs: { customerioSiteId: 'site_id', customerioToken: 'token', host: 'host' },
    },
  },
  {
    key: 'hubspot',
    url: 'https://github.com/PostHog/hubspot-plugin',
    name: 'Hubspot',
    description: 'Send contact data to Hubspot on PostHog identify events.',
    icon: 'https://raw.githubusercontent.com/PostHog/hubspot-plugin/main/logo.png',
    plugin_type: 'repository',
    tag: 'e050d22bed9384ff611f8cddafadd36615e5da54',
    latest_tag: 'e050d22bed9384ff611f8cddafadd36615e5da54',
    capabilities: { methods: ['setupPlugin', 'onEvent'] },
    config_schema: [
      {
        key: 'hubspotAccessToken',
        name: 'Hubspot Access Token',
        type: 'string',
        hint: 'Create a private app in HubSpot with the crm.objects.contacts.read and crm.objects.contacts.write scopes and paste its access token here.',
        default: '',
        required: true,
        secret: true,
      },
      {
        key: 'triggeringEvents',
        name: 'Triggering events',
        type: 'string',
        hint: 'A comma-separated list of PostHog events you want to trigger Contact creation in HubSpot. By default, we recommend using the $identify event.',
        default: '$identify',
        required: true,
      },
      {
        key: 'additionalPropertyMappings',
        name: 'Additional PostHog to HubSpot property mappings',
        type: 'string',
        hint: 'A mapping of additional PostHog event or person properties to map to newly created Hubspot Contacts. Provide a comma-separated mapping of: personPropertyName:hubSpotPropertyName',
        default: '',
        required: false,
      },
      {
        key: 'ignoredEmails',
        name: 'Email domains to skip',
        type: 'string',
        hint: 'A comma-separated list of email domains to ignore and not create contacts for in Hubspot.',
        default: '',
        required: false,
      },
    ],
    public_jobs: {},
    frontend_source: null,
    migrator: {
      template_id: 'template-hubspot',
      name: 'Hubspot',
      description: 'Creates a new contact in Hubspot whenever an event is triggered.',
      inputs: { hubspotAccessToken: 'access_token' },
    },
  },
  {
    key: 'webhook',
    url: 'https://github.com/PostHog/webhook-plugin',
    name: 'Webhook',
    description: 'Send a webhook',
    icon: 'https://raw.githubusercontent.com/PostHog/webhook-plugin/main/logo.png',
    plugin_type: 'repository',
    tag: '2a5929ea4b5ac7c00f4ed38ef85a0106ef6aa57f',
    latest_tag: '2a5929ea4b5ac7c00f4ed38ef85a0106ef6aa57f',
    capabilities: { methods: ['composeWebhook'] },
    config_schema: [
      {
        key: 'url',
        name: 'What is the webhook destination URL?',
        type: 'string',
        hint: 'e.g. https://webhooks.example.com/1234',
        default: '',
        required: true,
      },
      {
        key: 'headers',
        name: 'Headers',
        type: 'dictionary',
        hint: "Add any headers you want to include in the request. Authorization header is treated specially and will be base64 encoded if specified as 'Basic user:password'.",
        required: false,
        secret: true,
      },
      {
        key: 'method',
        name: 'HTTP Method',
        type: 'choice',
        default: 'POST',
        choices: ['POST', 'GET', 'PUT', 'DELETE', 'PATCH'],
        required: true,
      },
      {
        key: 'payload',
        name: 'JSON Payload',
        type: 'json',
        default: '{\n   "event": "{{event}}"\n}',
        required: true,
      },
    ],
    public_jobs: {},
    frontend_source: null,
    migrator: null,
  },
  {
    key: 'geoip',
    url: 'https://github.com/PostHog/posthog-plugin-geoip',
    name: 'GeoIP',
    description: 'Enrich PostHog events and persons with GeoIP location data',
    icon: 'https://raw.githubusercontent.com/PostHog/posthog-plugin-geoip/main/logo.png',
    plugin_type: 'repository',
    tag: '4b4058bfbf4fe8cca3a45ad42d3e9c7ac2212e9d',
    latest_tag: '4b4058bfbf4fe8cca3a45ad42d3e9c7ac2212e9d',
    capabilities: { methods: ['processEvent'] },
    config_schema: [],
    public_jobs: {},
    frontend_source: null,
    migrator: null,
  },
  {
    key: 'property-filter',
    url: 'https://github.com/witty-works/posthog-property-filter-plugin',
    name: 'Property Filter',
    description: 'This plugin will set all configured properties to null inside an ingested event.',
    icon: null,
    plugin_type: 'custom',
    tag: '47626579384751a4525620f10b71c02e4710c0d9',
    latest_tag: '47626579384751a4525620f10b71c02e4710c0d9',
    capabilities: { methods: ['setupPlugin', 'processEvent'] },
    config_schema: [
      {
        markdown:
          '# Important!\nThis plugin only changes events ingested **after** it was enabled; events that were ingested before keep their properties.',
      },
      {
        key: 'properties',
        name: 'List of properties to filter out:',
        type: 'string',
        hint: 'Separate properties with commas, without using spaces, like so: `foo,bar,baz`',
        default: '',
        required: true,
      },
      {
        key: '$set_properties',
        name: 'List of $set properties to filter out:',
        type: 'string',
        hint: 'Separate properties with commas, without using spaces, like so: `foo,bar,baz`',
        default: '',
        required: true,
      },
      {
        key: '$set_once_properties',
        name: 'List of $set_once properties to filter out:',
        type: 'string',
        hint: 'Separate properties with commas, without using spaces, like so: `foo,bar,baz`',
        default: '',
        required: true,
      },
    ],
    public_jobs: {},
    frontend_source: null,
    migrator: null,
  },
  {
    key: 'notification-bar',
    url: 'https://github.com/PostHog/notification-bar-app',
    name: 'Notification Bar',
    description: 'Show a notification bar for your users through a feature flag',
    icon: 'https://raw.githubusercontent.com/PostHog/notification-bar-app/main/logo.png',
    plugin_type: 'repository',
    tag: '33a63bf357005003cc727a1351446463aa5893a3',
    latest_tag: '33a63bf357005003cc727a1351446463aa5893a3',
    capabilities: {},
    config_schema: [
      {
        key: 'notification',
        name: 'HTML to show in the notification bar',
        type: 'string',
        default: "🚀 <strong>Product 2.0!</strong> is out! <a href='https://google.com'>Click here</a> to learn more.",
        required: true,
        site: true,
      },
      {
        key: 'position',
        name: 'Position of the notification bar',
        type: 'choice',
        choices: ['sticky', 'top-of-page'],
        default: 'sticky',
        required: true,
        site: true,
      },
      { key: 'backgroundColor', name: 'Background color', type: 'string', default: '#ebece8', required: true, site: true },
      { key: 'textColor', name: 'Text color', type: 'string', default: '#333', required: true, site: true },
      { key: 'linkColor', name: 'Link color', type: 'string', default: '#f64e00', required: true, site: true },
      {
        key: 'cssOverride',
        name: 'CSS override',
        type: 'string',
        default: '.notification-bar { }',
        required: false,
        site: true,
      },
      {
        key: 'rememberClose',
        name: 'Remember close',
        type: 'choice',
        choices: ['yes', 'no'],
        default: 'yes',
        hint: "Remember if the user has closed the notification bar, and don't show it again. This resets if you update the notification bar's text.",
        site: true,
      },
    ],
    public_jobs: {},
    frontend_source: NOTIFICATION_BAR_FRONTEND,
    migrator: null,
  },
  {
    key: 'pineapple-mode',
    url: 'https://github.com/PostHog/pineapple-mode-app',
    name: 'Pineapple Mode',
    description: 'Make any website better by adding pineapples',
    icon: 'https://raw.githubusercontent.com/PostHog/pineapple-mode-app/main/logo.png',
    plugin_type: 'repository',
    tag: 'd8e2ab4b07a5431b3b81b465a76674f9d162812a',
    latest_tag: 'd8e2ab4b07a5431b3b81b465a76674f9d162812a',
    capabilities: {},
    config_schema: [
      {
        markdown:
          '## MANUAL STEP NOTICE: This app needs to inject code into your website through posthog-js. You need to **opt-in** on your site to enable this behaviour.\n\n```\nposthog.init("api_key", {\n  "api_host": "https://app.posthog.com",\n  "opt_in_site_apps": true,\n})\n```',
      },
      { key: 'emoji', name: 'Emoji to use', type: 'string', default: '🍍', required: true, site: true },
      {
        key: 'domains',
        name: 'Domains',
        type: 'string',
        hint: 'Comma separated list of domains to activate on. Leave blank to enable all. For example: "localhost,app.posthog.com"',
        default: '',
        site: true,
      },
    ],
    public_jobs: {},
    frontend_source: PINEAPPLE_MODE_FRONTEND,
    migrator: null,
  },
  {
    key: 'github-star-sync',
    url: 'https://github.com/PostHog/github-star-sync-plugin',
    name: 'Github Star Sync',
    description: 'Sync Github Stars to PostHog',
    icon: 'https://raw.githubusercontent.com/PostHog/github-star-sync-plugin/main/logo.png',
    plugin_type: 'repository',
    tag: '719aa19e9002cc720dd104fb81bbd393f8b19557',
    latest_tag: '719aa19e9002cc720dd104fb81bbd393f8b19557',
    capabilities: { methods: ['setupPlugin'], scheduled_tasks: ['runEveryMinute'] },
    config_schema: [
      { key: 'user', name: 'Github Username', type: 'string', required: true },
      { key: 'repo', name: 'Github Repository', type: 'string', required: true },
      {
        key: 'token',
        name: 'Github API Token',
        type: 'string',
        hint: 'Create a new GitHub [personal access token](https://github.com/settings/tokens/new) with the `repo` scope. Then copy it here. This field is optional, though helps with Github API rate limits.',
        required: false,
        secret: true,
      },
      { key: 'eventName', name: 'Event name', type: 'string', required: false, default: 'GitHub Star' },
      {
        key: 'resetStorage',
        name: 'Reset',
        type: 'choice',
        choices: ['No', 'Yes'],
        hint: '**Advanced**',
        required: false,
        default: 'No',
      },
    ],
    public_jobs: {},
    frontend_source: null,
    migrator: null,
  },
]);

/**
 * Normalizes a plugin url for comparison the way PostHog treats plugin urls: drops `?private_token=…`
 * and other query strings (posthog/models/plugin.py raise_if_plugin_installed splits on "?"), `#…`,
 * the scheme, `www.`, a trailing `/` or `.git`, and a GitHub `/tree/<ref>`, `/commit/<sha>` or
 * `/releases/tag/<tag>` suffix (forms posthog/plugins/utils.py parse_url accepts); GitHub owner/repo
 * names are case-insensitive, so the result is lower-cased.
 */
function normalizePluginUrl(url: string): string {
  let u = url.trim().toLowerCase();
  u = u.split('#')[0] ?? '';
  u = u.split('?')[0] ?? '';
  u = u.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  u = u.replace(/^www\./, '');
  u = u.replace(/\/(tree|commit|releases\/tag)\/.*$/, '');
  u = u.replace(/\/+$/, '');
  u = u.replace(/\.git$/, '');
  return u;
}

/** `findCatalogPlugin`'s index: catalog entries by lower-cased key and by normalised url (first wins). */
let catalogIndex: { byKey: Map<string, CatalogPlugin>; byUrl: Map<string, CatalogPlugin> } | undefined;

/**
 * Finds a catalog entry by its CLI key (case-insensitive, e.g. 'customerio') or by url
 * ('https://github.com/PostHog/customerio-plugin', also without scheme, with `.git`, a trailing slash,
 * `?private_token=…`, or `/tree/<ref>`/`/commit/<sha>`). Returns the frozen entry or undefined; never throws.
 */
export function findCatalogPlugin(keyOrUrl: string): CatalogPlugin | undefined {
  const wanted = keyOrUrl.trim();
  if (wanted === '') {
    return undefined;
  }
  // the catalog is fixed: its keys and normalised urls are indexed once (every plugin config answer
  // with plugin_info looks its plugin up here)
  if (!catalogIndex) {
    catalogIndex = { byKey: new Map(), byUrl: new Map() };
    for (const plugin of PLUGIN_CATALOG) {
      const key = plugin.key.toLowerCase();
      const url = normalizePluginUrl(plugin.url);
      if (!catalogIndex.byKey.has(key)) catalogIndex.byKey.set(key, plugin);
      if (!catalogIndex.byUrl.has(url)) catalogIndex.byUrl.set(url, plugin);
    }
  }
  return catalogIndex.byKey.get(wanted.toLowerCase()) ?? catalogIndex.byUrl.get(normalizePluginUrl(wanted));
}
