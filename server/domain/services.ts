/**
 * The services handlers call, built once per app from the store.
 */
import type { Store } from '../storage/db.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { PluginConfigService } from './plugin-configs.js';

/** Everything a handler may use. */
export interface Services {
  store: Store;
  accounts: AccountsRepository;
  pluginConfigs: PluginConfigService;
}

/** Builds the services over one store. */
export function createServices(store: Store): Services {
  return {
    store,
    accounts: new AccountsRepository(store.db),
    pluginConfigs: new PluginConfigService(store),
  };
}
