import { Command, CommanderError } from 'commander';

const program = new Command('relay')
  .description(
    'Driftline relay: store-and-forward node between sites and the hub. Takes custody of bundles from downstream, forwards them upstream when the link allows, and holds downlink traffic.',
  )
  .version('0.1.0')
  .exitOverride()
  .addHelpText('after', '\nExample:\n  relay --help');

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
