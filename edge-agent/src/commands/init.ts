import { encodeEnrolment, enrolCommand } from '@driftline/protocol';
import type { Command } from 'commander';
import { agentKeyPath, initAgentKey } from '../adapters/fs/agentKeys.js';
import { configOrExit } from './configOrExit.js';

/** `edge-agent init --config f.yaml`: creates the agent's keypair and prints the hub's enrolment line. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description("Create this agent's signing key (once) and print the line that enrols it at the hub")
    .requiredOption('--config <file>', 'agent configuration (YAML)')
    .option('--json', 'print { site, agent, publicKey, keyFile, created, enrollment, enrollCommand } as JSON')
    .addHelpText(
      'after',
      '\nThe key is written to <dataDir>/agent-key.pem (mode 0600) and never leaves the site; an existing key is kept.\n' +
        'Paste the printed line on the hub machine, in the folder of the hub’s hub.yaml (or with its path after\n' +
        '--config). The last word is the enrolment string: site, agent and public key in one checked token.\n\n' +
        'Example:\n  edge-agent init --config /etc/driftline/agent.yaml',
    )
    .action(async (o: { config: string; json?: boolean }) => {
      const config = configOrExit(o.config, false);
      if (!config) return;
      const r = await initAgentKey(config.dataDir);
      const enrollment = await encodeEnrolment({ site: config.site, agent: config.agent, key: r.publicKey });
      const enrollCommand = enrolCommand(enrollment);
      if (o.json) {
        const out = {
          site: config.site,
          agent: config.agent,
          publicKey: r.publicKey,
          keyFile: agentKeyPath(config.dataDir),
          created: r.created,
          enrollment,
          enrollCommand,
        };
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      process.stderr.write(
        `${r.created ? `created ${agentKeyPath(config.dataDir)}` : `key ${agentKeyPath(config.dataDir)} already exists (kept)`}; ` +
          `enrol ${config.site}/${config.agent} by running this on the hub machine, where its hub.yaml is:\n`,
      );
      process.stdout.write(`${enrollCommand}\n`);
    });
}
