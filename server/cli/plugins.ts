/**
 * `envapi plugins` (catalog, install): the built-in plugin catalog (server/domain/plugin-catalog.ts).
 * `install` with nothing to install, or with a name not in the catalog, is bad usage (exit 2).
 */
import type { Command } from 'commander';
import { PLUGIN_CATALOG, findCatalogPlugin } from '../domain/plugin-catalog.js';
import { accountsOf, findOrg, ORG_OPTION_HELP, out, withStore } from './shared.js';

/** Adds `plugins` to `program`. */
export function registerPluginCommands(program: Command): void {
  const plugins = program.command('plugins').description('plugins from the built-in catalog');
  plugins
    .command('catalog')
    .description('list the built-in catalog')
    .option('--json', 'print JSON')
    .action((o: { json?: boolean }) => {
      out(!!o.json, PLUGIN_CATALOG, () => PLUGIN_CATALOG.map((p) => `${p.key.padEnd(18)} ${p.name.padEnd(28)} ${p.url}`));
    });
  plugins
    .command('install')
    .description('install catalog plugins in an organization (by key or url; --all for every one)')
    .argument('[plugins...]', 'catalog keys or urls, e.g. customerio')
    .option('--all', 'install the whole catalog')
    .option('--org <name-or-id>', ORG_OPTION_HELP)
    .option('--json', 'print JSON')
    .action(async (refs: string[], o: { all?: boolean; org?: string; json?: boolean }, cmd: Command) => {
      const entries = o.all ? [...PLUGIN_CATALOG] : refs.map((r) => findCatalogPlugin(r) ?? r);
      const unknown = entries.filter((e): e is string => typeof e === 'string');
      // bad usage: commander prints it with the usage hint, exit 2 (index.ts)
      if (unknown.length)
        cmd.error(`error: not in the catalog: ${unknown.join(', ')} (see envapi plugins catalog)`, { exitCode: 2, code: 'envapi.usage' });
      if (!entries.length) cmd.error('error: name plugins to install, or pass --all', { exitCode: 2, code: 'envapi.usage' });
      const { installCatalogPlugin } = await import('../bootstrap.js');
      await withStore(program, async (store) => {
        const org = await findOrg(await accountsOf(store), o.org);
        const installed: Awaited<ReturnType<typeof installCatalogPlugin>>[] = [];
        for (const entry of entries) {
          if (typeof entry === 'string') continue;
          installed.push(await installCatalogPlugin(store, org.id, entry));
        }
        out(
          !!o.json,
          installed.map((i) => ({ ...i.plugin, created: i.created })),
          () => installed.map((i) => `${i.created ? 'Installed' : 'Updated'} plugin ${i.plugin.id} ${i.plugin.name}`),
        );
      });
    });
}
