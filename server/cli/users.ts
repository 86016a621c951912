/** `envapi users` (create, list): users, optionally added to an organization when created. */
import { Option, type Command } from 'commander';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { addListCommand, CliError, findOrg, out, parseLevel, withStore } from './shared.js';

/** Adds `users` to `program`. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('users');
  users
    .command('create')
    .description('create a user, optionally adding them to an organization')
    .requiredOption('--email <email>', 'email address')
    .option('--first-name <name>', 'first name', '')
    .option('--last-name <name>', 'last name', '')
    .option('--staff', 'staff user (may set staff-only job fields)')
    .option('--org <id-or-name>', 'also add to this organization')
    .addOption(new Option('--level <level>', 'level in --org: member, admin or owner').default(1, 'member').argParser(parseLevel))
    .option('--json', 'print JSON')
    .action(async (o: { email: string; firstName: string; lastName: string; staff?: boolean; org?: string; level: number; json?: boolean }) => {
      await withStore(program, async (store) => {
        const accounts = new AccountsRepository(store.db);
        if (await accounts.findUserByEmail(o.email)) throw new CliError(`A user with email ${o.email} exists already.`);
        const user = await accounts.createUser({ email: o.email, first_name: o.firstName, last_name: o.lastName, is_staff: !!o.staff });
        if (o.org) {
          const org = await findOrg(accounts, o.org);
          await accounts.upsertMembership(org.id, user.id, o.level);
        }
        out(!!o.json, user, () => [`User ${user.id} ${user.email} created (uuid ${user.uuid}).`]);
      });
    });
  addListCommand(users, program, 'list users', (store) => new AccountsRepository(store.db).listUsers(), (u) => `${u.id}  ${u.email}  ${u.uuid}`);
}
