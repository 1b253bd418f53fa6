import { Command, CommanderError } from 'commander';

const program = new Command('hub')
  .description(
    'Driftline hub: verifies and merges what sites send, keeps history, serves the API, live events and the dashboard.',
  )
  .version('0.1.0')
  .exitOverride()
  .addHelpText('after', '\nExample:\n  hub --help');

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  throw e;
}
