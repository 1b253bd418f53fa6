/**
 * `npm run sim -- --seed S --sites N --days D [--faults links,crash]`: runs a deterministic world (hub, relay and
 * agents in this process on virtual time; docs/decisions/540-deterministic-world.md) and prints its
 * invariants, figures and digest; `--topology <file.json>` runs the fleet a file describes instead (sites, links,
 * contact windows, cadences: `world/topologyFile.ts`) and prints the hub's ages and each link's bytes. `npm run sim -- --scenario <name> --duration <seconds> --report <file>`:
 * runs the topology as processes under a link profile, produces results, heals the links, waits until
 * everything produced has arrived, and writes a JSON report. Exits 1 when anything was lost or duplicated
 * (or an invariant broke), 2 on a usage error.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { runScenario } from './scenario/runScenario.js';
import { SCENARIOS } from './scenario/scenarios.js';
import { ROOT } from './topology/programs.js';
import { WORLD_FAULTS } from './world/runWorld.js';
import { runWorldCli } from './world/worldCli.js';
import { runSeedsCli } from './world/worldSeeds.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
};

const program = new Command('sim')
  .description(
    'Run Driftline over emulated links and report what arrived: a deterministic world (--seed), or hub, relay and agents as processes (--scenario)',
  )
  .option('--seed <n>', 'run a deterministic world with this seed (the same seed gives the same digest)')
  .option(
    '--topology <file>',
    'world: a topology file (JSON: sites, links, contact windows, cadences; examples/topology/polar-fleet.json) instead of --sites; seed 1 unless --seed',
  )
  .option('--seeds <range>', 'run a world for each seed of a range (e.g. 1-20), each in its own process')
  .option('--jobs <n>', 'with --seeds: worlds run at once', '1')
  .option('--days <n>', 'world: days of virtual time the sites plan and sync', '1')
  .option('--faults <list>', `world: comma-separated faults: ${Object.keys(WORLD_FAULTS).join(', ')}`, '')
  .option('--scenario <name>', `processes: one of: ${Object.keys(SCENARIOS).join(', ')}`)
  .option('--duration <seconds>', 'how long agents produce results', positive, 60)
  .option('--report <file>', 'where to write the JSON report (also printed)', 'sim-report.json')
  .option('--dir <dir>', 'data directory (wiped first)', join(ROOT, '.driftline', 'sim'))
  .option('--sites <n>', 'number of sites (world: any; processes: 1-5)', '3')
  .option('--settle <seconds>', 'longest wait for delivery after healing', positive)
  .exitOverride()
  .addHelpText(
    'after',
    `\nScenarios:\n${Object.values(SCENARIOS)
      .map((s) => `  ${s.name.padEnd(12)} ${s.description}`)
      .join('\n')}\n\nWorld faults:\n${Object.entries(WORLD_FAULTS)
      .map(([k, v]) => `  ${k.padEnd(12)} ${v}`)
      .join(
        '\n',
      )}\n\nExit codes: 0 nothing lost or duplicated (every invariant held), 1 something was, 2 usage error.\n\n` +
      'A topology file describes a fleet before it is deployed: its sites (by name, or count and prefix), each\n' +
      "link's light time, bandwidth, loss and contact windows (the agents' window syntax), the agents' plan\n" +
      "schedule and sync keys, the relay's link to the hub; the run prints, beside the invariants, the age of\n" +
      'the hub\'s oldest fact per site (p50/p95/max) and each link\'s bytes per day. README: "A fleet before you deploy it".\n\n' +
      'Examples:\n  npm run sim -- --seed 7 --sites 20 --days 2 --faults links,crash\n  npm run sim -- --topology examples/topology/polar-fleet.json --days 1 --report polar-fleet.json\n  npm run sim -- --seeds 1-20 --jobs 2 --sites 3 --days 1 --faults links,crash,hostile\n  npm run sim -- --scenario polar --duration 120 --report polar.json',
  );

try {
  program.parse(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
const o = program.opts<{
  seed?: string;
  topology?: string;
  seeds?: string;
  jobs: string;
  days: string;
  faults: string;
  scenario?: string;
  duration: number;
  report: string;
  dir: string;
  sites: string;
  settle?: number;
}>();
if (o.topology !== undefined && program.getOptionValueSource('sites') === 'cli') {
  process.stderr.write('sim: --topology names its sites; give it or --sites, not both\n');
  process.exit(2);
}
if (o.seeds !== undefined) {
  if (o.seed !== undefined) {
    process.stderr.write('sim: give --seed <n> for one world or --seeds <range> for several, not both\n');
    process.exit(2);
  }
  // each seed is this program again, with --seed: the same arguments it checks, in a process of its own
  process.exit(
    await runSeedsCli({ ...o, seeds: o.seeds }, [
      process.execPath,
      ...process.execArgv,
      process.argv[1] ?? '',
    ]),
  );
}
if (o.seed !== undefined || o.topology !== undefined) {
  const reportGiven = program.getOptionValueSource('report') === 'cli';
  process.exit(await runWorldCli({ ...o, seed: o.seed ?? '1', report: reportGiven ? o.report : undefined }));
}
if (o.scenario === undefined) {
  process.stderr.write('sim: give --seed <n> for a world, or --scenario <name> for processes (see --help)\n');
  process.exit(2);
}
const scenario = SCENARIOS[o.scenario];
if (!scenario) {
  process.stderr.write(
    `sim: unknown scenario '${o.scenario}' (known: ${Object.keys(SCENARIOS).join(', ')})\n`,
  );
  process.exit(2);
}
const dir = resolve(o.dir);
rmSync(dir, { recursive: true, force: true });
const report = await runScenario({
  scenario,
  durationS: o.duration,
  dir,
  sites: Math.min(5, Math.max(1, Number(o.sites) || 3)),
  settleTimeoutS: o.settle,
  log: (s) => process.stderr.write(`sim: ${s}\n`),
});
const text = `${JSON.stringify(report, null, 2)}\n`;
mkdirSync(dirname(resolve(o.report)), { recursive: true });
writeFileSync(o.report, text);
process.stdout.write(text);
process.exit(report.lost === 0 && report.duplicated === 0 && report.produced > 0 ? 0 : 1);
