/**
 * `envapi keys` (create, list, revoke): personal API keys. A new key is printed once, with its id
 * (what `keys revoke` takes) and a line saying it is not shown again; `--quiet` prints the bare key
 * only, for `KEY=$(envapi keys create … --quiet)`. The store keeps only its SHA-256 hash and a mask
 * (server/storage/repositories/api-keys.ts). `--user` is an e-mail address or a user id (a malformed
 * address is bad usage, exit 2); every project of `--projects` must exist (else exit 1, naming the
 * projects there are).
 */
import type { Command } from 'commander';
import { KNOWN_SCOPES } from '../domain/access.js';
import type { ApiKeysRepository } from '../storage/repositories/api-keys.js';
import type { Store } from '../storage/db.js';
import { accountsOf, CliError, findUser, out, parseIdList, parseScopes, parseUserRef, requireProjects, withStore } from './shared.js';

/** The personal API keys repository over a store (loaded when a command needs it). */
async function keysOf(store: Store): Promise<ApiKeysRepository> {
  const { ApiKeysRepository } = await import('../storage/repositories/api-keys.js');
  return new ApiKeysRepository(store.db);
}

/** Adds `keys` to `program`. */
export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('personal API keys');
  keys
    .command('create')
    .description('create a personal API key; the key is printed once (with its id) and stored only hashed')
    .requiredOption('--user <email-or-id>', 'owner of the key, by e-mail address or id', parseUserRef)
    .requiredOption(
      '--scopes <list>',
      `comma-separated scopes, e.g. plugin:read,query:read; known: ${KNOWN_SCOPES.join(', ')}`,
      parseScopes,
    )
    .option('--projects <ids>', 'limit the key to these project ids, e.g. 1,2', parseIdList)
    .option('--label <label>', 'a name for the key', 'cli')
    .option('-q, --quiet', 'print only the key')
    .option('--json', 'print JSON (the record and the key)')
    .addHelpText('after', '\nExample:\n  envapi keys create --user ana@example.com --scopes plugin:read,query:read --projects 1')
    .action(async (o: { user: string; scopes: string[]; projects?: number[]; label: string; quiet?: boolean; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = await findUser(await accountsOf(store), o.user);
        if (o.projects) await requireProjects(store, o.projects);
        const { key, record } = await (
          await keysOf(store)
        ).create({ user_id: user.id, label: o.label, scopes: o.scopes, scoped_teams: o.projects ?? null });
        if (o.quiet && !o.json) {
          console.log(key);
          return;
        }
        out(!!o.json, { ...record, key }, () => [
          `Personal API key ${record.id} created for ${user.email}: scopes ${record.scopes.join(',')}${record.scoped_teams ? `, projects ${record.scoped_teams.join(',')}` : ', every project'}.`,
          'The key is shown this once and stored only as a hash:',
          '',
          `  ${key}`,
          '',
          `Revoke it with: envapi keys revoke ${record.id}`,
        ]);
      });
    });
  keys
    .command('list')
    .description('list keys (masked)')
    .option('--user <email-or-id>', 'only this user’s keys, by e-mail address or id', parseUserRef)
    .option('--json', 'print JSON')
    .action(async (o: { user?: string; json?: boolean }) => {
      await withStore(program, async (store) => {
        const user = o.user ? await findUser(await accountsOf(store), o.user) : undefined;
        const list = await (await keysOf(store)).list(user?.id);
        out(!!o.json, list, () =>
          list.map(
            (k) =>
              `${k.id}  ${k.mask_value}  user ${k.user_id}  ${k.scopes.join(',')}${k.scoped_teams ? `  projects ${k.scoped_teams.join(',')}` : ''}  ${k.label}`,
          ),
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
        const revoked = await (await keysOf(store)).revoke(id);
        if (!revoked) throw new CliError(`No key ${id}`);
        out(!!o.json, { id, revoked }, () => [`Key ${id} revoked.`]);
      });
    });
}
