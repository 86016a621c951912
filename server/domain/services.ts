/**
 * The services the handlers and the request path call, built once per app from the store (and the
 * events reads, which may run in a worker pool: server/read-pool/; and the rate limiter's Redis
 * link, for readiness). Neither handlers nor `http/` get the store or a repository: they go through
 * these.
 */
import type { Store } from '../storage/db.js';
import { AuthenticationService } from './authentication.js';
import { DashboardsService } from './dashboards.js';
import { DashboardTilesService } from './dashboard-tiles.js';
import { EventDefinitionsService } from './event-definitions.js';
import { inProcessEventsReads, type EventsReads } from './events-reads.js';
import { ExplicitMembersService } from './explicit-members.js';
import { InsightsService } from './insights.js';
import { PersonsService } from './persons.js';
import { PluginConfigService } from './plugin-configs.js';
import { ProjectsService } from './projects.js';
import { FrontendAppsService } from './frontend-apps.js';
import { OrganizationsService } from './organizations.js';
import { ProjectDetailsService } from './project-details.js';
import { UsersService } from './users.js';
import { PersonActionsService, type PersonWrites } from './person-actions.js';
import { ElementStatsService } from './element-stats.js';
import { PropertyDefinitionsService } from './property-definitions.js';
import { ReadinessService, type ReachabilityCheck } from './readiness.js';

/** Everything a handler, the security handler (`authentication`) and `/_readyz` (`readiness`) may use. */
export interface Services {
  projects: ProjectsService;
  pluginConfigs: PluginConfigService;
  /** the events reads: the list (also with HogQL select/where), values, and the query endpoint's HogQL (server/hogql/), in the read pool or in-process */
  events: EventsReads;
  explicitMembers: ExplicitMembersService;
  dashboards: DashboardsService;
  /** a dashboard's tile actions and `run_insights` */
  dashboardTiles: DashboardTilesService;
  /** saved queries, their results through `events.query` */
  insights: InsightsService;
  persons: PersonsService;
  /** persons' property values and cohorts, property writes, bulk delete */
  personActions: PersonActionsService;
  /** autocaptured elements' click counts (`elements/stats/`), through `events` */
  elementStats: ElementStatsService;
  /** the event and person property definitions, derived through `events` */
  propertyDefinitions: PropertyDefinitionsService;
  eventDefinitions: EventDefinitionsService;
  /** identity and discovery: organizations and their projects, the key's user and the key, one project or environment */
  organizations: OrganizationsService;
  /** an organization's frontend apps (plugins) */
  frontendApps: FrontendAppsService;
  users: UsersService;
  projectDetails: ProjectDetailsService;
  authentication: AuthenticationService;
  readiness: ReadinessService;
}

/** What the services are built with besides the store. */
export interface ServiceDeps {
  /** the events reads to use (a pool made by server/read-pool's `createEventsReads`, closed by its maker); default: in-process on the main thread */
  events?: EventsReads | undefined;
  /** the rate limiter's Redis link, when the limits use Redis: `/_readyz` reports its reachability */
  redis?: ReachabilityCheck | undefined;
  /** where the persons API's writes go (server/ingest/person-writes.ts); without it they throw */
  personWrites?: PersonWrites | undefined;
}

/** Builds the services over one store. */
export function createServices(store: Store, deps: ServiceDeps = {}): Services {
  const organizations = new OrganizationsService(store);
  const events = deps.events ?? inProcessEventsReads(store);
  const dashboards = new DashboardsService(store, events);
  return {
    projects: new ProjectsService(store),
    pluginConfigs: new PluginConfigService(store),
    events,
    insights: new InsightsService(store, events),
    explicitMembers: new ExplicitMembersService(store),
    dashboards,
    dashboardTiles: new DashboardTilesService(store, dashboards, events),
    persons: new PersonsService(store),
    personActions: new PersonActionsService(store, deps.personWrites),
    elementStats: new ElementStatsService(events),
    propertyDefinitions: new PropertyDefinitionsService(events, store),
    eventDefinitions: new EventDefinitionsService(store),
    organizations,
    frontendApps: new FrontendAppsService(store, organizations),
    users: new UsersService(store, organizations),
    projectDetails: new ProjectDetailsService(store, organizations),
    authentication: new AuthenticationService(store),
    readiness: new ReadinessService(store, deps.redis),
  };
}
