/**
 * `envapi users` (create, list): users, optionally added to an organization (at a named level) when
 * created. `--email` must be an e-mail address (shared.ts `emailProblem`): a malformed one is bad
 * usage (exit 2) and creates nothing.
 */
import { Option, type Command } from 'commander';
import { accountsOf, addListCommand, CliError, findOrg, levelName, out, parseEmail, parseLevel, withStore } from './shared.js';

/** Adds `users` to `program`. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('users');
  users
    .command('create')
    .description('create a user, optionally adding them to an organization')
    .requiredOption('--email <email>', 'e-mail address, e.g. ana@example.com', parseEmail)
    .option('--first-name <name>', 'first name', '')
    .option('--last-name <name>', 'last name', '')
    .option('--staff', 'staff user (may set staff-only job fields)')
    .option('--org <name-or-id>', 'also add to this organization, by name or id')
    .addOption(new Option('--level <level>', 'level in --org: member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(
      async (o: { email: string; firstName: string; lastName: string; staff?: boolean; org?: string; level: number; json?: boolean }) => {
        await withStore(program, async (store) => {
          const accounts = await accountsOf(store);
          if (await accounts.findUserByEmail(o.email)) throw new CliError(`A user with email ${o.email} exists already.`);
          // the organization is looked up first, so a wrong --org creates no user
          const org = o.org === undefined ? undefined : await findOrg(accounts, o.org);
          const user = await accounts.createUser({ email: o.email, first_name: o.firstName, last_name: o.lastName, is_staff: !!o.staff });
          if (org) await accounts.upsertMembership(org.id, user.id, o.level);
          out(!!o.json, user, () => [
            `User ${user.id} ${user.email} created (uuid ${user.uuid})${org ? `, ${levelName(o.level)} of "${org.name}"` : ''}.`,
          ]);
        });
      },
    );
  addListCommand(
    users,
    program,
    'list users',
    async (store) => (await accountsOf(store)).listUsers(),
    (u) => `${u.id}  ${u.email}  ${u.uuid}`,
  );
}
