/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench:http -- --cpu-prof DIR`):
 * the functions with the most self time, and the packages or project folders the time falls in.
 *
 *   node --import tsx scripts/cpu-profile-top.ts FILE.cpuprofile [--top 25]
 *
 * Self time of a function is the sampled time spent in its own code (not its callees), summed over
 * every node of the call tree with that function, in ms and as a share of all non-idle samples
 * (`(idle)`, `(program)` and `(garbage collector)` are listed apart). A file's "area" is its npm
 * package (`node_modules/<pkg>`), a project folder (`dist/server/http`, …), or `node:` internals.
 */
import fs from 'node:fs';
import { Command } from 'commander';

/** The parts of a `.cpuprofile` read here (V8's Profile object). */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a script URL belongs: its npm package, its project folder, or node internals. */
function areaOf(url: string): string {
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const project = /\/((?:dist\/)?(?:server|scripts|client|generated)(?:\/[^/]+)?)\/[^/]+$/.exec(url);
  return project ? project[1]! : url;
}

/** Prints the summary of one profile. */
function summarise(file: string, top: number): void {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const special = new Map<string, number>();
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (['(idle)', '(program)', '(garbage collector)'].includes(frame.functionName)) {
      special.set(frame.functionName, (special.get(frame.functionName) ?? 0) + us);
      continue;
    }
    busy += us;
    const where = frame.url
      ? `${frame.url.replace(/^file:\/\/.*?\/(node_modules|dist|server|scripts)\//, '$1/')}:${frame.lineNumber + 1}`
      : '(native)';
    const key = `${frame.functionName || '(anonymous)'}  ${where}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    const area = areaOf(frame.url);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const total = [...special.values()].reduce((a, b) => a + b, busy);
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
  console.log(
    `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy; ${[...special].map(([k, v]) => `${k} ${(v / 1e6).toFixed(1)} s`).join(', ')}`,
  );
  console.log('\nself time by area (share of busy time):');
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ms ${pct(us)}  ${area}`);
  console.log(`\ntop ${top} functions by self time:`);
  for (const [key, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)} ms ${pct(us)}  ${key}`);
}

new Command('cpu-profile-top')
  .description('Summarise a V8 .cpuprofile: self time by function and by package or project folder')
  .argument('<file>', 'a .cpuprofile written by node --cpu-prof')
  .option('--top <n>', 'rows per table', (v) => Number(v), 25)
  .action((file: string, o: { top: number }) => summarise(file, o.top))
  .parse();
