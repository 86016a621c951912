/**
 * `envapi orgs` (create, list, add-member) and its alias `envapi members add`: organizations and
 * their memberships. Levels are PostHog's OrganizationMembership levels (member 1, admin 8,
 * owner 15; posthog/models/organization.py), given and printed by name; `--json` keeps PostHog's
 * number in `level` and adds `level_name`.
 */
import { Option, type Command } from 'commander';
import {
  accountsOf,
  addListCommand,
  findOrg,
  findUser,
  levelName,
  ORG_OPTION_HELP,
  out,
  parseLevel,
  parseUserRef,
  withStore,
} from './shared.js';

/** Options and action of `orgs add-member` / `members add` on `cmd`. */
function addMemberCommand(cmd: Command, program: Command): Command {
  return cmd
    .requiredOption('--user <email-or-id>', 'the user, by e-mail address or id', parseUserRef)
    .option('--org <name-or-id>', ORG_OPTION_HELP)
    .addOption(new Option('--level <level>', 'member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(async (o: { user: string; org?: string; level: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = await accountsOf(store);
        const user = await findUser(accounts, o.user);
        const org = await findOrg(accounts, o.org);
        const m = await accounts.upsertMembership(org.id, user.id, o.level);
        out(!!o.json, { ...m, level_name: levelName(m.level) }, () => [`${user.email} is now ${levelName(m.level)} of "${org.name}".`]);
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
        const org = await (await accountsOf(store)).createOrganization({ name: o.name });
        out(!!o.json, org, () => [`Organization "${org.name}" created (id ${org.id}).`]);
      });
    });
  addListCommand(
    orgs,
    program,
    'list organizations',
    async (store) => (await accountsOf(store)).listOrganizations(),
    (x) => `${x.id}  ${x.name}`,
  );
  addMemberCommand(orgs.command('add-member').description('add a user to an organization (or change their level)'), program);

  addMemberCommand(
    program.command('members').description('organization memberships').command('add').description('same as "orgs add-member"'),
    program,
  );
}
