/**
 * `envapi keys` (create, list, revoke): personal API keys. A new key is printed once; the store
 * keeps only its SHA-256 hash and a mask (server/storage/repositories/api-keys.ts).
 */
import type { Command } from 'commander';
import { KNOWN_SCOPES } from '../domain/access.js';
import { AccountsRepository } from '../storage/repositories/accounts.js';
import { ApiKeysRepository } from '../storage/repositories/api-keys.js';
import { CliError, findUser, out, parseIdList, parseScopes, withStore } from './shared.js';

/** Adds `keys` to `program`. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('personal API keys');
  keys
    .command('create')
    .description('create a personal API key; the key is printed once and stored only hashed')
    .requiredOption('--user <email-or-id>', 'owner of the key')
    .requiredOption('--scopes <list>', `comma-separated scopes (${KNOWN_SCOPES.join(', ')})`, parseScopes)
    .option('--projects <ids>', 'limit the key to these project ids, e.g. 1,2', parseIdList)
    .option('--label <label>', 'a name for the key', 'cli')
    .option('--json', 'print JSON')
    .action(async (o: { user: string; scopes: string[]; projects?: number[]; label: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = await findUser(new AccountsRepository(store.db), o.user);
        const { key, record } = await new ApiKeysRepository(store.db).create({ user_id: user.id, label: o.label, scopes: o.scopes, scoped_teams: o.projects ?? null });
        out(!!o.json, { ...record, key }, () => [key]);
      });
    });
  keys
    .command('list')
    .description('list keys (masked)')
    .option('--user <email-or-id>', 'only this user’s keys')
    .option('--json', 'print JSON')
    .action(async (o: { user?: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = o.user ? await findUser(new AccountsRepository(store.db), o.user) : undefined;
        const list = await new ApiKeysRepository(store.db).list(user?.id);
        out(!!o.json, list, () =>
          list.map((k) => `${k.id}  ${k.mask_value}  user ${k.user_id}  ${k.scopes.join(',')}${k.scoped_teams ? `  projects ${k.scoped_teams.join(',')}` : ''}  ${k.label}`),
        );
      });
    });
  keys
    .command('revoke')
    .description('revoke (delete) a key by id')
    .argument('<id>', 'key id (see keys list)')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withStore(program, async (store) => {
        const revoked = await new ApiKeysRepository(store.db).revoke(id);
        if (!revoked) throw new CliError(`No key ${id}`);
        out(!!o.json, { id, revoked }, () => [`Key ${id} revoked.`]);
      });
    });
}
