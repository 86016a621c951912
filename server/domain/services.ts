/**
 * The services handlers call, built once per app from the store.
 */
import type { Store } from '../storage/db.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { DashboardsService } from './dashboards.js';
import { EventsService } from './events.js';
import { ExplicitMembersService } from './explicit-members.js';
import { PluginConfigService } from './plugin-configs.js';

/** Everything a handler may use. */
export interface Services {
  store: Store;
  accounts: AccountsRepository;
  pluginConfigs: PluginConfigService;
  events: EventsService;
  explicitMembers: ExplicitMembersService;
  dashboards: DashboardsService;
}

/** Builds the services over one store. */
export function createServices(store: Store): Services {
  return {
    store,
    accounts: new AccountsRepository(store.db),
    pluginConfigs: new PluginConfigService(store),
    events: new EventsService(store),
    explicitMembers: new ExplicitMembersService(store),
    dashboards: new DashboardsService(store),
  };
}
