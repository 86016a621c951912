/**
 * Persons and their sessions, the heart of the demo generator: `newPerson` draws who someone is
 * (device, country, whether they will sign up), `session` plays one visit of theirs as
 * posthog-js would have captured it (marketing pages, sign-up and `$identify`, file work,
 * upgrades, `$pageleave`), from the session's own seeded stream. See ../demo.ts for the data set
 * as a whole.
 */
import type { Faker } from '@faker-js/faker';
import {
  BLOG_POSTS,
  CLICKS,
  COUNTRIES,
  DEVICES,
  FILE_TYPES,
  HOST,
  LIB_VERSION,
  OPERA_MINI,
  OPERA_MINI_SESSION_SHARE,
  ORIGIN,
  RETURNING_SOURCES,
  SOURCES,
  TITLES,
  type ClickTarget,
  type Device,
} from './hedgebox.js';
import { hex32, seededBytes, uuidv4, uuidv7, uuidv7Of, type Rng } from './random.js';
import type { EventInput } from '../../storage/events/index.js';

/**
 * One generated event, in the shape `importEvents` reads: a UUIDv7 `uuid`, `timestamp` in ISO 8601
 * UTC with milliseconds (e.g. `2024-11-20T14:03:10.871Z`), `elements_chain` PostHog's chain for
 * `$autocapture`, else `''`.
 */
export type DemoEventRow = { [K in keyof EventInput]: EventInput[K] };
// (a type alias, not the interface itself: an alias may be read as the importer's `RawEventRow` record)

/** A Hedgebox subscription. */
export type Plan = 'free' | 'standard' | 'professional';

/** One simulated person: what they use and how far they are in the product. */
export interface DemoPerson {
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

/** A new person: their device, country and whether they will sign up (from the person's stream). */
export function newPerson(rng: Rng): DemoPerson {
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

/**
 * Plays one session of `person` (changing it: sign-up, plan) and returns its events in time order,
 * none after `end`. Without `faker` it only counts them (`events` stays empty) while drawing from
 * `rng` exactly as when building them, so that both runs of a session agree.
 */
export function session(
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
    const random = seededBytes(rng);
    count += 1;
    if (dry) return;
    const uuid = uuidv7Of(ms, random);
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
    const query =
      landing && source.utm ? `?utm_source=${source.utm.source}&utm_medium=${source.utm.medium}&utm_campaign=${source.utm.campaign}` : '';
    url = ORIGIN + to + query;
    pageviewAt = t;
    const base =
      to.startsWith('/files/') && to !== '/files/'
        ? 'File – Hedgebox'
        : to.startsWith('/mariustechtips/') && to !== '/mariustechtips/'
          ? "Marius' Tech Tips – Hedgebox blog"
          : (TITLES[to] ?? 'Hedgebox');
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
        ...(source.utm
          ? { $initial_utm_source: source.utm.source, $initial_utm_medium: source.utm.medium, $initial_utm_campaign: source.utm.campaign }
          : {}),
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
