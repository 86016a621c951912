/**
 * `envapi projects` (create, list): projects (PostHog's teams) of an organization, optionally
 * private (access control on: explicit project members). The list shows each project's
 * organization and its project API token (`phc_…`, what PostHog's SDKs send to the capture
 * endpoints; not a secret in PostHog either).
 */
import type { Command } from 'commander';
import type { Store } from '../storage/db.js';
import { accountsOf, findOrg, ORG_OPTION_HELP, out, withStore } from './shared.js';

/** One row of `projects list`: a project with its organization's name; `created_at` ISO 8601 UTC. */
export interface ProjectRow {
  id: number;
  name: string;
  organization_id: string;
  organization_name: string;
  api_token: string;
  timezone: string;
  access_control: boolean;
  created_at: string;
}

/**
 * Every project of the store (or of one organization), by id, with its organization's name. A
 * query of its own: AccountsRepository lists teams only per user (the API's view), while this
 * administration command sees them all.
 */
async function listProjects(store: Store, organizationId: string | undefined): Promise<ProjectRow[]> {
  const { toBool, toIso } = await import('../storage/values.js');
  let q = store.db
    .selectFrom('teams as t')
    .innerJoin('organizations as o', 'o.id', 't.organization_id')
    .select([
      't.id',
      't.name',
      't.organization_id',
      'o.name as organization_name',
      't.api_token',
      't.timezone',
      't.access_control',
      't.created_at',
    ]);
  if (organizationId !== undefined) q = q.where('t.organization_id', '=', organizationId);
  const rows = await q.orderBy('t.id').execute();
  return rows.map((r) => ({ ...r, access_control: toBool(r.access_control), created_at: toIso(r.created_at) }));
}

/** Adds `projects` to `program`. */
export function registerProjectCommands(program: Command): void {
  const projects = program.command('projects').description('projects (teams)');
  projects
    .command('create')
    .description('create a project in an organization')
    .requiredOption('--name <name>', 'project name')
    .option('--org <name-or-id>', ORG_OPTION_HELP)
    .option('--timezone <tz>', 'IANA time zone', 'UTC')
    .option('--private', 'turn on access control (explicit project members)')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; org?: string; timezone: string; private?: boolean; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = await accountsOf(store);
        const org = await findOrg(accounts, o.org);
        const team = await accounts.createTeam({
          organization_id: org.id,
          name: o.name,
          timezone: o.timezone,
          access_control: !!o.private,
        });
        out(!!o.json, team, () => [
          `Project ${team.id} "${team.name}" created in "${org.name}"${team.access_control ? ' (private)' : ''}.`,
        ]);
      });
    });
  projects
    .command('list')
    .description('list projects: id, name, organization, project API token (phc_…)')
    .option('--org <name-or-id>', 'only this organization’s, by name or id')
    .option('--json', 'print JSON')
    .action(async (o: { org?: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const org = o.org === undefined ? undefined : await findOrg(await accountsOf(store), o.org);
        const list = await listProjects(store, org?.id);
        out(!!o.json, list, () =>
          list.map(
            (p) =>
              `${p.id}  ${p.name}  (organization "${p.organization_name}")  token ${p.api_token}${p.access_control ? '  private' : ''}`,
          ),
        );
      });
    });
}
