/**
 * An organization's frontend apps (`GET /api/organizations/{organization_id}/pipeline_frontend_apps/`,
 * PostHog's `PipelineFrontendAppsViewSet` in posthog/api/plugin.py): the plugins of the
 * organization, and the global plugins of others, that are site or frontend apps (`isFrontendApp`:
 * capabilities with neither `methods` nor `scheduled_tasks`), ordered by id, each in PostHog's
 * `PluginSerializer` shape (`pluginInfo`). The organization is resolved as the organization
 * endpoints resolve it (`OrganizationsService.memberOrganization`: 404 unknown, 403 not a member).
 */
import type { components } from '../../generated/api.js';
import type { Store } from '../storage/db.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { PluginsRepository } from '../storage/repositories/plugins.js';
import type { OrganizationsService, Viewer } from './organizations.js';
import { pluginInfo } from './plugin-config-wire.js';
import { isFrontendApp } from './plugin-jobs.js';

type PluginWire = components['schemas']['Plugin'];

/** The frontend apps list of one store. */
export class FrontendAppsService {
  private readonly plugins: PluginsRepository;
  private readonly accounts: AccountsRepository;

  constructor(
    private readonly store: Store,
    private readonly organizations: OrganizationsService,
  ) {
    this.plugins = new PluginsRepository(store.db);
    this.accounts = new AccountsRepository(store.db);
  }

  /** One page of the organization's frontend apps (module doc), with their total. Throws 403 / 404 as the module doc says. */
  async list(
    viewer: Viewer,
    rawOrganizationId: string,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; results: PluginWire[] }> {
    const organizationId = await this.organizations.memberOrganization(viewer, rawOrganizationId);
    const organization = await this.accounts.findOrganization(organizationId);
    const apps = (await this.plugins.listForOrganization(organizationId)).filter((p) => isFrontendApp(p.capabilities));
    const slice = apps.slice(page.offset, page.offset + page.limit);
    const owner = { id: organizationId, name: organization?.name ?? '' };
    return { count: apps.length, results: await Promise.all(slice.map((p) => pluginInfo(p, owner, this.store.db))) };
  }
}
