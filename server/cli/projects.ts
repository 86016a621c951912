/** `envapi projects create`: a project (PostHog's team) in an organization, optionally private. */
import type { Command } from 'commander';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { findOrg, out, withStore } from './shared.js';

/** Adds `projects` to `program`. */
export function registerProjectCommands(program: Command): void {
  program
    .command('projects')
    .description('projects (teams)')
    .command('create')
    .description('create a project in an organization')
    .requiredOption('--name <name>', 'project name')
    .option('--org <id-or-name>', 'the organization (default: the only one)')
    .option('--timezone <tz>', 'IANA time zone', 'UTC')
    .option('--private', 'turn on access control (explicit project members)')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; org?: string; timezone: string; private?: boolean; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        const org = await findOrg(accounts, o.org);
        const team = await accounts.createTeam({ organization_id: org.id, name: o.name, timezone: o.timezone, access_control: !!o.private });
        out(!!o.json, team, () => [`Project ${team.id} "${team.name}" created in "${org.name}"${team.access_control ? ' (private)' : ''}.`]);
      });
    });
}
