/**
 * First-start bootstrap and catalog installation.
 *
 * On an empty store, `bootstrap` creates the default organization, project 1 ("Default project"),
 * an owner user, installs the built-in plugin catalog in the organization, and creates one
 * personal API key with scope `*`, returned in plain text exactly once. On a store that already has
 * a project it does nothing, so a second start prints no new key.
 */
import type { Store } from './storage/db.js';
import { AccountsRepository, OrganizationLevel, type Organization, type Team, type User } from './storage/repositories/accounts.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.js';
import { PluginsRepository, type Plugin } from './storage/repositories/plugins.js';
import { PLUGIN_CATALOG, type CatalogPlugin } from './domain/plugin-catalog.js';

/** What a first start created; `undefined` fields when the store was already set up. */
export interface BootstrapResult {
  created: boolean;
  organization?: Organization;
  team?: Team;
  user?: User;
  /** the plain personal API key: shown once, stored only hashed */
  key?: string;
  plugins?: Plugin[];
}

/** Default identity of the first user. */
export const BOOTSTRAP_EMAIL = 'admin@envapi.local';

/** Installs one catalog entry in an organization (updates it when its url is installed already). */
export async function installCatalogPlugin(store: Store, organizationId: string, entry: CatalogPlugin): Promise<{ plugin: Plugin; created: boolean }> {
  const copy = structuredClone(entry) as CatalogPlugin;
  return new PluginsRepository(store.db).install({
    organization_id: organizationId,
    plugin_type: copy.plugin_type,
    name: copy.name,
    description: copy.description,
    url: copy.url,
    icon: copy.icon,
    config_schema: copy.config_schema,
    tag: copy.tag,
    latest_tag: copy.latest_tag,
    is_global: false,
    capabilities: copy.capabilities,
    metrics: {},
    public_jobs: copy.public_jobs,
    frontend_source: copy.frontend_source,
  });
}

/** Sets up an empty store (see module doc). Runs in one transaction: all or nothing. */
export async function bootstrap(store: Store, opts: { email?: string } = {}): Promise<BootstrapResult> {
  const accounts = new AccountsRepository(store.db);
  if ((await accounts.countTeams()) > 0) return { created: false };
  return store.db.transaction().execute(async (trx) => {
    const tx: Store = { ...store, db: trx };
    const a = new AccountsRepository(trx);
    const organization = await a.createOrganization({ name: 'Default Organization' });
    const user = await a.createUser({ email: opts.email ?? BOOTSTRAP_EMAIL, first_name: 'Admin' });
    await a.upsertMembership(organization.id, user.id, OrganizationLevel.OWNER);
    const team = await a.createTeam({ organization_id: organization.id, name: 'Default project' });
    await a.setCurrentTeam(user.id, team.id);
    const plugins: Plugin[] = [];
    for (const entry of PLUGIN_CATALOG) plugins.push((await installCatalogPlugin(tx, organization.id, entry)).plugin);
    const { key } = await new ApiKeysRepository(trx).create({ user_id: user.id, label: 'bootstrap', scopes: ['*'], scoped_teams: null });
    return { created: true, organization, team, user: { ...user, current_team_id: team.id }, key, plugins };
  });
}
