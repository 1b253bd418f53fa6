import { unknownOptionsFirst } from '@driftline/hop/cli';
import { Command, CommanderError } from 'commander';
import { registerConfig } from './commands/configCheck.js';
import { registerInit } from './commands/init.js';
import { registerPlan } from './commands/plan.js';
import { registerReleases } from './commands/releases.js';
import { registerRun } from './commands/run.js';
import { registerStatus } from './commands/status.js';
import { registerSummarize } from './commands/summarize.js';

const program = new Command('edge-agent')
  .description(
    'Driftline edge agent: runs Terraform/OpenTofu plans at a site, strips every secret, keeps results in an Automerge document in SQLite and pushes them upstream through relays to the hub.',
  )
  .version('0.1.0')
  .exitOverride()
  .addHelpText('after', '\nExample:\n  edge-agent summarize plan.json --json');

// Each verb lives in src/commands/<verb>.ts; subcommands made with .command() inherit exitOverride.
registerSummarize(program);
registerPlan(program);
registerConfig(program);
registerInit(program);
registerRun(program);
registerStatus(program);
registerReleases(program);

try {
  unknownOptionsFirst(program);
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
