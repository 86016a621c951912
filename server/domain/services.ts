/**
 * The services handlers call, built once per app from the store (and the events reads, which may
 * run in a worker pool: server/read-pool/).
 */
import type { Store } from '../storage/db.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { createEventsReads, type EventsReads } from '../read-pool/index.js';
import { DashboardsService } from './dashboards.js';
import { ExplicitMembersService } from './explicit-members.js';
import { PluginConfigService } from './plugin-configs.js';

/** Everything a handler may use. */
export interface Services {
  store: Store;
  accounts: AccountsRepository;
  pluginConfigs: PluginConfigService;
  events: EventsReads;
  explicitMembers: ExplicitMembersService;
  dashboards: DashboardsService;
}

/**
 * Builds the services over one store. `events`: the events reads to use (a pool made by
 * `createEventsReads`, closed by its maker); default: in-process on the main thread.
 */
export function createServices(store: Store, events?: EventsReads): Services {
  return {
    store,
    accounts: new AccountsRepository(store.db),
    pluginConfigs: new PluginConfigService(store),
    events: events ?? createEventsReads(store, { threads: 0 }),
    explicitMembers: new ExplicitMembersService(store),
    dashboards: new DashboardsService(store),
  };
}
