/**
 * First-start bootstrap and catalog installation.
 *
 * On an empty store, `bootstrap` creates the default organization, project 1 ("Default project"),
 * an owner user, installs the built-in plugin catalog in the organization, and creates one
 * personal API key with scope `*`, returned in plain text exactly once. On a store that already has
 * a project it does nothing, so a second start prints no new key.
 *
 * Several processes may start at the same instant on one empty PostgreSQL database (N replicas, or
 * `envapi bootstrap` beside a starting server). Exactly one of them bootstraps: the transaction
 * first takes a transaction-level advisory lock (`pg_advisory_xact_lock`, key
 * `BOOTSTRAP_LOCK_KEY`), then checks again, under the lock, that the store has no project. A
 * process that waited on the lock sees the winner's committed rows (READ COMMITTED: each
 * statement sees what was committed before it began) and returns `{ created: false }`. The lock is
 * released at commit or rollback, so a process that dies mid-bootstrap leaves nothing half-made
 * and blocks no one. On SQLite (one process per file) the check is repeated inside the transaction
 * as well.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
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

/**
 * The PostgreSQL advisory-lock key of the bootstrap: the first 8 bytes of sha256('envapi-bootstrap')
 * as a signed 64-bit integer (advisory locks are per database, so every schema of one database
 * shares it; a wait is only as long as another bootstrap).
 */
export const BOOTSTRAP_LOCK_KEY: bigint = createHash('sha256').update('envapi-bootstrap').digest().readBigInt64BE(0);

/** Default identity of the first user. */
export const BOOTSTRAP_EMAIL = 'admin@envapi.local';

/** Installs one catalog entry in an organization (updates it when its url is installed already). */
export async function installCatalogPlugin(
  store: Store,
  organizationId: string,
  entry: CatalogPlugin,
): Promise<{ plugin: Plugin; created: boolean }> {
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

/**
 * Sets up an empty store (see module doc) and returns what it created, or `{ created: false }`
 * when the store already has a project, including when another process bootstrapped it meanwhile.
 * Runs in one transaction: all or nothing. Throws the storage error when a write fails.
 */
export async function bootstrap(store: Store, opts: { email?: string } = {}): Promise<BootstrapResult> {
  // cheap check without the lock: every start after the first stops here
  if ((await new AccountsRepository(store.db).countTeams()) > 0) return { created: false };
  return store.db.transaction().execute(async (trx) => {
    if (store.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY.toString()}::bigint)`.execute(trx);
    const tx: Store = { ...store, db: trx };
    const a = new AccountsRepository(trx);
    // again under the lock: another process may have bootstrapped while this one waited
    if ((await a.countTeams()) > 0) return { created: false };
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
