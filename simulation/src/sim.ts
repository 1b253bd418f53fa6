/**
 * `npm run sim -- --scenario <name> --duration <seconds> --report <file>`: runs the topology under a
 * link profile, produces results, heals the links, waits until everything produced has arrived, and
 * writes a JSON report. Exits 1 when anything was lost or duplicated, 2 on a usage error.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { runScenario } from './scenario/runScenario.js';
import { SCENARIOS } from './scenario/scenarios.js';
import { ROOT } from './topology/programs.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
};

const program = new Command('sim')
  .description('Run Driftline (hub, relay, agents as processes) over emulated links and report what arrived')
  .requiredOption('--scenario <name>', `one of: ${Object.keys(SCENARIOS).join(', ')}`)
  .option('--duration <seconds>', 'how long agents produce results', positive, 60)
  .option('--report <file>', 'where to write the JSON report (also printed)', 'sim-report.json')
  .option('--dir <dir>', 'data directory (wiped first)', join(ROOT, '.driftline', 'sim'))
  .option('--sites <n>', 'number of sites (1-5)', (v) => Math.min(5, Math.max(1, Number(v) || 3)), 3)
  .option('--settle <seconds>', 'longest wait for delivery after healing', positive)
  .exitOverride()
  .addHelpText(
    'after',
    `\nScenarios:\n${Object.values(SCENARIOS)
      .map((s) => `  ${s.name.padEnd(12)} ${s.description}`)
      .join('\n')}\n\nExit codes: 0 nothing lost or duplicated, 1 something was, 2 usage error.\n\n` +
      'Example:\n  npm run sim -- --scenario polar --duration 120 --report polar.json',
  );

try {
  program.parse(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
const o = program.opts<{
  scenario: string;
  duration: number;
  report: string;
  dir: string;
  sites: number;
  settle?: number;
}>();
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
  sites: o.sites,
  settleTimeoutS: o.settle,
  log: (s) => process.stderr.write(`sim: ${s}\n`),
});
const text = `${JSON.stringify(report, null, 2)}\n`;
mkdirSync(dirname(resolve(o.report)), { recursive: true });
writeFileSync(o.report, text);
process.stdout.write(text);
process.exit(report.lost === 0 && report.duplicated === 0 && report.produced > 0 ? 0 : 1);
