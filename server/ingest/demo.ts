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
 *
 * Modules (demo/): random.ts (seeded streams and UUIDs), hedgebox.ts (the data tables: pages,
 * clickable elements, devices, countries, sources, file types), sessions.ts (a person and one
 * session of theirs), builder.ts (planning, building and merging: `generateDemoEvents`). The
 * elements chains are written by domain/elements-chain.ts, beside their parser.
 */
export { generateDemoEvents, type DemoOptions } from './demo/builder.js';
export type { DemoEventRow } from './demo/sessions.js';
/** The elements chain writer, now `writeElementsChain` of domain/elements-chain.ts (kept under its old name). */
export { writeElementsChain as elementsChain, type ChainElement as DemoElement } from '../domain/elements-chain.js';
