/**
 * `envapi orgs` (create, list, add-member) and its alias `envapi members add`: organizations and
 * their memberships (PostHog's OrganizationMembership levels: member 1, admin 8, owner 15).
 */
import { Option, type Command } from 'commander';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { addListCommand, findOrg, findUser, out, parseLevel, withStore } from './shared.js';

/** Options and action of `orgs add-member` / `members add` on `cmd`. */
function addMemberCommand(cmd: Command, program: Command): Command {
  return cmd
    .requiredOption('--user <email-or-id>', 'the user')
    .option('--org <id-or-name>', 'the organization (default: the only one)')
    .addOption(new Option('--level <level>', 'member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(async (o: { user: string; org?: string; level: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        const user = await findUser(accounts, o.user);
        const org = await findOrg(accounts, o.org);
        const m = await accounts.upsertMembership(org.id, user.id, o.level);
        out(!!o.json, m, () => [`${user.email} is now level ${m.level} in "${org.name}".`]);
      });
    });
}

/** Adds `orgs` and `members` to `program`. */
export function registerOrgCommands(program: Command): void {
  const orgs = program.command('orgs').description('organizations');
  orgs
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'organization name')
    .option('--json', 'print JSON')
    .action(async (o: { name: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const org = await new AccountsRepository(store.db).createOrganization({ name: o.name });
        out(!!o.json, org, () => [`Organization ${org.id} "${org.name}" created.`]);
      });
    });
  addListCommand(orgs, program, 'list organizations', (store) => new AccountsRepository(store.db).listOrganizations(), (x) => `${x.id}  ${x.name}`);
  addMemberCommand(orgs.command('add-member').description('add a user to an organization (or change their level)'), program);

  addMemberCommand(program.command('members').description('organization memberships').command('add').description('same as "orgs add-member"'), program);
}
