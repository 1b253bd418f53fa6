import { Command, CommanderError } from 'commander';

const program = new Command('edge-agent')
  .description(
    'Driftline edge agent: runs Terraform/OpenTofu plans at a site, strips every secret, keeps results in an Automerge document in SQLite and pushes them upstream through relays to the hub.',
  )
  .version('0.1.0')
  .exitOverride()
  .addHelpText('after', '\nExample:\n  edge-agent --help');

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
