/**
 * Paired benchmark (not a test): two builds of envapi measured at the same time on the same core,
 * to tell whether a change makes a request cheaper on a machine whose speed drifts.
 *
 *   npm run bench:pair -- --old dist-old --new dist --data-dir /tmp/bench-1m \
 *        --url /api/environments/1/pipeline_frontend_apps_configs/1/ [--method PATCH --body '{…}']
 *        [--reps 5] [--duration 8] [--warmup 2] [--connections 16] [--key phx_…]
 *
 * `--old` and `--new` are build output folders inside the project (each with `server/main.js`;
 * e.g. `npm run build && cp -r dist dist-old`, change, `npm run build`). Both servers run as `npm
 * start` runs them (its node flags, `NODE_ENV=production`), request log on to /dev/null, rate limits off, on the same
 * SQLite data directory, both pinned to core 0 (`taskset`); each is loaded by its own autocannon
 * (`--connections` each) on core 1, the two runs at the same time. Both servers are always busy
 * and the kernel shares core 0 evenly between them, so the ratio of their req/s is the inverse of
 * the ratio of their CPU time per request; a slow or noisy period slows both alike. Printed per
 * repetition and as median (min–max): req/s of each and new/old (above 1: the new build is
 * cheaper). Only for CPU-bound requests: a server that waits on I/O (large pages, writes) yields
 * its share of the core and the ratio no longer measures cost.
 *
 * Without `--key`, a key with scope `*` is made for the store's first user. The data directory
 * must hold an envapi store (run `npx envapi migrate --data-dir DIR` or `npm run bench:http
 * -- --keep DIR` first). With `--copy-store` each server gets its own copy of the data directory
 * (in a temporary directory, removed at the end): for writes, since on one shared store each
 * server's commits are the other's foreign commits, which empty its caches.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { SERVER_NODE_FLAGS } from '../server/main.js';
import { openStore } from '../server/storage/db.js';
import { AccountsRepository } from '../server/storage/repositories/accounts.js';
import { ApiKeysRepository } from '../server/storage/repositories/api-keys.js';
import { autocannon, canPin, freePorts, median, positive, ROOT, spread, startTarget, type Running, type Scenario } from './bench-lib.js';

interface Options {
  old: string;
  new: string;
  dataDir: string;
  url: string;
  method: 'GET' | 'PATCH';
  body?: string;
  key?: string;
  reps: number;
  duration: number;
  warmup: number;
  connections: number;
  copyStore: boolean;
}

/** A key with scope `*` for the store's first user. */
async function makeKey(dataDir: string): Promise<string> {
  const store = openStore({ dataDir });
  try {
    const owner = (await new AccountsRepository(store.db).listUsers())[0];
    if (!owner) throw new Error(`${dataDir} has no user: start envapi on it once first`);
    return (await new ApiKeysRepository(store.db).create({ user_id: owner.id, label: 'bench:pair', scopes: ['*'], scoped_teams: null }))
      .key;
  } finally {
    await store.close();
  }
}

async function run(o: Options): Promise<void> {
  const pin = canPin();
  if (!pin) console.error('taskset is not available (or one core): the two servers are not pinned, the ratio is rougher');
  const dataDir = path.resolve(o.dataDir);
  const key = o.key ?? (await makeKey(dataDir));
  const headers = { Authorization: `Bearer ${key}` };
  const scenario: Scenario = { name: 'pair', label: o.url, method: o.method, url: o.url, body: o.body, group: 'keyed' };
  const builds = { old: path.resolve(o.old), new: path.resolve(o.new) };
  const running: Running[] = [];
  const copies = o.copyStore ? fs.mkdtempSync(path.join(os.tmpdir(), 'envapi-bench-pair-')) : undefined;
  try {
    // distinct ports, taken together (see freePorts)
    const [portOld, portNew] = await freePorts(2);
    const start = async (name: 'old' | 'new') => {
      const port = name === 'old' ? portOld! : portNew!;
      const ownDir = copies ? path.join(copies, name) : dataDir;
      if (copies) fs.cpSync(dataDir, ownDir, { recursive: true });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_ENV: 'production',
        DATA_DIR: ownDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        RATE_LIMIT_ENABLED: 'off',
      };
      delete env.DATABASE_URL;
      delete env.REDIS_URL;
      delete env.VALIDATE_RESPONSES;
      const main = path.relative(ROOT, path.join(builds[name], 'server/main.js'));
      const target = await startTarget(
        name,
        [process.execPath, ...SERVER_NODE_FLAGS, main],
        env,
        port,
        '/_health',
        headers,
        pin,
        `${name} (${main})`,
      );
      running.push(target);
      return target;
    };
    const [oldT, newT] = await Promise.all([start('old'), start('new')]);
    const ratios: number[] = [];
    const rps = { old: [] as number[], new: [] as number[] };
    for (let rep = 0; rep < o.reps; rep++) {
      // warm-up, then the measured run; both targets loaded at once
      const both = (seconds: number) =>
        Promise.all([
          autocannon(pin, oldT.port, scenario, headers, o.connections, seconds),
          autocannon(pin, newT.port, scenario, headers, o.connections, seconds),
        ]);
      await both(o.warmup);
      const [a, b] = await both(o.duration);
      oldT.assertAlive();
      newT.assertAlive();
      for (const r of [a, b]) if (r.failed) throw new Error(`rep ${rep + 1}: ${r.failed} (check --url, --method and --body)`);
      rps.old.push(a.rps);
      rps.new.push(b.rps);
      ratios.push(b.rps / a.rps);
      console.log(`rep ${rep + 1}: old ${Math.round(a.rps)} req/s, new ${Math.round(b.rps)} req/s, new/old ${(b.rps / a.rps).toFixed(3)}`);
    }
    console.log(
      `${o.method} ${o.url}: old ${spread(rps.old)} req/s, new ${spread(rps.new)} req/s; new/old ${spread(ratios, 3)} (median ${median(ratios).toFixed(3)})`,
    );
  } finally {
    await Promise.all(running.map((r) => r.stop()));
    if (copies) fs.rmSync(copies, { recursive: true, force: true });
  }
}

new Command('bench-pair')
  .description(
    'paired benchmark: two envapi builds on one core at once; the ratio of their req/s is the inverse ratio of their CPU per request',
  )
  .requiredOption('--old <dir>', 'build folder of the baseline (with server/main.js)')
  .requiredOption('--new <dir>', 'build folder of the change (with server/main.js)')
  .requiredOption('--data-dir <dir>', 'SQLite data directory both servers use (or copy, with --copy-store)')
  .requiredOption('--url <path>', 'path and query of the request')
  .option('--method <method>', 'GET or PATCH', (v) => v.toUpperCase(), 'GET')
  .option('--body <json>', 'JSON request body (sent with Content-Type: application/json)')
  .option('--key <key>', 'personal API key (default: a new one with scope * for the first user)')
  .option('--copy-store', 'give each server its own copy of the data directory (for writes)', false)
  .option('--reps <n>', 'measured runs', positive('--reps'), 5)
  .option('--duration <s>', 'seconds per measured run', positive('--duration'), 8)
  .option('--warmup <s>', 'seconds of discarded warm-up before each run', positive('--warmup'), 2)
  .option('--connections <n>', 'connections per server', positive('--connections'), 16)
  .action((o: Options) => run(o))
  .parseAsync()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
